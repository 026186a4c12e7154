//! A session's windows and panes as tmux last reported them: what it
//! takes to make them again if the tmux server is lost. Read from tmux by
//! `command::restore` and kept in the data dir's `restore.json`, so its
//! serialized shape is that file's (older spellings are read, never
//! written).

use serde::{Deserialize, Serialize};

/// A session's windows, as tmux last reported them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Blueprint {
    /// By window index.
    pub windows: Vec<WindowBlueprint>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct WindowBlueprint {
    pub index: u32,
    pub name: String,
    /// `#{window_layout}`, for `select-layout`.
    pub layout: String,
    pub cols: u16,
    pub rows: u16,
    /// The session's current window.
    pub active: bool,
    /// In layout order (the order `select-layout` gives panes their cells).
    pub panes: Vec<PaneBlueprint>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PaneBlueprint {
    /// `#{pane_index}` when seen.
    pub index: u32,
    /// `#{pane_current_path}`.
    pub cwd: String,
    /// The full command line, for people: the start argv joined where
    /// there is one, else the process's `/proc/PID/cmdline` (its shell).
    pub command_line: String,
    /// The argv the pane was started with, if tmux started it with one:
    /// what `rerun` runs, word for word (read from tmux's quoting once,
    /// where the pane's row is read; never split again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_argv: Option<Vec<String>>,
    /// `#{pane_start_command}` as text, as files written before
    /// `start_argv` hold it: read, never written; the supervisor reads it
    /// into `start_argv` when it loads the file.
    #[serde(default, rename = "start_command", skip_serializing)]
    pub legacy_start_command: Option<String>,
    pub active: bool,
}
