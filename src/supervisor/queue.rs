//! Queued input as clients and the event log see it: an item's view, a
//! dropped item's event, a refused change's error, and the state event
//! whose report releases the queue (the queue's typing is `input`'s).

use super::registry::QueueRefusal;
use super::types::{MAX_QUEUED_INPUTS, QueueItem, SupervisorError};
use crate::id::SessionId;
use crate::session::{SessionState, StateView};
use crate::store::{NewEvent, QueuedInput};
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
pub(super) fn refusal(id: SessionId, refused: QueueRefusal, ended: bool) -> SupervisorError {
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

pub(super) fn item_view(item: &QueuedInput) -> QueueItem {
    QueueItem {
        id: item.id,
        text: item.text.clone(),
        submit: item.submit,
        when: item.when,
        queued_at: item.queued_at,
        started: item.started,
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::store::InputWhen;
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
