//! Session endpoints: thin translations between HTTP and the supervisor.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::{ApiJson, ApiQuery};
use crate::session::{Region, SnapshotFormat};
use crate::supervisor::{CreateSession, DeleteMode, Input, ThoughtUpdate, When};

type ApiResult<T> = Result<T, ApiError>;

/// Scrollback lines returned when `lines` is not given.
const DEFAULT_SCROLLBACK_LINES: usize = 100;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// `ended`: also the sessions that ended within the retention window.
    include: Option<IncludeParam>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum IncludeParam {
    Ended,
}

pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Json<Value> {
    let ended = matches!(query.include, Some(IncludeParam::Ended));
    Json(json!({ "sessions": state.supervisor.list(ended).await }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    name: Option<String>,
    cwd: Option<String>,
    command: Option<String>,
    initial_input: Option<String>,
    cols: Option<u16>,
    rows: Option<u16>,
}

pub async fn create(
    _: ReadWrite,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<(StatusCode, Json<Value>)> {
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
    Ok((StatusCode::CREATED, Json(json!({ "session": session }))))
}

pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    Ok(Json(json!({ "session": state.supervisor.get(&id).await? })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteQuery {
    #[serde(default)]
    mode: DeleteMode,
}

pub async fn delete(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> ApiResult<Json<Value>> {
    let outcome = state.supervisor.delete(&id, query.mode).await?;
    Ok(Json(json!(outcome)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdoptBody {
    tmux_name: String,
    session_id: Option<String>,
}

pub async fn adopt(
    _: ReadWrite,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<AdoptBody>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let session = state
        .supervisor
        .adopt(&body.tmux_name, body.session_id.as_deref())
        .await?;
    Ok((StatusCode::CREATED, Json(json!({ "session": session }))))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputBody {
    text: Option<String>,
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    submit: bool,
    #[serde(default)]
    when: When,
}

pub async fn input(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<InputBody>,
) -> ApiResult<Json<Value>> {
    let input = Input {
        text: body.text,
        keys: body.keys,
        submit: body.submit,
        when: body.when,
    };
    let outcome = state.supervisor.input(&id, input).await?;
    Ok(Json(json!(outcome)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThoughtBody {
    text: String,
    state: Option<String>,
    tokens_in: Option<u64>,
    tokens_out: Option<u64>,
    updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

pub async fn thought(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ThoughtBody>,
) -> ApiResult<Json<Value>> {
    let update = ThoughtUpdate {
        text: body.text,
        state: body.state,
        tokens_in: body.tokens_in,
        tokens_out: body.tokens_out,
        updated_at: body.updated_at,
    };
    let (thought, applied) = state.supervisor.put_thought(&id, update).await?;
    Ok(Json(
        json!({ "session_id": id, "thought": thought, "applied": applied }),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResizeBody {
    cols: u16,
    rows: u16,
}

pub async fn resize(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ResizeBody>,
) -> ApiResult<Json<Value>> {
    let session = state.supervisor.resize(&id, body.cols, body.rows).await?;
    Ok(Json(json!({ "session": session })))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "snake_case")]
enum FormatParam {
    #[default]
    Text,
    Ansi,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotQuery {
    #[serde(default)]
    format: FormatParam,
    /// `active`: crop to the active pane, as `capture-pane` shows it.
    pane: Option<PaneParam>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum PaneParam {
    Active,
}

pub async fn snapshot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<SnapshotQuery>,
) -> ApiResult<Json<Value>> {
    let format = match query.format {
        FormatParam::Text => SnapshotFormat::Text,
        FormatParam::Ansi => SnapshotFormat::Ansi,
    };
    let region = match query.pane {
        None => Region::Window,
        Some(PaneParam::Active) => Region::ActivePane,
    };
    Ok(Json(json!(
        state.supervisor.snapshot(&id, format, region).await?
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrollbackQuery {
    lines: Option<usize>,
}

pub async fn scrollback(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ScrollbackQuery>,
) -> ApiResult<Json<Value>> {
    let lines = query.lines.unwrap_or(DEFAULT_SCROLLBACK_LINES);
    let lines = state.supervisor.scrollback(&id, lines).await?;
    Ok(Json(json!({ "session_id": id, "lines": lines })))
}
