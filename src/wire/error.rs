//! The one error shape: `{"error": {"code", "message"}}`, with every code
//! the API answers and the HTTP status that goes with it.

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What went wrong, for programs; `message` says it for people.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 400: malformed JSON, unknown field, wrong type, value out of range.
    BadRequest,
    /// 400: a session name tmux would not accept.
    InvalidName,
    /// 400: `cwd` is not an absolute path to a directory.
    InvalidCwd,
    /// 400: a key name tmux does not know.
    InvalidKeys,
    /// 401: no token, or a wrong one.
    Unauthorized,
    /// 403: the read token on a write route, or a non-loopback Host/Origin without tokens.
    Forbidden,
    /// 404: no such session or endpoint.
    NotFound,
    /// 405: the path exists, the method does not.
    MethodNotAllowed,
    /// 408: `wait` ran out of time.
    Timeout,
    /// 409: a tmux session of that name exists.
    NameTaken,
    /// 409: that tmux session is tracked already.
    AlreadyTracked,
    /// 409: the session has ended; it can no longer reach the state waited for.
    SessionEnded,
    /// 409: the request conflicts with the session's state (e.g. a queued
    /// input already being typed cannot be cancelled).
    Conflict,
    /// 413: the body or the input is too large.
    PayloadTooLarge,
    /// 429: `max_sessions` reached.
    CapacityExceeded,
    /// 429: the session's input queue is full.
    QueueFull,
    /// 500: the daemon could not persist or attach.
    Internal,
    /// 500: tmuxd could not attach its control client to the session.
    AttachFailed,
    /// 502: tmux refused a command.
    TmuxError,
    /// 503: tmux cannot be run, or its server is gone.
    TmuxUnavailable,
    /// 503: the daemon is stopping; a wait still open is answered so.
    ShuttingDown,
    /// 503: the fleet peer owning the session is down.
    PeerUnavailable,
    /// 504: the fleet peer owning the session did not answer in time.
    PeerTimeout,
}

impl ErrorCode {
    pub fn status(self) -> StatusCode {
        use ErrorCode as C;
        match self {
            C::BadRequest | C::InvalidName | C::InvalidCwd | C::InvalidKeys => {
                StatusCode::BAD_REQUEST
            }
            C::Unauthorized => StatusCode::UNAUTHORIZED,
            C::Forbidden => StatusCode::FORBIDDEN,
            C::NotFound => StatusCode::NOT_FOUND,
            C::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            C::Timeout => StatusCode::REQUEST_TIMEOUT,
            C::NameTaken | C::AlreadyTracked | C::SessionEnded | C::Conflict => {
                StatusCode::CONFLICT
            }
            C::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            C::CapacityExceeded | C::QueueFull => StatusCode::TOO_MANY_REQUESTS,
            C::Internal | C::AttachFailed => StatusCode::INTERNAL_SERVER_ERROR,
            C::TmuxError => StatusCode::BAD_GATEWAY,
            C::TmuxUnavailable | C::ShuttingDown | C::PeerUnavailable => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            C::PeerTimeout => StatusCode::GATEWAY_TIMEOUT,
        }
    }

    /// The code as it appears on the wire (`not_found`).
    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// Every error response's body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    pub message: String,
}
