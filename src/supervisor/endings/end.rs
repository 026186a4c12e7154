//! How tracking of a session ends: the actor reports the session exited
//! and hands over its last summary, screens and (when it read them before
//! the pane went) the history above them, which stay readable; the end is
//! recorded with one reason, the same in the session's last state event
//! and in its `session_deleted` event. And reading what an end kept.

use chrono::{DateTime, Utc};

use super::retention::{History, NoHistory, Retained, plan_history};
use crate::id::SessionId;
use crate::session::{
    ActorSummary, EndHistory, ExitUnknown, Final, Region, SessionState, Snapshot, SnapshotFormat,
    StateReason, StateView, Transport,
};
use crate::store::{NewEvent, ScrollbackFile, Thought};
use crate::supervisor::Supervisor;
use crate::supervisor::lifecycle::EndReason;
use crate::supervisor::queue::dropped_input;
use crate::supervisor::registry::Entry;
use crate::supervisor::types::{
    DeleteMode, DeleteOutcome, Scrollback, SessionSummary, SupervisorError,
};
use crate::wire::{Deleted, Exit, Payload};

impl Supervisor {
    /// Stops tracking a session whose end is decided. `actor_id` (when
    /// given) must still be current.
    pub(in crate::supervisor) async fn end(
        &self,
        id: SessionId,
        actor_id: Option<u64>,
        reason: EndReason,
    ) {
        self.end_with_history(id, actor_id, reason, None).await;
    }

    /// As `end`, with the history read before the session was closed
    /// (`history`: by whoever closed it), kept unless the actor read one.
    pub(in crate::supervisor) async fn end_with_history(
        &self,
        id: SessionId,
        actor_id: Option<u64>,
        reason: EndReason,
        history: Option<EndHistory>,
    ) {
        // An attach that keeps failing stays detached: discovery must not
        // re-adopt it in a loop. Its thought stays for the same reason.
        let keep_detached = reason == EndReason::AttachFailed;
        let untracked = self.registry().untrack(
            id,
            actor_id,
            keep_detached,
            std::time::Instant::now(),
            |file| self.inner.persistence.queue_thoughts(file),
        );
        let Some(untracked) = untracked else {
            return;
        };
        // Before this end is settled (below), so the last to settle sees
        // every session lost with the server.
        self.tracking_ended(id, reason);
        let entry = &untracked.entry;
        let mut last = entry.handle().finish(reason).await.ok();
        let read = last.as_mut().and_then(|l| l.history.take()).or(history);
        let ended_at = Utc::now();
        let actor = last
            .as_ref()
            .map(|l| l.summary.clone())
            .or_else(|| entry.last_summary().map(|s| s.actor.clone()));
        let view = StateView {
            state: SessionState::Exited,
            reason: StateReason::End(reason),
            since: ended_at,
            attention: actor.as_ref().and_then(|a| a.attention),
            acknowledged_by: None,
        };
        self.record_end(entry, &view, actor.as_ref(), reason);
        let _ = self.persist().await;
        if let Some(written) = untracked.thoughts_written {
            let _ = written.await;
        }
        if let Some(actor) = actor {
            let history = self.keep_history(id, read).await;
            let mut retained = retained(&untracked.entry, untracked.thought, actor, &view, last);
            retained.history = history;
            self.retain(id, retained).await;
        }
        let settled_all = self.registry().finish(id);
        if settled_all && reason == EndReason::TmuxServerGone {
            self.announce_loss(reason, 0);
        }
        self.inner.endings.settled();
    }

    /// The exited state event, the delete event, and the queued inputs dropped.
    fn record_end(
        &self,
        entry: &Entry,
        view: &StateView,
        actor: Option<&ActorSummary>,
        reason: EndReason,
    ) {
        let exit = Exit {
            exit_status: actor.and_then(|a| a.exit_status),
            exit_signal: actor.and_then(|a| a.exit_signal),
        };
        self.record(
            crate::supervisor::queue::state_event(view, exit),
            entry.id(),
            entry.tmux_name(),
        );
        self.record(
            NewEvent::new(Payload::SessionDeleted(Deleted { exit: Some(exit) }))
                .reason(reason.as_str()),
            entry.id(),
            entry.tmux_name(),
        );
        if reason != EndReason::AttachFailed {
            for item in entry.queue() {
                self.record(
                    dropped_input(item, reason.as_str()),
                    entry.id(),
                    entry.tmux_name(),
                );
            }
        }
    }
}

/// What is kept of an ended session: its summary as of the end, and the
/// last screens when the actor could give them.
fn retained(
    entry: &Entry,
    thought: Option<Thought>,
    mut actor: ActorSummary,
    view: &StateView,
    last: Option<Final>,
) -> Retained {
    let ended_at: DateTime<Utc> = view.since;
    if let StateReason::End(end) = view.reason {
        let exit = Some((actor.exit_status, actor.exit_signal));
        actor.exit_unknown = ExitUnknown::judge(Some(end), exit, actor.keeps_exit);
    }
    actor.state = view.state;
    actor.state_reason = view.reason;
    actor.state_since = view.since;
    actor.transport = Transport::Disconnected;
    actor.subscribers = 0;
    let summary = SessionSummary {
        session_id: entry.id(),
        tmux_name: entry.tmux_name().to_owned(),
        created_at: entry.created_at(),
        ended_at: Some(ended_at),
        queued_inputs: 0,
        thought,
        actor,
    };
    Retained {
        summary,
        screens: last.map(|l| l.screens),
        ended_at,
        history: History::Missing {
            why: NoHistory::NotCaptured,
        },
    }
}
impl Supervisor {
    /// Keeps an ended session (dropping what falls out of the window) and
    /// writes `ended.json`; wakes waiters looking for it.
    pub(in crate::supervisor) async fn retain(&self, id: SessionId, retained: Retained) {
        let (written, dropped) = self.inner.endings.retain(id, retained, Utc::now());
        self.inner.endings.settled();
        let _ = written.await;
        self.forget_histories(dropped).await;
    }

    /// Drops ended sessions past the window (at each checkpoint).
    pub(in crate::supervisor) async fn prune_ended(&self) {
        let (written, dropped) = self.inner.endings.prune(Utc::now());
        if let Some(written) = written {
            let _ = written.await;
        }
        self.forget_histories(dropped).await;
    }

    /// Removes an ended session still kept (`DELETE` on it): its record
    /// leaves `ended.json`, then its history file goes, and a
    /// `session_removed` event says so. Nothing of it is served after.
    pub(in crate::supervisor) async fn remove_ended(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        let (written, summary) = self.inner.endings.remove(id).ok_or_else(|| not_found(id))?;
        let _ = written.await;
        self.forget_histories(vec![id]).await;
        let removed = NewEvent::new(Payload::SessionRemoved).reason("api_delete");
        self.record(removed, id, &summary.tmux_name);
        Ok(DeleteOutcome {
            session_id: id,
            mode,
            tmux_alive: false,
        })
    }

    /// Writes what is kept of an end's history beside `ended.json`, before
    /// the end is retained (so a record never names a file not yet there).
    pub(in crate::supervisor) async fn keep_history(
        &self,
        id: SessionId,
        read: Option<EndHistory>,
    ) -> History {
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
    pub(in crate::supervisor) fn sweep_histories(&self) {
        let keep = self.inner.endings.ids();
        let removed = self.inner.persistence.scrollback_files().sweep(&keep);
        if removed > 0 {
            tracing::info!(
                removed,
                "removed history files of ended sessions no longer kept"
            );
        }
    }

    /// The last summary of an ended session still kept.
    pub fn ended_summary(&self, id: SessionId) -> Option<SessionSummary> {
        self.inner.endings.summary(id)
    }

    /// Every ended session still kept, by id.
    pub fn ended_sessions(&self) -> Vec<SessionSummary> {
        self.inner.endings.summaries()
    }

    /// The history kept of an ended session: its last `lines` lines, or
    /// why there are none.
    pub(in crate::supervisor) async fn ended_scrollback(
        &self,
        id: SessionId,
        lines: usize,
    ) -> Result<Scrollback, SupervisorError> {
        let history = self
            .inner
            .endings
            .history(id)
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
    pub(in crate::supervisor) fn ended_snapshot(
        &self,
        id: SessionId,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<Snapshot, SupervisorError> {
        self.inner
            .endings
            .snapshot(id, format, region)
            .ok_or_else(|| not_found(id))?
            .ok_or_else(|| SupervisorError::NoLastScreen(id.to_string()))
    }
}

fn not_found(id: SessionId) -> SupervisorError {
    SupervisorError::NotFound(id.to_string())
}
