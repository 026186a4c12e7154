//! How tracking of a session ends: the actor reports the session exited
//! and hands over its last summary, screens and (when it read them before
//! the pane went) the history above them, which stay readable; the end is
//! recorded with one reason, the same in the session's last state event
//! and in its `session_deleted` event.

use chrono::{DateTime, Utc};

use super::retention::{History, NoHistory, Retained};
use crate::id::SessionId;
use crate::session::{
    ActorSummary, EndHistory, ExitUnknown, Final, SessionState, StateReason, StateView, Transport,
};
use crate::store::{NewEvent, Thought};
use crate::supervisor::Supervisor;
use crate::supervisor::lifecycle::EndReason;
use crate::supervisor::queue::dropped_input;
use crate::supervisor::registry::Entry;
use crate::supervisor::types::SessionSummary;
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
            let history = self.inner.endings.keep_history(id, read).await;
            let mut retained = retained(&untracked.entry, untracked.thought, actor, &view, last);
            retained.history = history;
            self.inner.endings.keep(id, retained).await;
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
