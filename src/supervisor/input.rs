//! Typing into sessions (now, or queued until ready: see `queue`) and
//! published thoughts.

use std::sync::Arc;

use chrono::Utc;

use super::{
    Input, InputOutcome, MAX_THOUGHT_BYTES, MAX_THOUGHT_STATE_BYTES, Supervisor, SupervisorError,
    ThoughtUpdate, When, check_input_size, parse_id,
};
use crate::session::SessionHandle;
use crate::store::{EventKind, InputWhen, NewEvent, Thought};
use crate::tmux::validate_key;

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
        let queued = match input.when {
            When::Now => None,
            When::Idle => Some(InputWhen::Idle),
            When::Waiting => Some(InputWhen::Waiting),
        };
        if let Some(when) = queued {
            if !input.keys.is_empty() {
                return Err(SupervisorError::BadRequest(
                    "queued input takes text and submit, not keys".into(),
                ));
            }
            return self
                .enqueue(session_id, text.unwrap_or_default(), input.submit, when)
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
        let (_, name) = self.handle(session_id).await?;
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
    pub(super) tmux_name: String,
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
