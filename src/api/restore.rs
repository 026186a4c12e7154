//! `POST /v1/sessions/restore`: sessions lost with their tmux server, made
//! again under their names and ids.

use axum::Json;
use axum::extract::State;

use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::ApiJson;
use super::state::AppState;
use crate::id::SessionId;
use crate::supervisor::{RestoreCause, SupervisorError};
use crate::wire::{ErrorBody, RestoreFailure, RestoreRequest, RestoreResponse};

/// Restore the sessions lost with their tmux server.
///
/// `{"session_ids": [...]}`, or no body for all of them: makes the sessions
/// lost with their tmux server (a crash, `kill-server`, a reboot) again,
/// under the same names and ids, each window at its index and size with its
/// layout, each pane in its cwd (`docs/guide.md#when-tmux-is-lost-restore`).
/// Answers 200 `{"restored": [summary...], "failed": [{"session_id",
/// "tmux_name", "code", "message"}]}`; a failed one stays restorable. An id
/// that is not a lost session is 404 and nothing is restored; an empty list
/// is 400.
#[utoipa::path(post, path = "/v1/sessions/restore", tag = "sessions",
    request_body(content = Option<RestoreRequest>, description = "Which lost sessions; every one when \
`session_ids` is absent (an empty body is fine)"),
    responses(
        (status = 200, description = "What was restored, and what could not be (each with \
its error; those stay restorable)", body = RestoreResponse),
        (status = 400, description = "`bad_request`: `session_ids` is empty", body = ErrorBody),
        (status = 404, description = "`not_found`: an id that is not a lost session; nothing \
was restored", body = ErrorBody)))]
pub async fn restore(
    _: ReadWrite,
    State(state): State<AppState>,
    body: Option<ApiJson<RestoreRequest>>,
) -> Result<Json<RestoreResponse>, ApiError> {
    let request = body.map(|ApiJson(b)| b).unwrap_or_default();
    // Text that is no `sess_N` is no lost session either.
    let ids = request
        .session_ids
        .map(|ids| {
            ids.iter()
                .map(|id| {
                    id.parse()
                        .map_err(|_| SupervisorError::NotRestorable(id.clone()))
                })
                .collect::<Result<Vec<SessionId>, _>>()
        })
        .transpose()?;
    let outcome = state
        .supervisor
        .restore_lost(ids.as_deref(), RestoreCause::Api)
        .await?;
    Ok(Json(RestoreResponse {
        restored: outcome.restored.into_iter().map(Into::into).collect(),
        failed: outcome
            .failed
            .into_iter()
            .map(|f| {
                let error = ApiError::from(f.error);
                RestoreFailure {
                    session_id: f.session_id.to_string(),
                    tmux_name: f.tmux_name,
                    code: error.code,
                    message: error.message,
                }
            })
            .collect(),
    }))
}
