//! How a tmux session gets an actor: listed as `starting` at once, a
//! control client attached (paced, see `control::pace`), the actor spawned,
//! and the reservation committed as a tracked session in one locked
//! section. Creating, adopting, discovering, re-attaching and restoring all
//! come through here; `reattach` is the two ways a session tmuxd tracked
//! gets a new client (its client dropped, or tmuxd restarted).

mod reattach;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::endings::{Endings, Retained};
use super::ends::Ends;
use super::find::Finder;
use super::persist::Persistence;
use super::queue::{dropped_input, state_event};
use super::registry::{Commit, NewEntry, Registry, Reservation, restore_attention};
use super::restore::Restore;
use super::settings::Settings;
use super::tags;
use super::types::{SessionSummary, SupervisorError};
use crate::id::SessionId;
use crate::session::{
    ActorEvent, ActorSpec, ActorSummary, Attention, EndReason, ExitUnknown, SessionState, Spawned,
    StateReason, StateView,
};
use crate::store::{NewEvent, PersistedAttention, QueuedInput};
use crate::tmux::control::{ControlError, ControlOptions};
use crate::tmux::{SessionStatus, SessionView, Tmux};
use crate::wire::{Adopted, Deleted, Exit, Payload};

/// A tmux session about to get an actor.
pub(super) struct Attach {
    pub(super) reservation: Reservation,
    pub(super) view: SessionView,
    pub(super) created_at: DateTime<Utc>,
    pub(super) command: Option<String>,
    pub(super) cwd: Option<String>,
    /// Input still queued from before (a restart or a detach).
    pub(super) queue: Vec<QueuedInput>,
    /// tmux already carries the session's id (see `tags`).
    pub(super) tagged: bool,
    /// Attention raised before (a restart or a detach).
    pub(super) attention: Option<PersistedAttention>,
    /// tmuxd just made it with `remain-on-exit`: it cannot close during
    /// the handshake, so the attach need not wait for a quiet server.
    pub(super) kept_exit: bool,
    /// The state a previous run of tmuxd last recorded, and since when.
    pub(super) previous_state: Option<(SessionState, DateTime<Utc>)>,
}

/// What a new actor takes over from the one before it.
#[derive(Clone, Copy, Debug, Default)]
struct Carried {
    attention: Option<Attention>,
    state: Option<(SessionState, DateTime<Utc>)>,
}

/// The view tmux draws before discovery has looked at a session.
pub(super) fn default_view(name: &str) -> SessionView {
    SessionView {
        name: name.to_owned(),
        cols: 80,
        rows: 24,
        status_lines: 1,
        status_top: false,
        current_command: String::new(),
        cwd: String::new(),
        title: String::new(),
        dead: false,
        alternate_on: false,
        pid: None,
        active_pane: None,
    }
}

/// Gives sessions their actors (see the module's doc). It holds what an
/// attach steps over: tmux, the registry, persistence, the endings (a
/// session that ends mid-attach is kept), the finder (requests waiting for
/// an attach), the end of tracking and the restore book (a re-attach that
/// fails, a startup that finds tmux lost), and what every actor is given.
#[derive(Clone)]
pub(super) struct Attacher {
    pub(super) tmux: Tmux,
    pub(super) settings: Arc<Settings>,
    pub(super) registry: Arc<Registry>,
    pub(super) persistence: Arc<Persistence>,
    pub(super) endings: Arc<Endings>,
    pub(super) find: Finder,
    pub(super) ends: Ends,
    pub(super) restore: Arc<Restore>,
    /// Where every actor reports (the supervisor's event loop).
    pub(super) events: mpsc::UnboundedSender<ActorEvent>,
    /// Numbers every actor, so a report from one replaced is told apart.
    pub(super) actor_ids: ActorIds,
    /// Actors wake this when their control client hears `%sessions-changed`.
    pub(super) sessions_changed: Arc<Notify>,
    /// Woken when a control client attached (see `status_timers`).
    pub(super) client_attached: Arc<Notify>,
    /// The daemon's tasks: adoptions and startup re-attaches run in them.
    pub(super) tasks: TaskTracker,
    /// Fires when the daemon stops: attaches still waiting give up.
    pub(super) cancel: CancellationToken,
}

/// The actor ids handed out, from 1.
#[derive(Clone, Default)]
pub(super) struct ActorIds(Arc<AtomicU64>);

impl ActorIds {
    fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl Attacher {
    /// What adopting an existing session takes over from a record of it
    /// kept while it was detached.
    pub(super) fn adoption(
        &self,
        reservation: Reservation,
        view: SessionView,
        tagged: bool,
    ) -> Attach {
        let known = self.registry.detached(reservation.tmux_name());
        Attach {
            reservation,
            view,
            created_at: known.as_ref().map_or_else(Utc::now, |k| k.created_at),
            command: known.as_ref().and_then(|k| k.command.clone()),
            cwd: known.as_ref().and_then(|k| k.cwd.clone()),
            attention: known.as_ref().and_then(|k| k.attention.clone()),
            queue: known.map(|k| k.queued_inputs).unwrap_or_default(),
            tagged,
            kept_exit: false,
            previous_state: None,
        }
    }

    /// Lists a session discovery found and reserved as `starting` now, and
    /// adopts it in a task of its own (which a stopping daemon drops).
    pub(super) fn adopt_discovered(&self, reservation: Reservation, view: SessionView) {
        let attach = self.adoption(reservation, view, false);
        let announced = self.announce(&attach);
        let attacher = self.clone();
        self.tasks.spawn(async move {
            let event =
                NewEvent::new(Payload::SessionAdopted(Adopted::default())).reason("discovered");
            let adopted = tokio::select! {
                _ = attacher.cancel.cancelled() => return,
                adopted = attacher.attach_announced(attach, announced, event) => adopted,
            };
            if let Err(e) = adopted
                && !attacher.registry.is_closing()
            {
                tracing::warn!("adopting a discovered session failed: {e}");
            }
        });
    }

    /// Starts the actor and commits the reservation as a tracked session.
    pub(super) async fn attach(
        &self,
        attach: Attach,
        event: NewEvent,
    ) -> Result<SessionSummary, SupervisorError> {
        let announced = self.announce(&attach);
        self.attach_announced(attach, announced, event).await
    }

    /// Lists the session as `starting` until the guard drops, so a session
    /// whose attach waits its turn (see `control::pace`) is listed at once.
    fn announce(&self, attach: &Attach) -> Attaching {
        // Items whose typing had begun are reported, not queued (below).
        let queued_inputs = attach.queue.iter().filter(|i| !i.started).count();
        let reservation = &attach.reservation;
        let summary = SessionSummary {
            session_id: reservation.id(),
            tmux_name: reservation.tmux_name().to_owned(),
            created_at: attach.created_at,
            ended_at: None,
            queued_inputs,
            thought: None,
            actor: ActorSummary::without_client(
                SessionState::Starting,
                StateReason::Attaching,
                Utc::now(),
                (attach.view.cols, attach.view.rows),
            ),
        };
        self.registry.begin_attach(summary);
        Attaching {
            find: self.find.clone(),
            id: reservation.id(),
        }
    }

    /// `attach` for a session already listed as `starting` (`announce`).
    async fn attach_announced(
        &self,
        attach: Attach,
        _announced: Attaching,
        event: NewEvent,
    ) -> Result<SessionSummary, SupervisorError> {
        let Attach {
            reservation,
            view,
            created_at,
            command,
            cwd,
            queue,
            tagged,
            attention,
            kept_exit,
            previous_state,
        } = attach;
        let attention: Option<Attention> = attention.as_ref().and_then(restore_attention);
        // An item whose typing began before tmuxd stopped may be partly
        // typed: it is reported, never typed again.
        let (interrupted, queue): (Vec<_>, Vec<_>) = queue.into_iter().partition(|i| i.started);
        let id = reservation.id();
        let actor_id = self.actor_ids.next();
        let carried = Carried {
            attention,
            state: previous_state,
        };
        let spawned = match self
            .spawn_actor(id, actor_id, &view.name, carried, !kept_exit)
            .await
        {
            Ok(spawned) => spawned,
            Err(e) => {
                let name = reservation.tmux_name().to_owned();
                drop(reservation);
                let gone = matches!(
                    self.tmux.session_status(&view.name).await,
                    Ok(SessionStatus::Gone | SessionStatus::NoServer)
                );
                return match gone {
                    true => Ok(self
                        .ended_at_once(id, &name, &view, (created_at, kept_exit), event)
                        .await),
                    false => Err(e.into()),
                };
            }
        };
        let handle = spawned.handle;
        // Asked before the session is tracked: a session that ends at once
        // is reaped right away, and its creator still gets its summary.
        let actor = handle.summary().await.ok();
        let state = handle
            .watch_state()
            .await
            .unwrap_or_else(|_| state_unknown(attention));
        let name = reservation.tmux_name().to_owned();
        if !tagged {
            tags::tag_sessions(&self.tmux, vec![(name.clone(), id)]);
        }
        self.record(event, id, &name);
        for item in &interrupted {
            self.record(dropped_input(item, "interrupted"), id, &name);
        }
        let new = NewEntry {
            tmux_id: spawned.tmux_id,
            created_at,
            command,
            cwd,
            handle,
            actor_id,
            view: state,
            queue,
        };
        let gone = || SupervisorError::Gone(id.to_string());
        match self.registry.commit(reservation, new, actor) {
            Commit::Tracked { summary, renamed } => {
                // Adopted again under its old id: it is live, not ended
                // (and most often was never kept: nothing to discard).
                let _ = self.endings.discard(id).await;
                if let Some((old, new)) = renamed {
                    self.persistence
                        .record_rename(&self.registry, id, &old, &new);
                }
                let _ = self.persistence.write_registry(&self.registry).await;
                summary.map(|s| *s).ok_or_else(gone)
            }
            // The daemon is stopping and has let every other client go.
            Commit::Closing(handle) => {
                handle.shutdown().await;
                Err(gone())
            }
        }
    }

    /// A session whose program ended before a client could attach: its
    /// creation and its end are both recorded, it is kept as ended (without
    /// a screen: none was seen), and its creator still gets a summary.
    /// `kept_exit` is whether tmux keeps its dead pane (tmuxd made it): an
    /// adopted one that ends mid-attach says so, as it would attached.
    async fn ended_at_once(
        &self,
        id: SessionId,
        name: &str,
        view: &SessionView,
        (created_at, kept_exit): (DateTime<Utc>, bool),
        event: NewEvent,
    ) -> SessionSummary {
        let reason = EndReason::ProcessExit;
        let now = Utc::now();
        let end = StateView {
            state: SessionState::Exited,
            reason: StateReason::End(reason),
            since: now,
            attention: None,
            acknowledged_by: None,
        };
        let events = [
            event,
            state_event(&end, Exit::default()),
            NewEvent::new(Payload::SessionDeleted(Deleted::default())).reason(reason.as_str()),
        ];
        for event in events {
            self.record(event, id, name);
        }
        let summary = SessionSummary {
            session_id: id,
            tmux_name: name.to_owned(),
            created_at,
            ended_at: Some(now),
            queued_inputs: 0,
            thought: None,
            actor: ActorSummary {
                exit_unknown: ExitUnknown::judge(Some(reason), None, Some(kept_exit)),
                keeps_exit: Some(kept_exit),
                ..ActorSummary::without_client(end.state, end.reason, now, (view.cols, view.rows))
            },
        };
        let retained = Retained {
            summary: summary.clone(),
            screens: None,
            ended_at: now,
            history: self.endings.keep_history(id, None).await,
        };
        self.endings.keep(id, retained).await;
        summary
    }

    /// Attaches a control client to tmux session `name` and starts its actor.
    /// With `wait_for_quiet`, attaches once the server has been quiet a
    /// moment (see `tmux::control::handshake`): a session tmuxd did not make
    /// with `remain-on-exit` may close during the handshake, and that
    /// notification must not meet it.
    async fn spawn_actor(
        &self,
        id: SessionId,
        actor_id: u64,
        name: &str,
        carried: Carried,
        wait_for_quiet: bool,
    ) -> Result<Spawned, ControlError> {
        let spawned = crate::session::SessionHandle::spawn(ActorSpec {
            session_id: id,
            actor_id,
            tmux: self.tmux.clone(),
            tmux_name: name.to_owned(),
            control: ControlOptions {
                timeout: self.settings.command_timeout,
                wait_for_quiet,
                ..ControlOptions::default()
            },
            config: self.settings.actor.clone(),
            events: self.events.clone(),
            sessions_changed: self.sessions_changed.clone(),
            attention: carried.attention,
            previous_state: carried.state,
            // Past the heat budget, a session tmuxd did not make starts
            // cold: it would be let go within a second anyway.
            cold_start: wait_for_quiet
                && self
                    .tmux
                    .server_client()
                    .is_some_and(|c| self.registry.tracked_or_reserved_count() > c.live_clients()),
        })
        .await?;
        self.client_attached.notify_one();
        Ok(spawned)
    }

    fn record(&self, event: NewEvent, id: SessionId, tmux_name: &str) {
        self.persistence
            .record(event.session_id(id).tmux_name(tmux_name));
    }
}

/// The state of an actor gone before it could be watched (its exit is on
/// its way to the reaper): `starting`, as before it said anything.
fn state_unknown(attention: Option<Attention>) -> watch::Receiver<StateView> {
    let view = StateView {
        state: SessionState::Starting,
        reason: StateReason::Attaching,
        since: Utc::now(),
        attention,
        acknowledged_by: None,
    };
    watch::channel(view).1
}

/// A session listed as attaching; dropping it takes the listing away and
/// wakes requests waiting for the session (`Finder::handle`).
struct Attaching {
    find: Finder,
    id: SessionId,
}

impl Drop for Attaching {
    fn drop(&mut self) {
        self.find.attach_finished(self.id);
    }
}
