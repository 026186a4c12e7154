//! Ended sessions stay readable for a while: their last summary (state
//! `exited`, the end's reason, the exit status when tmux gave it), last
//! screens and the history above them, bounded by count and age, in memory
//! and in `ended.json` (the history in a file per session beside it) so a
//! restart keeps them. A `DELETE` removes one before its time.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::{DeleteMode, DeleteOutcome, Scrollback, SessionSummary, Supervisor, SupervisorError};
use crate::id::SessionId;
use crate::session::{EndHistory, FinalScreens, Region, Snapshot, SnapshotFormat};
use crate::store::{EventKind, NewEvent, ScrollbackFile};

/// How many ended sessions are kept, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    pub max: usize,
    pub max_age: Duration,
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

/// Why an ended session has no history kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoHistory {
    /// `session.ended_scrollback_lines` is 0.
    Disabled,
    /// The pane was gone before tmuxd could read it: the session was
    /// killed outside tmuxd, its tmux server went, an adopted session's
    /// program ended (tmux closes such a pane at once), or it ended before
    /// tmuxd attached.
    NotCaptured,
    /// tmux refused to give it.
    Refused,
    /// Its file could not be written, or was lost from the data dir.
    Lost,
}

impl NoHistory {
    pub fn as_str(self) -> &'static str {
        match self {
            NoHistory::Disabled => "disabled",
            NoHistory::NotCaptured => "not_captured",
            NoHistory::Refused => "refused",
            NoHistory::Lost => "lost",
        }
    }
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

impl Supervisor {
    /// Keeps an ended session (dropping what falls out of the window) and
    /// writes `ended.json`; wakes waiters looking for it.
    pub(super) async fn retain(&self, id: SessionId, retained: Retained) {
        let retention = self.inner.settings.retention;
        let (written, dropped) =
            self.registry()
                .retain(id, retained, retention, Utc::now(), |file| {
                    self.inner.persistence.queue_ended(file)
                });
        self.inner.retained.send_modify(|n| *n += 1);
        let _ = written.await;
        self.forget_histories(dropped).await;
    }

    /// Drops ended sessions past the window (at each checkpoint).
    pub(super) async fn prune_ended(&self) {
        let retention = self.inner.settings.retention;
        let (written, dropped) = self.registry().prune_ended(retention, Utc::now(), |file| {
            self.inner.persistence.queue_ended(file)
        });
        if let Some(written) = written {
            let _ = written.await;
        }
        self.forget_histories(dropped).await;
    }

    /// Removes an ended session still kept (`DELETE` on it): its record
    /// leaves `ended.json`, then its history file goes, and a
    /// `session_removed` event says so. Nothing of it is served after.
    pub(super) async fn remove_ended(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        let (written, summary) = self
            .registry()
            .remove_ended(id, |file| self.inner.persistence.queue_ended(file))
            .ok_or_else(|| not_found(id))?;
        let _ = written.await;
        self.forget_histories(vec![id]).await;
        let removed = NewEvent::new(EventKind::SessionRemoved).reason("api_delete");
        self.record(removed, id, &summary.tmux_name);
        Ok(DeleteOutcome {
            session_id: id,
            mode,
            tmux_alive: false,
        })
    }

    /// Writes what is kept of an end's history beside `ended.json`, before
    /// the end is retained (so a record never names a file not yet there).
    pub(super) async fn keep_history(&self, id: SessionId, read: Option<EndHistory>) -> History {
        if let Some(EndHistory::Refused(error)) = &read {
            tracing::warn!(session_id = %id, "tmux did not give the history of an ended session: {error}");
        }
        let keep = self.inner.settings.actor.ended_scrollback_lines;
        let lines = match plan_history(keep, read) {
            Ok(lines) => lines,
            Err(why) => return History::Missing { why },
        };
        if lines.is_empty() {
            return History::Kept { lines: 0 };
        }
        let file = ScrollbackFile::new(id, lines);
        let count = file.lines.len();
        let files = self.inner.persistence.scrollback_files();
        match tokio::task::spawn_blocking(move || files.save(&file)).await {
            Ok(Ok(())) => History::Kept { lines: count },
            Ok(Err(e)) => {
                tracing::warn!(session_id = %id, "cannot keep an ended session's history: {e}");
                History::Missing {
                    why: NoHistory::Lost,
                }
            }
            Err(_) => History::Missing {
                why: NoHistory::Lost,
            },
        }
    }

    /// Removes the history files of ended sessions no longer kept, after
    /// `ended.json` stopped naming them.
    async fn forget_histories(&self, dropped: Vec<SessionId>) {
        if dropped.is_empty() {
            return;
        }
        let files = self.inner.persistence.scrollback_files();
        let removed = tokio::task::spawn_blocking(move || {
            for id in dropped {
                if let Err(e) = files.remove(id) {
                    tracing::warn!("cannot remove an ended session's history: {e}");
                }
            }
        });
        let _ = removed.await;
    }

    /// Removes history files no kept ended session names (a crash came
    /// between dropping a record and its file); at startup.
    pub(super) fn sweep_histories(&self) {
        let keep = self.registry().retained_ids();
        let removed = self.inner.persistence.scrollback_files().sweep(&keep);
        if removed > 0 {
            tracing::info!(
                removed,
                "removed history files of ended sessions no longer kept"
            );
        }
    }

    /// Returns once a session whose end is being recorded (no longer
    /// tracked, not yet retained) has been retained; at once otherwise. An
    /// end always finishes, so this does not wait long.
    pub(super) async fn until_retained(&self, id: SessionId) {
        let mut retained = self.inner.retained.subscribe();
        while self.registry().is_finishing(id) {
            if retained.changed().await.is_err() {
                return;
            }
        }
    }

    /// The last summary of an ended session still kept.
    pub fn ended_summary(&self, id: SessionId) -> Option<SessionSummary> {
        self.registry().ended_summary(id)
    }

    /// Every ended session still kept, by id.
    pub fn ended_sessions(&self) -> Vec<SessionSummary> {
        self.registry().ended_summaries()
    }

    /// The history kept of an ended session: its last `lines` lines, or
    /// why there are none.
    pub(super) async fn ended_scrollback(
        &self,
        id: SessionId,
        lines: usize,
    ) -> Result<Scrollback, SupervisorError> {
        let history = self
            .registry()
            .ended_history(id)
            .ok_or_else(|| not_found(id))?;
        let missing = |why| Scrollback {
            lines: Vec::new(),
            ended: true,
            missing: Some(why),
        };
        match history {
            History::Missing { why } => Ok(missing(why)),
            History::Kept { lines: 0 } => Ok(Scrollback {
                lines: Vec::new(),
                ended: true,
                missing: None,
            }),
            History::Kept { .. } => {
                let files = self.inner.persistence.scrollback_files();
                let loaded = tokio::task::spawn_blocking(move || files.load(id)).await;
                match loaded {
                    Ok(Ok(Some(mut file))) => {
                        file.lines.drain(..file.lines.len().saturating_sub(lines));
                        Ok(Scrollback {
                            lines: file.lines,
                            ended: true,
                            missing: None,
                        })
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(session_id = %id, "cannot read an ended session's history: {e}");
                        Ok(missing(NoHistory::Lost))
                    }
                    _ => Ok(missing(NoHistory::Lost)),
                }
            }
        }
    }

    /// The last screen of an ended session, if it was kept.
    pub(super) fn ended_snapshot(
        &self,
        id: SessionId,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<Snapshot, SupervisorError> {
        self.registry()
            .ended_snapshot(id, format, region)
            .ok_or_else(|| not_found(id))?
            .ok_or_else(|| SupervisorError::NoLastScreen(id.to_string()))
    }
}

fn not_found(id: SessionId) -> SupervisorError {
    SupervisorError::NotFound(id.to_string())
}

#[cfg(test)]
pub(super) mod tests {
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
