//! Discovery: what tmux's sessions are, looked at when tmux says they
//! changed (`%sessions-changed`, which every actor's control client
//! hears), when a session too young to adopt has lived long enough, and in
//! a slow sweep; what the registry and the sightings make of each look;
//! and the adoptions it starts (through the attacher). At startup the
//! first look also merges the persisted registry with the live sessions.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::attach::Attacher;
use super::persist::Persistence;
use super::plan::DiscoveryPlan;
use super::registry::{Birth, Planned, Registry, Reservation};
use super::settings::Settings;
use super::sightings::Sightings;
use super::types::SupervisorError;
use crate::tmux::command::{ListPaneInfo, ListSessions, PaneScope, Target, TmuxCommand};
use crate::tmux::control::TmuxSessionId;
use crate::tmux::{PaneInfo, SessionView, Tmux, TmuxError, session_views};

/// Looks at tmux's sessions and adopts the new ones (see the module's doc).
#[derive(Clone)]
pub(super) struct Discovery {
    pub(super) tmux: Tmux,
    pub(super) settings: Arc<Settings>,
    pub(super) registry: Arc<Registry>,
    /// What discovery has seen of tmux's sessions.
    pub(super) sightings: Arc<Sightings>,
    pub(super) persistence: Arc<Persistence>,
    /// Adoptions go through it.
    pub(super) attacher: Attacher,
}

impl Discovery {
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
        if !self.registry.restore_pending() {
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
        let pending = self.registry.take_restore_pending();
        if let Some(file) = pending {
            self.attacher.reattach_at_startup(file, &live).await;
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
            (self.persistence).record_rename(&self.registry, *id, old, new);
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
                self.attacher.adopt_discovered(reservation, view.clone());
            }
        }
        self.forget_detached(&plan).await;
        plan.adopt
            .into_iter()
            .filter(|name| views.contains_key(name) && !self.sightings.is_refused(name))
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
            Adoptions::Running => self.settings.min_age,
        };
        let names = listing.keys().cloned().collect();
        let births = listing.values().flatten().map(|b| b.tmux_id);
        let seen_for = self.sightings.look(names, births, looked_at);
        let planned = self.registry.plan_discovery(
            listing,
            &seen_for,
            looked_at,
            now_epoch,
            &self.settings.filter,
            min_age,
        );
        let recheck_at = planned.plan.recheck_in.map(|wait| looked_at + wait);
        // Refused for capacity and still waiting: listed, and not tracked.
        (self.sightings).planned(recheck_at, &planned.untracked);
        planned
    }

    async fn forget_detached(&self, plan: &DiscoveryPlan) {
        if !plan.forget_detached.is_empty() || !plan.renamed_detached.is_empty() {
            let _ = self.persistence.write_registry(&self.registry).await;
        }
    }

    /// Takes the id and name of a session discovery found; a full
    /// registry refuses it (said once in the log).
    fn reserve_discovered(
        &self,
        name: &str,
        tmux_id: Option<TmuxSessionId>,
    ) -> Option<Reservation> {
        let max = self.settings.max_sessions;
        match self.registry.reserve_existing(name, tmux_id, Some(max)) {
            Ok(reservation) => Some(reservation),
            Err(SupervisorError::Capacity { max }) => {
                if self.sightings.refuse(name) {
                    tracing::warn!(tmux_name = %name, "not adopting: {max} sessions tracked already");
                }
                None
            }
            Err(_) => None,
        }
    }

    /// Every session's name, id and birth (far cheaper for tmux than
    /// every pane), asked over a tracked session's control client when
    /// there is one, else forked; no server means none.
    async fn list_sessions(&self) -> Result<Listing, TmuxError> {
        let sessions = match self.routed(&ListSessions).await {
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
        self.routed(&ask).await
    }

    /// Every pane, as `Tmux::list_panes` gives them, over a control client
    /// when there is one.
    async fn list_panes(&self) -> Result<Vec<PaneInfo>, TmuxError> {
        let lender = self.registry.any_handle_except(None);
        self.tmux.list_panes_routed(lender.as_ref()).await
    }

    /// Runs `command` over a tracked session's control client, or forks
    /// (`tmux::route` decides).
    async fn routed<C: TmuxCommand>(&self, command: &C) -> Result<C::Output, TmuxError> {
        let lender = self.registry.any_handle_except(None);
        self.tmux.run_routed(command, lender.as_ref()).await
    }
}

/// The sessions tmux listed, by name, with their birth when tmux said.
type Listing = BTreeMap<String, Option<Birth>>;

/// Discovery when tmux says sessions changed (`%sessions-changed`, which
/// every actor's control client hears), when a session too young to adopt
/// has lived `discovery.min_age_ms`, else a sweep: every
/// `discovery_interval` while no control client is attached to hear
/// anything (no session, or every one cold), and every `SAFETY_SWEEP` as a
/// safety net otherwise.
pub(super) async fn discover_often(
    discovery: Discovery,
    changed: Arc<Notify>,
    cancel: CancellationToken,
) {
    let poll = discovery.settings.discovery_interval;
    loop {
        let listening = discovery.registry.tracked_count() > 0 && discovery.registry.any_live();
        let period = if listening {
            SAFETY_SWEEP.max(poll)
        } else {
            poll
        };
        let recheck_at = discovery.sightings.recheck_at();
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
        let adopted = discovery.discover(Adoptions::Running).await;
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
