//! Waiting for what scripts wait for: a state, the attention flag, the
//! end, a quiet period, a line of the screen matching a regex. A session
//! that ends meanwhile answers from what is kept of it: `exited` at once,
//! a condition it can no longer meet with `session_ended`.
//!
//! Waits are capped (`limits`); `match` waits on a session share one
//! reading of its screen (`hub`), and their regexes are compiled within a
//! size limit off the async workers (`pattern`).

mod hub;
mod limits;
mod lines;
mod pattern;

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use regex::Regex;

pub use limits::WaitLimits;
use lines::find_line;
pub use pattern::{PatternError, REGEX_SIZE_LIMIT};

use super::endings::Endings;
use super::find::Finder;
use crate::id::SessionId;
use crate::session::{Region, SessionHandle, SessionState, SnapshotFormat, StateView};
use crate::supervisor::types::{MatchedLine, SessionSummary, SupervisorError, Until, WaitOutcome};

/// Longest wait a client may ask for.
pub const MAX_WAIT_MS: u64 = 3_600_000;

/// How long a waiter whose session's actor went away pauses before asking
/// the registry again, when the registry still hands out that actor (the
/// reaper has not recorded the end yet): a bound on a retry, not a poll of
/// the condition.
const GONE_RETRY: Duration = Duration::from_millis(10);

/// The waits: the open count, the match hubs, the regex compiler; and
/// where a wait finds its session, live (`find`) or ended (`endings`).
pub(super) struct Waits {
    open: limits::OpenWaits,
    hubs: hub::Hubs,
    compiler: pattern::Compiler,
    find: Finder,
    endings: Arc<Endings>,
}

/// What a wait on a live session came to.
enum Live {
    Met(Box<WaitOutcome>),
    /// The session's actor went away: it ended, was detached, or re-attached.
    Gone,
}

impl Waits {
    pub(super) fn new(
        limits: WaitLimits,
        metrics: crate::metrics::Metrics,
        find: Finder,
        endings: Arc<Endings>,
    ) -> Self {
        Waits {
            open: limits::OpenWaits::new(limits, metrics),
            hubs: hub::Hubs::default(),
            compiler: pattern::Compiler::default(),
            find,
            endings,
        }
    }

    /// Answers as soon as `until` holds (at once if it already does), or
    /// `Timeout` after `timeout_ms`.
    pub(super) async fn wait(
        &self,
        id: SessionId,
        until: Until,
        timeout_ms: u64,
    ) -> Result<WaitOutcome, SupervisorError> {
        if timeout_ms > MAX_WAIT_MS {
            return Err(SupervisorError::BadRequest(format!(
                "timeout_ms must be at most {MAX_WAIT_MS}"
            )));
        }
        let _slot = self.open.open(id)?;
        let waited =
            tokio::time::timeout(Duration::from_millis(timeout_ms), self.wait_for(id, &until))
                .await;
        waited.unwrap_or_else(|_| {
            Err(SupervisorError::Timeout {
                session_id: id.to_string(),
                ms: timeout_ms,
            })
        })
    }

    /// Compiles a `match` wait's regex: within `REGEX_SIZE_LIMIT`, on a
    /// blocking thread, a few at a time.
    pub(super) async fn compile_match(&self, pattern: &str) -> Result<Arc<Regex>, PatternError> {
        self.compiler.compile(pattern.to_owned()).await
    }

    async fn wait_for(&self, id: SessionId, until: &Until) -> Result<WaitOutcome, SupervisorError> {
        let mut retained = self.endings.watch_settled();
        let mut first: Option<StateView> = None;
        let mut gone: Option<SessionHandle> = None;
        loop {
            if let Ok((handle, _)) = self.find.handle(id).await {
                if gone.as_ref().is_some_and(|g| g.same_actor(&handle)) {
                    tokio::time::sleep(GONE_RETRY).await;
                }
                match self.wait_live(id, &handle, until, &mut first).await {
                    Live::Met(outcome) => return Ok(*outcome),
                    Live::Gone => {
                        gone = Some(handle);
                        continue;
                    }
                }
            }
            // An end marks the session finishing as it stops tracking it, and
            // retains it before the mark goes: asked in this order, one of
            // the two answers.
            let finishing = self.find.is_finishing(id);
            if let Some(summary) = self.endings.summary(id) {
                return self.wait_ended(id, summary, until, first);
            }
            if !finishing {
                return Err(SupervisorError::NotFound(id.to_string()));
            }
            // Ending right now: its record is on the way.
            let _ = retained.changed().await;
        }
    }

    async fn wait_live(
        &self,
        id: SessionId,
        handle: &SessionHandle,
        until: &Until,
        first: &mut Option<StateView>,
    ) -> Live {
        if let Until::Match(regex) = until {
            return self.wait_match(id, handle, regex).await;
        }
        let Ok(mut states) = handle.watch_state().await else {
            return Live::Gone;
        };
        loop {
            let view = *states.borrow_and_update();
            if view.state == SessionState::Exited {
                return Live::Gone;
            }
            let start = *first.get_or_insert(view);
            let holds = match until {
                Until::Idle => view.state == SessionState::Idle,
                Until::Working => view.state == SessionState::Working,
                Until::Waiting => view.state == SessionState::Waiting,
                Until::Attention => view.attention.is_some(),
                Until::Change => view.state != start.state || view.attention != start.attention,
                Until::Exited | Until::Match(_) => false,
                Until::Quiet(_) => true,
            };
            // Output only ever moves a quiet period's end later, so a quiet
            // wait sleeps until the earliest end and looks again then,
            // rather than waking on every chunk.
            let mut pause = None;
            if holds {
                if let Until::Quiet(quiet) = until {
                    pause = self.quiet_left(id, *quiet).await;
                }
                if pause.is_none() {
                    return self.met(id, None).await;
                }
            }
            tokio::select! {
                changed = states.changed() => if changed.is_err() { return Live::Gone },
                _ = sleep_for(pause) => {}
            }
        }
    }

    /// A `match` wait: its session's hub tells when a line matches.
    async fn wait_match(&self, id: SessionId, handle: &SessionHandle, regex: &Arc<Regex>) -> Live {
        let mut ticket = self.hubs.join(id, handle, regex.clone());
        match ticket.answer().await {
            hub::Answer::Matched(line) => self.met(id, Some(line)).await,
            hub::Answer::Gone => Live::Gone,
        }
    }

    async fn met(&self, id: SessionId, matched: Option<MatchedLine>) -> Live {
        match self.find.summary(id).await {
            Ok(session) => Live::Met(Box::new(WaitOutcome { session, matched })),
            Err(_) => Live::Gone,
        }
    }

    /// How much longer the screen must stay unchanged to have been quiet
    /// for `quiet`; None when it already has.
    async fn quiet_left(&self, id: SessionId, quiet: Duration) -> Option<Duration> {
        let summary = self.find.summary(id).await.ok()?;
        let last = summary.actor.last_activity_at.unwrap_or(summary.created_at);
        let quiet_for = (Utc::now() - last).to_std().unwrap_or_default();
        quiet.checked_sub(quiet_for).filter(|left| !left.is_zero())
    }

    /// A wait on a session that has ended (before or during the wait).
    fn wait_ended(
        &self,
        id: SessionId,
        session: SessionSummary,
        until: &Until,
        first: Option<StateView>,
    ) -> Result<WaitOutcome, SupervisorError> {
        let ended = || Err(SupervisorError::Ended(id.to_string()));
        let met = |matched| {
            Ok(WaitOutcome {
                session: session.clone(),
                matched,
            })
        };
        match until {
            Until::Exited | Until::Quiet(_) => met(None),
            // It changed (to exited) while we waited.
            Until::Change if first.is_some() => met(None),
            Until::Attention if session.actor.attention.is_some() => met(None),
            Until::Match(regex) => {
                let snapshot =
                    self.endings
                        .last_screen(id, SnapshotFormat::Text, Region::Window)?;
                match find_line(regex, &snapshot.screen) {
                    Some(line) => met(Some(line)),
                    None => ended(),
                }
            }
            _ => ended(),
        }
    }
}

async fn sleep_for(pause: Option<Duration>) {
    match pause {
        Some(pause) => tokio::time::sleep(pause).await,
        None => std::future::pending().await,
    }
}
