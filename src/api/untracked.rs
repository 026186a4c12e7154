//! `GET /v1/sessions/untracked`: what the dashboard's adopt list and
//! `tmuxd adopt` without a name offer.

use axum::Json;
use axum::extract::State;

use super::error::ApiError;
use super::state::AppState;
use crate::wire::{ErrorBody, UntrackedList};

/// The tmux sessions tmuxd does not track.
///
/// `{"sessions": [{"tmux_name", "windows", "attached_clients", "created_at",
/// "session_id", "reason"}]}`, in tmux's order. `reason` is `detached`
/// (detached from tmuxd; `session_id` is the id it gets back when adopted),
/// `excluded` (by `discovery.include`/`exclude`), `invalid_name` (a name
/// tmuxd refuses, so it cannot be adopted) or `pending` (not adopted yet:
/// younger than `discovery.min_age_ms`, or `max_sessions` reached).
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
