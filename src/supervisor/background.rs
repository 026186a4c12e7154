//! The supervisor's background loops: discovery (when tmux says sessions
//! changed, and a slow sweep), the reaper (acts on client exits at once,
//! retries on its tick) and checkpoints.

use std::collections::BTreeMap;

use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Supervisor;
use super::plan::DiscoveryPlan;
use super::registry::{Birth, ExitMeets, Planned};
use crate::id::SessionId;
use crate::session::{ActorEvent, ClientExited, EndReason, SessionHandle};
use crate::tmux::command::{ListPaneInfo, ListSessions, PaneScope, Target, TmuxCommand};
use crate::tmux::{PaneInfo, SessionStatus, SessionView, TmuxError, session_views};

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
    tasks.spawn(super::status_timers::align_after_attaches(
        supervisor.inner.client_attached.clone(),
        supervisor.registry().clone(),
        supervisor.tmux().clone(),
        cancel.clone(),
    ));
    tasks.spawn(checkpoint);
    tasks.spawn(handle_actor_events(
        supervisor.clone(),
        actor_events,
        cancel,
        tasks.clone(),
    ));
}

/// Discovery when tmux says sessions changed (`%sessions-changed`, which
/// every actor's control client hears), when a session too young to adopt
/// has lived `discovery.min_age_ms`, else a sweep: every
/// `discovery_interval` while no control client is attached to hear
/// anything (no session, or every one cold), and every `SAFETY_SWEEP` as a
/// safety net otherwise.
async fn discover_often(supervisor: Supervisor, cancel: CancellationToken) {
    let changed = supervisor.inner.sessions_changed.clone();
    let poll = supervisor.inner.settings.discovery_interval;
    loop {
        let listening = supervisor.session_count() > 0 && supervisor.registry().any_live();
        let period = if listening {
            SAFETY_SWEEP.max(poll)
        } else {
            poll
        };
        let recheck_at = supervisor.inner.sightings.recheck_at();
        let recheck = async {
            match recheck_at {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        let sweep = tokio::select! {
            _ = cancel.cancelled() => return,
            _ = changed.notified() => false,
            _ = recheck => false,
            _ = tokio::time::sleep(period) => listening,
        };
        let adopted = supervisor.discover(Adoptions::Running).await;
        if sweep && !adopted.is_empty() {
            tracing::warn!(
                adopted = ?adopted,
                "the safety sweep found sessions no tmux event announced"
            );
        }
    }
}

/// Which sessions a discovery adopts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Adoptions {
    /// At startup: every session there before the daemon, whatever its age.
    Startup,
    /// While running: sessions that have lived `discovery.min_age_ms`.
    Running,
}

/// Up to this many new sessions get their panes listed one session at a
/// time; more, and every pane is listed at once.
const ONE_BY_ONE: usize = 8;

/// How often discovery looks anyway while control clients listen for changes.
const SAFETY_SWEEP: std::time::Duration = std::time::Duration::from_secs(30);

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
                    supervisor.inner.input.on_state(session_id, actor_id, view).await;
                }
                // Any actor of the session may report it: the name is tmux's.
                ActorEvent::Renamed { session_id, name, .. } => {
                    supervisor.inner.persistence.follow_rename(supervisor.registry(), session_id, &name);
                }
                ActorEvent::Panes { session_id, actor_id, rows } => {
                    if let Some(name) = supervisor.registry().current_name(session_id, actor_id) {
                        supervisor.inner.restore.observed(session_id, &name, &rows);
                    }
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
        let id = exit.session_id;
        let name = match self.registry().exit_meets(id, exit.actor_id) {
            ExitMeets::Current(name) => name,
            // Still being attached: the entry appears in a moment.
            ExitMeets::Attaching => return Err(exit),
            ExitMeets::Nothing => return Ok(()),
        };
        match self.session_status(id, &name).await {
            Ok(SessionStatus::Alive) => self.inner.attacher.reattach(id, exit.actor_id).await,
            Ok(SessionStatus::Gone) => {
                self.inner
                    .ends
                    .end(id, Some(exit.actor_id), EndReason::ProcessExit)
                    .await
            }
            // tmux exits with its last session: the program's exit ended both.
            Ok(SessionStatus::NoServer) if exit.program_exited => {
                self.inner
                    .ends
                    .end(id, Some(exit.actor_id), EndReason::ProcessExit)
                    .await
            }
            Ok(SessionStatus::NoServer) => {
                self.inner
                    .ends
                    .end(id, Some(exit.actor_id), EndReason::TmuxServerGone)
                    .await
            }
            Err(e) => {
                tracing::warn!(tmux_name = %name, "cannot tell whether the session lives: {e}");
                return Err(exit);
            }
        }
        Ok(())
    }

    /// Whether session `name` lives: asked over another tracked session's
    /// control client when there is one, else forked (see `tmux::route`).
    async fn session_status(&self, id: SessionId, name: &str) -> Result<SessionStatus, TmuxError> {
        let lender = self.lender(Some(id));
        self.tmux()
            .session_status_routed(name, lender.as_ref())
            .await
    }

    /// Every session's name, id and birth (far cheaper for tmux than
    /// every pane), asked over a tracked session's control client when
    /// there is one, else forked; no server means none.
    async fn list_sessions(&self) -> Result<Listing, TmuxError> {
        let sessions = match self.ask_or_fork(&ListSessions).await {
            Ok(sessions) => sessions,
            Err(e) if e.is_missing_session() => Vec::new(),
            Err(e) => return Err(e),
        };
        Ok(sessions
            .into_iter()
            .map(|s| {
                let birth = Birth {
                    tmux_id: s.id,
                    created: s.created,
                };
                (s.name, Some(birth))
            })
            .collect())
    }

    /// The panes of session `name`'s current window (its view), over a
    /// control client when there is one.
    async fn session_panes(&self, name: &str) -> Result<Vec<PaneInfo>, TmuxError> {
        let ask = ListPaneInfo {
            scope: PaneScope::Window(Target::Session(name.to_owned())),
        };
        self.ask_or_fork(&ask).await
    }

    /// Every pane, as `Tmux::list_panes` gives them, over a control client
    /// when there is one.
    async fn list_panes(&self) -> Result<Vec<PaneInfo>, TmuxError> {
        let lender = self.lender(None);
        self.tmux().list_panes_routed(lender.as_ref()).await
    }

    /// Runs `command` over a tracked session's control client, or forks
    /// (`tmux::route` decides).
    pub(super) async fn ask_or_fork<C: TmuxCommand>(
        &self,
        command: &C,
    ) -> Result<C::Output, TmuxError> {
        let lender = self.lender(None);
        self.tmux().run_routed(command, lender.as_ref()).await
    }

    /// A tracked session (not `except`, nor one ending) whose control
    /// client can run a command instead of a fork.
    fn lender(&self, except: Option<SessionId>) -> Option<SessionHandle> {
        self.registry().any_handle_except(except)
    }

    /// One discovery tick: restore persisted sessions once tmux answers,
    /// refresh every actor's view, adopt new sessions, forget detached ones
    /// that are gone.
    /// Returns the names it adopted that it had not seen before (a session
    /// refused for capacity and adopted once room freed up is not news).
    pub(super) async fn discover(&self, adoptions_mode: Adoptions) -> Vec<String> {
        let looked_at = std::time::Instant::now();
        // Names first: most changes (tmuxd's own creates, ends) adopt
        // nothing, and listing every pane costs tmux tens of milliseconds
        // with 200 sessions; only the new sessions' panes are listed, and
        // every pane only for the restore at startup.
        if !self.registry().restore_pending() {
            let listing = match self.list_sessions().await {
                Ok(listing) => listing,
                Err(e) => {
                    tracing::warn!("discovery: {e}");
                    return Vec::new();
                }
            };
            let planned = self.plan(&listing, looked_at, adoptions_mode);
            let views = self.views_of(&planned.plan.adopt).await;
            return self.adopt_planned(planned, &views).await;
        }
        let panes = match self.list_panes().await {
            Ok(panes) => panes,
            Err(e) => {
                tracing::warn!("discovery: {e}");
                return Vec::new();
            }
        };
        let live = session_views(&panes);
        let pending = self.registry().take_restore_pending();
        if let Some(file) = pending {
            self.inner.attacher.reattach_at_startup(file, &live).await;
        }
        // Ids and births, for following renames and waiting out young
        // sessions; without them, names alone (as every pane listed).
        let listing = match self.list_sessions().await {
            Ok(listing) => listing,
            Err(e) => {
                tracing::debug!("discovery: listing sessions failed: {e}");
                live.keys().map(|name| (name.clone(), None)).collect()
            }
        };
        let planned = self.plan(&listing, looked_at, adoptions_mode);
        self.adopt_planned(planned, &live).await
    }

    /// The views of the sessions named: each session's panes for a few,
    /// every pane in one listing for many (a thousand forks or commands at
    /// startup would cost tmux far more than one `list-panes -a`). A
    /// session gone meanwhile has no view, and is not adopted.
    async fn views_of(&self, names: &[String]) -> BTreeMap<String, SessionView> {
        if names.len() > ONE_BY_ONE {
            return match self.list_panes().await {
                Ok(panes) => session_views(&panes)
                    .into_iter()
                    .filter(|(name, _)| names.contains(name))
                    .collect(),
                Err(e) => {
                    tracing::warn!("discovery: {e}");
                    BTreeMap::new()
                }
            };
        }
        let mut views = BTreeMap::new();
        for name in names {
            if let Ok(panes) = self.session_panes(name).await {
                views.extend(session_views(&panes));
            }
        }
        views
    }

    /// Adopts what `plan` says, with the sessions' `views`; returns the
    /// names it adopted that it had not seen before (a session refused for
    /// capacity and adopted once room freed up is not news).
    async fn adopt_planned(
        &self,
        planned: Planned,
        views: &BTreeMap<String, SessionView>,
    ) -> Vec<String> {
        let Planned {
            plan,
            renamed,
            tmux_ids,
            untracked: _,
        } = planned;
        for (id, old, new) in &renamed {
            self.inner
                .persistence
                .record_rename(self.registry(), *id, old, new);
        }
        // Reserved and listed as `starting` now, so the next look does not
        // adopt them again; attached in tasks of their own, paced (see
        // `control::pace`): an attach may wait seconds for its turn or a
        // quiet server, and neither the next `%sessions-changed` nor, at
        // startup, the daemon's first answer waits behind it.
        for name in &plan.adopt {
            let Some(view) = views.get(name) else {
                continue;
            };
            let tmux_id = tmux_ids.get(name).copied();
            if let Some(reservation) = self.reserve_discovered(name, tmux_id) {
                self.inner
                    .attacher
                    .adopt_discovered(reservation, view.clone());
            }
        }
        self.forget_detached(&plan).await;
        plan.adopt
            .into_iter()
            .filter(|name| views.contains_key(name) && !self.inner.sightings.is_refused(name))
            .collect()
    }

    /// What discovery does with the sessions tmux listed at `looked_at`:
    /// notes their names, follows renames, forgets detached sessions that
    /// are gone, and says which to adopt (and when to look again at those
    /// too young yet).
    fn plan(
        &self,
        listing: &Listing,
        looked_at: std::time::Instant,
        adoptions_mode: Adoptions,
    ) -> Planned {
        let now_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // At startup every session that was there before the daemon is
        // adopted at once; only sessions that appear later wait.
        let min_age = match adoptions_mode {
            Adoptions::Startup => std::time::Duration::ZERO,
            Adoptions::Running => self.inner.settings.min_age,
        };
        let names = listing.keys().cloned().collect();
        let births = listing.values().flatten().map(|b| b.tmux_id);
        let seen_for = self.inner.sightings.look(names, births, looked_at);
        let planned = self.registry().plan_discovery(
            listing,
            &seen_for,
            looked_at,
            now_epoch,
            &self.inner.settings.filter,
            min_age,
        );
        let recheck_at = planned.plan.recheck_in.map(|wait| looked_at + wait);
        // Refused for capacity and still waiting: listed, and not tracked.
        (self.inner.sightings).planned(recheck_at, &planned.untracked);
        planned
    }

    async fn forget_detached(&self, plan: &DiscoveryPlan) {
        if !plan.forget_detached.is_empty() || !plan.renamed_detached.is_empty() {
            let _ = self.persist().await;
        }
    }

    async fn checkpoint(&self) {
        let _ = self.persist().await;
        self.inner.endings.prune_due().await;
        self.inner.persistence.sync_events();
    }
}

/// The sessions tmux listed, by name, with their birth when tmux said.
type Listing = BTreeMap<String, Option<Birth>>;
