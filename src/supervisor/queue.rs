//! Queued input: typed when the session is ready for it (`when: idle`, a
//! shell at its prompt; `when: waiting`, a program waiting for input),
//! whatever the attention flag says; listed and cancelled by number. The
//! actor's state reports land here: they are recorded, and they release
//! the queue.

use chrono::Utc;

use super::Supervisor;
use super::registry::QueueRefusal;
use super::types::{InputOutcome, MAX_QUEUED_INPUTS, QueueItem, SupervisorError};
use crate::id::SessionId;
use crate::session::{SessionState, StateView};
use crate::store::{InputWhen, NewEvent, QueuedInput};
use crate::wire::{DroppedInput, Exit, InputDropped, Payload, StateChanged};

/// Characters of a dropped input's text its event keeps: enough to tell
/// which input it was, without holding (up to 1 MiB of) text in the event
/// log and its replay memory.
pub const DROPPED_PREFIX_CHARS: usize = 64;

/// The event for a queued input discarded without being (fully) typed: its
/// size, the first `DROPPED_PREFIX_CHARS` characters of its text, and when
/// it was queued.
pub(super) fn dropped_input(item: &QueuedInput, reason: &str) -> NewEvent {
    let input = DroppedInput {
        queue_id: item.id,
        queued_at: item.queued_at,
        text_bytes: item.text.len(),
        text_chars: item.text.chars().count(),
        text_prefix: item.text.chars().take(DROPPED_PREFIX_CHARS).collect(),
    };
    NewEvent::new(Payload::InputDropped(InputDropped::Queued(input))).reason(reason)
}

/// The `session_state` event of a view: state, reason, since, the
/// attention flag, and (for `exited`) how the program exited.
pub(super) fn state_event(view: &StateView, exit: Exit) -> NewEvent {
    let changed = StateChanged {
        state: view.state.into(),
        state_since: view.since,
        attention: view.attention.map(Into::into),
        acknowledged_by: view.acknowledged_by.map(Into::into),
        exit: (view.state == SessionState::Exited).then_some(exit),
    };
    NewEvent::new(Payload::SessionState(changed)).reason(view.reason.as_str())
}

/// What a refused queue change means for a client (`ended`: the session
/// ended and is kept readable).
fn refusal(id: SessionId, refused: QueueRefusal, ended: bool) -> SupervisorError {
    match refused {
        QueueRefusal::Untracked if ended => SupervisorError::HasEnded(id.to_string()),
        QueueRefusal::Untracked => SupervisorError::NotFound(id.to_string()),
        QueueRefusal::Full => SupervisorError::QueueFull {
            session_id: id.to_string(),
            max: MAX_QUEUED_INPUTS,
        },
        // Not asked by `enqueue`, and answered apart by `cancel_queued`.
        QueueRefusal::NoSuchItem | QueueRefusal::Started => {
            SupervisorError::Conflict(format!("the queue of {id} changed"))
        }
    }
}

fn item_view(item: &QueuedInput) -> QueueItem {
    QueueItem {
        id: item.id,
        text: item.text.clone(),
        submit: item.submit,
        when: item.when,
        queued_at: item.queued_at,
        started: item.started,
    }
}

impl Supervisor {
    pub(super) async fn enqueue(
        &self,
        id: SessionId,
        text: &str,
        submit: bool,
        when: InputWhen,
    ) -> Result<InputOutcome, SupervisorError> {
        let ready_now = self
            .registry()
            .enqueue(id, text, submit, when, Utc::now())
            .map_err(|refused| refusal(id, refused, self.inner.endings.is_kept(id)))?;
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
    pub fn queued(&self, id: SessionId) -> Result<Vec<QueueItem>, SupervisorError> {
        match self.registry().queued(id) {
            Some(items) => Ok(items.iter().map(item_view).collect()),
            None if self.inner.endings.is_kept(id) => Ok(Vec::new()),
            None => Err(SupervisorError::NotFound(id.to_string())),
        }
    }

    /// Takes item `n` out of the queue, unless its typing has begun.
    pub async fn cancel_queued(&self, id: SessionId, n: u64) -> Result<QueueItem, SupervisorError> {
        let (item, name) =
            self.registry()
                .cancel_queued(id, n)
                .map_err(|refused| match refused {
                    QueueRefusal::NoSuchItem => SupervisorError::NoQueuedInput {
                        session_id: id.to_string(),
                        n,
                    },
                    QueueRefusal::Started => SupervisorError::Conflict(format!(
                        "queued input {n} of {id} is being typed"
                    )),
                    refused => refusal(id, refused, self.inner.endings.is_kept(id)),
                })?;
        let _ = self.persist().await;
        self.inner.persistence.record(
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
        let Some(reported) = self.registry().reported(id, actor_id, &view) else {
            return;
        };
        let event = state_event(&view, Exit::default())
            .session_id(id)
            .tmux_name(reported.tmux_name);
        self.inner.persistence.record(event);
        if reported.attention_changed {
            drop(self.persist());
        }
        if matches!(view.state, SessionState::Idle | SessionState::Waiting) {
            // Typing takes a moment; the event loop does not wait for it.
            let supervisor = self.clone();
            tokio::spawn(async move { supervisor.deliver_next(id).await });
        }
    }

    /// Types the oldest queued input if the session is ready for it and
    /// nothing is being typed; the next one waits for the next time.
    ///
    /// At most once: the item is marked `started` on disk before its first
    /// byte is typed and leaves the queue once typed. A daemon killed in
    /// between finds the mark at restart and reports the item dropped as
    /// `interrupted` instead of typing it a second time.
    pub(super) async fn deliver_next(&self, id: SessionId) -> bool {
        let Some(item) = self.registry().take_next(id) else {
            return false;
        };
        let marked = self.persist().await;
        let typist = match (marked, self.typist(id).await) {
            (Ok(()), Ok(typist)) => typist,
            (marked, _) => {
                // Without the mark on disk a crash could type it twice: wait.
                self.registry().delivery_postponed(id);
                if marked.is_err() {
                    tracing::warn!(session_id = %id, "queued input waits: its start could not be saved");
                }
                return false;
            }
        };
        let text = Some(item.text.as_str()).filter(|t| !t.is_empty());
        let typed = typist.type_in(text, &[], item.submit).await;
        let name = typist.tmux_name;
        self.registry().delivered(id);
        let _ = self.persist().await;
        match typed {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(session_id = %id, "typing queued input failed: {e}");
                self.inner.persistence.record(
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Body;

    #[test]
    fn a_dropped_input_records_its_size_and_prefix_not_its_text() {
        let long = format!(
            "{}{}",
            "é".repeat(DROPPED_PREFIX_CHARS),
            "x".repeat(1 << 20)
        );
        // (text, bytes, chars, prefix)
        let cases = [
            ("", 0, 0, String::new()),
            ("ls\n", 3, 3, "ls\n".to_owned()),
            (
                long.as_str(),
                long.len(),
                DROPPED_PREFIX_CHARS + (1 << 20),
                "é".repeat(DROPPED_PREFIX_CHARS),
            ),
        ];
        for (text, bytes, chars, prefix) in cases {
            let item = QueuedInput {
                id: 4,
                text: text.to_owned(),
                submit: true,
                when: InputWhen::Idle,
                queued_at: Utc::now(),
                started: false,
            };
            let event = dropped_input(&item, "cancelled");
            assert_eq!(event.reason.as_deref(), Some("cancelled"));
            let Body::Whole(Payload::InputDropped(InputDropped::Queued(input))) = &event.body
            else {
                panic!("{event:?}");
            };
            assert_eq!(input.text_bytes, bytes);
            assert_eq!(input.text_chars, chars);
            assert_eq!(input.text_prefix, prefix);
            assert_eq!(input.queue_id, 4);
            assert!(serde_json::to_vec(input).unwrap().len() < 512);
        }
    }
}
