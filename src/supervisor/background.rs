//! The supervisor's background loops: discovery (one `list-panes -a` per
//! tick), the reaper (acts on client exits at once, retries on its tick) and
//! checkpoints.

use std::collections::BTreeSet;

use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Supervisor;
use super::lifecycle::EndReason;
use super::plan::{Known, plan_discovery};
use crate::session::{ActorEvent, ClientExit, ClientExited};
use crate::tmux::session_views;

pub(super) fn spawn_loops(
    supervisor: &Supervisor,
    actor_events: mpsc::UnboundedReceiver<ActorEvent>,
    tasks: &TaskTracker,
    cancel: CancellationToken,
) {
    let settings = &supervisor.inner.settings;
    let discovery = discover_often(supervisor.clone(), cancel.clone());
    let checkpoint = {
        let supervisor = supervisor.clone();
        every(settings.checkpoint_interval, cancel.clone(), move || {
            let supervisor = supervisor.clone();
            async move { supervisor.checkpoint().await }
        })
    };
    tasks.spawn(discovery);
    tasks.spawn(checkpoint);
    tasks.spawn(handle_actor_events(
        supervisor.clone(),
        actor_events,
        cancel,
        tasks.clone(),
    ));
}

/// Discovery every `discovery_interval`, and early when an actor saw tmux
/// redraw its client (a resize, another window, a split): one `list-panes -a`
/// then serves every session, so snapshots follow a new geometry within
/// milliseconds. Early ticks are spaced by `EARLY_DISCOVERY_GAP`, so a
/// program that redraws all the time costs at most one call per gap.
async fn discover_often(supervisor: Supervisor, cancel: CancellationToken) {
    let hint = supervisor.inner.layout_hint.clone();
    let mut ticks = tokio::time::interval(supervisor.inner.settings.discovery_interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticks.tick().await;
    let mut last = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticks.tick() => {}
            _ = hint.notified() => {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep_until(last + EARLY_DISCOVERY_GAP) => {}
                }
            }
        }
        supervisor.discover().await;
        last = tokio::time::Instant::now();
    }
}

/// Least time between two discovery ticks that a redraw brought forward.
const EARLY_DISCOVERY_GAP: std::time::Duration = std::time::Duration::from_millis(200);

/// Runs `work` every `period` until cancelled; a slow run delays the next
/// instead of piling up.
async fn every<F, Fut>(period: std::time::Duration, cancel: CancellationToken, mut work: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticks.tick() => work().await,
        }
    }
}

/// Acts on what actors report: a state change is recorded in order (and may
/// release queued input); a client exit is re-attached if the session lives,
/// otherwise its end is recorded. Each exit is handled in a task of its own,
/// so a burst of ends (each asks tmux and writes the registry) is reaped in
/// parallel rather than queued behind one another.
async fn handle_actor_events(
    supervisor: Supervisor,
    mut actor_events: mpsc::UnboundedReceiver<ActorEvent>,
    cancel: CancellationToken,
    tasks: TaskTracker,
) {
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            Some(event) = actor_events.recv() => match event {
                ActorEvent::Exited(exit) => {
                    tasks.spawn(reap_until_known(supervisor.clone(), exit, cancel.clone()));
                }
                ActorEvent::State { session_id, actor_id, view } => {
                    supervisor.on_state(&session_id, actor_id, view).await;
                }
            },
        }
    }
}

/// Reaps one exit; until it can (the session is still being attached, or
/// tmux cannot be asked), tries again, soon at first, then every reaper tick.
async fn reap_until_known(supervisor: Supervisor, exit: ClientExited, cancel: CancellationToken) {
    let mut exit = exit;
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        match supervisor.reap(exit).await {
            Ok(()) => return,
            Err(again) => exit = again,
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(supervisor.inner.settings.reaper_interval);
    }
}

impl Supervisor {
    /// Handles one client exit; gives it back if tmux could not be asked.
    async fn reap(&self, exit: ClientExited) -> Result<(), ClientExited> {
        let Some(id) = super::parse_id(&exit.session_id) else {
            return Ok(());
        };
        let name = {
            let registry = self.registry();
            match registry.sessions.get(&id) {
                Some(entry) if entry.actor_id == exit.actor_id && entry.ending.is_none() => {
                    entry.tmux_name.clone()
                }
                // Still being attached: the entry appears in a moment.
                None if registry.reserved.values().any(|&r| r == id) => return Err(exit),
                _ => return Ok(()),
            }
        };
        let alive = match exit.why {
            ClientExit::ServerExited => false,
            _ => match self.tmux().has_session(&name).await {
                Ok(alive) => alive,
                Err(e) => {
                    tracing::warn!(tmux_name = %name, "cannot tell whether the session lives: {e}");
                    return Err(exit);
                }
            },
        };
        if alive {
            self.reattach(id, exit.actor_id).await;
        } else {
            let reason = match exit.why {
                ClientExit::ServerExited => EndReason::TmuxServerGone,
                _ => EndReason::ProcessExit,
            };
            self.end(id, Some(exit.actor_id), reason).await;
        }
        Ok(())
    }

    /// One discovery tick: restore persisted sessions once tmux answers,
    /// refresh every actor's view, adopt new sessions, forget detached ones
    /// that are gone.
    pub(super) async fn discover(&self) {
        let looked_at = std::time::Instant::now();
        let panes = match self.tmux().list_panes().await {
            Ok(panes) => panes,
            Err(e) => {
                tracing::warn!("discovery: {e}");
                return;
            }
        };
        let live = session_views(&panes);
        let pending = self.registry().restore_pending.take();
        if let Some(file) = pending {
            self.restore(file, &live).await;
        }
        let (plan, handles) = {
            let mut registry = self.registry();
            registry.seen_names = live.keys().cloned().collect();
            let known = Known {
                tracked: registry
                    .sessions
                    .values()
                    .map(|e| (e.tmux_name.as_str(), e.id))
                    .collect(),
                detached: registry.detached.keys().map(String::as_str).collect(),
                // A session that ended since tmux was asked is listed, but gone.
                reserved: registry
                    .reserved
                    .keys()
                    .chain(
                        registry
                            .ended
                            .iter()
                            .filter(|(_, at)| **at >= looked_at)
                            .map(|(name, _)| name),
                    )
                    .map(String::as_str)
                    .collect::<BTreeSet<_>>(),
            };
            let plan = plan_discovery(&live, &known, &self.inner.settings.filter);
            for name in &plan.forget_detached {
                registry.detached.remove(name);
            }
            registry.ended.retain(|_, at| *at >= looked_at);
            let handles: Vec<_> = plan
                .update
                .iter()
                .filter_map(|(id, view)| {
                    registry
                        .sessions
                        .get(id)
                        .map(|e| (e.handle.clone(), view.clone()))
                })
                .collect();
            (plan, handles)
        };
        for (handle, view) in handles {
            handle.update_view(view);
        }
        for name in &plan.adopt {
            self.adopt_discovered(live[name].clone()).await;
        }
        if !plan.forget_detached.is_empty() {
            let _ = self.persist().await;
        }
    }

    async fn checkpoint(&self) {
        let _ = self.persist().await;
        self.inner.persistence.sync_events();
    }
}
