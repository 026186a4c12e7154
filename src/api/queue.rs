//! `GET /v1/sessions/{id}/input/queue` lists the inputs queued for a
//! session; `DELETE .../input/queue/{n}` cancels one not yet being typed.

use axum::Json;
use axum::extract::{Path, State};

use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::session_id;
use super::state::AppState;
use crate::id::FleetId;
use crate::wire::{ErrorBody, QueueCancelled, QueueList};

/// The session's queued inputs.
///
/// `{"session_id", "items": [{"id", "text", "submit", "when", "queued_at",
/// "started"}]}`, oldest first; none for an ended session still kept.
#[utoipa::path(get, path = "/v1/sessions/{id}/input/queue", tag = "sessions",
    operation_id = "list_queued_input",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    responses(
        (status = 200, description = "Queued inputs, oldest first (none for an ended session still kept)", body = QueueList),
        (status = 404, description = "`not_found`", body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<QueueList>, ApiError> {
    let id = session_id(&id)?;
    let items = state.supervisor.queued(id)?;
    Ok(Json(QueueList {
        session_id: FleetId::local(id),
        items: items.into_iter().map(Into::into).collect(),
    }))
}

/// Cancel a queued input.
///
/// Cancels item `n` (its `id`), recorded as an `input_dropped` event with
/// reason `cancelled`; answers `{"session_id", "cancelled": item}`. 409
/// `conflict` once its typing began; 404 if there is no such item (typed,
/// dropped or cancelled already, or never queued).
#[utoipa::path(delete, path = "/v1/sessions/{id}/input/queue/{n}", tag = "sessions",
    operation_id = "cancel_queued_input",
    params(
        ("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`"),
        ("n" = u64, Path, example = 1, description = "The queued input's `id`")),
    responses(
        (status = 200, description = "Cancelled; an `input_dropped` event (reason `cancelled`) is recorded", body = QueueCancelled),
        (status = 400, description = "`bad_request`: `n` is not a number", body = ErrorBody),
        (status = 404, description = "`not_found`: no such session or queued input", body = ErrorBody),
        (status = 409, description = "`conflict`: it is being typed already; `session_ended`: the session has ended", body = ErrorBody)))]
pub async fn cancel(
    _: ReadWrite,
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
) -> Result<Json<QueueCancelled>, ApiError> {
    let n: u64 = n
        .parse()
        .map_err(|_| ApiError::bad_request(format!("{n:?} is not a queued input number")))?;
    let id = session_id(&id)?;
    let item = state.supervisor.cancel_queued(id, n).await?;
    Ok(Json(QueueCancelled {
        session_id: FleetId::local(id),
        cancelled: item.into(),
    }))
}
