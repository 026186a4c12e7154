//! WebSocket messages: the output stream (`/v1/sessions/{id}/stream`) and
//! the screen feed (`/v1/sessions/{id}/screen`). Binary output frames are
//! `[u64 seq, big-endian][bytes]` and have no JSON type.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::sessions::Cursor;

#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Replay output after this seq from the retained ring.
    pub since: Option<u64>,
    /// `%N` (or `N`): which pane; the active one when absent.
    #[param(pattern = "^%?[0-9]+$")]
    pub pane: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ScreenQuery {
    /// Whether opening the feed acknowledges the session's attention flag
    /// (someone opened the session); `false` for a glance that does not
    /// (the dashboard's wall of thumbnails). Default `true`.
    pub acknowledge: Option<bool>,
}

/// The first message of a socket that connected without a bearer header
/// (tokens configured): within 5 s, or the socket is closed (1008).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SocketAuth {
    Auth { token: String },
}

/// Text frames the output stream sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamServerMessage {
    /// First: where the stream starts.
    Ready {
        latest_seq: u64,
        /// The seq of the first replayed frame (`latest_seq + 1` if none).
        replay_from: u64,
        /// `%N`: the pane streamed.
        pane: String,
        cols: u16,
        rows: u16,
    },
    /// Output after `since` was no longer retained; replay starts here.
    ReplayTruncated { oldest_seq: u64 },
    /// The answer to a ping.
    Pong,
    /// A client message was refused (bad JSON, read token, tmux error).
    Error { message: String },
}

/// Text frames a client may send on the output stream (binary frames are
/// raw input for the pane).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum StreamClientMessage {
    /// Typed literally into the pane.
    Input {
        text: String,
    },
    /// Sets the window size.
    Resize {
        cols: u16,
        rows: u16,
    },
    Ping,
}

/// One changed row of a screen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RowChange {
    pub row: usize,
    /// The row with SGR sequences.
    pub line: String,
}

/// Text frames the screen feed sends (at most ~30 a second).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ScreenMessage {
    /// The whole screen: first, and again when the size changes.
    Screen {
        seq: u64,
        cols: u16,
        rows: u16,
        cursor: Cursor,
        title: String,
        alternate_screen: bool,
        lines: Vec<String>,
    },
    /// Only the rows that changed.
    Rows {
        seq: u64,
        cursor: Cursor,
        title: String,
        rows: Vec<RowChange>,
    },
    /// The answer to `{"type":"ping"}`.
    Pong,
}
