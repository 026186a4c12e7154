//! The event log as clients read it: `GET /v1/events` (SSE or a JSON page).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// tmuxd created a new tmux session.
    SessionCreated,
    /// An existing tmux session was taken under supervision.
    SessionAdopted,
    /// A tracked session was renamed in tmux (`old_name`, `new_name`);
    /// it keeps its id.
    SessionRenamed,
    /// Supervision ended while the tmux session was left running.
    SessionDetached,
    /// A session ended; `reason` says why (`api_kill`, `process_exit`...).
    SessionDeleted,
    /// The state detector moved a session to a new state, or raised or
    /// lowered its attention flag (`state`, `state_since`, `attention`;
    /// `acknowledged_by`: `dashboard`, `tmux_client` or `input` when the
    /// flag was lowered because someone looked).
    SessionState,
    /// A session's published status changed (`thought`).
    ThoughtUpdate,
    /// Queued input was discarded without being typed (`text_bytes`,
    /// `text_chars`, `text_prefix`: its first 64 characters; `queue_id`,
    /// `queued_at`).
    InputDropped,
    /// The tmux server was lost with the sessions on it (crash,
    /// `kill-server`, reboot); `restorable` says how many can be restored.
    TmuxLost,
    /// A session lost with its tmux server was made again under its id.
    SessionRestored,
    /// An ended session still kept was removed (`DELETE` on it, reason
    /// `api_delete`) with its last screens and history: nothing of it is
    /// served any more.
    SessionRemoved,
}

/// One event. Kind-specific fields (`state`, `state_since`, `thought`,
/// `text_prefix`, `queued_at`, `message`...) sit beside the common ones. An
/// event's JSON is at most 8 KiB: a larger one has its strings cut to 1 KiB
/// and carries `"cut": true`; a `thought` carries at most 1 KiB of its text
/// (then `"text_truncated": true`; the summary has all of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Event {
    /// One more than the previous event's, across restarts.
    pub seq: u64,
    pub at: DateTime<Utc>,
    pub kind: EventKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Why it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_name: Option<String>,
    #[serde(flatten)]
    #[schema(ignore)]
    pub detail: Map<String, Value>,
}

/// SSE (default) or one JSON page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventsFormat {
    #[default]
    Sse,
    Json,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Replay retained events after this seq (else `Last-Event-ID`; else live only).
    pub since: Option<u64>,
    /// `sse` (default) or `json`.
    #[serde(default)]
    pub format: Option<EventsFormat>,
    /// With `format=json`: events per page, 1 to 10000 (default 1000). A
    /// page also stops before its events' JSON passes 1 MiB.
    pub limit: Option<usize>,
}

/// Events in a `format=json` page unless `limit` says otherwise.
pub const EVENTS_PAGE_DEFAULT: usize = 1000;
/// The largest `limit`.
pub const EVENTS_PAGE_MAX: usize = 10_000;
/// A page stops before its events' JSON passes this (it holds one event at
/// least).
pub const EVENTS_PAGE_BYTES: usize = 1024 * 1024;

/// `GET /v1/events?format=json`: one page; while `has_more`, ask again
/// with `since=next_since`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventsPage {
    /// Retained events after `since`, oldest first: at most `limit`, and at
    /// most 1 MiB of JSON (one event at least).
    pub events: Vec<Event>,
    /// Events after `since` were dropped from memory already.
    pub truncated: bool,
    /// The seq the next event will get.
    pub next_seq: u64,
    /// More retained events follow this page.
    #[serde(default)]
    pub has_more: bool,
    /// The `since` of the next page: the seq of this page's last event (or
    /// the `since` asked, for an empty page).
    #[serde(default)]
    pub next_since: u64,
}

/// The data of the SSE event `replay_truncated`, sent first when events
/// after `since` are no longer retained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReplayTruncatedNotice {
    pub since: u64,
}

/// One Server-Sent Event of `GET /v1/events`, as a client's SSE parser
/// hands it over: `id` is the event's seq, `data` its JSON (an Event); an
/// event named `replay_truncated` carries a ReplayTruncatedNotice instead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ServerSentEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `message` (the default) or `replay_truncated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// JSON text: an Event, or a ReplayTruncatedNotice.
    pub data: String,
}
