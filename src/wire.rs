//! Every type on the wire, in one place: request bodies and query
//! parameters, responses, events, WebSocket and SSE messages, and error
//! codes. The handlers build these (never `json!`), the CLI reads them
//! (never `body["x"]`), and `GET /v1/openapi.json` is generated from them,
//! so the three cannot drift apart. It depends on no other module of
//! tmuxd but [`crate::id`], so the fleet (a client of its peers) reads
//! the same types. Conversions from the supervisor's and the actors' own
//! types are in `api/convert.rs`; they name every field, so a field added
//! inside the daemon fails to compile until the wire says what becomes of
//! it.

mod error;
mod events;
mod health;
mod hooks;
mod login;
mod push;
mod restore;
mod sessions;
mod streams;
mod untracked;

pub use error::{ErrorBody, ErrorCode, ErrorDetail};
pub use events::{
    Acknowledger, Adopted, Body, Deleted, DroppedInput, EVENTS_PAGE_BYTES, EVENTS_PAGE_DEFAULT,
    EVENTS_PAGE_MAX, Event, EventKind, EventThought, EventsFormat, EventsPage, EventsQuery, Exit,
    FromPeer, InputDropped, Payload, Renamed, ReplayTruncatedNotice, Restored, ServerLost,
    ServerSentEvent, StateChanged, ThoughtUpdated,
};
pub use health::{
    Health, Readiness, ServerInfo, ServerSocket, StorageFailure, StorageReport, StorageStatus,
    StorageWrite, VersionInfo,
};
pub use hooks::{
    Agent, CODEX_TURN_COMPLETE, ClaudeEvent, HOOK_MAX_BODY_BYTES, HookQuery, HookResponse,
};
pub use login::{AccessLevel, LoginCode, LoginGrant, LoginRequest, LogoutResponse, WhoAmI};
pub use push::{
    AnswerRequest, AnswerResponse, PushInfo, SubscribeRequest, SubscribeResponse,
    UnsubscribeRequest, UnsubscribeResponse,
};
pub use restore::{RestoreFailure, RestoreMode, RestoreRequest, RestoreResponse, TmuxLost};
pub use sessions::{
    AdoptRequest, Attention, AttentionReason, CopyModeView, CreateSessionRequest, Cursor,
    DeleteMode, DeleteQuery, DeleteResponse, InputRequest, InputResponse, ListInclude, ListQuery,
    MatchedLine, PaneRect, QueueCancelled, QueueItem, QueueList, ResizeRequest, ScrollbackQuery,
    ScrollbackResponse, SessionEnvelope, SessionList, SessionState, SessionSummary, Snapshot,
    SnapshotFormat, SnapshotPane, SnapshotQuery, Thought, ThoughtRequest, ThoughtResponse,
    Transport, Until, WaitRequest, WaitResponse, When,
};
pub use streams::{
    RowChange, ScreenMessage, ScreenQuery, SocketAuth, StreamClientMessage, StreamQuery,
    StreamServerMessage,
};
pub use untracked::{UntrackedList, UntrackedReason, UntrackedSession};
