//! `GET /v1/sessions/untracked`: the tmux sessions tmuxd does not track.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Why tmuxd does not track a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UntrackedReason {
    /// Detached from tmuxd; adopting it gives back `session_id`.
    Detached,
    /// `discovery.include`/`exclude` keep it out of discovery.
    Excluded,
    /// tmuxd refuses its name (it cannot round-trip through tmux), so it
    /// cannot be adopted.
    InvalidName,
    /// Not adopted yet: younger than `discovery.min_age_ms`, or left
    /// while `max_sessions` was reached.
    Pending,
}

/// One tmux session tmuxd does not track.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UntrackedSession {
    pub tmux_name: String,
    pub windows: u32,
    /// Clients attached to it (people at a terminal; tmuxd has none there).
    pub attached_clients: u32,
    /// When tmux created it (to the second).
    pub created_at: DateTime<Utc>,
    /// The id it gets back when adopted, if it was tracked before.
    pub session_id: Option<String>,
    pub reason: UntrackedReason,
}

/// `GET /v1/sessions/untracked`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UntrackedList {
    /// In tmux's order.
    pub sessions: Vec<UntrackedSession>,
}
