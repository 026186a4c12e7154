//! Bringing sessions back: re-attaching when tmuxd's client was dropped
//! but the session lives, and merging the persisted registry with the live
//! tmux sessions at startup.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Supervisor;
use super::lifecycle::{Attach, EndReason};
use super::registry::{Reservation, restore_attention};
use crate::session::{SessionState, StateReason, StateView};
use crate::store::{EventKind, NewEvent, RegistryFile};
use crate::tmux::SessionView;

/// More re-attaches than this within the window and tmuxd lets the session go.
const REATTACH_LIMIT: usize = 3;
const REATTACH_WINDOW: Duration = Duration::from_secs(10);

impl Supervisor {
    /// tmuxd's client went away but the session lives: attach a new one.
    pub(super) async fn reattach(&self, id: u64, actor_id: u64) {
        let (name, too_often, attention) = {
            let mut registry = self.registry();
            let Some(entry) = registry
                .sessions
                .get_mut(&id)
                .filter(|e| e.actor_id == actor_id && e.ending.is_none())
            else {
                return;
            };
            let now = Instant::now();
            entry
                .reattaches
                .retain(|at| now.duration_since(*at) < REATTACH_WINDOW);
            entry.reattaches.push(now);
            (
                entry.tmux_name.clone(),
                entry.reattaches.len() > REATTACH_LIMIT,
                entry.attention,
            )
        };
        if too_often {
            tracing::warn!(tmux_name = %name, "tmuxd's client keeps being dropped; letting the session go");
            return self.end(id, Some(actor_id), EndReason::AttachFailed).await;
        }
        let new_actor_id = self.inner.next_actor_id.fetch_add(1, Ordering::Relaxed);
        let handle = match self.spawn_actor(id, new_actor_id, &name, attention).await {
            Ok(handle) => handle,
            Err(e) => {
                tracing::warn!(tmux_name = %name, "re-attaching failed: {e}");
                return self.end(id, Some(actor_id), EndReason::AttachFailed).await;
            }
        };
        let old = {
            let mut registry = self.registry();
            match registry
                .sessions
                .get_mut(&id)
                .filter(|e| e.actor_id == actor_id)
            {
                Some(entry) => {
                    entry.actor_id = new_actor_id;
                    Some(std::mem::replace(&mut entry.handle, handle.clone()))
                }
                None => None,
            }
        };
        match old {
            Some(old) => old.shutdown().await,
            // Deleted meanwhile: the new client is not wanted either.
            None => handle.shutdown().await,
        }
        tracing::info!(tmux_name = %name, "re-attached after tmuxd's client was dropped");
    }

    /// Persisted sessions meet live tmux: re-attach, keep detached, or record
    /// that they ended while tmuxd was away.
    pub(super) async fn restore(&self, file: RegistryFile, live: &BTreeMap<String, SessionView>) {
        let plan = super::plan::plan_startup(&file, live);
        {
            let mut registry = self.registry();
            registry.advance_past(plan.next_counter.saturating_sub(1));
            for session in &plan.detached {
                registry
                    .detached
                    .insert(session.tmux_name.clone(), session.clone());
            }
        }
        for session in &plan.missing {
            let reason = EndReason::StartupMissingTmux;
            let view = StateView {
                state: SessionState::Exited,
                reason: StateReason::End(reason),
                since: chrono::Utc::now(),
                attention: session.attention.as_ref().and_then(restore_attention),
            };
            let events = [
                super::queue::state_event(&view, (None, None)),
                NewEvent::new(EventKind::SessionDeleted).reason(reason.as_str()),
            ];
            for event in events {
                self.inner.persistence.record(
                    event
                        .session_id(&session.session_id)
                        .tmux_name(&session.tmux_name),
                );
            }
        }
        for session in plan.reattach {
            let id = super::parse_id(&session.session_id).unwrap_or_default();
            let reservation = Reservation {
                id,
                tmux_name: session.tmux_name.clone(),
            };
            self.registry()
                .reserved
                .insert(session.tmux_name.clone(), id);
            let attach = Attach {
                reservation,
                view: live[&session.tmux_name].clone(),
                created_at: session.created_at,
                command: session.command,
                cwd: session.cwd,
                queue: session.queued_inputs,
                attention: session.attention,
            };
            let event = NewEvent::new(EventKind::SessionAdopted).reason("startup_reattach");
            if let Err(e) = self.attach(attach, event).await {
                tracing::warn!(tmux_name = %session.tmux_name, "re-attaching after restart failed: {e}");
            }
        }
        let _ = self.persist().await;
    }
}
