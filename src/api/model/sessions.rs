//! Sessions: the summary, and each session endpoint's body and answer.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// What a session is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Starting,
    Idle,
    Busy,
    Attention,
    Exited,
}

/// Why the session is in its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateReason {
    /// Attached, no output seen yet.
    Attaching,
    /// An OSC 133 prompt marker.
    PromptMarker,
    /// The window changed recently.
    OutputActivity,
    /// The foreground process: a shell (idle) or another program (busy).
    ForegroundProcess,
    /// No output for the quiet period, foreground unknown.
    Quiet,
    /// The terminal bell rang.
    Bell,
    /// Busy and then silent for `state.attention_after_s`.
    IdleTimeout,
    /// Input arrived (clears attention).
    Input,
    /// The session or its tmux server is gone.
    ProcessExit,
}

/// How tmuxd's control client is connected to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Attached,
    Reconnecting,
    Disconnected,
}

/// An external status for a session (e.g. from a coding agent's hook).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Thought {
    pub text: String,
    /// A short label the publisher chose (`thinking`), if any.
    pub state: Option<String>,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    /// When the publisher made it (or when tmuxd received it).
    pub updated_at: DateTime<Utc>,
}

/// A session as clients see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionSummary {
    /// `sess_<n>`, never reused.
    #[schema(example = "sess_3")]
    pub session_id: String,
    pub tmux_name: String,
    pub state: SessionState,
    pub state_reason: StateReason,
    pub state_since: DateTime<Utc>,
    /// The foreground program of the active pane.
    pub current_command: String,
    pub cwd: String,
    pub title: String,
    pub cols: u16,
    pub rows: u16,
    pub created_at: DateTime<Utc>,
    pub last_activity_at: Option<DateTime<Utc>>,
    pub transport: Transport,
    /// Open output streams.
    pub subscribers: usize,
    /// The latest output sequence number.
    pub latest_seq: u64,
    /// Inputs waiting for the session to be idle.
    pub queued_inputs: usize,
    pub thought: Option<Thought>,
}

/// `GET /v1/sessions`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionList {
    /// Live sessions, sorted by id number.
    pub sessions: Vec<SessionSummary>,
}

/// One session, as create, adopt, get, resize and wait answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionEnvelope {
    pub session: SessionSummary,
}

/// `POST /v1/sessions`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionRequest {
    /// The tmux session name; the next free number when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An absolute path to an existing directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A shell command run in the new window instead of the shell (at most 8 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Typed once the session has started, then Enter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_input: Option<String>,
    /// Window width (2..=1000, with `rows`; at most 250,000 cells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 2, maximum = 1000)]
    pub cols: Option<u16>,
    /// Window height (2..=1000, with `cols`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 2, maximum = 1000)]
    pub rows: Option<u16>,
}

/// `POST /v1/sessions/adopt`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdoptRequest {
    #[schema(min_length = 1)]
    pub tmux_name: String,
    /// The id it had before, if it was tracked (only a known old id is reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `DELETE /v1/sessions/{id}?mode=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeleteMode {
    /// Stop tracking; the tmux session lives on and is not re-adopted.
    #[default]
    Detach,
    /// Kill the tmux session.
    Kill,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// `detach` (default) or `kill`.
    #[serde(default)]
    pub mode: Option<DeleteMode>,
}

/// The answer to a delete.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DeleteResponse {
    pub session_id: String,
    pub mode: DeleteMode,
    /// Whether the tmux session still runs.
    pub tmux_alive: bool,
}

/// When input is typed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum When {
    #[default]
    Now,
    /// Queued (FIFO, at most 64) until the session is next idle.
    Idle,
}

/// `POST /v1/sessions/{id}/input`: text first, then keys, then Enter if `submit`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InputRequest {
    /// Typed literally (at most 1 MiB, no NUL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "echo hello")]
    pub text: Option<String>,
    /// tmux key names: `Enter`, `C-c`, `Up`, `F5`...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(example = json!(["Up", "Enter"]))]
    pub keys: Vec<String>,
    /// Enter after the text and keys.
    #[serde(default)]
    pub submit: bool,
    #[serde(default)]
    pub when: When,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct InputResponse {
    /// Typed now.
    pub delivered: bool,
    /// Queued until the session is idle.
    pub queued: bool,
}

/// `POST /v1/sessions/{id}/resize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResizeRequest {
    /// 2..=1000; `cols * rows` at most 250,000.
    #[schema(minimum = 2, maximum = 1000)]
    pub cols: u16,
    /// 2..=1000.
    #[schema(minimum = 2, maximum = 1000)]
    pub rows: u16,
}

/// The condition a wait waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    Idle,
    Busy,
    Attention,
    Exited,
    /// Any change of state or reason after the request.
    Change,
}

/// `POST /v1/sessions/{id}/wait`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitRequest {
    pub until: Until,
    /// Default 30000, at most 3600000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(maximum = 3_600_000)]
    pub timeout_ms: Option<u64>,
}

/// `PUT /v1/sessions/{id}/thought`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThoughtRequest {
    /// At most 16 KiB.
    pub text: String,
    /// At most 64 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_in: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_out: Option<u64>,
    /// An update older than the stored thought is not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ThoughtResponse {
    pub session_id: String,
    /// The thought now stored (the newer of the two).
    pub thought: Thought,
    /// False when a newer thought was stored already.
    pub applied: bool,
}

/// Text only, or with SGR sequences for colors and attributes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotFormat {
    #[default]
    Text,
    Ansi,
}

/// Which part of the window a snapshot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotPane {
    /// The active pane alone, as `capture-pane` shows it.
    Active,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SnapshotQuery {
    /// `text` (default) or `ansi`.
    #[serde(default)]
    pub format: Option<SnapshotFormat>,
    /// `active`: crop to the active pane.
    #[serde(default)]
    pub pane: Option<SnapshotPane>,
}

/// Where the cursor is, relative to the snapshot's top-left cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}

/// A pane's place in its window, in cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PaneRect {
    pub left: u16,
    pub top: u16,
    pub cols: u16,
    pub rows: u16,
}

/// `GET /v1/sessions/{id}/snapshot`: the parsed screen, from memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Snapshot {
    pub session_id: String,
    /// The latest output chunk folded into this screen.
    pub seq: u64,
    pub cols: u16,
    pub rows: u16,
    /// The pane this snapshot is cropped to (`pane=active`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<PaneRect>,
    pub cursor: Cursor,
    pub alternate_screen: bool,
    pub title: String,
    /// One string per row; with `format=ansi`, SGR sequences included.
    pub lines: Vec<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ScrollbackQuery {
    /// How many lines (1..=`session.max_scrollback_lines`, default 100).
    #[param(minimum = 1)]
    pub lines: Option<usize>,
}

/// `GET /v1/sessions/{id}/scrollback`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ScrollbackResponse {
    pub session_id: String,
    /// History above the screen, oldest first.
    pub lines: Vec<String>,
}
