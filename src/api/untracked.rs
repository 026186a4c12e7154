//! `GET /v1/sessions/untracked`: what the dashboard's adopt list and
//! `tmuxd adopt` without a name offer.

use axum::Json;
use axum::extract::State;

use super::AppState;
use super::error::ApiError;
use crate::wire::{ErrorBody, UntrackedList};

#[utoipa::path(get, path = "/v1/sessions/untracked", tag = "sessions",
    responses(
        (status = 200, description = "The tmux sessions tmuxd does not track, in tmux's order, each with why", body = UntrackedList),
        (status = 502, description = "`tmux_error`", body = ErrorBody),
        (status = 503, description = "`tmux_unavailable`", body = ErrorBody)))]
pub async fn list(State(state): State<AppState>) -> Result<Json<UntrackedList>, ApiError> {
    let sessions = state.supervisor.untracked().await?;
    Ok(Json(UntrackedList {
        sessions: sessions.into_iter().map(Into::into).collect(),
    }))
}
