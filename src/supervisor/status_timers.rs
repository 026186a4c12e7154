//! Keeps the tmux server's status timers in step, so 200 control clients
//! cost an idle server one wake-up per `status-interval`, not 200.
//!
//! tmux arms a status timer for every attached client, control clients
//! included, when it attaches, and re-arms it every `status-interval`
//! (15 s by default) from the moment it fired. Every wake-up of the
//! server's loop then walks every pane against every client
//! (`server_client_check_pane_buffer`), so 200 clients attached at 200
//! different moments keep an idle tmux 3.3a at 2-2.6 % of a core, and
//! the same clients with their timers in step at 0.0-0.1 % (measured,
//! BENCHMARKS.md). tmux restarts every client's timer in the same instant
//! when the `status` or `status-interval` option changes, so once attaches
//! have settled tmuxd gives one tracked session a `status-interval` of its
//! own equal to the one it inherits (`set-option -o`, which refuses a
//! session that has its own), then unsets it again: the options end as
//! they were, and the timers fire together from then on. Like any option
//! change, it redraws attached clients once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::registry::Registry;
use crate::tmux::Tmux;
use crate::tmux::command::{OptionScope, PinStatusInterval, SetOption, Target};

/// How long attaches must have stopped before the timers are aligned.
const SETTLED: Duration = Duration::from_secs(2);
/// Aligned anyway after this long, if attaches never stop.
const AT_MOST_EVERY: Duration = Duration::from_secs(60);
/// How long a session's client may take to answer.
const ASK: Duration = Duration::from_secs(1);
/// How many sessions to try when some have a `status-interval` of their own.
const CANDIDATES: usize = 3;

/// Aligns the status timers once attaches have settled, after each burst
/// (`attached` is woken when a control client attached).
pub(super) async fn align_after_attaches(
    attached: Arc<Notify>,
    registry: Arc<Registry>,
    tmux: Tmux,
    cancel: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = attached.notified() => {}
        }
        let deadline = tokio::time::Instant::now() + AT_MOST_EVERY;
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = attached.notified() => {}
                _ = tokio::time::sleep(SETTLED) => break,
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        align_status_timers(&registry, &tmux).await;
    }
}

/// Pins and unpins one tracked session's `status-interval` over its
/// control client (no fork). A session with a value of its own is
/// left alone and the next one tried.
async fn align_status_timers(registry: &Registry, tmux: &Tmux) {
    let candidates = registry.some_live(CANDIDATES);
    for (handle, name) in candidates {
        let target = Target::Session(name.clone());
        let pin = PinStatusInterval {
            target: target.clone(),
        };
        match tokio::time::timeout(ASK, handle.ask_tmux(&pin)).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(refusal))) => {
                tracing::debug!(tmux_name = %name, "status timers not aligned here: {refusal}");
                continue;
            }
            // Maybe pinned, maybe not: unsetting is right either way.
            _ => {}
        }
        unpin_status_interval(registry, tmux, target).await;
        return;
    }
}

/// Unsets the value `PinStatusInterval` gave: over any tracked
/// session's client, or a fork if none answers.
async fn unpin_status_interval(registry: &Registry, tmux: &Tmux, target: Target) {
    let unpin = SetOption {
        scope: OptionScope::Session(target),
        name: "status-interval",
        value: None,
    };
    let lender = registry.any_handle_except(None);
    match tmux.run_routed(&unpin, lender.as_ref()).await {
        Ok(()) => tracing::debug!("status timers aligned"),
        // Gone with its session.
        Err(e) if e.is_missing_session() => {}
        Err(e) => tracing::warn!("could not unset the status-interval tmuxd set: {e}"),
    }
}
