//! Published thoughts: what a session's agent or a script says it is
//! doing, checked before it is stored, and cut short in its event.

use chrono::{DateTime, TimeDelta, Utc};

use super::types::{MAX_THOUGHT_BYTES, MAX_THOUGHT_STATE_BYTES, SupervisorError, ThoughtUpdate};
use crate::store::{Thought, cut_str};
use crate::wire::EventThought;

/// Bytes of a thought's text its `thought_update` event carries; the whole
/// text (up to `MAX_THOUGHT_BYTES`) stays in `thoughts.json` and the summary.
pub const THOUGHT_EVENT_TEXT_BYTES: usize = 1024;

/// How far in the future a thought's `updated_at` may be: clocks differ a
/// little, but a thought from next year would hold off every later update
/// (older ones are not applied) until then.
pub const MAX_THOUGHT_AHEAD: TimeDelta = TimeDelta::minutes(5);

/// A thought update as it is stored, once its text, state and time pass
/// the checks (before the session is looked up: bad input is refused the
/// same whether or not the session exists).
pub(super) fn checked_thought(
    update: ThoughtUpdate,
    now: DateTime<Utc>,
) -> Result<Thought, SupervisorError> {
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
    if let Some(at) = update.updated_at {
        check_thought_time(at, now)?;
    }
    Ok(Thought {
        text: update.text,
        state: update.state,
        tokens_in: update.tokens_in,
        tokens_out: update.tokens_out,
        updated_at: update.updated_at.unwrap_or(now),
    })
}

/// Refuses an `updated_at` more than `MAX_THOUGHT_AHEAD` after `now`.
pub(super) fn check_thought_time(
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
pub(super) fn thought_in_event(thought: &Thought) -> EventThought {
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

#[cfg(test)]
mod tests {
    use super::*;

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
