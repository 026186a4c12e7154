//! `tmux -V` and the create check for `/healthz` and `/readyz`, each run
//! at most once however many ask (open endpoints must not fork per request).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::time::Instant;

use crate::tmux::{ProbeError, TmuxError};

/// Why tmux is not ready: shared by every caller of one probe run.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Unready {
    /// `tmux -V` failed.
    #[error(transparent)]
    Version(Arc<TmuxError>),
    /// `tmux -V` answered, and the create check failed at a step.
    #[error("{bin} answers -V, but {step}")]
    Create { bin: String, step: Arc<ProbeError> },
}

/// How long one `tmux -V` answer serves health and readiness checks.
const PROBE_TTL: Duration = Duration::from_secs(1);

/// How long a failed create check stands before `/readyz` tries again
/// (each try starts a tmux server).
const CREATE_RETRY: Duration = Duration::from_secs(5);

/// What a probe said: tmux's answer, or why tmux is not ready.
pub type Answer = Result<String, Unready>;

/// When a probe finished, and what it said.
type Outcome = (Instant, Answer);

type Slot = Arc<Mutex<Option<Shared<BoxFuture<'static, Outcome>>>>>;

/// `tmux -V` for `/healthz` and `/readyz`, run at most once per
/// [`PROBE_TTL`] however many ask: callers share the run in flight, then its
/// answer until it is stale. Open endpoints must not fork per request. The
/// create check (`Tmux::check_create`) is shared the same way; its success
/// stands, its failure for [`CREATE_RETRY`].
#[derive(Clone, Default)]
pub struct TmuxProbe {
    version: Slot,
    create: Slot,
}

impl TmuxProbe {
    /// The latest `tmux -V` answer, or `run`'s if there is none in flight or fresh.
    pub async fn get<F>(&self, run: F) -> Answer
    where
        F: Future<Output = Answer> + Send + 'static,
    {
        shared_run(&self.version, run, is_current).await
    }

    /// The latest create check, or `run`'s if none is in flight or stands.
    pub async fn create<F>(&self, run: F) -> Answer
    where
        F: Future<Output = Answer> + Send + 'static,
    {
        shared_run(&self.create, run, create_stands).await
    }
}

async fn shared_run<F>(
    slot: &Slot,
    run: F,
    current: fn(Option<&Outcome>, Instant) -> bool,
) -> Answer
where
    F: Future<Output = Answer> + Send + 'static,
{
    let probe = {
        let mut latest = slot.lock().expect("tmux probe lock");
        match latest.as_ref() {
            Some(probe) if current(probe.peek(), Instant::now()) => probe.clone(),
            _ => {
                let probe = run.map(|answer| (Instant::now(), answer)).boxed().shared();
                *latest = Some(probe.clone());
                probe
            }
        }
    };
    probe.await.1
}

/// A probe still running, or one that finished less than [`PROBE_TTL`] ago.
fn is_current(outcome: Option<&Outcome>, now: Instant) -> bool {
    outcome.is_none_or(|(finished, _)| now.duration_since(*finished) < PROBE_TTL)
}

/// A create check still running, one that worked (the same binary will
/// again), or one that failed less than [`CREATE_RETRY`] ago.
fn create_stands(outcome: Option<&Outcome>, now: Instant) -> bool {
    outcome.is_none_or(|(finished, answer)| {
        answer.is_ok() || now.duration_since(*finished) < CREATE_RETRY
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn concurrent_callers_share_the_run_in_flight() {
        let probe = TmuxProbe::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let released = released.shared();
        let asks = (0..200).map(|_| {
            let (probe, runs, released) = (probe.clone(), runs.clone(), released.clone());
            let run = async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let _ = released.await;
                Ok("tmux 3.3a".to_owned())
            };
            async move { probe.get(run).await }
        });
        // join! polls every ask (each finds the run in flight) before releasing it.
        let (answers, ()) = tokio::join!(futures::future::join_all(asks), async {
            let _ = release.send(());
        });
        assert!(
            answers
                .iter()
                .all(|a| a.as_deref().ok() == Some("tmux 3.3a"))
        );
        assert_eq!(runs.load(Ordering::SeqCst), 1, "one run for a burst");
    }

    #[test]
    fn a_probe_is_current_while_running_and_for_its_ttl() {
        let now = Instant::now();
        let done = |ago: Duration| (now - ago, Ok(String::new()));
        assert!(is_current(None, now));
        assert!(is_current(Some(&done(Duration::ZERO)), now));
        assert!(is_current(Some(&done(PROBE_TTL / 2)), now));
        assert!(!is_current(Some(&done(PROBE_TTL)), now));
    }

    #[test]
    fn a_create_check_stands_when_it_worked_and_is_retried_after_a_failure() {
        let now = Instant::now();
        let ago = |d: Duration| now - d;
        let no = || {
            Err(Unready::Create {
                bin: "tmux".to_owned(),
                step: Arc::new(ProbeError::StillListed),
            })
        };
        let table = [
            (None, true),
            (Some((ago(Duration::ZERO), Ok(String::new()))), true),
            (Some((ago(CREATE_RETRY * 100), Ok(String::new()))), true),
            (Some((ago(Duration::ZERO), no())), true),
            (Some((ago(CREATE_RETRY / 2), no())), true),
            (Some((ago(CREATE_RETRY), no())), false),
        ];
        for (outcome, stands) in table {
            assert_eq!(create_stands(outcome.as_ref(), now), stands, "{outcome:?}");
        }
    }
}
