//! Waiting for what scripts wait for: a state, the attention flag, the
//! end, a quiet period, a line of the screen matching a regex. A session
//! that ends meanwhile answers from what is kept of it: `exited` at once,
//! a condition it can no longer meet with `session_ended`.

use std::time::Duration;

use chrono::Utc;
use regex::Regex;

use super::{
    MatchedLine, SessionSummary, Supervisor, SupervisorError, Until, WaitOutcome, parse_id,
};
use crate::session::{Region, SessionHandle, SessionState, SnapshotFormat, StateView};

/// Longest wait a client may ask for.
pub const MAX_WAIT_MS: u64 = 3_600_000;

/// How often a `match` wait reads the screen at most while output flows.
const MATCH_EVERY: Duration = Duration::from_millis(50);

/// What a wait on a live session came to.
enum Live {
    Met(Box<WaitOutcome>),
    /// The session's actor went away: it ended, was detached, or re-attached.
    Gone,
}

impl Supervisor {
    /// Answers as soon as `until` holds (at once if it already does), or
    /// `Timeout` after `timeout_ms`.
    pub async fn wait(
        &self,
        session_id: &str,
        until: Until,
        timeout_ms: u64,
    ) -> Result<WaitOutcome, SupervisorError> {
        if timeout_ms > MAX_WAIT_MS {
            return Err(SupervisorError::BadRequest(format!(
                "timeout_ms must be at most {MAX_WAIT_MS}"
            )));
        }
        let waited = tokio::time::timeout(
            Duration::from_millis(timeout_ms),
            self.wait_for(session_id, &until),
        )
        .await;
        waited.unwrap_or_else(|_| {
            Err(SupervisorError::Timeout {
                session_id: session_id.to_owned(),
                ms: timeout_ms,
            })
        })
    }

    async fn wait_for(
        &self,
        session_id: &str,
        until: &Until,
    ) -> Result<WaitOutcome, SupervisorError> {
        let mut retained = self.inner.retained.subscribe();
        let mut first: Option<StateView> = None;
        loop {
            if let Ok((handle, _)) = self.handle(session_id).await {
                match self.wait_live(session_id, &handle, until, &mut first).await {
                    Live::Met(outcome) => return Ok(*outcome),
                    Live::Gone => continue,
                }
            }
            // An end marks the session finishing as it stops tracking it, and
            // retains it before the mark goes: asked in this order, one of
            // the two answers.
            let finishing = self.is_finishing(session_id);
            if let Some(summary) = self.ended_summary(session_id) {
                return self.wait_ended(session_id, summary, until, first);
            }
            if !finishing {
                return Err(SupervisorError::NotFound(session_id.to_owned()));
            }
            // Ending right now: its record is on the way.
            let _ = retained.changed().await;
        }
    }

    fn is_finishing(&self, session_id: &str) -> bool {
        parse_id(session_id).is_some_and(|id| self.registry().finishing.contains(&id))
    }

    async fn wait_live(
        &self,
        session_id: &str,
        handle: &SessionHandle,
        until: &Until,
        first: &mut Option<StateView>,
    ) -> Live {
        let (Ok(mut states), Ok(mut outputs)) =
            (handle.watch_state().await, handle.watch_output().await)
        else {
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
                Until::Exited => false,
                Until::Quiet(_) | Until::Match(_) => true,
            };
            let mut pause = None;
            let mut matched = None;
            if holds {
                match until {
                    Until::Quiet(quiet) => pause = self.quiet_left(session_id, *quiet).await,
                    Until::Match(regex) => {
                        let Ok(snapshot) =
                            handle.snapshot(SnapshotFormat::Text, Region::Window).await
                        else {
                            return Live::Gone;
                        };
                        matched = find_line(regex, &snapshot.screen.lines);
                        if matched.is_none() {
                            pause = Some(Duration::MAX);
                        }
                    }
                    _ => {}
                }
                if pause.is_none() {
                    return match self.get(session_id).await {
                        Ok(session) => Live::Met(Box::new(WaitOutcome { session, matched })),
                        Err(_) => Live::Gone,
                    };
                }
            }
            let output_matters = matches!(until, Until::Quiet(_) | Until::Match(_));
            tokio::select! {
                changed = states.changed() => if changed.is_err() { return Live::Gone },
                _ = outputs.changed(), if output_matters => {
                    if matches!(until, Until::Match(_)) {
                        tokio::time::sleep(MATCH_EVERY).await;
                    }
                }
                _ = sleep_for(pause.filter(|p| *p != Duration::MAX)) => {}
            }
        }
    }

    /// How much longer the screen must stay unchanged to have been quiet
    /// for `quiet`; None when it already has.
    async fn quiet_left(&self, session_id: &str, quiet: Duration) -> Option<Duration> {
        let summary = self.get(session_id).await.ok()?;
        let last = summary.actor.last_activity_at.unwrap_or(summary.created_at);
        let quiet_for = (Utc::now() - last).to_std().unwrap_or_default();
        quiet.checked_sub(quiet_for).filter(|left| !left.is_zero())
    }

    /// A wait on a session that has ended (before or during the wait).
    fn wait_ended(
        &self,
        session_id: &str,
        session: SessionSummary,
        until: &Until,
        first: Option<StateView>,
    ) -> Result<WaitOutcome, SupervisorError> {
        let ended = || Err(SupervisorError::Ended(session_id.to_owned()));
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
                    self.ended_snapshot(session_id, SnapshotFormat::Text, Region::Window)?;
                match find_line(regex, &snapshot.screen.lines) {
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

/// The first line `regex` matches, top to bottom.
pub fn find_line(regex: &Regex, lines: &[String]) -> Option<MatchedLine> {
    lines.iter().enumerate().find_map(|(row, line)| {
        regex.find(line).map(|m| MatchedLine {
            row,
            line: line.trim_end().to_owned(),
            text: m.as_str().to_owned(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_is_found() {
        let lines: Vec<String> = ["$ make", "error: bad   ", "error: worse"]
            .map(String::from)
            .to_vec();
        let regex = Regex::new(r"error: \w+").unwrap();
        assert_eq!(
            find_line(&regex, &lines),
            Some(MatchedLine {
                row: 1,
                line: "error: bad".into(),
                text: "error: bad".into()
            })
        );
        assert_eq!(find_line(&Regex::new("nope").unwrap(), &lines), None);
    }
}
