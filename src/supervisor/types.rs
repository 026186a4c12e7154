//! What the supervisor takes and gives: requests, summaries, errors.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::id::SessionId;
use crate::session::{ActorGone, ActorSummary};
use crate::store::{StoreError, Thought};
use crate::tmux::control::ControlError;
use crate::tmux::{KeyError, NameError, TmuxError};

/// A session as clients see it (api.md "Session summary"): what the
/// supervisor knows, plus what the actor knows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionSummary {
    pub session_id: SessionId,
    pub tmux_name: String,
    pub created_at: DateTime<Utc>,
    /// When the session ended; `null` while it lives.
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    pub queued_inputs: usize,
    pub thought: Option<Thought>,
    #[serde(flatten)]
    pub actor: ActorSummary,
}

/// `POST /v1/sessions`.
#[derive(Clone, Debug, Default)]
pub struct CreateSession {
    pub name: Option<String>,
    pub cwd: Option<String>,
    pub command: Option<String>,
    pub initial_input: Option<String>,
    pub size: Option<(u16, u16)>,
    /// What its panes run if it is restored after tmux is lost.
    pub restore: crate::store::RestoreMode,
    /// Run in its first pane when it is restored (e.g. `claude --continue`).
    pub resume_command: Option<String>,
}

/// `DELETE /v1/sessions/{id}?mode=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeleteMode {
    /// Stop tracking; the tmux session lives on and is not re-adopted.
    #[default]
    Detach,
    /// Kill the tmux session.
    Kill,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeleteOutcome {
    pub session_id: SessionId,
    pub mode: DeleteMode,
    pub tmux_alive: bool,
}

/// `POST /v1/sessions/{id}/input`: text first, then keys, then Enter if `submit`.
#[derive(Clone, Debug, Default)]
pub struct Input {
    pub text: Option<String>,
    pub keys: Vec<String>,
    pub submit: bool,
    pub when: When,
}

/// When input is typed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    #[default]
    Now,
    /// Queued (FIFO) until a shell is at its prompt.
    Idle,
    /// Queued (FIFO) until a program waits for input.
    Waiting,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct InputOutcome {
    pub delivered: bool,
    pub queued: bool,
}

/// `POST /v1/sessions/{id}/wait`: the condition waited for.
#[derive(Clone, Debug)]
pub enum Until {
    Idle,
    Working,
    Waiting,
    /// The attention flag is raised.
    Attention,
    Exited,
    /// Any change of state or attention after the request.
    Change,
    /// No output that changed the screen for this long.
    Quiet(std::time::Duration),
    /// A line of the screen matches.
    Match(std::sync::Arc<regex::Regex>),
}

/// What a wait found: the session, and for `Match` the line that matched.
#[derive(Clone, Debug, Serialize)]
pub struct WaitOutcome {
    pub session: SessionSummary,
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub matched: Option<MatchedLine>,
}

/// A screen line a wait's regex matched.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct MatchedLine {
    /// The row in the window snapshot, from 0.
    pub row: usize,
    pub line: String,
    /// What the regex matched within the line.
    pub text: String,
}

/// One queued input, as `GET .../input/queue` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct QueueItem {
    pub id: u64,
    pub text: String,
    pub submit: bool,
    pub when: crate::store::InputWhen,
    pub queued_at: DateTime<Utc>,
    /// Being typed now: it can no longer be cancelled.
    pub started: bool,
}

/// `GET /v1/sessions/{id}/snapshot`: the screen, and whether it is an
/// ended session's last one.
#[derive(Clone, Debug)]
pub struct ScreenServed {
    pub snapshot: crate::session::Snapshot,
    pub ended: bool,
}

/// `GET /v1/sessions/{id}/scrollback`: history above the screen, oldest
/// first; for an ended session, what its end kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scrollback {
    pub lines: Vec<String>,
    /// Served from an ended session's record.
    pub ended: bool,
    /// Why an ended session has no history kept.
    pub missing: Option<NoHistory>,
}

/// `PUT /v1/sessions/{id}/thought`.
#[derive(Clone, Debug)]
pub struct ThoughtUpdate {
    pub text: String,
    pub state: Option<String>,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// Queued inputs kept per session at most.
pub const MAX_QUEUED_INPUTS: usize = 64;
/// Longest thought text, in bytes.
pub const MAX_THOUGHT_BYTES: usize = 16 * 1024;
/// Longest thought state label, in bytes.
pub const MAX_THOUGHT_STATE_BYTES: usize = 64;

/// Bounds on a window size set through the API.
pub const MIN_SIZE: u16 = 2;
pub const MAX_SIZE: u16 = 1000;
/// Cells a window set through the API may have at most: each costs the
/// daemon memory in its parsed screen (1000x1000 would take ~62 MB).
pub const MAX_CELLS: u32 = 250_000;

/// Longest input typed in one request (text, raw stream bytes, a queued
/// item, `initial_input`); longer is refused before anything is typed.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// Longest `command` a session can be created with.
pub const MAX_COMMAND_BYTES: usize = 8 * 1024;

/// Which cap a wait would pass; the message names its config key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WaitCap {
    #[error("too many waits on {session_id}: {max} are open (http.max_waits_per_session = {max})")]
    Session { session_id: String, max: usize },
    #[error("too many waits open in all: {max} (http.max_waits = {max})")]
    Total { max: usize },
}

#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    #[error("no session {0}")]
    NotFound(String),
    #[error("no tmux session named {0:?}")]
    NoSuchTmuxSession(String),
    /// The session exists; the queued input `n` does not (typed, dropped
    /// or cancelled already, or never queued).
    #[error("no queued input {n} in {session_id}")]
    NoQueuedInput { session_id: String, n: u64 },
    #[error("invalid session name {name:?}: {reason}")]
    InvalidName { name: String, reason: NameError },
    #[error("invalid cwd {path:?}: {reason}")]
    InvalidCwd { path: String, reason: String },
    #[error(transparent)]
    InvalidKeys(#[from] KeyError),
    #[error("{0}")]
    BadRequest(String),
    #[error("a tmux session named {0:?} already exists")]
    NameTaken(String),
    #[error("tmux session {name:?} is already tracked as {session_id}")]
    AlreadyTracked { name: String, session_id: String },
    #[error("maximum session capacity reached ({max}/{max})")]
    Capacity { max: usize },
    #[error(transparent)]
    TooManyWaits(#[from] WaitCap),
    #[error(transparent)]
    Tmux(#[from] TmuxError),
    #[error(transparent)]
    Attach(#[from] ControlError),
    /// tmux refused a command a session's actor ran (see `tmux_refused`).
    #[error("`tmux {command}` failed: {source}")]
    Refused {
        command: &'static str,
        source: crate::session::CommandError,
    },
    #[error("session {0} ended while the request was being served")]
    Gone(String),
    #[error("{what} is {size} bytes; at most {max} are accepted")]
    TooLarge {
        what: &'static str,
        size: usize,
        max: usize,
    },
    #[error("the input queue of {session_id} is full ({max} items)")]
    QueueFull { session_id: String, max: usize },
    #[error("timed out after {ms} ms waiting for {session_id}")]
    Timeout { session_id: String, ms: u64 },
    #[error("session {0} has ended; it can no longer reach that state")]
    Ended(String),
    /// A change asked of a session that has ended (it stays readable).
    #[error(
        "session {0} has ended: it takes no input, resize or other change \
         (its summary, last screen and scrollback stay readable)"
    )]
    HasEnded(String),
    /// An ended session whose screen tmuxd never saw (it ended before
    /// tmuxd attached, or while tmuxd was down and gone with tmux).
    #[error("session {0} has ended and no last screen was kept (tmuxd never saw it)")]
    NoLastScreen(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0} is not a session lost with its tmux server")]
    NotRestorable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SupervisorError {
    pub fn gone(id: SessionId) -> impl FnOnce(ActorGone) -> SupervisorError {
        move |_| SupervisorError::Gone(id.to_string())
    }
}

/// Why an ended session has no history kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoHistory {
    /// `session.ended_scrollback_lines` is 0.
    Disabled,
    /// The pane was gone before tmuxd could read it: the session was
    /// killed outside tmuxd, its tmux server went, an adopted session's
    /// program ended (tmux closes such a pane at once), or it ended before
    /// tmuxd attached.
    NotCaptured,
    /// tmux refused to give it.
    Refused,
    /// Its file could not be written, or was lost from the data dir.
    Lost,
}

impl NoHistory {
    pub fn as_str(self) -> &'static str {
        match self {
            NoHistory::Disabled => "disabled",
            NoHistory::NotCaptured => "not_captured",
            NoHistory::Refused => "refused",
            NoHistory::Lost => "lost",
        }
    }
}

pub fn check_size(cols: u16, rows: u16) -> Result<(), SupervisorError> {
    let ok = |n: u16| (MIN_SIZE..=MAX_SIZE).contains(&n);
    if !ok(cols) || !ok(rows) {
        return Err(SupervisorError::BadRequest(format!(
            "cols and rows must be between {MIN_SIZE} and {MAX_SIZE} (got {cols}x{rows})"
        )));
    }
    if u32::from(cols) * u32::from(rows) > MAX_CELLS {
        return Err(SupervisorError::BadRequest(format!(
            "a window may have at most {MAX_CELLS} cells (got {cols}x{rows})"
        )));
    }
    Ok(())
}

/// What tmux's refusal of a command sent through a session's actor means:
/// the session (or its client) went away meanwhile (404), or tmux said no.
pub(crate) fn tmux_refused(
    id: SessionId,
    command: &'static str,
    error: crate::session::CommandError,
) -> SupervisorError {
    match error.is_gone() {
        true => SupervisorError::Gone(id.to_string()),
        false => SupervisorError::Refused {
            command,
            source: error,
        },
    }
}

/// Refuses input longer than `MAX_INPUT_BYTES` before anything is typed.
pub fn check_input_size(what: &'static str, size: usize) -> Result<(), SupervisorError> {
    if size > MAX_INPUT_BYTES {
        return Err(SupervisorError::TooLarge {
            what,
            size,
            max: MAX_INPUT_BYTES,
        });
    }
    Ok(())
}
