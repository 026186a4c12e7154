//! Sessions: the summary, and each session endpoint's body and answer.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::id::{FleetId, HostName};

/// What a session is doing (docs/guide.md: "States and evidence").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Attached, not judged yet.
    Starting,
    /// A shell at its prompt.
    Idle,
    /// Output changing, or the foreground program using CPU or running.
    Working,
    /// A program blocked reading the terminal, and quiet: it waits for input.
    Waiting,
    /// The session ended (kept readable for the retention window).
    Exited,
}

/// Why a session needs someone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttentionReason {
    /// The terminal bell rang.
    Bell,
    /// The program sent a notification (OSC 9, OSC 777 `notify`, OSC 99).
    Notification,
    /// A session that worked on its own started waiting for input.
    NeedsInput,
    /// A working program showed nothing and used no CPU for `state.attention_after_s`.
    LongSilence,
}

/// The attention flag: the session needs someone. It is lowered when
/// someone looks (input, the dashboard, a tmux client attaching) or the
/// session next changes activity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Attention {
    pub reason: AttentionReason,
    pub since: DateTime<Utc>,
    /// What the program's notification said (`notification` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
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
    /// `sess_<n>`, never reused; a fleet peer's is `HOST/sess_<n>`.
    #[schema(value_type = String, example = "sess_3")]
    pub session_id: FleetId,
    pub tmux_name: String,
    pub state: SessionState,
    /// Why: `attaching`, `shell_prompt`, `prompt_marker`, `quiet`,
    /// `output_activity`, `cpu`, `foreground_process`, `input`,
    /// `terminal_read`, `event_wait`, a screen rule's reason from the
    /// config or an agent preset's (`claude_permission`...), an agent
    /// hook's (`hook_notification`, `hook_stop`...), or for `exited` the
    /// end's (`api_kill`, `process_exit`,
    /// `tmux_server_gone`, `attach_failed`, `startup_missing_tmux`).
    #[schema(example = "shell_prompt")]
    pub state_reason: String,
    pub state_since: DateTime<Utc>,
    /// Set while the session needs someone; independent of the state.
    pub attention: Option<Attention>,
    /// The foreground program of the active pane.
    pub current_command: String,
    /// The coding agent in the active pane's foreground (`claude`,
    /// `codex`, `gemini`, `aider`, `opencode`); `null` when none is.
    #[serde(default)]
    #[schema(example = "claude")]
    pub agent: Option<String>,
    /// Its whole command line (argv, at most 4 KiB of it), as last seen;
    /// for an ended session, what ran last. Empty when never seen.
    #[serde(default)]
    #[schema(example = json!(["python3", "train.py", "--epochs", "10"]))]
    pub command_line: Vec<String>,
    pub cwd: String,
    pub title: String,
    pub cols: u16,
    pub rows: u16,
    pub created_at: DateTime<Utc>,
    /// When the session ended; `null` while it lives.
    pub ended_at: Option<DateTime<Utc>>,
    /// The exit status of the session's program, when tmux could tell
    /// (sessions tmuxd created); `null` when unknown.
    pub exit_status: Option<i32>,
    /// The signal that ended the program, when tmux could tell.
    pub exit_signal: Option<i32>,
    /// For an ended session without exit status or signal, why:
    /// `adopted` (tmuxd did not create it; tmux does not keep how an
    /// adopted pane's program ended), `not_exited` (deleted, killed or tmux
    /// gone before its program ended), `not_reported` (tmux never said).
    #[serde(default)]
    #[schema(example = "adopted")]
    pub exit_unknown: Option<String>,
    /// The status the last OSC 133 `D;N` prompt mark reported, if any.
    pub last_command_status: Option<i32>,
    pub last_activity_at: Option<DateTime<Utc>>,
    pub transport: Transport,
    /// Open output streams.
    pub subscribers: usize,
    /// The latest output sequence number.
    pub latest_seq: u64,
    /// Whether tmuxd holds a control client for it now ("hot"): every
    /// byte it writes is seen as written. A cold session (`false`, see
    /// `tmux.live_clients`) is attached again when streamed, watched,
    /// typed into or resized; its stream starts at its current screen.
    #[serde(default)]
    pub live: bool,
    /// Inputs waiting for the session to be ready.
    pub queued_inputs: usize,
    pub thought: Option<Thought>,
    /// The fleet peer the session lives on (`session_id` is then
    /// `HOST/sess_N`); absent for this tmuxd's own sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "gpu1")]
    pub host: Option<HostName>,
    /// Its peer is down: this is the last summary the hub had.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// Since when its peer is down (with `stale`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_since: Option<DateTime<Utc>>,
}

/// `GET /v1/sessions`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SessionList {
    /// Live sessions (with `include=ended` also ended ones still kept),
    /// sorted by id number.
    pub sessions: Vec<SessionSummary>,
}

/// What `GET /v1/sessions` lists besides live sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ListInclude {
    /// Sessions that ended within the retention window.
    Ended,
}

#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `ended`: also the sessions that ended within the retention window.
    #[serde(default)]
    pub include: Option<ListInclude>,
    /// Only the sessions of this fleet peer (`[[fleet.peers]]` name).
    #[serde(default)]
    #[param(example = "gpu1")]
    pub host: Option<String>,
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
    /// An absolute path to an existing directory; when absent, the
    /// daemon's `default_cwd` (`GET /v1/server`: its HOME, else `/`).
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
    /// What its panes run if it is restored after tmux was lost (default
    /// `shell`: nothing runs twice unless asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<super::RestoreMode>,
    /// Run in its first pane when it is restored, e.g. `claude --continue`
    /// (at most 8 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
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
    #[schema(value_type = String)]
    pub session_id: FleetId,
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
    /// Queued (FIFO, at most 64) until a shell is at its prompt.
    Idle,
    /// Queued (FIFO, at most 64) until a program waits for input (or a shell is at its prompt).
    Waiting,
}

/// `POST /v1/sessions/{id}/input`: text first, then keys, then Enter if `submit`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InputRequest {
    /// Typed literally (at most 1 MiB, no NUL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "echo hello")]
    pub text: Option<String>,
    /// tmux key names: `Enter`, `C-c`, `Up`, `F5`... (at most 10,000, each
    /// at most 32 bytes)
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
    /// Queued until the session is ready (see `when`).
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
    Working,
    /// The name `working` had before; kept for older clients.
    Busy,
    Waiting,
    /// The attention flag is raised.
    Attention,
    /// The session ended; answers at once for an ended session still kept.
    Exited,
    /// Any change of state or attention after the request.
    Change,
    /// No output that changed the screen for `quiet_ms`.
    Quiet,
}

/// `POST /v1/sessions/{id}/wait`: give `until` (a condition) or `match`
/// (a regex over the screen's lines), not both.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
    /// With `until: "quiet"`: how long without output, 1..=3600000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 3_600_000)]
    pub quiet_ms: Option<u64>,
    /// A regex (at most 1024 bytes) over the window's lines, like expect.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 1024)]
    pub pattern: Option<String>,
    /// Default 30000, at most 3600000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(maximum = 3_600_000)]
    pub timeout_ms: Option<u64>,
}

/// The answer to a wait: the session, and for `match` the line that matched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WaitResponse {
    pub session: SessionSummary,
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub matched: Option<MatchedLine>,
}

/// A screen line a wait's regex matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MatchedLine {
    /// The row in the window snapshot, from 0.
    pub row: usize,
    pub line: String,
    /// What the regex matched within the line.
    pub text: String,
}

/// One input waiting in a session's queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueItem {
    /// Its number, for `DELETE .../input/queue/{n}`.
    pub id: u64,
    pub text: String,
    pub submit: bool,
    /// `idle` or `waiting`.
    pub when: When,
    pub queued_at: DateTime<Utc>,
    /// Being typed now: it can no longer be cancelled.
    pub started: bool,
}

/// `GET /v1/sessions/{id}/input/queue`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueList {
    #[schema(value_type = String)]
    pub session_id: FleetId,
    /// Oldest first: the order they will be typed in.
    pub items: Vec<QueueItem>,
}

/// `DELETE /v1/sessions/{id}/input/queue/{n}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueCancelled {
    #[schema(value_type = String)]
    pub session_id: FleetId,
    pub cancelled: QueueItem,
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
    /// An update older than the stored thought is not applied; one more
    /// than 5 minutes in the future is refused (400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ThoughtResponse {
    #[schema(value_type = String)]
    pub session_id: FleetId,
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
    #[schema(value_type = String)]
    pub session_id: FleetId,
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
    /// The session has ended: this is its last screen, as it was kept.
    #[serde(default)]
    pub ended: bool,
    /// Present while a person has a pane of the snapshot in copy mode (or
    /// another mode): the snapshot still shows the live screen, as
    /// `capture-pane` does, and this says where in the history they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_mode: Option<CopyModeView>,
}

/// Where a person is in a pane's copy mode: tmux's `[position/history]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CopyModeView {
    /// The pane, tmux's `%N` without the `%`.
    pub pane: u32,
    /// tmux's name of the mode.
    #[schema(example = "copy-mode")]
    pub mode: String,
    /// Lines above the live screen the view's top row is.
    pub position: u32,
    /// Lines of history the pane keeps.
    pub history: u32,
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
    #[schema(value_type = String)]
    pub session_id: FleetId,
    /// History above the screen, oldest first; for an ended session the
    /// last of the lines its end kept (`session.ended_scrollback_lines`).
    pub lines: Vec<String>,
    /// The session has ended: the lines are what its record kept.
    #[serde(default)]
    pub ended: bool,
    /// Why an ended session has no history kept: `disabled`
    /// (`session.ended_scrollback_lines` is 0), `not_captured` (its pane
    /// was gone before tmuxd could read it: killed outside tmuxd, tmux
    /// server gone, an adopted session's program ended), `refused` (tmux
    /// did not give it), `lost` (its file could not be written or read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "not_captured")]
    pub missing: Option<String>,
}
