//! The one place errors become HTTP responses:
//! `{"error": {"code": "...", "message": "..."}}`, the code from
//! [`ErrorCode`] and the status from the code.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::supervisor::SupervisorError;
use crate::tmux::TmuxError;
use crate::wire::{ErrorBody, ErrorCode, ErrorDetail};

#[derive(Debug)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::BadRequest, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::NotFound, message)
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: self.message,
            },
        };
        (status, Json(body)).into_response()
    }
}

impl From<SupervisorError> for ApiError {
    fn from(error: SupervisorError) -> Self {
        use ErrorCode as C;
        use SupervisorError as E;
        let message = error.to_string();
        let code = match &error {
            E::NotFound(_)
            | E::NoSuchTmuxSession(_)
            | E::NoQueuedInput { .. }
            | E::Gone(_)
            | E::NotRestorable(_) => C::NotFound,
            E::InvalidName { .. } => C::InvalidName,
            E::InvalidCwd { .. } => C::InvalidCwd,
            E::InvalidKeys(_) => C::InvalidKeys,
            E::BadRequest(_) => C::BadRequest,
            E::NameTaken(_) => C::NameTaken,
            E::AlreadyTracked { .. } => C::AlreadyTracked,
            E::Capacity { .. } | E::TooManyWaits(_) => C::CapacityExceeded,
            E::Tmux(TmuxError::Failed { .. }) | E::Refused { .. } => C::TmuxError,
            E::Tmux(_) => C::TmuxUnavailable,
            E::Attach(_) => C::AttachFailed,
            E::Store(_) => C::Internal,
            E::TooLarge { .. } => C::PayloadTooLarge,
            E::QueueFull { .. } => C::QueueFull,
            E::Timeout { .. } => C::Timeout,
            E::Ended(_) | E::HasEnded(_) | E::NoLastScreen(_) => C::SessionEnded,
            E::Conflict(_) => C::Conflict,
        };
        if code.status().is_server_error() {
            tracing::warn!("{message}");
        }
        ApiError::new(code, message)
    }
}
