//! Restoring sessions lost with their tmux server: what a create may say
//! about it, `POST /v1/sessions/restore`, and `tmux_lost` in health.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{ErrorCode, SessionSummary};

/// What a session's panes run when it is restored after tmux was lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreMode {
    /// A shell in each pane's cwd; nothing is run again.
    #[default]
    Shell,
    /// Each pane runs its command again (the first pane the session's
    /// `command`): only for commands that are safe to run twice.
    Rerun,
}

/// `POST /v1/sessions/restore`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreRequest {
    /// The lost sessions to restore; every one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ids: Option<Vec<String>>,
}

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RestoreResponse {
    /// Made again under their names and ids, attached.
    pub restored: Vec<SessionSummary>,
    /// Those that could not be (and stay restorable).
    pub failed: Vec<RestoreFailure>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RestoreFailure {
    pub session_id: String,
    pub tmux_name: String,
    pub code: ErrorCode,
    pub message: String,
}

/// The tmux server was lost (crash, `kill-server`, reboot) with sessions
/// tmuxd can restore.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TmuxLost {
    /// When tmuxd found it lost.
    pub since: DateTime<Utc>,
    /// Sessions `POST /v1/sessions/restore` can bring back.
    pub restorable: usize,
}
