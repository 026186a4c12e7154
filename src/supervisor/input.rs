//! Typing into sessions, now or queued until a session is ready for it,
//! and published thoughts. The queues and thoughts are kept by the
//! registry beside the session they belong to (so `registry.json` and
//! `thoughts.json` are each built from one state under one lock); this
//! owner decides what is typed, when, and in whose turn.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use super::endings::Endings;
use super::find::Finder;
use super::persist::Persistence;
use super::queue::{dropped_input, item_view, refusal, state_event};
use super::registry::{QueueRefusal, Registry, Typist};
use super::thoughts::{check_thought_time, thought_in_event};
use super::types::{
    Input, InputOutcome, QueueItem, SupervisorError, When, check_input_size, tmux_refused,
};
use crate::id::SessionId;
use crate::session::{SessionState, StateView};
use crate::store::{InputWhen, NewEvent, Thought};
use crate::tmux::validate_key;
use crate::wire::{Exit, InputDropped, Payload, ThoughtUpdated};

/// Key names one input may carry. tmux itself takes any number: they are
/// sent `KEYS_PER_COMMAND` to a `send-keys`, under its parser's limit;
/// this bounds how long one request holds a session's turn.
pub const MAX_INPUT_KEYS: usize = 10_000;
/// The longest key name (`C-M-S-PageDown` is 14 bytes): a name made of a
/// megabyte of `C-` prefixes would be checked and sent for nothing.
pub const MAX_KEY_NAME_BYTES: usize = 32;

/// Typing and queued input for every session. Cheap to clone: a queued
/// item is typed in a task of its own.
#[derive(Clone)]
pub(super) struct Inputs {
    registry: Arc<Registry>,
    persistence: Arc<Persistence>,
    /// Asked only whether a session ended and is kept (`HasEnded`).
    endings: Arc<Endings>,
    /// Input for a session still attaching waits for it, as every request
    /// does.
    find: Finder,
}

impl Inputs {
    pub(super) fn new(
        registry: Arc<Registry>,
        persistence: Arc<Persistence>,
        endings: Arc<Endings>,
        find: Finder,
    ) -> Inputs {
        Inputs {
            registry,
            persistence,
            endings,
            find,
        }
    }

    /// Types text, then keys, then Enter, through tmux so the order holds;
    /// or queues the text until the session is next idle.
    pub(super) async fn send(
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
        if queued.is_some() && !input.keys.is_empty() {
            return Err(SupervisorError::BadRequest(
                "queued input takes text and submit, not keys".into(),
            ));
        }
        if let Some(when) = queued {
            // Queued for a session still attaching: it is queued once
            // its client is up.
            self.find.handle(id).await?;
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
    pub(super) async fn write_raw(
        &self,
        id: SessionId,
        bytes: &[u8],
    ) -> Result<(), SupervisorError> {
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
    pub(super) async fn answer(
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
        self.find.handle(id).await?;
        self.registry.typist(id).map_err(|e| match e {
            SupervisorError::NotFound(_) if self.endings.is_kept(id) => {
                SupervisorError::HasEnded(id.to_string())
            }
            e => e,
        })
    }

    /// Stores session `id`'s thought, checked by `checked_thought`; an
    /// older one (by `updated_at`) never replaces a newer one. Returns the
    /// thought in force and whether this one was applied.
    pub(super) async fn put_thought(
        &self,
        id: SessionId,
        tmux_name: String,
        thought: Thought,
        now: DateTime<Utc>,
    ) -> (Thought, bool) {
        let updated_at = thought.updated_at;
        // One stored before the future was refused does not block either.
        let newer = |t: &Thought| {
            t.updated_at > updated_at && check_thought_time(t.updated_at, now).is_ok()
        };
        let (current, applied, written) = self.registry.put_thought(id, thought, newer, |file| {
            self.persistence.queue_thoughts(file)
        });
        if let Some(written) = written {
            let _ = written.await;
            let updated = ThoughtUpdated {
                thought: thought_in_event(&current),
            };
            let event = NewEvent::new(Payload::ThoughtUpdate(updated))
                .session_id(id)
                .tmux_name(tmux_name);
            self.persistence.record(event);
        }
        (current, applied)
    }

    async fn enqueue(
        &self,
        id: SessionId,
        text: &str,
        submit: bool,
        when: InputWhen,
    ) -> Result<InputOutcome, SupervisorError> {
        let ready_now = self
            .registry
            .enqueue(id, text, submit, when, Utc::now())
            .map_err(|refused| refusal(id, refused, self.endings.is_kept(id)))?;
        let _ = self.persist().await;
        // Already ready: no transition will come, so deliver now.
        if ready_now && self.deliver_next(id).await {
            return Ok(InputOutcome {
                delivered: true,
                queued: false,
            });
        }
        Ok(InputOutcome {
            delivered: false,
            queued: true,
        })
    }

    /// The items queued for a session, oldest first; none for an ended
    /// session still kept (its queue was dropped at the end).
    pub(super) fn queued(&self, id: SessionId) -> Result<Vec<QueueItem>, SupervisorError> {
        match self.registry.queued(id) {
            Some(items) => Ok(items.iter().map(item_view).collect()),
            None if self.endings.is_kept(id) => Ok(Vec::new()),
            None => Err(SupervisorError::NotFound(id.to_string())),
        }
    }

    /// Takes item `n` out of the queue, unless its typing has begun.
    pub(super) async fn cancel_queued(
        &self,
        id: SessionId,
        n: u64,
    ) -> Result<QueueItem, SupervisorError> {
        let (item, name) = self
            .registry
            .cancel_queued(id, n)
            .map_err(|refused| match refused {
                QueueRefusal::NoSuchItem => SupervisorError::NoQueuedInput {
                    session_id: id.to_string(),
                    n,
                },
                QueueRefusal::Started => {
                    SupervisorError::Conflict(format!("queued input {n} of {id} is being typed"))
                }
                refused => refusal(id, refused, self.endings.is_kept(id)),
            })?;
        let _ = self.persist().await;
        self.persistence.record(
            dropped_input(&item, "cancelled")
                .session_id(id)
                .tmux_name(name),
        );
        Ok(item_view(&item))
    }

    /// The session reported a new view: record it, keep its attention
    /// flag (persisted, so restarts keep it), and type the next queued
    /// input if the session is ready for it.
    pub(super) async fn on_state(&self, id: SessionId, actor_id: u64, view: StateView) {
        if view.state == SessionState::Exited {
            // The last pane died: the slot is free at once (the registry
            // reads the actor's state); the end that follows records the
            // exited event with the exit facts.
            return;
        }
        let Some(reported) = self.registry.reported(id, actor_id, &view) else {
            return;
        };
        let event = state_event(&view, Exit::default())
            .session_id(id)
            .tmux_name(reported.tmux_name);
        self.persistence.record(event);
        if reported.attention_changed {
            drop(self.persist());
        }
        if matches!(view.state, SessionState::Idle | SessionState::Waiting) {
            // Typing takes a moment; the event loop does not wait for it.
            let inputs = self.clone();
            tokio::spawn(async move { inputs.deliver_next(id).await });
        }
    }

    /// Types the oldest queued input if the session is ready for it and
    /// nothing is being typed; the next one waits for the next time.
    ///
    /// At most once: the item is marked `started` on disk before its first
    /// byte is typed and leaves the queue once typed. A daemon killed in
    /// between finds the mark at restart and reports the item dropped as
    /// `interrupted` instead of typing it a second time.
    async fn deliver_next(&self, id: SessionId) -> bool {
        let Some(item) = self.registry.take_next(id) else {
            return false;
        };
        let marked = self.persist().await;
        let typist = match (marked, self.typist(id).await) {
            (Ok(()), Ok(typist)) => typist,
            (marked, _) => {
                // Without the mark on disk a crash could type it twice: wait.
                self.registry.delivery_postponed(id);
                if marked.is_err() {
                    tracing::warn!(session_id = %id, "queued input waits: its start could not be saved");
                }
                return false;
            }
        };
        let text = Some(item.text.as_str()).filter(|t| !t.is_empty());
        let typed = typist.type_in(text, &[], item.submit).await;
        let name = typist.tmux_name;
        self.registry.delivered(id);
        let _ = self.persist().await;
        match typed {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(session_id = %id, "typing queued input failed: {e}");
                self.persistence.record(
                    NewEvent::new(Payload::InputDropped(InputDropped::Failed {
                        message: e.to_string(),
                    }))
                    .session_id(id)
                    .tmux_name(&name)
                    .reason("delivery_failed"),
                );
                false
            }
        }
    }

    fn persist(&self) -> oneshot::Receiver<()> {
        self.persistence.write_registry(&self.registry)
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
    use std::collections::BTreeMap;

    use super::*;
    use crate::metrics::Metrics;
    use crate::store::{EndedFile, RegistryFile};
    use crate::supervisor::endings::Retention;

    /// The owner alone, over an empty registry and a data dir in `dir`.
    fn inputs(dir: &std::path::Path) -> Inputs {
        let (persistence, _) = Persistence::open(dir, Metrics::new()).unwrap();
        let retention = Retention {
            max: 10,
            max_age: chrono::Duration::days(1),
            history_lines: 0,
        };
        let endings = Endings::new(
            EndedFile::empty(),
            retention,
            Box::new(|_| oneshot::channel().1),
            persistence.scrollback_files(),
        );
        let endings = Arc::new(endings);
        let registry = Registry::restored(RegistryFile::empty(), BTreeMap::new(), []);
        let registry = Arc::new(registry);
        let find = Finder::new(registry.clone(), endings.clone());
        Inputs::new(registry, Arc::new(persistence), endings, find)
    }

    fn kind(answer: Result<InputOutcome, SupervisorError>) -> &'static str {
        match answer {
            Ok(_) => "ok",
            Err(SupervisorError::BadRequest(_)) => "bad_request",
            Err(SupervisorError::InvalidKeys(_)) => "invalid_keys",
            Err(SupervisorError::TooLarge { .. }) => "too_large",
            Err(SupervisorError::NotFound(_)) => "not_found",
            Err(_) => "other",
        }
    }

    #[tokio::test]
    async fn bad_input_is_refused_before_the_session_is_looked_up() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = inputs(dir.path());
        let input = |text: &str, keys: &[&str], submit: bool, when: When| Input {
            text: Some(text.to_owned()),
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            submit,
            when,
        };
        let huge = "x".repeat(crate::supervisor::types::MAX_INPUT_BYTES + 1);
        // (input to a session nobody tracks, what it gets)
        let table = [
            (input("", &[], false, When::Now), "bad_request"),
            (input("a\0b", &[], true, When::Now), "bad_request"),
            (input(&huge, &[], true, When::Idle), "too_large"),
            (input("x", &["Enter"], false, When::Idle), "bad_request"),
            (input("x", &["Nonsense"], false, When::Now), "invalid_keys"),
            (input("ls", &[], true, When::Now), "not_found"),
            (input("ls", &[], true, When::Idle), "not_found"),
            (input("", &["C-c"], false, When::Now), "not_found"),
        ];
        for (input, expected) in table {
            let what = format!("{:.20?} {:?} {:?}", input.text, input.keys, input.when);
            assert_eq!(
                kind(inputs.send(SessionId(1), input).await),
                expected,
                "{what}"
            );
        }
        let unknown = SessionId(1);
        assert!(matches!(
            inputs.write_raw(unknown, b"ls\r").await,
            Err(SupervisorError::NotFound(_))
        ));
        assert!(matches!(
            inputs.queued(unknown),
            Err(SupervisorError::NotFound(_))
        ));
        assert!(matches!(
            inputs.cancel_queued(unknown, 1).await,
            Err(SupervisorError::NotFound(_))
        ));
        assert!(matches!(
            inputs.answer(unknown, Utc::now(), None, &[]).await,
            Err(SupervisorError::BadRequest(_))
        ));
    }

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
}
