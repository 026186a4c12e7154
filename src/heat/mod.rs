//! The owner of which sessions hold a control client (see `policy` for
//! why and the decision itself): every `LOOK_EVERY` it asks each actor
//! what the policy needs, decides, and tells the actors whose heat changed
//! to let their client go or attach again. An actor also attaches again
//! by itself the moment something needs it live (`session::actor::cold`);
//! this owner only has to cool what is no longer wanted and heat what the
//! policy wants hot.

pub mod policy;

use std::time::Duration;

use futures::future::join_all;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::session::SessionHandle;
use crate::supervisor::Supervisor;
pub use policy::{Budget, Facts, Heat, decide};

/// How often the policy is applied.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long an actor may take to say its facts before it is left as it is
/// until the next look.
const ASK: Duration = Duration::from_millis(500);

/// Printed within this long counts as recently active.
pub const RECENT: Duration = Duration::from_secs(30);

/// The budget `tmux.live_clients` sets (0: none).
pub fn budget(live_clients: u32) -> Budget {
    Budget {
        live_clients: (live_clients > 0).then_some(live_clients as usize),
        recent: RECENT,
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
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticks.tick() => apply(&supervisor, budget).await,
        }
    }
}

/// One look: every tracked session's facts, the decision, the changes.
async fn apply(supervisor: &Supervisor, budget: Budget) {
    let handles = supervisor.session_handles();
    let asked = join_all(handles.iter().map(|(id, handle)| async move {
        let facts = tokio::time::timeout(ASK, handle.heat_facts()).await;
        let facts = facts.ok()?.ok()?;
        Some(Facts {
            id: *id,
            live: facts.live,
            watched: facts.watched,
            settling: facts.settling,
            busy: facts.busy,
            quiet_for: facts.quiet_for,
        })
    }))
    .await;
    let facts: Vec<Facts> = asked.into_iter().flatten().collect();
    let decided = decide(&facts, budget);
    let changes: Vec<(&SessionHandle, bool)> = decided
        .iter()
        .zip(&facts)
        .filter(|((_, heat), facts)| heat.is_hot() != facts.live)
        .filter_map(|((id, heat), _)| {
            let (_, handle) = handles.iter().find(|(h, _)| h == id)?;
            Some((handle, heat.is_hot()))
        })
        .collect();
    if changes.is_empty() {
        return;
    }
    tracing::debug!(changes = changes.len(), "heat: sessions changing");
    join_all(
        changes
            .into_iter()
            .map(|(handle, live)| async move { handle.set_live(live).await }),
    )
    .await;
}
