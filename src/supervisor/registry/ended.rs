//! The ended sessions the registry keeps readable, and `ended.json`.

use super::*;

impl Registry {
    /// Keeps an ended session, drops what falls out of the window (the ids
    /// dropped), and queues `ended.json` through `write`.
    pub fn retain<W>(
        &self,
        id: SessionId,
        retained: Retained,
        retention: Retention,
        now: DateTime<Utc>,
        write: impl FnOnce(EndedFile) -> W,
    ) -> (W, Vec<SessionId>) {
        let mut state = self.lock();
        state.retained.insert(id, retained);
        let dropped = prune(&mut state.retained, retention, now);
        (write(state.to_ended_file()), dropped)
    }

    /// Drops ended sessions past the window; `ended.json` is queued through
    /// `write` when any went.
    pub fn prune_ended<W>(
        &self,
        retention: Retention,
        now: DateTime<Utc>,
        write: impl FnOnce(EndedFile) -> W,
    ) -> (Option<W>, Vec<SessionId>) {
        let mut state = self.lock();
        let dropped = prune(&mut state.retained, retention, now);
        let written = (!dropped.is_empty()).then(|| write(state.to_ended_file()));
        (written, dropped)
    }

    /// Drops an ended session kept (`DELETE` on it) and queues
    /// `ended.json` through `write`; its last summary, or `None` when it
    /// is not kept.
    pub fn remove_ended<W>(
        &self,
        id: SessionId,
        write: impl FnOnce(EndedFile) -> W,
    ) -> Option<(W, SessionSummary)> {
        let mut state = self.lock();
        let removed = state.retained.remove(&id)?;
        Some((write(state.to_ended_file()), removed.summary))
    }

    pub fn is_retained(&self, id: SessionId) -> bool {
        self.lock().retained.contains_key(&id)
    }

    pub fn retained_ids(&self) -> BTreeSet<SessionId> {
        self.lock().retained.keys().copied().collect()
    }

    pub fn ended_summary(&self, id: SessionId) -> Option<SessionSummary> {
        self.lock().retained.get(&id).map(|r| r.summary.clone())
    }

    pub fn ended_summaries(&self) -> Vec<SessionSummary> {
        let state = self.lock();
        state.retained.values().map(|r| r.summary.clone()).collect()
    }

    pub fn ended_history(&self, id: SessionId) -> Option<History> {
        self.lock().retained.get(&id).map(|r| r.history.clone())
    }

    /// The last screen of an ended session kept: `Some(None)` when it was
    /// kept without one.
    pub fn ended_snapshot(
        &self,
        id: SessionId,
        format: crate::session::SnapshotFormat,
        region: crate::session::Region,
    ) -> Option<Option<crate::session::Snapshot>> {
        let state = self.lock();
        let retained = state.retained.get(&id)?;
        Some(
            retained
                .screens
                .as_ref()
                .map(|s| s.get(format, region).clone()),
        )
    }
}

impl State {
    pub(super) fn to_ended_file(&self) -> EndedFile {
        let mut sessions: Vec<EndedRecord> = self
            .retained
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

    /// Takes `ended.json` back; a record this build cannot read is skipped.
    pub(super) fn load_ended(&mut self, file: EndedFile) {
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
            self.advance_past(id);
            self.retained.insert(
                id,
                Retained {
                    summary,
                    screens,
                    ended_at: record.ended_at,
                    history,
                },
            );
        }
    }
}
