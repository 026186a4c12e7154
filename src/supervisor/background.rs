//! The supervisor's background loops besides discovery (`discovery.rs`):
//! the reaper, which acts on what actors report (client exits at once,
//! retried on its tick), and checkpoints.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::attach::Attacher;
use super::endings::Endings;
use super::ends::Ends;
use super::input::Inputs;
use super::persist::Persistence;
use super::registry::{ExitMeets, Registry};
use super::restore::Restore;
use crate::id::SessionId;
use crate::session::{ActorEvent, ClientExited, EndReason};
use crate::tmux::{SessionStatus, Tmux, TmuxError};

/// Acts on what actors report (see `Reaper::run`): it holds what those
/// reports change.
#[derive(Clone)]
pub(super) struct Reaper {
    pub(super) tmux: Tmux,
    pub(super) registry: Arc<Registry>,
    pub(super) persistence: Arc<Persistence>,
    /// A state change may release queued input.
    pub(super) input: Inputs,
    /// A session whose client dropped while it lives gets a new one.
    pub(super) attacher: Attacher,
    pub(super) ends: Ends,
    /// Each session's windows and panes, kept for a restore.
    pub(super) restore: Arc<Restore>,
    /// The longest pause between two tries at one exit.
    pub(super) interval: Duration,
}

impl Reaper {
    /// Acts on what actors report: a state change is recorded in order (and
    /// may release queued input); a client exit is re-attached if the
    /// session lives, otherwise its end is recorded. Each exit is handled
    /// in a task of its own, so a burst of ends (each asks tmux and writes
    /// the registry) is reaped in parallel rather than queued behind one
    /// another.
    pub(super) async fn run(
        self,
        mut actor_events: mpsc::UnboundedReceiver<ActorEvent>,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) {
        loop {
            let event = tokio::select! {
                _ = cancel.cancelled() => return,
                Some(event) = actor_events.recv() => event,
            };
            match event {
                ActorEvent::Exited(exit) => {
                    let reaper = self.clone();
                    tasks.spawn(reaper.reap_until_known(exit, cancel.clone()));
                }
                ActorEvent::State {
                    session_id,
                    actor_id,
                    view,
                } => self.input.on_state(session_id, actor_id, view).await,
                // Any actor of the session may report it: the name is tmux's.
                ActorEvent::Renamed {
                    session_id, name, ..
                } => (self.persistence).follow_rename(&self.registry, session_id, &name),
                ActorEvent::Panes {
                    session_id,
                    actor_id,
                    rows,
                } => {
                    if let Some(name) = self.registry.current_name(session_id, actor_id) {
                        self.restore.observed(session_id, &name, &rows);
                    }
                }
            }
        }
    }

    /// Reaps one exit; until it can (the session is still being attached,
    /// or tmux cannot be asked), tries again, soon at first, then every
    /// reaper tick.
    async fn reap_until_known(self, exit: ClientExited, cancel: CancellationToken) {
        let mut exit = exit;
        let mut pause = Duration::from_millis(5);
        loop {
            match self.reap(exit).await {
                Ok(()) => return,
                Err(again) => exit = again,
            }
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(self.interval);
        }
    }

    /// Handles one client exit; gives it back if tmux could not be asked.
    async fn reap(&self, exit: ClientExited) -> Result<(), ClientExited> {
        let id = exit.session_id;
        let name = match self.registry.exit_meets(id, exit.actor_id) {
            ExitMeets::Current(name) => name,
            // Still being attached: the entry appears in a moment.
            ExitMeets::Attaching => return Err(exit),
            ExitMeets::Nothing => return Ok(()),
        };
        let reason = match self.session_status(id, &name).await {
            Ok(SessionStatus::Alive) => {
                self.attacher.reattach(id, exit.actor_id).await;
                return Ok(());
            }
            Ok(SessionStatus::Gone) => EndReason::ProcessExit,
            // tmux exits with its last session: the program's exit ended both.
            Ok(SessionStatus::NoServer) if exit.program_exited => EndReason::ProcessExit,
            Ok(SessionStatus::NoServer) => EndReason::TmuxServerGone,
            Err(e) => {
                tracing::warn!(tmux_name = %name, "cannot tell whether the session lives: {e}");
                return Err(exit);
            }
        };
        self.ends.end(id, Some(exit.actor_id), reason).await;
        Ok(())
    }

    /// Whether session `name` lives: asked over another tracked session's
    /// control client when there is one, else forked (see `tmux::route`).
    async fn session_status(&self, id: SessionId, name: &str) -> Result<SessionStatus, TmuxError> {
        let lender = self.registry.any_handle_except(Some(id));
        (self.tmux)
            .session_status_routed(name, lender.as_ref())
            .await
    }
}

/// Writes the registry file, lets ended sessions past their time go, and
/// syncs the event log, every `period` until cancelled.
pub(super) async fn checkpoints(
    period: Duration,
    registry: Arc<Registry>,
    persistence: Arc<Persistence>,
    endings: Arc<Endings>,
    cancel: CancellationToken,
) {
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticks.tick() => {}
        }
        // A slow checkpoint delays the next instead of piling up.
        let _ = persistence.write_registry(&registry).await;
        endings.prune_due().await;
        persistence.sync_events();
    }
}
