//! What an agent's hook event means for the session's state: a pure
//! reading of the JSON the agent hands its hook command (Claude Code: on
//! stdin, with `hook_event_name`; Codex: `notify`'s argument, with `type`).

use serde_json::Value;

use super::Agent;
use crate::session::SessionState;
use crate::session::state::Hook;
use crate::wire::{CODEX_TURN_COMPLETE, ClaudeEvent};

/// A hook event as read: its name, the state it says (none for events
/// that say nothing about the session's state), and the agent's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookEvent {
    pub name: String,
    pub hook: Option<Hook>,
    /// What the agent says to its user (a notification's text, a turn's
    /// last answer), published as the session's thought.
    pub message: Option<String>,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("no hooks are read for agent {0:?}: only claude and codex send them")]
    NoHooks(Agent),
    #[error("the hook event must be a JSON object")]
    NotObject,
    #[error("the hook event has no {0:?} string: is this the {1} hook's JSON?")]
    NoName(&'static str, &'static str),
}

/// The field naming the event, per agent.
fn name_field(agent: Agent) -> Result<&'static str, HookError> {
    match agent {
        Agent::Claude => Ok("hook_event_name"),
        Agent::Codex => Ok("type"),
        other => Err(HookError::NoHooks(other)),
    }
}

/// Reads one hook event of `agent`.
pub fn interpret(agent: Agent, event: &Value) -> Result<HookEvent, HookError> {
    let field = name_field(agent)?;
    let object = event.as_object().ok_or(HookError::NotObject)?;
    let name = object
        .get(field)
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or(HookError::NoName(field, agent.as_str()))?;
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let said = |state, reason, attention| {
        Some(Hook {
            state,
            reason,
            attention,
        })
    };
    use ClaudeEvent::{Notification, PreToolUse, Stop, UserPromptSubmit};
    use SessionState::{Idle, Waiting, Working};
    let claude = ClaudeEvent::named(name).filter(|_| agent == Agent::Claude);
    let (hook, message) = match (agent, claude) {
        // A login that went through asks nothing of anyone.
        (_, Some(Notification)) if text("notification_type").as_deref() == Some("auth_success") => {
            (None, text("message"))
        }
        // "Claude needs your permission to use Bash", "Claude is waiting
        // for your input".
        (_, Some(Notification)) => (said(Waiting, "hook_notification", true), text("message")),
        (_, Some(Stop)) => (said(Idle, "hook_stop", false), None),
        (_, Some(UserPromptSubmit)) => (said(Working, "hook_prompt_submit", false), None),
        (_, Some(PreToolUse)) => (said(Working, "hook_tool_use", false), None),
        (Agent::Codex, None) if name == CODEX_TURN_COMPLETE => (
            said(Idle, "hook_turn_complete", false),
            text("last-assistant-message"),
        ),
        // SubagentStop, SessionStart, PreCompact...: nothing about whether
        // the session needs anyone.
        _ => (None, None),
    };
    Ok(HookEvent {
        name: name.to_owned(),
        hook,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Events as the agents send them (Claude Code's hook input on stdin,
    /// Codex's `notify` argument), and what each says.
    #[test]
    fn hook_events_and_the_states_they_say() {
        use SessionState::{Idle, Waiting, Working};
        let base = json!({"session_id": "abc", "transcript_path": "/t.jsonl", "cwd": "/p"});
        let claude = |name: &str, extra: Value| {
            let mut event = base.clone();
            event["hook_event_name"] = json!(name);
            for (k, v) in extra.as_object().unwrap() {
                event[k] = v.clone();
            }
            event
        };
        #[rustfmt::skip]
        let cases = [
            (Agent::Claude, claude("Notification", json!({"message": "Claude needs your permission to use Bash"})),
                Some((Waiting, "hook_notification", true)), Some("Claude needs your permission to use Bash")),
            (Agent::Claude, claude("Stop", json!({"stop_hook_active": false})), Some((Idle, "hook_stop", false)), None),
            (Agent::Claude, claude("UserPromptSubmit", json!({"prompt": "fix it"})), Some((Working, "hook_prompt_submit", false)), None),
            (Agent::Claude, claude("PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})),
                Some((Working, "hook_tool_use", false)), None),
            (Agent::Claude, claude("Notification", json!({"message": "Claude is waiting for your input", "notification_type": "idle_prompt"})),
                Some((Waiting, "hook_notification", true)), Some("Claude is waiting for your input")),
            (Agent::Claude, claude("Notification", json!({"message": "Logged in", "notification_type": "auth_success"})), None, Some("Logged in")),
            (Agent::Claude, claude("SubagentStop", json!({})), None, None),
            // Not installed by `tmuxd hooks install` (see `ClaudeEvent`), so not read.
            (Agent::Claude, claude("PostToolUse", json!({"tool_name": "Bash"})), None, None),
            (Agent::Codex, json!({"type": "Stop"}), None, None),
            (Agent::Codex, json!({"type": "agent-turn-complete", "turn-id": "1", "input-messages": ["fix it"],
                "last-assistant-message": "Fixed the test."}), Some((Idle, "hook_turn_complete", false)), Some("Fixed the test.")),
            (Agent::Codex, json!({"type": "something-new"}), None, None),
        ];
        for (agent, event, want, message) in cases {
            let read = interpret(agent, &event).unwrap();
            let got = read.hook.map(|h| (h.state, h.reason, h.attention));
            assert_eq!(got, want, "{event}");
            assert_eq!(read.message.as_deref(), message, "{event}");
        }
    }

    #[test]
    fn what_is_not_a_hook_event() {
        let claude = Agent::Claude;
        assert_eq!(interpret(claude, &json!([1])), Err(HookError::NotObject));
        assert_eq!(
            interpret(claude, &json!({"type": "agent-turn-complete"})),
            Err(HookError::NoName("hook_event_name", "claude"))
        );
        assert_eq!(
            interpret(claude, &json!({"hook_event_name": 3})),
            Err(HookError::NoName("hook_event_name", "claude"))
        );
        assert_eq!(
            interpret(Agent::Aider, &json!({})),
            Err(HookError::NoHooks(Agent::Aider))
        );
    }
}
