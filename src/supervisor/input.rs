//! Typing into sessions (now, or queued until ready: see `queue`) and
//! published thoughts.

use chrono::{DateTime, TimeDelta, Utc};

use super::Supervisor;
use super::registry::Typist;
use super::types::{
    Input, InputOutcome, MAX_THOUGHT_BYTES, MAX_THOUGHT_STATE_BYTES, SupervisorError,
    ThoughtUpdate, When, check_input_size, tmux_refused,
};
use crate::id::SessionId;
use crate::store::{InputWhen, NewEvent, Thought, cut_str};
use crate::tmux::validate_key;
use crate::wire::{EventThought, Payload, ThoughtUpdated};

/// Key names one input may carry. tmux itself takes any number: they are
/// sent `KEYS_PER_COMMAND` to a `send-keys`, under its parser's limit;
/// this bounds how long one request holds a session's turn.
pub const MAX_INPUT_KEYS: usize = 10_000;
/// The longest key name (`C-M-S-PageDown` is 14 bytes): a name made of a
/// megabyte of `C-` prefixes would be checked and sent for nothing.
pub const MAX_KEY_NAME_BYTES: usize = 32;

/// Bytes of a thought's text its `thought_update` event carries; the whole
/// text (up to `MAX_THOUGHT_BYTES`) stays in `thoughts.json` and the summary.
pub const THOUGHT_EVENT_TEXT_BYTES: usize = 1024;

/// How far in the future a thought's `updated_at` may be: clocks differ a
/// little, but a thought from next year would hold off every later update
/// (older ones are not applied) until then.
pub const MAX_THOUGHT_AHEAD: TimeDelta = TimeDelta::minutes(5);

impl Supervisor {
    /// Types text, then keys, then Enter, through tmux so the order holds;
    /// or queues the text until the session is next idle.
    pub async fn input(
        &self,
        id: SessionId,
        input: Input,
    ) -> Result<InputOutcome, SupervisorError> {
        let text = input.text.as_deref().filter(|t| !t.is_empty());
        if text.is_none() && input.keys.is_empty() && !input.submit {
            return Err(SupervisorError::BadRequest(
                "nothing to send: give text, keys or submit".into(),
            ));
        }
        check_typed(text, &input.keys)?;
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
                .enqueue(id, text.unwrap_or_default(), input.submit, when)
                .await;
        }
        let typist = self.typist(id).await?;
        typist.type_in(text, &input.keys, input.submit).await?;
        Ok(InputOutcome {
            delivered: true,
            queued: false,
        })
    }

    /// Raw bytes from a stream client, written to the program in the pane
    /// (never through tmux's key table), in order with other input.
    pub async fn write_raw(&self, id: SessionId, bytes: &[u8]) -> Result<(), SupervisorError> {
        check_input_size("input", bytes.len())?;
        let typist = self.typist(id).await?;
        typist
            .type_raw(crate::session::Input {
                bytes: Some(bytes.to_vec()),
                ..Default::default()
            })
            .await
    }

    /// Types an answer (text, then keys) into a session only while the
    /// attention raised at `since` is still up (a push notification's
    /// action); `Conflict` when the session has moved on, nothing typed.
    pub async fn answer(
        &self,
        id: SessionId,
        since: DateTime<Utc>,
        text: Option<&str>,
        keys: &[String],
    ) -> Result<(), SupervisorError> {
        let text = text.filter(|t| !t.is_empty());
        if text.is_none() && keys.is_empty() {
            return Err(SupervisorError::BadRequest(
                "nothing to answer: give text or keys".into(),
            ));
        }
        check_typed(text, keys)?;
        let typist = self.typist(id).await?;
        let _turn = typist.turn.lock().await;
        let input = crate::session::Input {
            text: text.map(str::to_owned),
            bytes: None,
            keys: keys.to_vec(),
        };
        match typist.handle.answer(since, input).await {
            Err(gone) => Err(SupervisorError::gone(id)(gone)),
            Ok(None) => Err(SupervisorError::Conflict(format!(
                "{id} has moved on: the attention this answer was for is no longer up \
                 (someone answered or looked, or it asks something else now); nothing was typed"
            ))),
            Ok(Some(typed)) => typed.map_err(|message| tmux_refused(id, "send-keys", message)),
        }
    }

    /// Who types into a session, and the lock that keeps each request's
    /// pieces together and requests in order. A session still attaching
    /// (listed `starting`) is waited for, as every request waits for it.
    pub(super) async fn typist(&self, id: SessionId) -> Result<Typist, SupervisorError> {
        self.handle(id).await?;
        self.registry().typist(id).map_err(|e| match e {
            SupervisorError::NotFound(_) if self.inner.endings.is_kept(id) => {
                SupervisorError::HasEnded(id.to_string())
            }
            e => e,
        })
    }

    /// Stores an external status; an older one (by `updated_at`) never
    /// replaces a newer one. Returns the thought in force and whether this
    /// update was applied.
    pub async fn put_thought(
        &self,
        id: SessionId,
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
        let now = Utc::now();
        if let Some(at) = update.updated_at {
            check_thought_time(at, now)?;
        }
        let (_, name) = self.handle(id).await?;
        let thought = Thought {
            text: update.text,
            state: update.state,
            tokens_in: update.tokens_in,
            tokens_out: update.tokens_out,
            updated_at: update.updated_at.unwrap_or(now),
        };
        let updated_at = thought.updated_at;
        // One stored before the future was refused does not block either.
        let newer = |t: &Thought| {
            t.updated_at > updated_at && check_thought_time(t.updated_at, now).is_ok()
        };
        let (current, applied, written) = self.registry().put_thought(id, thought, newer, |file| {
            self.inner.persistence.queue_thoughts(file)
        });
        if let Some(written) = written {
            let _ = written.await;
            let updated = ThoughtUpdated {
                thought: thought_in_event(&current),
            };
            let event = NewEvent::new(Payload::ThoughtUpdate(updated))
                .session_id(id)
                .tmux_name(name);
            self.inner.persistence.record(event);
        }
        Ok((current, applied))
    }
}

/// Refuses text with a NUL or past the size limit, and keys `check_keys`
/// refuses, before anything is typed.
fn check_typed(text: Option<&str>, keys: &[String]) -> Result<(), SupervisorError> {
    if text.is_some_and(|t| t.contains('\0')) {
        return Err(SupervisorError::BadRequest(
            "text contains a NUL byte".into(),
        ));
    }
    check_input_size("text", text.map_or(0, str::len))?;
    check_keys(keys)
}

/// Refuses too many keys, a name too long, or one tmux does not know,
/// before anything is typed.
fn check_keys(keys: &[String]) -> Result<(), SupervisorError> {
    if keys.len() > MAX_INPUT_KEYS {
        return Err(SupervisorError::BadRequest(format!(
            "{} keys given; at most {MAX_INPUT_KEYS} per input",
            keys.len()
        )));
    }
    if keys.iter().any(|k| k.len() > MAX_KEY_NAME_BYTES) {
        return Err(SupervisorError::BadRequest(format!(
            "a key name is at most {MAX_KEY_NAME_BYTES} bytes"
        )));
    }
    for key in keys {
        validate_key(key)?;
    }
    Ok(())
}

/// Refuses an `updated_at` more than `MAX_THOUGHT_AHEAD` after `now`.
fn check_thought_time(
    updated_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), SupervisorError> {
    if updated_at > now + MAX_THOUGHT_AHEAD {
        return Err(SupervisorError::BadRequest(format!(
            "updated_at {updated_at} is more than {} minutes in the future",
            MAX_THOUGHT_AHEAD.num_minutes()
        )));
    }
    Ok(())
}

/// A thought as its event carries it: the text cut to
/// `THOUGHT_EVENT_TEXT_BYTES`, and then `"text_truncated": true`.
fn thought_in_event(thought: &Thought) -> EventThought {
    let mut text = thought.text.clone();
    cut_str(&mut text, THOUGHT_EVENT_TEXT_BYTES);
    let text_truncated = text.len() < thought.text.len();
    let thought = Thought {
        text,
        ..thought.clone()
    };
    EventThought {
        thought: thought.into(),
        text_truncated,
    }
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
            .map_err(SupervisorError::gone(self.session_id))?
            .map_err(|message| tmux_refused(self.session_id, "send-keys", message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_in_number_and_length() {
        let keys = |n: usize, name: &str| vec![name.to_owned(); n];
        // (keys, accepted)
        let table = [
            (keys(0, "a"), true),
            (keys(MAX_INPUT_KEYS, "Enter"), true),
            (keys(MAX_INPUT_KEYS + 1, "Enter"), false),
            (keys(1, "C-M-S-PageDown"), true),
            (keys(1, &"C-".repeat(16)), false),
            (keys(1, &format!("{}a", "C-".repeat(500_000))), false),
            (keys(1, "Nonsense"), false),
        ];
        for (keys, accepted) in table {
            let checked = check_keys(&keys);
            assert_eq!(
                checked.is_ok(),
                accepted,
                "{} keys, {:.20}",
                keys.len(),
                keys.first().map_or("", |k| k)
            );
        }
    }

    #[test]
    fn thoughts_dated_too_far_ahead_are_refused() {
        let now = Utc::now();
        let minute = TimeDelta::minutes(1);
        // (updated_at, accepted)
        let table = [
            (now - TimeDelta::days(400), true),
            (now, true),
            (now + minute, true),
            (now + MAX_THOUGHT_AHEAD, true),
            (now + MAX_THOUGHT_AHEAD + TimeDelta::seconds(1), false),
            (now + TimeDelta::days(365 * 900), false),
        ];
        for (at, accepted) in table {
            assert_eq!(check_thought_time(at, now).is_ok(), accepted, "{at}");
        }
    }

    #[test]
    fn a_thought_event_carries_at_most_a_kib_of_its_text() {
        let long = "ü".repeat(THOUGHT_EVENT_TEXT_BYTES);
        // (text, text in the event, truncated)
        let cases = [
            ("planning".to_owned(), "planning".to_owned(), false),
            (
                "a".repeat(THOUGHT_EVENT_TEXT_BYTES),
                "a".repeat(THOUGHT_EVENT_TEXT_BYTES),
                false,
            ),
            (long.clone(), "ü".repeat(THOUGHT_EVENT_TEXT_BYTES / 2), true),
            (
                "b".repeat(16 * 1024),
                "b".repeat(THOUGHT_EVENT_TEXT_BYTES),
                true,
            ),
        ];
        for (text, in_event, truncated) in cases {
            let thought = Thought {
                text,
                state: Some("busy".into()),
                tokens_in: Some(3),
                tokens_out: None,
                updated_at: Utc::now(),
            };
            let carried = thought_in_event(&thought);
            assert_eq!(carried.thought.text, in_event);
            assert_eq!(carried.thought.state.as_deref(), Some("busy"));
            assert_eq!(carried.thought.tokens_in, Some(3));
            assert_eq!(carried.text_truncated, truncated);
        }
    }
}
