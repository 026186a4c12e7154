//! Session endpoints: thin translations between HTTP and the supervisor,
//! in the wire types of `model`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::AppState;
use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::{ApiJson, ApiQuery};
use super::model::{
    AdoptRequest, CreateSessionRequest, DeleteQuery, DeleteResponse, InputRequest, InputResponse,
    ResizeRequest, ScrollbackQuery, ScrollbackResponse, SessionEnvelope, SessionList, Snapshot,
    SnapshotQuery, ThoughtRequest, ThoughtResponse, WaitRequest,
};
use crate::supervisor::{CreateSession, Input, ThoughtUpdate};

type ApiResult<T> = Result<T, ApiError>;

/// Scrollback lines returned when `lines` is not given.
const DEFAULT_SCROLLBACK_LINES: usize = 100;

/// Wait this long when the client does not say.
const DEFAULT_WAIT_MS: u64 = 30_000;

fn envelope(session: crate::supervisor::SessionSummary) -> Json<SessionEnvelope> {
    Json(SessionEnvelope {
        session: session.into(),
    })
}

pub async fn list(State(state): State<AppState>) -> Json<SessionList> {
    let sessions = state.supervisor.list().await;
    Json(SessionList {
        sessions: sessions.into_iter().map(Into::into).collect(),
    })
}

pub async fn create(
    _: ReadWrite,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CreateSessionRequest>,
) -> ApiResult<(StatusCode, Json<SessionEnvelope>)> {
    let size = match (body.cols, body.rows) {
        (None, None) => None,
        (Some(cols), Some(rows)) => Some((cols, rows)),
        _ => return Err(ApiError::bad_request("give both cols and rows, or neither")),
    };
    let request = CreateSession {
        name: body.name,
        cwd: body.cwd,
        command: body.command,
        initial_input: body.initial_input,
        size,
    };
    let session = state.supervisor.create(request).await?;
    Ok((StatusCode::CREATED, envelope(session)))
}

pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<SessionEnvelope>> {
    Ok(envelope(state.supervisor.get(&id).await?))
}

pub async fn delete(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> ApiResult<Json<DeleteResponse>> {
    let mode = query.mode.unwrap_or_default().into();
    let outcome = state.supervisor.delete(&id, mode).await?;
    Ok(Json(outcome.into()))
}

pub async fn adopt(
    _: ReadWrite,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<AdoptRequest>,
) -> ApiResult<(StatusCode, Json<SessionEnvelope>)> {
    let session = state
        .supervisor
        .adopt(&body.tmux_name, body.session_id.as_deref())
        .await?;
    Ok((StatusCode::CREATED, envelope(session)))
}

pub async fn input(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<InputRequest>,
) -> ApiResult<Json<InputResponse>> {
    let input = Input {
        text: body.text,
        keys: body.keys,
        submit: body.submit,
        when: body.when.into(),
    };
    let outcome = state.supervisor.input(&id, input).await?;
    Ok(Json(outcome.into()))
}

pub async fn wait(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<WaitRequest>,
) -> ApiResult<Json<SessionEnvelope>> {
    let timeout_ms = body.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
    let until = body.until.into();
    Ok(envelope(
        state.supervisor.wait(&id, until, timeout_ms).await?,
    ))
}

pub async fn thought(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ThoughtRequest>,
) -> ApiResult<Json<ThoughtResponse>> {
    let update = ThoughtUpdate {
        text: body.text,
        state: body.state,
        tokens_in: body.tokens_in,
        tokens_out: body.tokens_out,
        updated_at: body.updated_at,
    };
    let (thought, applied) = state.supervisor.put_thought(&id, update).await?;
    Ok(Json(ThoughtResponse {
        session_id: id,
        thought: thought.into(),
        applied,
    }))
}

pub async fn resize(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ResizeRequest>,
) -> ApiResult<Json<SessionEnvelope>> {
    let session = state.supervisor.resize(&id, body.cols, body.rows).await?;
    Ok(envelope(session))
}

pub async fn snapshot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<SnapshotQuery>,
) -> ApiResult<Json<Snapshot>> {
    let format = query.format.unwrap_or_default().into();
    let snapshot = state
        .supervisor
        .snapshot(&id, format, query.pane.into())
        .await?;
    Ok(Json(snapshot.into()))
}

pub async fn scrollback(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ScrollbackQuery>,
) -> ApiResult<Json<ScrollbackResponse>> {
    let lines = query.lines.unwrap_or(DEFAULT_SCROLLBACK_LINES);
    let lines = state.supervisor.scrollback(&id, lines).await?;
    Ok(Json(ScrollbackResponse {
        session_id: id,
        lines,
    }))
}
