//! Health, readiness, version and the daemon's tmux.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `ok`, or `degraded` while some write to the data dir keeps failing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorageStatus {
    Ok,
    Degraded,
}

/// Which kind of write keeps failing (each is retried and recovers on its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorageWrite {
    /// Appending to `events.jsonl` (and reserving seqs in `counters.json`).
    Events,
    /// Replacing `registry.json` (and the id counter in `counters.json`).
    Registry,
    /// Replacing `thoughts.json`.
    Thoughts,
    /// Replacing `ended.json`.
    Ended,
    /// Replacing `restore.json`.
    Restore,
}

/// One write that is failing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StorageFailure {
    pub write: StorageWrite,
    /// The file the last attempt failed on (a name in the data dir).
    pub file: String,
    /// The operating system's reason, e.g. "No space left on device".
    pub error: String,
    /// When this write first failed.
    pub since: DateTime<Utc>,
    /// Failed attempts so far.
    pub attempts: u64,
}

/// The state of the data dir.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StorageReport {
    pub status: StorageStatus,
    pub failures: Vec<StorageFailure>,
    /// Events numbered and served but not on disk yet.
    pub unwritten_events: usize,
    /// Events that never reached the disk (dropped after it failed too long).
    pub lost_events: u64,
    /// Failed write attempts since the daemon started.
    pub failed_writes: u64,
}

/// `GET /healthz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`, or `degraded` while tmux is lost with sessions to restore or
    /// writes to the data dir keep failing (still 200: a restart would not
    /// help); `reason` says which.
    pub status: StorageStatus,
    /// Why the status is `degraded`, for a person; absent when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `tmux -V`, or `unavailable: <why>`.
    pub tmux: String,
    /// How control clients attach: `native (...)` (tmuxd's own client of
    /// tmux's protocol) or `tmux -C child (<why>)`.
    #[serde(default)]
    pub tmux_client: String,
    /// Sessions tracked.
    pub sessions: usize,
    pub storage: StorageReport,
    /// Set while the tmux server is lost with sessions to restore.
    #[serde(default)]
    pub tmux_lost: Option<super::TmuxLost>,
}

/// `GET /readyz`: 200 when tmux can be run and makes a session tmuxd can
/// attach to (tried on a private server), else 503. Degraded storage
/// keeps the daemon ready (it serves from memory and writes once the disk
/// recovers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Readiness {
    pub ready: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub storage: StorageReport,
    /// Set while the tmux server is lost with sessions to restore.
    #[serde(default)]
    pub tmux_lost: Option<super::TmuxLost>,
}

/// `GET /version`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VersionInfo {
    pub version: String,
    /// The commit the binary was built from: a short hash, `-dirty` when
    /// the tree had changes, or `unknown` (built without git). Absent from
    /// older daemons (a fleet peer may be one).
    #[serde(default)]
    pub commit: String,
}

/// `GET /v1/server`: the tmux the daemon uses, so a client can attach to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerInfo {
    /// The tmux binary.
    pub bin: String,
    pub socket: ServerSocket,
    /// `tmux -V`, if it ran.
    pub version: Option<String>,
    /// Where a session created without `cwd` starts: the daemon's HOME,
    /// else `/`. Absent from a tmuxd older than this field (a fleet peer).
    #[serde(default)]
    pub default_cwd: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerSocket {
    /// `-L NAME`, if one is configured.
    pub name: Option<String>,
    /// The socket path, resolved as tmux does.
    pub path: String,
}
