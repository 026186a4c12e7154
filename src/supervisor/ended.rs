//! Ended sessions stay readable for a while: their last summary (state
//! `exited`, the end's reason, the exit status when tmux gave it) and last
//! screens, bounded by count and age, in memory and in `ended.json` so a
//! restart keeps them.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::registry::{Registry, format_id, parse_id};
use super::{SessionSummary, Supervisor, SupervisorError};
use crate::session::{FinalScreens, Region, Snapshot, SnapshotFormat};
use crate::store::{EndedFile, EndedRecord};

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
}

/// Drops what is past the window: anything older than `max_age`, then the
/// oldest ends beyond `max`. Returns whether anything was dropped.
pub fn prune(
    retained: &mut BTreeMap<u64, Retained>,
    retention: Retention,
    now: DateTime<Utc>,
) -> bool {
    let before = retained.len();
    retained.retain(|_, r| now - r.ended_at <= retention.max_age);
    if retained.len() > retention.max {
        let mut by_age: Vec<(DateTime<Utc>, u64)> =
            retained.iter().map(|(id, r)| (r.ended_at, *id)).collect();
        by_age.sort();
        let excess = retained.len() - retention.max;
        for (_, id) in by_age.into_iter().take(excess) {
            retained.remove(&id);
        }
    }
    retained.len() != before
}

impl Registry {
    pub fn to_ended_file(&self) -> EndedFile {
        let mut sessions: Vec<EndedRecord> = self
            .retained
            .iter()
            .map(|(id, r)| EndedRecord {
                session_id: format_id(*id),
                ended_at: r.ended_at,
                summary: serde_json::to_value(&r.summary).unwrap_or_default(),
                screens: r
                    .screens
                    .as_ref()
                    .and_then(|s| serde_json::to_value(s).ok()),
            })
            .collect();
        sessions.sort_by_key(|r| r.ended_at);
        EndedFile {
            version: 1,
            sessions,
        }
    }

    /// Takes `ended.json` back; a record this build cannot read is skipped.
    pub fn load_ended(&mut self, file: EndedFile) {
        for record in file.sessions {
            let Some(id) = parse_id(&record.session_id) else {
                continue;
            };
            let Ok(summary) = serde_json::from_value::<SessionSummary>(record.summary) else {
                tracing::warn!(session_id = %record.session_id, "skipping an unreadable ended session");
                continue;
            };
            let screens = record.screens.and_then(|s| serde_json::from_value(s).ok());
            self.advance_past(id);
            self.retained.insert(
                id,
                Retained {
                    summary,
                    screens,
                    ended_at: record.ended_at,
                },
            );
        }
    }
}

impl Supervisor {
    /// Keeps an ended session (dropping what falls out of the window) and
    /// writes `ended.json`; wakes waiters looking for it.
    pub(super) async fn retain(&self, id: u64, retained: Retained) {
        let written = {
            let mut registry = self.registry();
            registry.retained.insert(id, retained);
            prune(
                &mut registry.retained,
                self.inner.settings.retention,
                Utc::now(),
            );
            self.inner.persistence.queue_ended(registry.to_ended_file())
        };
        self.inner.retained.send_modify(|n| *n += 1);
        let _ = written.await;
    }

    /// Drops ended sessions past the window (at each checkpoint).
    pub(super) async fn prune_ended(&self) {
        let written = {
            let mut registry = self.registry();
            let retention = self.inner.settings.retention;
            prune(&mut registry.retained, retention, Utc::now())
                .then(|| self.inner.persistence.queue_ended(registry.to_ended_file()))
        };
        if let Some(written) = written {
            let _ = written.await;
        }
    }

    /// Returns once a session whose end is being recorded (no longer
    /// tracked, not yet retained) has been retained; at once otherwise. An
    /// end always finishes, so this does not wait long.
    pub(super) async fn until_retained(&self, session_id: &str) {
        let Some(id) = parse_id(session_id) else {
            return;
        };
        let mut retained = self.inner.retained.subscribe();
        while self.registry().finishing.contains(&id) {
            if retained.changed().await.is_err() {
                return;
            }
        }
    }

    /// The last summary of an ended session still kept.
    pub fn ended_summary(&self, session_id: &str) -> Option<SessionSummary> {
        let id = parse_id(session_id)?;
        let registry = self.registry();
        registry.retained.get(&id).map(|r| r.summary.clone())
    }

    /// Every ended session still kept, by id.
    pub fn ended_sessions(&self) -> Vec<SessionSummary> {
        let registry = self.registry();
        registry
            .retained
            .values()
            .map(|r| r.summary.clone())
            .collect()
    }

    /// The last screen of an ended session, if it was kept.
    pub(super) fn ended_snapshot(
        &self,
        session_id: &str,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<Snapshot, SupervisorError> {
        let id = parse_id(session_id).ok_or_else(|| not_found(session_id))?;
        let registry = self.registry();
        let retained = registry
            .retained
            .get(&id)
            .ok_or_else(|| not_found(session_id))?;
        let screens = retained.screens.as_ref().ok_or_else(|| {
            SupervisorError::Ended(format!("{session_id} (its last screen was not kept)"))
        })?;
        Ok(screens.get(format, region).clone())
    }
}

fn not_found(session_id: &str) -> SupervisorError {
    SupervisorError::NotFound(session_id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{ActorSummary, EndReason, SessionState, StateReason, Transport};

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    fn ended(id: u64, at_s: i64) -> (u64, Retained) {
        let summary = SessionSummary {
            session_id: format_id(id),
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
            },
        };
        let retained = Retained {
            summary,
            screens: None,
            ended_at: at(at_s),
        };
        (id, retained)
    }

    #[test]
    fn the_window_keeps_the_newest_within_age() {
        let retention = Retention {
            max: 2,
            max_age: Duration::seconds(100),
        };
        let mut kept: BTreeMap<u64, Retained> =
            [ended(1, 0), ended(2, 50), ended(3, 60), ended(4, 70)].into();
        assert!(prune(&mut kept, retention, at(80)));
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), [3, 4], "count");
        assert!(!prune(&mut kept, retention, at(150)));
        assert!(prune(&mut kept, retention, at(165)));
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), [4], "age");
    }

    #[test]
    fn the_file_round_trips() {
        let mut registry = Registry::new(1);
        let (id, retained) = ended(7, 10);
        registry.retained.insert(id, retained);
        let file = registry.to_ended_file();
        let mut back = Registry::new(1);
        back.load_ended(file);
        let summary = &back.retained[&7].summary;
        assert_eq!(summary.actor.exit_status, Some(3));
        assert_eq!(
            summary.actor.state_reason,
            StateReason::End(EndReason::ProcessExit)
        );
        assert_eq!(
            back.allocate_id(),
            8,
            "ids of ended sessions are not reused"
        );
    }
}
