//! Evidence from coding agents' hooks: the session that owns a tmux pane
//! (the hook's `$TMUX_PANE`) is asked of tmux, its detector is told what
//! the hook says, and what the agent said to its user becomes the
//! session's thought.

use super::registry::Registry;
use super::types::{MAX_THOUGHT_BYTES, SupervisorError, ThoughtUpdate};
use crate::id::SessionId;
use crate::session::{SessionHandle, StateView};
use crate::store::cut_str;
use crate::tmux::Tmux;
use crate::tmux::command::{DisplayMessage, Target};
use crate::tmux::control::{PaneId, TmuxSessionId};

/// What a hook event did.
#[derive(Clone, Debug)]
pub struct HookOutcome {
    pub session_id: SessionId,
    /// The state the event led to; `None` for events that say no state.
    pub view: Option<StateView>,
}

/// The thought a hook event's message makes: the message cut to
/// `MAX_THOUGHT_BYTES`, labelled with the event's name.
pub(super) fn hook_thought(name: &str, message: Option<String>) -> Option<ThoughtUpdate> {
    let mut text = message?;
    cut_str(&mut text, MAX_THOUGHT_BYTES);
    Some(ThoughtUpdate {
        text,
        state: Some(name.chars().take(64).collect()),
        tokens_in: None,
        tokens_out: None,
        updated_at: None,
    })
}

/// The tracked session that owns `pane`, asked of tmux over a live
/// session's control client (no fork), or a forked tmux if none
/// answers. tmux expands the format of a pane it does not have to
/// nothing (3.3 does not fail), which reads as no session.
pub(super) async fn session_of_pane(
    registry: &Registry,
    tmux: &Tmux,
    pane: PaneId,
) -> Result<(SessionId, SessionHandle), SupervisorError> {
    let not_found = || SupervisorError::NotFound(format!("with pane {pane}"));
    let Some(any) = registry.any_handle() else {
        return Err(not_found());
    };
    let ask = DisplayMessage {
        target: Some(Target::Pane(pane)),
        format: "#{session_id}".to_owned(),
    };
    let answer = match tmux.run_routed(&ask, Some(&any)).await {
        Ok(answer) => answer,
        Err(e) if e.is_missing_session() => return Err(not_found()),
        Err(e) => return Err(e.into()),
    };
    let tmux_id: TmuxSessionId = answer.trim().parse().map_err(|_| not_found())?;
    registry.find_by_tmux_id(tmux_id).ok_or_else(not_found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_message_becomes_a_bounded_thought_named_for_its_event() {
        let long = "é".repeat(MAX_THOUGHT_BYTES);
        // (event name, message, thought text, thought state)
        let cases = [
            ("Stop", None, None, None),
            (
                "Stop",
                Some("done"),
                Some("done".to_owned()),
                Some("Stop".to_owned()),
            ),
            (
                "Notification",
                Some(long.as_str()),
                Some("é".repeat(MAX_THOUGHT_BYTES / 2)),
                Some("Notification".to_owned()),
            ),
            (
                &"N".repeat(100),
                Some("x"),
                Some("x".to_owned()),
                Some("N".repeat(64)),
            ),
        ];
        for (name, message, text, state) in cases {
            let thought = hook_thought(name, message.map(str::to_owned));
            assert_eq!(thought.as_ref().map(|t| t.text.clone()), text, "{name}");
            assert_eq!(thought.and_then(|t| t.state), state, "{name}");
        }
    }
}
