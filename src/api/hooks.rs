//! `POST /v1/hooks/{agent}`: a coding agent's hook event as evidence of
//! what the session that owns the hook's pane is doing (see
//! `session::state::hook`). The body is the agent's own JSON, as its hook
//! command received it; `tmuxd hooks send` posts it.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use serde_json::Value;

use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::{ApiQuery, from_str_strict};
use super::state::AppState;
use crate::session::{Agent, interpret_hook};
use crate::tmux::control::PaneId;
use crate::wire::{
    Attention, ErrorBody, ErrorCode, HOOK_MAX_BODY_BYTES, HookQuery, HookResponse, SessionState,
};

type ApiResult<T> = Result<T, ApiError>;

/// Take a coding agent's hook event.
///
/// For the session that owns tmux pane `%N` (`?pane=%N`, the hook's
/// `$TMUX_PANE`; or `tmux_pane` in the body), as evidence of what it is
/// doing. `agent` is `claude` or `codex`; the body is the agent's own JSON,
/// at most 64 KiB (else 413), any content type. Answers `{"session_id",
/// "event", "applied", "state", "state_reason", "attention"}`; an event
/// tmuxd reads no state from is taken and changes nothing (`applied`:
/// false). 404 for another agent or a pane no tracked session owns; 400 for
/// no pane, a pane not `%N`, or JSON that is not the agent's event.
/// `tmuxd hooks send` posts it (`docs/guide.md#coding-agents-and-hooks`).
#[utoipa::path(post, path = "/v1/hooks/{agent}", tag = "hooks",
    params(("agent" = String, Path, example = "claude", description = "`claude` or `codex`"), HookQuery),
    request_body(content = Object, description = "The agent's hook event JSON: Claude Code's hook input (`hook_event_name`: `Notification` → waiting with attention, its `message` the session's thought; `Stop` → idle; `UserPromptSubmit`, `PreToolUse` → working), or Codex's `notify` argument (`type`: `agent-turn-complete` → idle). At most 64 KiB."),
    responses(
        (status = 200, description = "Taken", body = HookResponse),
        (status = 400, description = "`bad_request`: no pane, a pane that is not `%N`, not JSON, not the agent's event", body = ErrorBody),
        (status = 404, description = "`not_found`: no such agent, or no tracked session owns the pane", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: more than 64 KiB", body = ErrorBody)))]
pub async fn hook(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(agent): Path<String>,
    ApiQuery(query): ApiQuery<HookQuery>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<HookResponse>> {
    let Some(agent) =
        Agent::from_name(&agent).filter(|a| matches!(a, Agent::Claude | Agent::Codex))
    else {
        return Err(ApiError::not_found(format!(
            "no hooks for agent {agent:?}: use claude or codex"
        )));
    };
    let event = read_event(&headers, body).await?;
    let pane = query
        .pane
        .or_else(|| {
            event
                .get("tmux_pane")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .ok_or_else(|| {
            ApiError::bad_request("no pane: pass ?pane=$TMUX_PANE (or `tmux_pane` in the body)")
        })?;
    let pane: PaneId = pane.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "pane {pane:?} is not a tmux pane id like %3 ($TMUX_PANE)"
        ))
    })?;
    let read = interpret_hook(agent, &event).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let name = read.name.clone();
    let outcome = state.supervisor.hook(pane, read).await?;
    let view = outcome.view;
    Ok(Json(HookResponse {
        session_id: outcome.session_id.to_string(),
        event: name,
        applied: view.is_some(),
        state: view.map(|v| SessionState::from(v.state)),
        state_reason: view.map(|v| v.reason.as_str().to_owned()),
        attention: view.and_then(|v| v.attention).map(Attention::from),
    }))
}

/// The body, at most `HOOK_MAX_BODY_BYTES`, as a JSON value (any
/// `Content-Type`: hook senders such as `curl -d @-` do not all set it).
async fn read_event(headers: &HeaderMap, body: Body) -> ApiResult<Value> {
    let too_large = || {
        ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("a hook event is at most {HOOK_MAX_BODY_BYTES} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > HOOK_MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, HOOK_MAX_BODY_BYTES)
        .await
        .map_err(|_| too_large())?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| ApiError::bad_request("invalid JSON body: not UTF-8"))?;
    from_str_strict(text).map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}
