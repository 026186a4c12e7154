//! Health, readiness and version.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::time::Instant;

use super::state::AppState;
use crate::tmux::{ProbeError, TmuxError};
use crate::wire::{Health, Readiness, StorageReport, StorageStatus, TmuxLost, VersionInfo};

/// Liveness: the daemon answers.
///
/// `status` is `ok`, or `degraded` with a `reason` while tmux is lost with
/// sessions to restore or a write to the data dir keeps failing (still 200,
/// as a restart would not help). Also `tmux` (`tmux -V`, or why it failed),
/// `tmux_client` (how control clients attach), `sessions`, `storage`, and
/// `tmux_lost`: `null`, or `{"since", "restorable"}` while the tmux server
/// is lost with sessions to restore. Health and readiness share one
/// `tmux -V`, run at most once a second however many ask.
#[utoipa::path(get, path = "/healthz", tag = "daemon", security(()),
    responses((status = 200, description = "The daemon answers; `tmux` says whether tmux does; \
`status` is `degraded` (with a `reason`) while tmux is lost with sessions to restore or writes to the data \
dir keep failing", body = Health)))]
pub async fn healthz(State(state): State<AppState>) -> Json<Health> {
    let tmux = match tmux_version(&state).await {
        Ok(version) => version,
        Err(e) => format!("unavailable: {e}"),
    };
    let tmux_client = state.supervisor.tmux().client_path().await.describe();
    let storage = StorageReport::from(state.supervisor.storage_report());
    let tmux_lost = tmux_lost(&state);
    let reason = match (&tmux_lost, storage.status) {
        (Some(lost), _) => Some(format!(
            "the tmux server was lost: {} sessions can be restored (`tmuxd restore`)",
            lost.restorable
        )),
        (None, StorageStatus::Degraded) => {
            Some("writes to the data dir keep failing (see `storage`)".to_owned())
        }
        (None, StorageStatus::Ok) => None,
    };
    let status = match reason {
        Some(_) => StorageStatus::Degraded,
        None => StorageStatus::Ok,
    };
    Json(Health {
        status,
        reason,
        tmux,
        tmux_client,
        sessions: state.supervisor.session_count(),
        storage,
        tmux_lost,
    })
}

/// Readiness: tmux can run and make a session tmuxd attaches to.
///
/// 503 if tmux cannot run, or cannot make a session tmuxd attaches to:
/// checked once on a private `-L tmuxd-probe-*` server; a success stands, a
/// failure is tried again after 5 s. Degraded storage keeps the daemon ready
/// (200 with `storage`): it serves every request and event from memory and
/// writes them once the disk recovers, so an orchestrator should keep
/// routing to it (and alert on `storage`). `tmux_lost` as in `/healthz`.
#[utoipa::path(get, path = "/readyz", tag = "daemon",
    responses(
        (status = 200, description = "tmux can be run and makes sessions tmuxd can attach to", body = Readiness),
        (status = 503, description = "tmux cannot be run, or cannot make a session tmuxd can attach to \
(tried on a private tmux server; `reason` says what failed)", body = Readiness)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let storage = StorageReport::from(state.supervisor.storage_report());
    let ready = match tmux_version(&state).await {
        Ok(_) => tmux_creates(&state).await,
        Err(reason) => Err(reason),
    };
    match ready {
        Ok(_) => {
            let ready = Readiness {
                ready: true,
                reason: None,
                storage,
                tmux_lost: tmux_lost(&state),
            };
            (StatusCode::OK, Json(ready))
        }
        Err(reason) => {
            let ready = Readiness {
                ready: false,
                reason: Some(reason.to_string()),
                storage,
                tmux_lost: tmux_lost(&state),
            };
            (StatusCode::SERVICE_UNAVAILABLE, Json(ready))
        }
    }
}

fn tmux_lost(state: &AppState) -> Option<TmuxLost> {
    let lost = state.supervisor.tmux_lost()?;
    Some(TmuxLost {
        since: lost.since,
        restorable: lost.restorable,
    })
}

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

/// Whether the configured tmux can make a session tmuxd attaches to.
async fn tmux_creates(state: &AppState) -> Answer {
    let tmux = state.supervisor.tmux().clone();
    let run = async move {
        let bin = tmux.bin().display().to_string();
        match tmux.check_create().await {
            Ok(attached) => Ok(attached.how),
            Err(step) => Err(Unready::Create {
                bin,
                step: Arc::new(step),
            }),
        }
    };
    state.tmux_probe.create(run).await
}

async fn tmux_version(state: &AppState) -> Answer {
    let tmux = state.supervisor.tmux().clone();
    let run = async move {
        tmux.version()
            .await
            .map_err(|e| Unready::Version(Arc::new(e)))
    };
    state.tmux_probe.get(run).await
}

/// The daemon's version and commit.
///
/// Open, like `/healthz`: `{"version", "commit"}`, the commit the binary
/// was built from (`tmuxd --version` says the same).
#[utoipa::path(get, path = "/version", tag = "daemon", security(()),
    responses((status = 200, description = "The daemon's version", body = VersionInfo)))]
pub async fn version() -> Json<VersionInfo> {
    Json(VersionInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        commit: env!("TMUXD_COMMIT").to_owned(),
    })
}

/// How long one `tmux -V` answer serves health and readiness checks.
const PROBE_TTL: Duration = Duration::from_secs(1);

/// How long a failed create check stands before `/readyz` tries again
/// (each try starts a tmux server).
const CREATE_RETRY: Duration = Duration::from_secs(5);

/// What a probe said: tmux's answer, or why tmux is not ready.
type Answer = Result<String, Unready>;

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
