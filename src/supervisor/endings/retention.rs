//! What an ended session leaves readable, and the rules of the window
//! that keeps it: plain data and pure functions with table tests.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::id::SessionId;
use crate::session::{EndHistory, FinalScreens};
use crate::store::{EndedFile, EndedRecord};
pub use crate::supervisor::types::NoHistory;
use crate::supervisor::types::SessionSummary;

/// How many ended sessions are kept, for how long, and how many lines of
/// the history above each one's last screen.
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    pub max: usize,
    pub max_age: Duration,
    /// `session.ended_scrollback_lines`: 0 keeps none.
    pub history_lines: usize,
}

/// One ended session.
#[derive(Clone, Debug)]
pub struct Retained {
    pub summary: SessionSummary,
    /// `None` when the session ended without an actor to ask (at startup).
    pub screens: Option<FinalScreens>,
    pub ended_at: DateTime<Utc>,
    /// What is kept of the history above the last screen.
    pub history: History,
}

/// What an ended session's record holds of the history above its last
/// screen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum History {
    /// This many lines, in the session's `ScrollbackFile` (none when 0).
    Kept { lines: usize },
    /// None, and why.
    Missing { why: NoHistory },
}

/// What of an end's history is to be kept (`keep`: the configured number
/// of lines): the newest lines, or why nothing.
pub fn plan_history(keep: usize, read: Option<EndHistory>) -> Result<Vec<String>, NoHistory> {
    match read {
        _ if keep == 0 => Err(NoHistory::Disabled),
        Some(EndHistory::Captured(mut lines)) => {
            lines.drain(..lines.len().saturating_sub(keep));
            Ok(lines)
        }
        Some(EndHistory::Refused(_)) => Err(NoHistory::Refused),
        None => Err(NoHistory::NotCaptured),
    }
}

/// Drops what is past the window: anything older than `max_age`, then the
/// oldest ends beyond `max`. Returns the ids dropped.
pub fn prune(
    retained: &mut BTreeMap<SessionId, Retained>,
    retention: Retention,
    now: DateTime<Utc>,
) -> Vec<SessionId> {
    let mut by_age: Vec<(DateTime<Utc>, SessionId)> =
        retained.iter().map(|(id, r)| (r.ended_at, *id)).collect();
    by_age.sort();
    let excess = retained.len().saturating_sub(retention.max);
    let dropped: Vec<SessionId> = by_age
        .iter()
        .enumerate()
        .filter(|(i, (ended_at, _))| *i < excess || now - *ended_at > retention.max_age)
        .map(|(_, (_, id))| *id)
        .collect();
    for id in &dropped {
        retained.remove(id);
    }
    dropped
}

/// `ended.json` as the kept sessions are now, oldest end first.
pub fn to_file(kept: &BTreeMap<SessionId, Retained>) -> EndedFile {
    let mut sessions: Vec<EndedRecord> = kept
        .iter()
        .map(|(id, r)| EndedRecord {
            session_id: id.to_string(),
            ended_at: r.ended_at,
            summary: serde_json::to_value(&r.summary).unwrap_or_default(),
            screens: r
                .screens
                .as_ref()
                .and_then(|s| serde_json::to_value(s).ok()),
            scrollback: serde_json::to_value(&r.history).ok(),
        })
        .collect();
    sessions.sort_by_key(|r| r.ended_at);
    EndedFile {
        version: 1,
        sessions,
    }
}

/// `ended.json` read back; a record this build cannot read is skipped.
pub fn from_file(file: EndedFile) -> BTreeMap<SessionId, Retained> {
    let mut kept = BTreeMap::new();
    for record in file.sessions {
        let Ok(id) = record.session_id.parse::<SessionId>() else {
            continue;
        };
        let Ok(summary) = serde_json::from_value::<SessionSummary>(record.summary) else {
            tracing::warn!(session_id = %record.session_id, "skipping an unreadable ended session");
            continue;
        };
        let screens = record.screens.and_then(|s| serde_json::from_value(s).ok());
        let history = record
            .scrollback
            .and_then(|h| serde_json::from_value(h).ok())
            .unwrap_or(History::Missing {
                why: NoHistory::NotCaptured,
            });
        let ended_at = record.ended_at;
        kept.insert(
            id,
            Retained {
                summary,
                screens,
                ended_at,
                history,
            },
        );
    }
    kept
}

#[cfg(test)]
pub(in crate::supervisor) mod tests {
    use super::*;
    use crate::session::{ActorSummary, EndReason, SessionState, StateReason, Transport};

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    /// An ended session kept, ended at second `at_s`, with 5 lines kept.
    pub(in crate::supervisor) fn ended(n: u64, at_s: i64) -> (SessionId, Retained) {
        let id = SessionId(n);
        let summary = SessionSummary {
            session_id: id,
            tmux_name: id.to_string(),
            created_at: at(0),
            ended_at: Some(at(at_s)),
            queued_inputs: 0,
            thought: None,
            actor: ActorSummary {
                state: SessionState::Exited,
                state_reason: StateReason::End(EndReason::ProcessExit),
                state_since: at(at_s),
                current_command: String::new(),
                agent: None,
                command_line: Vec::new(),
                cwd: String::new(),
                title: String::new(),
                cols: 80,
                rows: 24,
                last_activity_at: None,
                transport: Transport::Disconnected,
                subscribers: 0,
                latest_seq: 0,
                attention: None,
                exit_status: Some(3),
                exit_signal: None,
                exit_unknown: None,
                keeps_exit: None,
                last_command_status: None,
                live: false,
            },
        };
        let retained = Retained {
            summary,
            screens: None,
            ended_at: at(at_s),
            history: History::Kept { lines: 5 },
        };
        (id, retained)
    }

    #[test]
    fn the_window_keeps_the_newest_within_age() {
        let retention = Retention {
            max: 2,
            max_age: Duration::seconds(100),
            history_lines: 0,
        };
        let ids = |ns: &[u64]| ns.iter().copied().map(SessionId).collect::<Vec<_>>();
        let mut kept: BTreeMap<SessionId, Retained> =
            [ended(1, 0), ended(2, 50), ended(3, 60), ended(4, 70)].into();
        assert_eq!(prune(&mut kept, retention, at(80)), ids(&[1, 2]));
        assert_eq!(
            kept.keys().copied().collect::<Vec<_>>(),
            ids(&[3, 4]),
            "count"
        );
        assert!(prune(&mut kept, retention, at(150)).is_empty());
        assert_eq!(prune(&mut kept, retention, at(165)), ids(&[3]));
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), ids(&[4]), "age");
    }

    #[test]
    fn what_is_kept_of_an_ends_history() {
        let lines = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
        let captured = |n| Some(EndHistory::Captured(lines(n)));
        let cases = [
            (2000, captured(3), Ok(lines(3))),
            (2, captured(3), Ok(vec!["1".to_owned(), "2".to_owned()])),
            (2000, captured(0), Ok(vec![])),
            (0, captured(3), Err(NoHistory::Disabled)),
            (0, None, Err(NoHistory::Disabled)),
            (2000, None, Err(NoHistory::NotCaptured)),
            (
                2000,
                Some(EndHistory::Refused("no".into())),
                Err(NoHistory::Refused),
            ),
        ];
        for (keep, read, want) in cases {
            assert_eq!(plan_history(keep, read.clone()), want, "{keep} {read:?}");
        }
    }
}
