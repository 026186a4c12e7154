//! The one place errors become HTTP responses:
//! `{"error": {"code": "...", "message": "..."}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::supervisor::SupervisorError;
use crate::tmux::TmuxError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        (self.status, Json(body)).into_response()
    }
}

impl From<SupervisorError> for ApiError {
    fn from(error: SupervisorError) -> Self {
        use SupervisorError as E;
        let message = error.to_string();
        let (status, code) = match &error {
            E::NotFound(_) | E::NoSuchTmuxSession(_) | E::Gone(_) => {
                (StatusCode::NOT_FOUND, "not_found")
            }
            E::InvalidName { .. } => (StatusCode::BAD_REQUEST, "invalid_name"),
            E::InvalidCwd { .. } => (StatusCode::BAD_REQUEST, "invalid_cwd"),
            E::InvalidKeys(_) => (StatusCode::BAD_REQUEST, "invalid_keys"),
            E::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            E::NameTaken(_) => (StatusCode::CONFLICT, "name_taken"),
            E::AlreadyTracked { .. } => (StatusCode::CONFLICT, "already_tracked"),
            E::Capacity { .. } => (StatusCode::TOO_MANY_REQUESTS, "capacity_exceeded"),
            E::Tmux(TmuxError::Failed { .. }) => (StatusCode::BAD_GATEWAY, "tmux_error"),
            E::Tmux(_) => (StatusCode::SERVICE_UNAVAILABLE, "tmux_unavailable"),
            E::Attach(_) => (StatusCode::INTERNAL_SERVER_ERROR, "attach_failed"),
            E::Store(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            E::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            E::QueueFull { .. } => (StatusCode::TOO_MANY_REQUESTS, "queue_full"),
            E::Timeout { .. } => (StatusCode::REQUEST_TIMEOUT, "timeout"),
            E::Ended(_) => (StatusCode::CONFLICT, "session_ended"),
            E::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
        };
        if status.is_server_error() {
            tracing::warn!("{message}");
        }
        ApiError::new(status, code, message)
    }
}
