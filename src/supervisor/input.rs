//! Typing into sessions (now, or queued until idle), waiting for a state,
//! and published thoughts.

use std::time::Duration;

use chrono::Utc;

use super::registry::format_id;
use super::{
    Input, InputOutcome, MAX_QUEUED_INPUTS, MAX_THOUGHT_BYTES, MAX_THOUGHT_STATE_BYTES,
    SessionSummary, Supervisor, SupervisorError, ThoughtUpdate, Until, When, parse_id,
};
use crate::session::{SessionState, StateView};
use crate::store::{EventKind, NewEvent, QueuedInput, Thought};
use crate::tmux::validate_key;

/// Longest wait a client may ask for.
pub const MAX_WAIT_MS: u64 = 3_600_000;

impl Supervisor {
    /// Types text, then keys, then Enter, through tmux so the order holds;
    /// or queues the text until the session is next idle.
    pub async fn input(
        &self,
        session_id: &str,
        input: Input,
    ) -> Result<InputOutcome, SupervisorError> {
        let text = input.text.as_deref().filter(|t| !t.is_empty());
        if text.is_none() && input.keys.is_empty() && !input.submit {
            return Err(SupervisorError::BadRequest(
                "nothing to send: give text, keys or submit".into(),
            ));
        }
        if text.is_some_and(|t| t.contains('\0')) {
            return Err(SupervisorError::BadRequest(
                "text contains a NUL byte".into(),
            ));
        }
        for key in &input.keys {
            validate_key(key)?;
        }
        if input.when == When::Idle {
            if !input.keys.is_empty() {
                return Err(SupervisorError::BadRequest(
                    "queued input takes text and submit, not keys".into(),
                ));
            }
            return self
                .enqueue(session_id, text.unwrap_or_default(), input.submit)
                .await;
        }
        let (handle, name) = self.handle(session_id)?;
        self.type_into(&name, text, &input.keys, input.submit)
            .await?;
        handle.note_input();
        Ok(InputOutcome {
            delivered: true,
            queued: false,
        })
    }

    async fn type_into(
        &self,
        name: &str,
        text: Option<&str>,
        keys: &[String],
        submit: bool,
    ) -> Result<(), SupervisorError> {
        let tmux = self.tmux();
        if let Some(text) = text {
            tmux.send_text(name, text).await?;
        }
        if !keys.is_empty() {
            tmux.send_keys(name, keys).await?;
        }
        if submit {
            tmux.send_keys(name, &["Enter".to_owned()]).await?;
        }
        Ok(())
    }

    async fn enqueue(
        &self,
        session_id: &str,
        text: &str,
        submit: bool,
    ) -> Result<InputOutcome, SupervisorError> {
        let not_found = || SupervisorError::NotFound(session_id.to_owned());
        let id = parse_id(session_id).ok_or_else(not_found)?;
        let idle_now = {
            let mut registry = self.registry();
            let entry = registry.sessions.get_mut(&id).ok_or_else(not_found)?;
            if entry.queue.len() >= MAX_QUEUED_INPUTS {
                return Err(SupervisorError::QueueFull {
                    session_id: session_id.to_owned(),
                    max: MAX_QUEUED_INPUTS,
                });
            }
            entry.queue.push_back(QueuedInput {
                text: text.to_owned(),
                submit,
                queued_at: Utc::now(),
            });
            entry.state == SessionState::Idle
        };
        let _ = self.persist().await;
        if idle_now {
            // Already idle: no transition will come, so deliver now.
            if self.deliver_next(id).await {
                return Ok(InputOutcome {
                    delivered: true,
                    queued: false,
                });
            }
        }
        Ok(InputOutcome {
            delivered: false,
            queued: true,
        })
    }

    /// The session reported a new state: record it, and type the next queued
    /// input when it became idle.
    pub(super) async fn on_state(&self, session_id: &str, actor_id: u64, view: StateView) {
        let Some(id) = parse_id(session_id) else {
            return;
        };
        let tmux_name = {
            let mut registry = self.registry();
            let Some(entry) = registry
                .sessions
                .get_mut(&id)
                .filter(|e| e.actor_id == actor_id)
            else {
                return;
            };
            entry.state = view.state;
            entry.tmux_name.clone()
        };
        let event = NewEvent::new(EventKind::SessionState)
            .session_id(session_id)
            .tmux_name(tmux_name)
            .reason(
                serde_json::to_value(view.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            )
            .detail(
                "state",
                serde_json::to_value(view.state).unwrap_or_default(),
            )
            .detail(
                "state_since",
                serde_json::to_value(view.since).unwrap_or_default(),
            );
        self.inner.persistence.record(event);
        if view.state == SessionState::Idle {
            // Typing takes tmux forks; the event loop does not wait for them.
            let supervisor = self.clone();
            tokio::spawn(async move { supervisor.deliver_next(id).await });
        }
    }

    /// Types the oldest queued input if the session is idle and nothing is
    /// being typed; the next one waits for the next idle.
    async fn deliver_next(&self, id: u64) -> bool {
        let (item, name, handle) = {
            let mut registry = self.registry();
            let Some(entry) = registry.sessions.get_mut(&id) else {
                return false;
            };
            if entry.delivering || entry.state != SessionState::Idle {
                return false;
            }
            let Some(item) = entry.queue.pop_front() else {
                return false;
            };
            entry.delivering = true;
            // Typing makes the session busy; the next item waits for idle again.
            entry.state = SessionState::Busy;
            (item, entry.tmux_name.clone(), entry.handle.clone())
        };
        let typed = self
            .type_into(
                &name,
                Some(&item.text)
                    .filter(|t| !t.is_empty())
                    .map(String::as_str),
                &[],
                item.submit,
            )
            .await;
        handle.note_input();
        if let Some(entry) = self.registry().sessions.get_mut(&id) {
            entry.delivering = false;
        }
        let _ = self.persist().await;
        match typed {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(session_id = %format_id(id), "typing queued input failed: {e}");
                self.inner.persistence.record(
                    NewEvent::new(EventKind::InputDropped)
                        .session_id(format_id(id))
                        .tmux_name(&name)
                        .reason("delivery_failed")
                        .detail("message", e.to_string()),
                );
                false
            }
        }
    }

    /// Answers as soon as the session's state meets `until` (at once if it
    /// already does), or `Timeout`.
    pub async fn wait(
        &self,
        session_id: &str,
        until: Until,
        timeout_ms: u64,
    ) -> Result<SessionSummary, SupervisorError> {
        if timeout_ms > MAX_WAIT_MS {
            return Err(SupervisorError::BadRequest(format!(
                "timeout_ms must be at most {MAX_WAIT_MS}"
            )));
        }
        let (handle, _) = self.handle(session_id)?;
        let mut states = handle
            .watch_state()
            .await
            .map_err(SupervisorError::gone(session_id))?;
        let before = self.get(session_id).await?;
        let start = *states.borrow_and_update();
        let holds = |view: &StateView| match until {
            Until::Idle => view.state == SessionState::Idle,
            Until::Busy => view.state == SessionState::Busy,
            Until::Attention => view.state == SessionState::Attention,
            Until::Exited => view.state == SessionState::Exited,
            Until::Change => *view != start,
        };
        let waited = tokio::time::timeout(Duration::from_millis(timeout_ms), async {
            loop {
                let view = *states.borrow_and_update();
                if holds(&view) {
                    return Some(view);
                }
                if states.changed().await.is_err() {
                    // The actor is gone: the session ended.
                    let exited = (until == Until::Exited).then_some(StateView {
                        state: SessionState::Exited,
                        ..view
                    });
                    return exited;
                }
            }
        })
        .await;
        let view = match waited {
            Ok(Some(view)) => view,
            Ok(None) => return Err(SupervisorError::Gone(session_id.to_owned())),
            Err(_) => {
                return Err(SupervisorError::Timeout {
                    session_id: session_id.to_owned(),
                    ms: timeout_ms,
                });
            }
        };
        // An exited session may already be gone from the registry.
        Ok(self.get(session_id).await.unwrap_or_else(|_| {
            let mut summary = before;
            summary.actor.state = view.state;
            summary.actor.state_reason = view.reason;
            summary.actor.state_since = view.since;
            summary
        }))
    }

    /// Stores an external status; an older one (by `updated_at`) never
    /// replaces a newer one. Returns the thought in force and whether this
    /// update was applied.
    pub async fn put_thought(
        &self,
        session_id: &str,
        update: ThoughtUpdate,
    ) -> Result<(Thought, bool), SupervisorError> {
        if update.text.len() > MAX_THOUGHT_BYTES {
            return Err(SupervisorError::BadRequest(format!(
                "text is longer than {MAX_THOUGHT_BYTES} bytes"
            )));
        }
        if update
            .state
            .as_ref()
            .is_some_and(|s| s.len() > MAX_THOUGHT_STATE_BYTES || s.chars().any(char::is_control))
        {
            return Err(SupervisorError::BadRequest(format!(
                "state must be at most {MAX_THOUGHT_STATE_BYTES} bytes without control characters"
            )));
        }
        let (_, name) = self.handle(session_id)?;
        let thought = Thought {
            text: update.text,
            state: update.state,
            tokens_in: update.tokens_in,
            tokens_out: update.tokens_out,
            updated_at: update.updated_at.unwrap_or_else(Utc::now),
        };
        let (current, applied, written) = {
            let mut registry = self.registry();
            let newer_exists = registry
                .thoughts
                .get(session_id)
                .is_some_and(|t| t.updated_at > thought.updated_at);
            if newer_exists {
                (registry.thoughts[session_id].clone(), false, None)
            } else {
                registry
                    .thoughts
                    .insert(session_id.to_owned(), thought.clone());
                let written = self
                    .inner
                    .persistence
                    .queue_thoughts(registry.to_thoughts_file());
                (thought, true, Some(written))
            }
        };
        if let Some(written) = written {
            let _ = written.await;
            let event = NewEvent::new(EventKind::ThoughtUpdate)
                .session_id(session_id)
                .tmux_name(name)
                .detail(
                    "thought",
                    serde_json::to_value(&current).unwrap_or_default(),
                );
            self.inner.persistence.record(event);
        }
        Ok((current, applied))
    }
}
