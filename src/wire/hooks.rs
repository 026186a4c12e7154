//! `POST /v1/hooks/{agent}`: a coding agent's hook event, for the session
//! that owns a tmux pane.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::sessions::{Attention, SessionState};

/// The coding agents tmuxd knows; their names are the API's (`agent` in a
/// session summary, `/v1/hooks/{agent}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    /// Claude Code (`claude`, a node script or a native build).
    Claude,
    /// OpenAI Codex CLI (`codex`; the npm package's node wrapper runs a
    /// native binary named after its target triple).
    Codex,
    /// Google Gemini CLI (`gemini`, a node script).
    Gemini,
    /// aider (`aider`, a python script or `python -m aider`).
    Aider,
    /// opencode (`opencode`).
    Opencode,
}

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Aider,
        Agent::Opencode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Aider => "aider",
            Agent::Opencode => "opencode",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// The Claude Code hook events tmuxd reads (`hook_event_name`): the ones
/// `tmuxd hooks install claude` installs, and the only ones the daemon
/// reads a state from. One list, so the two cannot drift apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaudeEvent {
    /// "Claude needs your permission", "waiting for your input".
    Notification,
    /// The turn ended.
    Stop,
    UserPromptSubmit,
    /// A tool is about to run (the installer matches every tool: `*`).
    PreToolUse,
}

impl ClaudeEvent {
    pub const ALL: [ClaudeEvent; 4] = [
        ClaudeEvent::Notification,
        ClaudeEvent::Stop,
        ClaudeEvent::UserPromptSubmit,
        ClaudeEvent::PreToolUse,
    ];

    /// Its name in Claude Code's settings and hook input.
    pub fn name(self) -> &'static str {
        match self {
            ClaudeEvent::Notification => "Notification",
            ClaudeEvent::Stop => "Stop",
            ClaudeEvent::UserPromptSubmit => "UserPromptSubmit",
            ClaudeEvent::PreToolUse => "PreToolUse",
        }
    }

    /// The event named `name`; `None` for one tmuxd does not read.
    pub fn named(name: &str) -> Option<ClaudeEvent> {
        ClaudeEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
    }
}

/// The Codex `notify` event tmuxd reads (its `type`): a turn completed.
pub const CODEX_TURN_COMPLETE: &str = "agent-turn-complete";

/// Largest hook event accepted: events carry a tool's input (a file an
/// agent writes), which tmuxd does not need; `tmuxd hooks send` keeps only
/// the fields it reads.
pub const HOOK_MAX_BODY_BYTES: usize = 64 * 1024;

/// Which pane the hook ran in.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HookQuery {
    /// The pane's tmux id, `$TMUX_PANE` in the hook (`%3`); else the
    /// body's `tmux_pane`.
    #[param(example = "%3")]
    pub pane: Option<String>,
}

/// What the event did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HookResponse {
    /// The session that owns the pane.
    #[schema(example = "sess_3")]
    pub session_id: String,
    /// The event's name (`Notification`, `agent-turn-complete`).
    pub event: String,
    /// Whether the event said a state; others (`SubagentStop`) are taken
    /// and change nothing.
    pub applied: bool,
    /// The session's state after the event (when applied).
    pub state: Option<SessionState>,
    /// Its reason (`hook_notification`, `hook_stop`...).
    pub state_reason: Option<String>,
    pub attention: Option<Attention>,
}
