//! The owner of which sessions hold a control client (see `policy` for
//! why and the decision itself): every `LOOK_EVERY` it asks each actor
//! what the policy needs, asks tmux once which cold sessions printed since
//! the last look (their windows' activity, `tmux::activity`: a cold
//! session that prints becomes hot), decides, and tells the actors whose
//! heat changed to let their client go or attach again. An actor also attaches again
//! by itself the moment something needs it live (`session::actor::cold`);
//! this owner only has to cool what is no longer wanted and heat what the
//! policy wants hot.

pub mod policy;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::future::join_all;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::id::SessionId;
use crate::session::{HeatFacts, SessionHandle};
use crate::supervisor::Supervisor;
use crate::tmux::activity::WindowActivity;
use crate::tmux::control::TmuxSessionId;
pub use policy::{Budget, Facts, Heat, decide};

/// How often the policy is applied.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long an actor may take to say its facts before it is left as it is
/// until the next look.
const ASK: Duration = Duration::from_millis(500);

/// Printed within this long counts as recently active.
pub const RECENT: Duration = Duration::from_secs(30);

/// Printed within this long counts as printing (always hot): longer than
/// the second tmux stamps activity in, so a session is let go only after a
/// second with no output, and whatever it prints next gets a later stamp.
pub const PRINTING: Duration = Duration::from_secs(2);

/// The budget `tmux.live_clients` sets (0: none).
pub fn budget(live_clients: u32) -> Budget {
    Budget {
        live_clients: (live_clients > 0).then_some(live_clients as usize),
        recent: RECENT,
        printing: PRINTING,
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
    /// Each session's window activity at the last look (see `activity`).
    seen: BTreeMap<TmuxSessionId, u64>,
}

impl Owner {
    /// One look: every tracked session's facts, which cold ones printed,
    /// the decision, the changes.
    async fn apply(&mut self, supervisor: &Supervisor) {
        let handles = supervisor.session_handles();
        let asked = join_all(handles.iter().map(|(id, handle)| async move {
            let facts = tokio::time::timeout(ASK, handle.heat_facts()).await;
            Some((*id, handle, facts.ok()?.ok()?))
        }))
        .await;
        let asked: Vec<_> = asked.into_iter().flatten().collect();
        let printed = self.printed(supervisor, &asked).await;
        let facts: Vec<Facts> = asked
            .iter()
            .map(|(id, _, facts)| Facts {
                id: *id,
                live: facts.live,
                watched: facts.watched,
                settling: facts.settling,
                busy: facts.busy,
                // A cold session tmux saw print is as recent as can be.
                quiet_for: match printed.contains(&facts.tmux_id) {
                    true => Some(Duration::ZERO),
                    false => facts.quiet_for,
                },
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
            if let Some(now) = now {
                live.insert(id, now);
            }
        }
        supervisor.note_live(&live);
    }

    /// The cold sessions whose windows tmux stamped with newer activity
    /// than at the last look: one `list-windows -a` for all, over a hot
    /// session's client when there is one, else forked; none while every
    /// session is hot.
    async fn printed(
        &mut self,
        supervisor: &Supervisor,
        asked: &[(SessionId, &SessionHandle, HeatFacts)],
    ) -> BTreeSet<TmuxSessionId> {
        if asked.iter().all(|(_, _, facts)| facts.live) {
            self.seen.clear();
            return BTreeSet::new();
        }
        let lender = asked
            .iter()
            .find(|(_, _, facts)| facts.live)
            .map(|(_, handle, _)| *handle);
        let activity = match supervisor.tmux().run_routed(&WindowActivity, lender).await {
            Ok(activity) => activity,
            Err(e) => {
                tracing::debug!("heat: reading the windows' activity failed: {e}");
                return BTreeSet::new();
            }
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let printed = asked
            .iter()
            .filter(|(_, _, facts)| !facts.live)
            .filter(|(_, _, facts)| {
                // Newer than the stamp at the last look, and than the
                // second of the last output the actor saw (a session is
                // let go only after `PRINTING` without output, so a later
                // stamp is output it did not see).
                let seen_out = facts
                    .quiet_for
                    .map(|quiet| now.saturating_sub(quiet).as_secs());
                let before = self.seen.get(&facts.tmux_id).copied().max(seen_out);
                let stamp = activity.get(&facts.tmux_id);
                matches!((before, stamp), (Some(before), Some(stamp)) if *stamp > before)
            })
            .map(|(_, _, facts)| facts.tmux_id)
            .collect();
        self.seen = activity;
        printed
    }
}
