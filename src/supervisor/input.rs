//! Typing into sessions (now, or queued until idle), waiting for a state,
//! and published thoughts.

use std::time::Duration;

use chrono::Utc;

use std::sync::Arc;

use super::registry::format_id;
use super::{
    Input, InputOutcome, MAX_QUEUED_INPUTS, MAX_THOUGHT_BYTES, MAX_THOUGHT_STATE_BYTES,
    SessionSummary, Supervisor, SupervisorError, ThoughtUpdate, Until, When, check_input_size,
    parse_id,
};
use crate::session::{SessionHandle, SessionState, StateView};
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
        check_input_size("text", text.map_or(0, str::len))?;
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
        let typist = self.typist(session_id)?;
        typist.type_in(text, &input.keys, input.submit).await?;
        Ok(InputOutcome {
            delivered: true,
            queued: false,
        })
    }

    /// Raw bytes from a stream client, written to the program in the pane
    /// (never through tmux's key table), in order with other input.
    pub async fn write_raw(&self, session_id: &str, bytes: &[u8]) -> Result<(), SupervisorError> {
        check_input_size("input", bytes.len())?;
        let typist = self.typist(session_id)?;
        typist
            .type_raw(crate::session::Input {
                bytes: Some(bytes.to_vec()),
                ..Default::default()
            })
            .await
    }

    /// Who types into a session, and the lock that keeps each request's
    /// pieces together and requests in order.
    pub(super) fn typist(&self, session_id: &str) -> Result<Typist, SupervisorError> {
        let not_found = || SupervisorError::NotFound(session_id.to_owned());
        let id = parse_id(session_id).ok_or_else(not_found)?;
        let registry = self.registry();
        let entry = registry.sessions.get(&id).ok_or_else(not_found)?;
        Ok(Typist {
            session_id: session_id.to_owned(),
            tmux_name: entry.tmux_name.clone(),
            handle: entry.handle.clone(),
            turn: entry.typing.clone(),
        })
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
                started: false,
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
    ///
    /// At most once: the item is marked `started` on disk before its first
    /// byte is typed and leaves the queue once typed. A daemon killed in
    /// between finds the mark at restart and reports the item dropped as
    /// `interrupted` instead of typing it a second time.
    async fn deliver_next(&self, id: u64) -> bool {
        let item = {
            let mut registry = self.registry();
            let Some(entry) = registry.sessions.get_mut(&id) else {
                return false;
            };
            if entry.delivering || entry.state != SessionState::Idle {
                return false;
            }
            let Some(item) = entry.queue.front_mut() else {
                return false;
            };
            item.started = true;
            let item = item.clone();
            entry.delivering = true;
            // Typing makes the session busy; the next item waits for idle again.
            entry.state = SessionState::Busy;
            item
        };
        let marked = self.persist().await;
        let typist = match (marked, self.typist(&format_id(id))) {
            (Ok(()), Ok(typist)) => typist,
            (marked, _) => {
                // Without the mark on disk a crash could type it twice: wait.
                if let Some(entry) = self.registry().sessions.get_mut(&id) {
                    entry.delivering = false;
                    if let Some(front) = entry.queue.front_mut() {
                        front.started = false;
                    }
                }
                if marked.is_err() {
                    tracing::warn!(session_id = %format_id(id), "queued input waits: its start could not be saved");
                }
                return false;
            }
        };
        let text = Some(item.text.as_str()).filter(|t| !t.is_empty());
        let typed = typist.type_in(text, &[], item.submit).await;
        let name = typist.tmux_name;
        if let Some(entry) = self.registry().sessions.get_mut(&id) {
            entry.delivering = false;
            if entry.queue.front().is_some_and(|front| front.started) {
                entry.queue.pop_front();
            }
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

/// What typing into one session needs: its actor (which types over its
/// control client, in order with everything else it sends) and a turn lock.
pub(super) struct Typist {
    session_id: String,
    tmux_name: String,
    handle: SessionHandle,
    /// Held while one request is typed, so a queued item's text and its
    /// Enter are never split by another request.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Typist {
    /// Text, then keys, then Enter, in this session's turn.
    pub(super) async fn type_in(
        &self,
        text: Option<&str>,
        keys: &[String],
        submit: bool,
    ) -> Result<(), SupervisorError> {
        let mut keys = keys.to_vec();
        if submit {
            keys.push("Enter".to_owned());
        }
        self.type_raw(crate::session::Input {
            text: text.map(str::to_owned),
            bytes: None,
            keys,
        })
        .await
    }

    async fn type_raw(&self, input: crate::session::Input) -> Result<(), SupervisorError> {
        let _turn = self.turn.lock().await;
        self.handle
            .type_input(input)
            .await
            .map_err(SupervisorError::gone(&self.session_id))?
            .map_err(|message| super::tmux_refused(&self.session_id, "send-keys", message))
    }
}
