//! The event log as clients read it (`GET /v1/events`, SSE or a JSON page)
//! and as `events.jsonl` holds it: one typed payload per kind.

use chrono::{DateTime, Utc};
use serde::de::Error as _;
use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use super::{Attention, RestoreMode, SessionState, Thought};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionCreated,
    SessionAdopted,
    SessionRenamed,
    SessionDetached,
    SessionDeleted,
    SessionState,
    ThoughtUpdate,
    InputDropped,
    TmuxLost,
    SessionRestored,
    SessionRemoved,
}

/// What an event carries beside the common fields, one variant per kind:
/// `kind` and the kind's own fields sit at the top level of the event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Payload {
    /// tmuxd created a new tmux session.
    SessionCreated,
    /// An existing tmux session was taken under supervision.
    SessionAdopted(Adopted),
    /// A tracked session was renamed in tmux; it keeps its id.
    SessionRenamed(Renamed),
    /// Supervision ended while the tmux session was left running.
    SessionDetached,
    /// A session ended; `reason` says why (`api_kill`, `process_exit`...).
    SessionDeleted(Deleted),
    /// The state detector moved a session to a new state, or raised or
    /// lowered its attention flag.
    SessionState(StateChanged),
    /// A session's published status changed.
    ThoughtUpdate(ThoughtUpdated),
    /// Queued input was discarded without being typed.
    InputDropped(InputDropped),
    /// The tmux server was lost with the sessions on it (crash,
    /// `kill-server`, reboot).
    TmuxLost(ServerLost),
    /// A session lost with its tmux server was made again under its id.
    SessionRestored(Restored),
    /// An ended session still kept was removed (`DELETE` on it, reason
    /// `api_delete`) with its last screens and history: nothing of it is
    /// served any more.
    SessionRemoved,
}

/// `session_adopted`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Adopted {
    /// At startup: where its id came from (`registry`, `tmux`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_from: Option<String>,
}

/// `session_renamed`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Renamed {
    /// The tmux name before.
    pub old_name: String,
    /// The tmux name after.
    pub new_name: String,
}

/// How the program ended, as far as tmux said. Both keys are written, each
/// null when unknown; an end tmuxd did not see the program make has neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    /// The program's exit status.
    #[serde(deserialize_with = "Option::deserialize")]
    pub exit_status: Option<i32>,
    /// The signal that ended the program.
    #[serde(deserialize_with = "Option::deserialize")]
    pub exit_signal: Option<i32>,
}

/// `session_deleted`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Deleted {
    #[serde(flatten)]
    #[schema(schema_with = maybe_exit)]
    pub exit: Option<Exit>,
}

/// The schema of a flattened `Option<Exit>`: both keys, or neither.
fn maybe_exit() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    let nullable_integer = |description: &str| {
        ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([Type::Integer, Type::Null]))
            .description(Some(description))
    };
    ObjectBuilder::new()
        .property(
            "exit_status",
            nullable_integer("The program's exit status, when known"),
        )
        .property(
            "exit_signal",
            nullable_integer("The signal that ended the program, when known"),
        )
        .description(Some(
            "How the program ended, as far as tmux said: both keys (each null \
             when unknown), or neither for an end tmuxd did not see the program make",
        ))
        .build()
}

/// `session_state`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StateChanged {
    /// The new state.
    pub state: SessionState,
    /// When the session entered `state`.
    pub state_since: DateTime<Utc>,
    /// The attention flag; null when lowered.
    pub attention: Option<Attention>,
    /// Who lowered the flag by looking, on the event that lowered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged_by: Option<Acknowledger>,
    /// With state `exited`.
    #[serde(flatten)]
    #[schema(schema_with = maybe_exit)]
    pub exit: Option<Exit>,
}

/// Who lowered the attention flag by looking at the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Acknowledger {
    /// The session was opened in the dashboard.
    Dashboard,
    /// A tmux client attached to the session.
    TmuxClient,
    /// Input: through tmuxd, or typed at an attached tmux client.
    Input,
    /// An answer from a push notification's action (`POST
    /// /v1/sessions/{id}/answer`).
    PushAction,
}

/// `thought_update`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ThoughtUpdated {
    /// The new thought.
    pub thought: EventThought,
}

/// A thought as an event carries it: its `text` cut to 1 KiB (the
/// session's summary has all of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventThought {
    #[serde(flatten)]
    pub thought: Thought,
    /// `text` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_truncated: bool,
}

/// `input_dropped`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum InputDropped {
    /// A queued input discarded: its size and start, never all of its text.
    Queued(DroppedInput),
    /// Typing it failed.
    Failed {
        /// The error that stopped the typing.
        message: String,
    },
}

/// The queued input an `input_dropped` discarded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DroppedInput {
    /// The queued input's id.
    pub queue_id: u64,
    /// When it was queued.
    pub queued_at: DateTime<Utc>,
    /// Its text's size in bytes.
    pub text_bytes: usize,
    /// Its text's length in characters.
    pub text_chars: usize,
    /// The first 64 characters of its text.
    pub text_prefix: String,
}

/// `tmux_lost`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ServerLost {
    /// When the server was found gone.
    pub since: DateTime<Utc>,
    /// How many of its sessions can be restored.
    pub restorable: usize,
}

/// `session_restored`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Restored {
    /// What its panes run again.
    pub restore: RestoreMode,
    /// Whether a resume command was run.
    pub resumed: bool,
}

/// Where a fleet hub got a peer's event from: its keys sit beside the
/// payload's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FromPeer {
    /// The peer.
    pub host: String,
    /// The event's seq on the peer.
    pub host_seq: u64,
    /// When the peer recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_at: Option<DateTime<Utc>>,
}

/// An event's payload, whole or cut: an event's JSON is at most 8 KiB, so
/// a larger one has its strings cut to 1 KiB, and one still too large
/// keeps only its kind. Either cut carries `"cut": true`.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// As recorded.
    Whole(Payload),
    /// Its strings cut to 1 KiB.
    Cut(Payload),
    /// Too large even so: only its kind is left.
    KindOnly(EventKind),
}

/// One event, as `events.jsonl` holds it and clients read it. A `thought`
/// carries at most 1 KiB of its text (then `"text_truncated": true`; the
/// summary has all of it).
///
/// Its JSON is written by hand: the fields after the common ones come in
/// key order, as the untyped map of earlier versions wrote them (serde_json
/// here has no `preserve_order`), so the files on disk and the wire stay
/// byte for byte what they were.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// One more than the previous event's, across restarts.
    pub seq: u64,
    pub at: DateTime<Utc>,
    /// The session it happened to, if any.
    pub session_id: Option<String>,
    /// Why it happened.
    pub reason: Option<String>,
    /// The tmux session name.
    pub tmux_name: Option<String>,
    /// The kind and its payload.
    pub body: Body,
    /// Set on a fleet hub for a peer's event.
    pub from_peer: Option<FromPeer>,
}

impl Payload {
    pub fn kind(&self) -> EventKind {
        match self {
            Payload::SessionCreated => EventKind::SessionCreated,
            Payload::SessionAdopted(_) => EventKind::SessionAdopted,
            Payload::SessionRenamed(_) => EventKind::SessionRenamed,
            Payload::SessionDetached => EventKind::SessionDetached,
            Payload::SessionDeleted(_) => EventKind::SessionDeleted,
            Payload::SessionState(_) => EventKind::SessionState,
            Payload::ThoughtUpdate(_) => EventKind::ThoughtUpdate,
            Payload::InputDropped(_) => EventKind::InputDropped,
            Payload::TmuxLost(_) => EventKind::TmuxLost,
            Payload::SessionRestored(_) => EventKind::SessionRestored,
            Payload::SessionRemoved => EventKind::SessionRemoved,
        }
    }

    /// How the program ended, on a `session_deleted` or an `exited`
    /// `session_state` that knows.
    pub fn exit(&self) -> Option<Exit> {
        match self {
            Payload::SessionDeleted(deleted) => deleted.exit,
            Payload::SessionState(changed) => changed.exit,
            _ => None,
        }
    }

    /// The payload's own fields, without `kind`.
    fn fields(&self) -> Result<Map<String, Value>, serde_json::Error> {
        // Internally tagged, a payload is always an object.
        let Value::Object(mut fields) = serde_json::to_value(self)? else {
            return Ok(Map::new());
        };
        fields.remove("kind");
        Ok(fields)
    }
}

impl Event {
    pub fn kind(&self) -> EventKind {
        match &self.body {
            Body::Whole(payload) | Body::Cut(payload) => payload.kind(),
            Body::KindOnly(kind) => *kind,
        }
    }

    /// The payload, unless the event was cut to its kind.
    pub fn payload(&self) -> Option<&Payload> {
        match &self.body {
            Body::Whole(payload) | Body::Cut(payload) => Some(payload),
            Body::KindOnly(_) => None,
        }
    }

    /// When the attention a `session_state` event raises was raised, as the
    /// event's JSON writes it (how `notified.json` remembers it and a push
    /// names the attention it answers).
    pub fn attention_since(&self) -> Option<String> {
        match self.payload()? {
            Payload::SessionState(changed) => changed
                .attention
                .as_ref()
                .map(|a| a.since.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
            _ => None,
        }
    }

    /// Everything after the common fields, in key order.
    fn rest(&self) -> Result<Map<String, Value>, serde_json::Error> {
        let mut rest = match &self.body {
            Body::Whole(payload) | Body::Cut(payload) => payload.fields()?,
            Body::KindOnly(_) => Map::new(),
        };
        if !matches!(self.body, Body::Whole(_)) {
            rest.insert("cut".to_owned(), Value::Bool(true));
        }
        if let Some(Value::Object(peer)) = self
            .from_peer
            .as_ref()
            .map(serde_json::to_value)
            .transpose()?
        {
            rest.extend(peer);
        }
        Ok(rest)
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rest = self.rest().map_err(S::Error::custom)?;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("seq", &self.seq)?;
        map.serialize_entry("at", &self.at)?;
        map.serialize_entry("kind", &self.kind())?;
        for (key, value) in [
            ("session_id", &self.session_id),
            ("reason", &self.reason),
            ("tmux_name", &self.tmux_name),
        ] {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in &rest {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// An event's JSON as read, before its payload is typed by its kind.
#[derive(Deserialize)]
struct EventJson {
    seq: u64,
    at: DateTime<Utc>,
    kind: EventKind,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    tmux_name: Option<String>,
    #[serde(default)]
    cut: bool,
    #[serde(flatten)]
    from_peer: Option<FromPeer>,
    /// The payload's fields, and any a newer version added (dropped).
    #[serde(flatten)]
    fields: Map<String, Value>,
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = EventJson::deserialize(deserializer)?;
        let mut fields = json.fields;
        let kind = serde_json::to_value(json.kind).map_err(D::Error::custom)?;
        fields.insert("kind".to_owned(), kind);
        let body = match (serde_json::from_value(Value::Object(fields)), json.cut) {
            (Ok(payload), false) => Body::Whole(payload),
            (Ok(payload), true) => Body::Cut(payload),
            (Err(_), true) => Body::KindOnly(json.kind),
            (Err(e), false) => return Err(D::Error::custom(e)),
        };
        Ok(Event {
            seq: json.seq,
            at: json.at,
            session_id: json.session_id,
            reason: json.reason,
            tmux_name: json.tmux_name,
            body,
            from_peer: json.from_peer,
        })
    }
}

// The schema of an Event's JSON, which `Event` writes and reads by hand.
/// One event: the common fields, the payload of its `kind` beside them. An
/// event's JSON is at most 8 KiB; a `thought` carries at most 1 KiB of its
/// text (then `"text_truncated": true`; the summary has all of it).
#[derive(Serialize, ToSchema)]
#[allow(dead_code, reason = "only its schema is used")]
struct EventSchema {
    /// One more than the previous event's, across restarts.
    seq: u64,
    at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    /// Why it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tmux_name: Option<String>,
    #[serde(flatten)]
    payload: Payload,
    /// The event passed 8 KiB: its strings were cut to 1 KiB, or (still
    /// too large) it keeps only `kind` of its payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cut: Option<bool>,
    /// On a fleet hub, a peer's event: the peer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    /// With `host`: the event's seq on the peer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_seq: Option<u64>,
    /// With `host`: when the peer recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host_at: Option<DateTime<Utc>>,
}

impl utoipa::PartialSchema for Event {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        EventSchema::schema()
    }
}

impl ToSchema for Event {
    fn name() -> std::borrow::Cow<'static, str> {
        "Event".into()
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        EventSchema::schemas(schemas);
    }
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
