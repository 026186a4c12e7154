//! How tracking of a session ends: the actor reports the session exited
//! and hands over its last summary, screens and (when it read them before
//! the pane went) the history above them, which stay readable; the end is
//! recorded with one reason, the same in the session's last state event
//! and in its `session_deleted` event.
//!
//! An end is one step over four owners, in this order: the registry lets
//! the session go (marked finishing), the restore book learns why, the
//! events and the registry file say so, and the endings keep what is left
//! and wake who waits for it. `Ends` holds those four and nothing else.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::endings::{Endings, History, NoHistory, Retained};
use super::persist::Persistence;
use super::queue::dropped_input;
use super::registry::{Entry, Registry};
use super::restore::Restore;
use super::types::SessionSummary;
use crate::id::SessionId;
use crate::session::{
    ActorSummary, EndHistory, EndReason, ExitUnknown, Final, SessionState, StateReason, StateView,
    Transport,
};
use crate::store::{NewEvent, Thought};
use crate::wire::{Deleted, Exit, Payload};

/// Ends tracking of sessions (see the module's doc).
#[derive(Clone)]
pub(super) struct Ends {
    registry: Arc<Registry>,
    persistence: Arc<Persistence>,
    restore: Arc<Restore>,
    endings: Arc<Endings>,
}

impl Ends {
    pub(super) fn new(
        registry: Arc<Registry>,
        persistence: Arc<Persistence>,
        restore: Arc<Restore>,
        endings: Arc<Endings>,
    ) -> Ends {
        Ends {
            registry,
            persistence,
            restore,
            endings,
        }
    }

    /// Stops tracking a session whose end is decided. `actor_id` (when
    /// given) must still be current.
    pub(super) async fn end(&self, id: SessionId, actor_id: Option<u64>, reason: EndReason) {
        self.end_with_history(id, actor_id, reason, None).await;
    }

    /// As `end`, with the history read before the session was closed
    /// (`history`: by whoever closed it), kept unless the actor read one.
    pub(super) async fn end_with_history(
        &self,
        id: SessionId,
        actor_id: Option<u64>,
        reason: EndReason,
        history: Option<EndHistory>,
    ) {
        // An attach that keeps failing stays detached: discovery must not
        // re-adopt it in a loop. Its thought stays for the same reason.
        let keep_detached = reason == EndReason::AttachFailed;
        let untracked = self.registry.untrack(
            id,
            actor_id,
            keep_detached,
            std::time::Instant::now(),
            |file| self.persistence.queue_thoughts(file),
        );
        let Some(untracked) = untracked else {
            return;
        };
        // Before this end is settled (below), so the last to settle sees
        // every session lost with the server.
        let server_gone = reason == EndReason::TmuxServerGone;
        self.restore.tracking_ended(id, server_gone, Utc::now());
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
        let _ = self.persistence.write_registry(&self.registry).await;
        if let Some(written) = untracked.thoughts_written {
            let _ = written.await;
        }
        if let Some(actor) = actor {
            let history = self.endings.keep_history(id, read).await;
            let mut retained = retained(&untracked.entry, untracked.thought, actor, &view, last);
            retained.history = history;
            self.endings.keep(id, retained).await;
        }
        let settled_all = self.registry.finish(id);
        if settled_all && server_gone {
            self.restore.announce_loss(&self.persistence, reason, 0);
        }
        self.endings.settled();
    }

    fn record(&self, event: NewEvent, entry: &Entry) {
        let event = event.session_id(entry.id()).tmux_name(entry.tmux_name());
        self.persistence.record(event);
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
        self.record(super::queue::state_event(view, exit), entry);
        let deleted = Payload::SessionDeleted(Deleted { exit: Some(exit) });
        self.record(NewEvent::new(deleted).reason(reason.as_str()), entry);
        if reason != EndReason::AttachFailed {
            for item in entry.queue() {
                self.record(dropped_input(item, reason.as_str()), entry);
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
