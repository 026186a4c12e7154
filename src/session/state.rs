//! What a session is doing, derived from its output over time: a pure state
//! machine over (output, exit, time), evaluated lazily so no timer runs per
//! session.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Starting,
    Idle,
    Busy,
    Attention,
    Exited,
}

/// Why the session is in its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateReason {
    /// Attached, no output seen yet.
    Attaching,
    /// Output arrived within the quiet period.
    OutputActivity,
    /// No output for the quiet period.
    Quiet,
    /// The tmux client ended: the session or its server is gone.
    ProcessExit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateView {
    pub state: SessionState,
    pub reason: StateReason,
    pub since: DateTime<Utc>,
}

#[derive(Debug)]
pub struct StateTracker {
    idle_after: Duration,
    started_at: DateTime<Utc>,
    /// First output of the current burst, and the latest output.
    burst: Option<(DateTime<Utc>, DateTime<Utc>)>,
    exited_at: Option<DateTime<Utc>>,
}

impl StateTracker {
    pub fn new(now: DateTime<Utc>, idle_after: std::time::Duration) -> Self {
        StateTracker {
            idle_after: Duration::from_std(idle_after).unwrap_or(Duration::MAX),
            started_at: now,
            burst: None,
            exited_at: None,
        }
    }

    pub fn on_output(&mut self, now: DateTime<Utc>) {
        self.burst = match self.burst {
            Some((start, last)) if now - last < self.idle_after => Some((start, now)),
            _ => Some((now, now)),
        };
    }

    pub fn on_exit(&mut self, now: DateTime<Utc>) {
        self.exited_at.get_or_insert(now);
    }

    pub fn last_output(&self) -> Option<DateTime<Utc>> {
        self.burst.map(|(_, last)| last)
    }

    pub fn view(&self, now: DateTime<Utc>) -> StateView {
        let (state, reason, since) = match (self.exited_at, self.burst) {
            (Some(at), _) => (SessionState::Exited, StateReason::ProcessExit, at),
            (None, None) => (
                SessionState::Starting,
                StateReason::Attaching,
                self.started_at,
            ),
            (None, Some((start, last))) if now - last < self.idle_after => {
                (SessionState::Busy, StateReason::OutputActivity, start)
            }
            (None, Some((_, last))) => (
                SessionState::Idle,
                StateReason::Quiet,
                last + self.idle_after,
            ),
        };
        StateView {
            state,
            reason,
            since,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_700_000_000_000 + ms).unwrap()
    }

    #[test]
    fn transitions() {
        let mut t = StateTracker::new(at(0), std::time::Duration::from_millis(1000));
        let check = |t: &StateTracker, now, state, reason, since| {
            assert_eq!(
                t.view(at(now)),
                StateView {
                    state,
                    reason,
                    since: at(since)
                },
                "at {now}"
            );
        };
        check(&t, 500, SessionState::Starting, StateReason::Attaching, 0);
        t.on_output(at(600));
        t.on_output(at(1200));
        check(
            &t,
            1500,
            SessionState::Busy,
            StateReason::OutputActivity,
            600,
        );
        check(&t, 2200, SessionState::Idle, StateReason::Quiet, 2200);
        check(&t, 9000, SessionState::Idle, StateReason::Quiet, 2200);
        t.on_output(at(9000));
        check(
            &t,
            9100,
            SessionState::Busy,
            StateReason::OutputActivity,
            9000,
        );
        t.on_exit(at(9200));
        t.on_exit(at(9900));
        check(
            &t,
            9999,
            SessionState::Exited,
            StateReason::ProcessExit,
            9200,
        );
    }
}
