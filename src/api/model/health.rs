//! Health, readiness, version and the daemon's tmux.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `GET /healthz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// Always `ok`: the daemon answers.
    pub status: String,
    /// `tmux -V`, or `unavailable: <why>`.
    pub tmux: String,
    /// Sessions tracked.
    pub sessions: usize,
}

/// `GET /readyz`: 200 when tmux can be run, else 503.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Readiness {
    pub ready: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `GET /version`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct VersionInfo {
    pub version: String,
}

/// `GET /v1/server`: the tmux the daemon uses, so a client can attach to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerInfo {
    /// The tmux binary.
    pub bin: String,
    pub socket: ServerSocket,
    /// `tmux -V`, if it ran.
    pub version: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerSocket {
    /// `-L NAME`, if one is configured.
    pub name: Option<String>,
    /// The socket path, resolved as tmux does.
    pub path: String,
}
