//! `GET /v1/sessions/{id}/input/queue` lists the inputs queued for a
//! session; `DELETE .../input/queue/{n}` cancels one not yet being typed.

use axum::Json;
use axum::extract::{Path, State};
use serde_json::{Value, json};

use super::AppState;
use super::auth::ReadWrite;
use super::error::ApiError;

pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let items = state.supervisor.queued(&id)?;
    Ok(Json(json!({ "session_id": id, "items": items })))
}

pub async fn cancel(
    _: ReadWrite,
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let n: u64 = n
        .parse()
        .map_err(|_| ApiError::bad_request(format!("{n:?} is not a queued input number")))?;
    let item = state.supervisor.cancel_queued(&id, n).await?;
    Ok(Json(json!({ "session_id": id, "cancelled": item })))
}
