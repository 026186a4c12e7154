//! The owner of which sessions hold a control client (see `policy` for
//! why and the decision itself): every `LOOK_EVERY` it asks each actor
//! what the policy needs, asks tmux once what every session's panes did
//! since the last look (`tmux::activity`: output, bells, dead panes),
//! tells each cold session what it did (a cold session that printed or
//! whose pane died becomes hot), decides, and tells the actors whose heat
//! changed to let their client go or attach again. An actor also attaches again
//! by itself the moment something needs it live (`session::actor::cold`);
//! this owner only has to cool what is no longer wanted and heat what the
//! policy wants hot.

pub mod policy;

use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::join_all;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::id::SessionId;
use crate::session::{HeatFacts, SessionHandle};
use crate::supervisor::Supervisor;
use crate::tmux::Tmux;
use crate::tmux::activity::{Change, ServerLook, SessionLook};
use crate::tmux::control::TmuxSessionId;
use crate::tmux::server_client::ServerClient;
pub use policy::{Budget, Facts, Heat, decide};

/// How often the policy is applied.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long an actor may take to say its facts before it is left as it is
/// until the next look.
const ASK: Duration = Duration::from_millis(500);

/// How long a cold actor's facts are taken as they were (see `facts`).
const ASK_COLD_EVERY: Duration = Duration::from_secs(10);

/// Printed within this long counts as printing (always hot): longer than
/// the second tmux stamps activity in, so a session is let go only after a
/// second with no output, and whatever it prints next gets a later stamp.
pub const PRINTING: Duration = Duration::from_secs(2);

/// `tmux.live_clients` unless configured. tmux's cost is control clients
/// x panes per loop turn: measured on 3.3a and 3.7c, 200 clients over 200
/// panes take a flood to 2.3x, 1,000 over 1,000 to 13.3x, so about 1.2% of
/// the bare time per thousand client-panes. 32 clients over 1,000 panes
/// stay within the 1.5x target (BENCHMARKS.md has the runs), and up to 32
/// sessions every one is hot, as with no budget.
pub const DEFAULT_LIVE_CLIENTS: u32 = 32;

/// The budget `tmux.live_clients` sets (0: none).
pub fn budget(live_clients: u32) -> Budget {
    Budget {
        live_clients: (live_clients > 0).then_some(live_clients as usize),
        printing: PRINTING,
    }
}

/// With a budget, gives `tmux` its server-wide client (see
/// `tmux::server_client`), before anything is adopted: past the budget,
/// adopted sessions take their first look over it and start cold.
pub fn lend_server_client(
    tmux: &Tmux,
    budget: Budget,
    tasks: &TaskTracker,
    cancel: CancellationToken,
) {
    if let Some(live_clients) = budget.live_clients {
        tmux.set_server_client(ServerClient::spawn(
            tmux.clone(),
            live_clients,
            cancel,
            tasks,
        ));
    }
}

/// Starts the owner; without a budget there is nothing to own.
pub fn spawn(
    supervisor: &Supervisor,
    budget: Budget,
    tasks: &TaskTracker,
    cancel: CancellationToken,
) {
    if budget.live_clients.is_none() {
        return;
    }
    tasks.spawn(keep(supervisor.clone(), budget, cancel));
}

async fn keep(supervisor: Supervisor, budget: Budget, cancel: CancellationToken) {
    let mut ticks = tokio::time::interval(LOOK_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut owner = Owner {
        budget,
        seen: BTreeMap::new(),
        cold: BTreeMap::new(),
    };
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticks.tick() => owner.apply(&supervisor).await,
        }
    }
}

struct Owner {
    budget: Budget,
    /// What the last look found of each session (see `activity`).
    seen: BTreeMap<TmuxSessionId, SessionLook>,
    /// What cold actors last said, and when (see `facts`).
    cold: BTreeMap<SessionId, (std::time::Instant, HeatFacts)>,
}

impl Owner {
    /// One look: every tracked session's facts, which cold ones printed,
    /// the decision, the changes.
    async fn apply(&mut self, supervisor: &Supervisor) {
        let handles = supervisor.session_handles();
        let asked = self.facts(&handles).await;
        let changes = self.look_cold(supervisor, &asked).await;
        // Whatever tmux noted of a cold session is asked about afresh.
        self.cold
            .retain(|_, (_, facts)| !changes.contains_key(&facts.tmux_id));
        join_all(asked.iter().filter_map(|(_, handle, facts)| {
            let change = changes.get(&facts.tmux_id)?;
            Some(handle.noted(*change))
        }))
        .await;
        let facts: Vec<Facts> = asked
            .iter()
            .map(|(id, _, facts)| {
                // A cold session tmux saw print, or whose pane died, is as
                // recent as can be: attached now, it shows what it did.
                let woke = changes
                    .get(&facts.tmux_id)
                    .is_some_and(|c| c.printed || c.died);
                Facts {
                    id: *id,
                    live: facts.live,
                    watched: facts.watched,
                    settling: facts.settling,
                    busy: facts.busy,
                    quiet_for: match woke {
                        true => Some(Duration::ZERO),
                        false => facts.quiet_for,
                    },
                }
            })
            .collect();
        let mut live: BTreeMap<SessionId, bool> = asked
            .iter()
            .map(|(id, _, facts)| (*id, facts.live))
            .collect();
        let changes: Vec<(SessionId, &SessionHandle, bool)> = decide(&facts, self.budget)
            .iter()
            .zip(&asked)
            .filter(|((_, heat), (_, _, facts))| heat.is_hot() != facts.live)
            .map(|((id, heat), (_, handle, _))| (*id, *handle, heat.is_hot()))
            .collect();
        if !changes.is_empty() {
            tracing::debug!(changes = changes.len(), "heat: sessions changing");
        }
        let changed = join_all(
            changes
                .into_iter()
                .map(|(id, handle, hot)| async move { (id, handle.set_live(hot).await.ok()) }),
        )
        .await;
        for (id, now) in changed {
            self.cold.remove(&id);
            if let Some(now) = now {
                live.insert(id, now);
            }
        }
        supervisor.note_live(&live);
    }

    /// Every tracked session's facts. A cold actor's are asked only every
    /// `ASK_COLD_EVERY` (and after the look saw it do something, or the
    /// policy changed its heat): cold, it holds no stream, types nothing
    /// and prints nothing unseen by the look, and one that needs a client
    /// attaches by itself. Meanwhile its durations are aged. At 1,000
    /// sessions, asking every actor every second cost the idle daemon 0.45 %
    /// of a core.
    async fn facts<'a>(
        &mut self,
        handles: &'a [(SessionId, SessionHandle)],
    ) -> Vec<(SessionId, &'a SessionHandle, HeatFacts)> {
        let now = std::time::Instant::now();
        let cold = &self.cold;
        let asked = join_all(handles.iter().map(|(id, handle)| async move {
            if let Some((at, facts)) = cold.get(id)
                && now.duration_since(*at) < ASK_COLD_EVERY
            {
                let aged = |d: Option<Duration>| d.map(|d| d + now.duration_since(*at));
                let facts = HeatFacts {
                    quiet_for: aged(facts.quiet_for),
                    seen_for: aged(facts.seen_for),
                    ..*facts
                };
                return Some((*id, handle, facts, false));
            }
            let facts = tokio::time::timeout(ASK, handle.heat_facts()).await;
            Some((*id, handle, facts.ok()?.ok()?, true))
        }))
        .await;
        let asked: Vec<_> = asked.into_iter().flatten().collect();
        self.cold
            .retain(|id, _| handles.iter().any(|(h, _)| h == id));
        for (id, _, facts, fresh) in &asked {
            match (fresh, facts.live) {
                (true, false) => {
                    self.cold.insert(*id, (now, *facts));
                }
                (true, true) => {
                    self.cold.remove(id);
                }
                (false, _) => {}
            }
        }
        asked
            .into_iter()
            .map(|(id, handle, facts, _)| (id, handle, facts))
            .collect()
    }

    /// What tmux noted of each session since the last look that its actor
    /// did not read itself (see
    /// `activity`): one `list-panes -a` for all, over the server-wide
    /// client (`tmux::server_client`), else forked.
    async fn look_cold(
        &mut self,
        supervisor: &Supervisor,
        asked: &[(SessionId, &SessionHandle, HeatFacts)],
    ) -> BTreeMap<TmuxSessionId, Change> {
        // Nothing to look for while every session is hot (up to the budget,
        // every one is): no client, no fork. A session's first look after it
        // went cold then takes its flags as they are (see `activity`).
        if asked.iter().all(|(_, _, facts)| facts.live) {
            self.seen.clear();
            return BTreeMap::new();
        }
        let tmux = supervisor.tmux();
        let looks = match tmux.run_routed(&ServerLook, tmux.server_client()).await {
            Ok(looks) => looks,
            Err(e) => {
                tracing::debug!("heat: looking at the sessions' panes failed: {e}");
                return BTreeMap::new();
            }
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let changes = asked
            .iter()
            .filter_map(|(_, _, facts)| {
                // The second of the last output the actor saw: a session
                // is let go only after `PRINTING` without output, so a
                // later stamp is output it did not see.
                let seen_out = facts
                    .seen_for
                    .map(|seen| now.saturating_sub(seen).as_secs());
                let look = looks.get(&facts.tmux_id)?;
                let mut change = look.change_since(self.seen.get(&facts.tmux_id), seen_out);
                if facts.live {
                    // A hot actor reads its own output and exits; a bell
                    // flag is up only for what it did not read (a bell
                    // while it attached, or in another window).
                    change = Change {
                        bell: change.bell,
                        ..Change::default()
                    };
                }
                change.any().then_some((facts.tmux_id, change))
            })
            .collect();
        self.seen = looks;
        changes
    }
}
