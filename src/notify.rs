//! Notifications: when a session's attention flag is raised and when a
//! session ends (as `notify.on` says), POST the event to a webhook, run a
//! command, publish to ntfy and push to the browsers that subscribed
//! (Web Push), as the config says; every target behind the one gate. A per-session cooldown keeps a flapping session from
//! spamming (exits are always sent) and a global rate limit caps the rest.
//! The notifier follows the event log, so it sees exactly what clients of
//! `/v1/events` see, with the same `seq`. What it notified is kept in
//! `notified.json` in the data dir, so a restart re-sends nothing.

mod deliver;
mod gate;
mod message;
mod ntfy;
mod push_message;
mod sign;

use std::path::Path;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use gate::{End, Gate, Trigger};
pub use message::{Context, message};
pub use push_message::push_message;

use crate::config::NotifyConfig;
use crate::metrics::Metrics;
use crate::push::Push;
use crate::store::NotifiedFile;
use crate::supervisor::Supervisor;
use crate::wire::{Event, EventKind, Payload};

/// Where notifications go besides the config's webhook and command.
#[derive(Clone, Default)]
pub struct Targets {
    /// Web Push to the subscribed browsers.
    pub push: Option<Push>,
    /// The dashboard's address as a phone reaches it (ntfy's links).
    pub page_url: String,
}

/// Starts following the event log, unless nothing is configured to notify.
pub fn spawn(
    supervisor: &Supervisor,
    config: NotifyConfig,
    targets: Targets,
    data_dir: &Path,
    metrics: Metrics,
    tasks: &TaskTracker,
    cancel: CancellationToken,
) {
    let configured = config.webhook_url.is_some()
        || config.command.is_some()
        || config.ntfy.is_some()
        || targets.push.is_some();
    if !configured {
        return;
    }
    let targets = deliver::Targets::new(targets);
    let memory_path = NotifiedFile::path(data_dir);
    let memory = NotifiedFile::load(&memory_path);
    let since = supervisor.next_event_seq().saturating_sub(1);
    let (mut live, _, _) = supervisor.follow_events(since);
    let supervisor = supervisor.clone();
    let tracker = tasks.clone();
    tasks.spawn(async move {
        let mut gate = Gate::new(&config, memory);
        loop {
            let event = tokio::select! {
                _ = cancel.cancelled() => return,
                event = live.recv() => event,
            };
            let event = match event {
                Ok(event) => event,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!("notifications skipped {n} events: too many at once");
                    continue;
                }
                Err(_) => return,
            };
            let admitted = trigger_of(&event, &mut gate).filter(|(trigger, session_id)| {
                let admit = gate.admit(*trigger, session_id, chrono::Utc::now());
                if !admit {
                    tracing::debug!(seq = event.seq, %session_id, ?trigger, "notification skipped (cooldown, already sent, or rate limit)");
                }
                admit
            });
            // Remembered before it is sent: a crash in between loses one
            // notification rather than repeating it on every restart.
            if let Some(memory) = gate.take_changes() {
                save_memory(&memory_path, memory.clone()).await;
            }
            let Some((trigger, _)) = admitted else {
                continue;
            };
            let delivery = deliver::Delivery::new(&config, &targets, trigger, &event);
            let (supervisor, cancel, metrics) = (supervisor.clone(), cancel.clone(), metrics.clone());
            tracker.spawn(async move {
                let context = message::Context::gather(&supervisor, &event).await;
                delivery.with_context(context).run(cancel, metrics).await;
            });
        }
    });
}

/// Replaces `notified.json`; a failure is logged (the notifier goes on,
/// and a restart may then repeat what it could not remember).
async fn save_memory(path: &Path, memory: NotifiedFile) {
    let path = path.to_owned();
    let saved = tokio::task::spawn_blocking(move || memory.save(&path)).await;
    if let Ok(Err(e)) = saved {
        tracing::warn!("remembering what was notified: {e}");
    }
}

/// Whether an event is something to notify of, of a kind `notify.on`
/// names: a newly raised attention flag (a state event carrying an
/// attention that was not seen before), a session's end, or the tmux
/// server lost with every session.
fn trigger_of(event: &Event, gate: &mut Gate) -> Option<(Trigger, String)> {
    let found = trigger_in(event, gate)?;
    let exit = event.payload().and_then(Payload::exit).unwrap_or_default();
    let end = End::of(
        exit.exit_status.map(i64::from),
        exit.exit_signal.map(i64::from),
    );
    gate.wants(found.0, end).then_some(found)
}

/// What an event would notify of, whatever `notify.on` says.
fn trigger_in(event: &Event, gate: &mut Gate) -> Option<(Trigger, String)> {
    // A fleet peer's event, fanned in: the peer notifies of its own sessions
    // (a hub would repeat it, and call a peer's lost tmux its own).
    if event.from_peer.is_some() {
        return None;
    }
    if event.kind() == EventKind::TmuxLost {
        return Some((Trigger::TmuxLost, String::new()));
    }
    let session_id = event.session_id.clone()?;
    match event.kind() {
        EventKind::SessionDeleted => Some((Trigger::Exited, session_id)),
        EventKind::SessionState => {
            let since = event.attention_since();
            gate.attention_seen(&session_id, since.as_deref())
                .then_some((Trigger::Attention, session_id))
        }
        _ => None,
    }
}
