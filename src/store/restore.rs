//! `restore.json`: what it takes to bring each tracked session back if the
//! tmux server is lost (its windows, panes, layouts, cwds and command
//! lines, and what its creator allowed to run again), and the sessions
//! lost with a server, kept until they are restored.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::registry::format_version;
use crate::tmux::Blueprint;

/// What a pane runs when its session is restored.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RestoreMode {
    /// A shell in the pane's cwd, nothing run (a command run twice can do
    /// harm: a deploy, a migration, a message sent).
    #[default]
    Shell,
    /// Each pane runs its command line again.
    Rerun,
}

/// How a session came under tmuxd: an adopted session restores as shells,
/// since nobody said its commands may run twice.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Created,
    #[default]
    Adopted,
}

/// `restore.json`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RestoreFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    /// When the tmux server was found lost; `None` while it is not.
    #[serde(default)]
    pub lost_since: Option<DateTime<Utc>>,
    /// Every session tmuxd tracks or lost, by `session_id`.
    #[serde(default)]
    pub sessions: BTreeMap<String, RestoreRecord>,
}

/// One session: how to bring it back.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RestoreRecord {
    pub tmux_name: String,
    #[serde(default)]
    pub origin: Origin,
    /// What the creator asked for (`restore` in the create request).
    #[serde(default)]
    pub mode: RestoreMode,
    /// Run in the first pane instead of a shell when restored (e.g.
    /// `claude --continue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
    /// The command the session was created with (its first pane's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The session's windows as last seen; `None` until first seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<Blueprint>,
    /// Lost with its tmux server (and not restored yet).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}

impl RestoreFile {
    pub fn empty() -> Self {
        RestoreFile {
            version: 1,
            lost_since: None,
            sessions: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_file_parses_and_defaults_are_safe() {
        let json = r#"{"version":1,"sessions":{"sess_1":{"tmux_name":"a"}}}"#;
        let file: RestoreFile = serde_json::from_str(json).unwrap();
        let record = &file.sessions["sess_1"];
        assert_eq!(record.mode, RestoreMode::Shell);
        assert_eq!(record.origin, Origin::Adopted);
        assert!(!record.lost);
        assert!(serde_json::from_str::<RestoreFile>(r#"{"version":2}"#).is_err());
    }
}
