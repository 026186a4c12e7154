//! The words of state detection as clients see them: states, the reason
//! for each, why a session ended, and the attention flag.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, Serializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Starting,
    Idle,
    Working,
    Waiting,
    Exited,
}

/// Why tmuxd stopped tracking a session; the same words in the session's
/// last state event and in its `session_deleted` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    ApiKill,
    ProcessExit,
    TmuxServerGone,
    AttachFailed,
    StartupMissingTmux,
}

impl EndReason {
    const ALL: [EndReason; 5] = [
        EndReason::ApiKill,
        EndReason::ProcessExit,
        EndReason::TmuxServerGone,
        EndReason::AttachFailed,
        EndReason::StartupMissingTmux,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::ApiKill => "api_kill",
            EndReason::ProcessExit => "process_exit",
            EndReason::TmuxServerGone => "tmux_server_gone",
            EndReason::AttachFailed => "attach_failed",
            EndReason::StartupMissingTmux => "startup_missing_tmux",
        }
    }
}

/// Why the session is in its state (docs/guide.md: "States and evidence").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateReason {
    /// Attached, not judged yet.
    Attaching,
    /// An interactive shell blocked reading its terminal.
    ShellPrompt,
    /// An OSC 133 mark: `A`/`B`/`D` (idle), `C` (working).
    PromptMarker,
    /// No process facts, and no output for `idle_after`.
    Quiet,
    /// The screen changed recently.
    OutputActivity,
    /// The foreground process group is using CPU.
    Cpu,
    /// A program runs and is not reading the terminal (a sleep, a child, the network).
    ForegroundProcess,
    /// Input was typed through tmuxd and the pane has not answered yet.
    Input,
    /// A program is blocked in a read of the terminal.
    TerminalRead,
    /// A program is blocked in poll/select/epoll with the terminal as its
    /// input, and has been quiet for `idle_after`.
    EventWait,
    /// An interactive shell reads its terminal inside a command (bash's
    /// `read` builtin, or after an OSC 133 `C` mark): not at its prompt.
    ShellRead,
    /// A program blocked in poll/epoll, quiet, whose cursor follows a
    /// question (`?`, `[y/N]`).
    ScreenQuestion,
    /// A program waits for its terminal with a timeout and its screen keeps
    /// changing: a live display (`top`), not a wait for someone.
    Redraw,
    /// A screen rule (the config's or an agent preset) matched; its reason.
    Rule(&'static str),
    /// A coding agent's hook said so (`hook_stop`...), and the screen and
    /// process do not disagree.
    Hook(&'static str),
    /// The session ended.
    End(EndReason),
}

impl StateReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StateReason::Attaching => "attaching",
            StateReason::ShellPrompt => "shell_prompt",
            StateReason::PromptMarker => "prompt_marker",
            StateReason::Quiet => "quiet",
            StateReason::OutputActivity => "output_activity",
            StateReason::Cpu => "cpu",
            StateReason::ForegroundProcess => "foreground_process",
            StateReason::Input => "input",
            StateReason::TerminalRead => "terminal_read",
            StateReason::EventWait => "event_wait",
            StateReason::ShellRead => "shell_read",
            StateReason::ScreenQuestion => "screen_question",
            StateReason::Redraw => "redraw",
            StateReason::Rule(reason) | StateReason::Hook(reason) => reason,
            StateReason::End(end) => end.as_str(),
        }
    }
}

impl Serialize for StateReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Read back from `ended.json`. A reason no variant names (a screen rule's,
/// from a config since changed) is kept as a rule reason; the few such
/// strings are leaked, as rule reasons are, to keep views `Copy`.
impl<'de> Deserialize<'de> for StateReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use StateReason as R;
        let name = String::deserialize(deserializer)?;
        let fixed = [
            R::Attaching,
            R::ShellPrompt,
            R::PromptMarker,
            R::Quiet,
            R::OutputActivity,
            R::Cpu,
            R::ForegroundProcess,
            R::Input,
            R::TerminalRead,
            R::EventWait,
            R::ShellRead,
            R::ScreenQuestion,
            R::Redraw,
        ];
        let known = fixed
            .into_iter()
            .chain(EndReason::ALL.map(R::End))
            .find(|r| r.as_str() == name);
        Ok(known.unwrap_or_else(|| R::Rule(Box::leak(name.into_boxed_str()))))
    }
}

/// Why a session needs someone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionReason {
    /// The terminal bell rang.
    Bell,
    /// The program asked for it: an OSC 9, 777 `notify` or 99 notification.
    Notification,
    /// A session that worked on its own started waiting for input.
    NeedsInput,
    /// A working program has shown nothing and used no CPU for `attention_after`.
    LongSilence,
}

/// The attention flag: why, and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attention {
    pub reason: AttentionReason,
    pub since: DateTime<Utc>,
    /// What a program's notification said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Note>,
}

/// Who lowered the attention flag by looking at the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Acknowledger {
    /// The session was opened in the dashboard (its `/screen` WebSocket).
    Dashboard,
    /// A tmux client attached to the session.
    TmuxClient,
    /// Input: through tmuxd, or typed at an attached tmux client.
    Input,
    /// An answer from a push notification's action (`POST
    /// /v1/sessions/{id}/answer`), typed only while the attention it
    /// answers is still up.
    PushAction,
}

/// Bytes of a notification's text kept: enough for a line, and small
/// enough that views stay `Copy`.
const NOTE_BYTES: usize = 120;

/// A short text (a notification's), cut on a character boundary, with
/// control characters replaced by spaces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Note {
    len: u8,
    bytes: [u8; NOTE_BYTES],
}

impl Note {
    pub fn new(text: &str) -> Self {
        let mut note = Note {
            len: 0,
            bytes: [0; NOTE_BYTES],
        };
        let clean = text.trim().chars().map(|c| match c.is_control() {
            true => ' ',
            false => c,
        });
        let mut len = 0;
        for c in clean {
            let width = c.len_utf8();
            if len + width > NOTE_BYTES {
                break;
            }
            c.encode_utf8(&mut note.bytes[len..]);
            len += width;
        }
        note.len = len as u8;
        note
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for Note {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Note::new(&String::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    use super::Note;

    #[test]
    fn notes_are_cut_on_a_character_boundary_and_cleaned() {
        assert_eq!(Note::new(" build\tdone\n ").as_str(), "build done");
        let long = "é".repeat(100);
        let note = Note::new(&long);
        assert_eq!(note.as_str(), "é".repeat(60));
        assert_eq!(Note::new("").as_str(), "");
    }
}
