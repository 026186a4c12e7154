//! Session endpoints: thin translations between HTTP and the supervisor,
//! in the wire types of `model`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::{ApiJson, ApiQuery, session_id};
use super::state::AppState;
use crate::id::FleetId;
use crate::supervisor::{CreateSession, Input, ThoughtUpdate};
use crate::wire::{
    AdoptRequest, CreateSessionRequest, DeleteQuery, DeleteResponse, ErrorBody, InputRequest,
    InputResponse, ListInclude, ListQuery, ResizeRequest, RestoreMode, ScrollbackQuery,
    ScrollbackResponse, SessionEnvelope, SessionList, Snapshot, SnapshotQuery, ThoughtRequest,
    ThoughtResponse,
};

type ApiResult<T> = Result<T, ApiError>;

/// Scrollback lines returned when `lines` is not given.
const DEFAULT_SCROLLBACK_LINES: usize = 100;

fn envelope(session: crate::supervisor::SessionSummary) -> Json<SessionEnvelope> {
    Json(SessionEnvelope {
        session: session.into(),
    })
}

/// List sessions.
///
/// `{"sessions": [summary...]}`, sorted by id number. `include=ended` adds
/// the sessions that ended within the retention window: the last
/// `session.ended_max` (100), for `session.ended_max_age_s` (a day). On a
/// fleet hub each peer's live sessions follow, as last known, by host
/// (`host`, ids `HOST/sess_N`, `stale` while the peer is down); `host=NAME`
/// lists only that peer's.
///
/// What each state and attention reason means, and what of an ended session
/// is kept: the guide's Sessions section (`docs/guide.md#sessions-states-attention-ends`).
#[utoipa::path(get, path = "/v1/sessions", tag = "sessions", operation_id = "list_sessions",
    params(ListQuery),
    responses(
        (status = 200, description = "Live sessions (and with `include=ended` ended ones still kept), sorted by id number; then each fleet peer's live sessions as last known (`host`, ids `HOST/sess_N`, `stale` while the peer is down), by host", body = SessionList),
        (status = 404, description = "`not_found`: `host` is not a fleet peer", body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<SessionList>> {
    let ended = query.include == Some(ListInclude::Ended);
    let local = match query.host {
        Some(_) => Vec::new(),
        None => state.supervisor.list(ended).await,
    };
    let local = local
        .into_iter()
        .map(crate::wire::SessionSummary::from)
        .collect();
    // Peers' sessions come from the hub's copy: a list never fans out.
    super::hosts::merged_list(&state, local, query.host.as_deref()).map(Json)
}

/// Create a session.
///
/// Makes a tmux session (`new-session`) and attaches to it; answers 201
/// `{"session"}`. Every field is optional: `name` (else the next free
/// number), `cwd` (an absolute path to an existing directory; else the
/// daemon's `default_cwd`, which `GET /v1/server` names: its HOME, else
/// `/`), `command` (a shell line run instead of the shell, at most 8 KiB),
/// `initial_input` (typed once it has started, then Enter), `cols` with
/// `rows`.
///
/// `restore` (`shell`, the default, or `rerun`) and `resume_command` (at
/// most 8 KiB) say what runs if it is restored after its tmux server was
/// lost: by default a shell in each pane's cwd, nothing run twice
/// (`docs/guide.md#when-tmux-is-lost-restore`).
#[utoipa::path(post, path = "/v1/sessions", tag = "sessions", operation_id = "create_session",
    request_body = CreateSessionRequest,
    responses(
        (status = 201, description = "Created and attached", body = SessionEnvelope),
        (status = 400, description = "`bad_request`, `invalid_name`, `invalid_cwd`", body = ErrorBody),
        (status = 409, description = "`name_taken`", body = ErrorBody),
        (status = 429, description = "`capacity_exceeded`", body = ErrorBody),
        (status = 500, description = "`attach_failed`, `internal`", body = ErrorBody),
        (status = 502, description = "`tmux_error`: tmux refused", body = ErrorBody),
        (status = 503, description = "`tmux_unavailable`", body = ErrorBody)))]
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
        restore: match body.restore.unwrap_or_default() {
            RestoreMode::Shell => crate::store::RestoreMode::Shell,
            RestoreMode::Rerun => crate::store::RestoreMode::Rerun,
        },
        resume_command: body.resume_command,
    };
    let session = state.supervisor.create(request).await?;
    Ok((StatusCode::CREATED, envelope(session)))
}

/// One session.
///
/// `{"session": summary}`, also for an ended session still kept
/// (`state: "exited"`, `ended_at`, `exit_status`, `exit_signal`).
#[utoipa::path(get, path = "/v1/sessions/{id}", tag = "sessions", operation_id = "get_session",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    responses(
        (status = 200, description = "The session", body = SessionEnvelope),
        (status = 404, description = "`not_found`", body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<SessionEnvelope>> {
    Ok(envelope(state.supervisor.get(session_id(&id)?).await?))
}

/// Detach or kill a session, or remove an ended one.
///
/// `mode=detach` (the default) stops tracking it: the tmux session lives on,
/// discovery does not adopt it again until it is adopted
/// (`POST /v1/sessions/adopt`), and it is no longer restorable. `mode=kill`
/// kills the tmux session (its end: reason `api_kill`).
///
/// On an ended session still kept, either mode removes it with its last
/// screens and its history file at once (a `session_removed` event;
/// `tmux_alive`: false): nothing of it is served after.
#[utoipa::path(delete, path = "/v1/sessions/{id}", tag = "sessions", operation_id = "delete_session",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`"), DeleteQuery),
    responses(
        (status = 200, description = "No longer tracked; an ended session still kept is removed with its last screens and history (a `session_removed` event)", body = DeleteResponse),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 502, description = "`tmux_error`: tmux refused the kill", body = ErrorBody),
        (status = 503, description = "`tmux_unavailable`", body = ErrorBody)))]
pub async fn delete(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> ApiResult<Json<DeleteResponse>> {
    let mode = query.mode.unwrap_or_default().into();
    let outcome = state.supervisor.delete(session_id(&id)?, mode).await?;
    Ok(Json(outcome.into()))
}

/// Adopt a tmux session tmuxd does not track.
///
/// `{"tmux_name", "session_id"?}` → 201 `{"session"}`. A session detached
/// from tmuxd gets its old id back (only a known old id is reused).
/// Discovery adopts new tmux sessions by itself; this is for the ones it
/// left (`GET /v1/sessions/untracked` says why).
#[utoipa::path(post, path = "/v1/sessions/adopt", tag = "sessions",
    request_body = AdoptRequest,
    responses(
        (status = 201, description = "Tracked (its old id reused if it had one)", body = SessionEnvelope),
        (status = 400, description = "`bad_request`, `invalid_name`", body = ErrorBody),
        (status = 404, description = "`not_found`: no such tmux session", body = ErrorBody),
        (status = 409, description = "`already_tracked`", body = ErrorBody),
        (status = 429, description = "`capacity_exceeded`", body = ErrorBody),
        (status = 500, description = "`attach_failed`, `internal`", body = ErrorBody),
        (status = 503, description = "`tmux_unavailable`", body = ErrorBody)))]
pub async fn adopt(
    _: ReadWrite,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<AdoptRequest>,
) -> ApiResult<(StatusCode, Json<SessionEnvelope>)> {
    // An id that is no `sess_N` belongs to no tmux session.
    let wanted = match body.session_id.as_deref().map(str::parse) {
        Some(Ok(id)) => Some(id),
        Some(Err(_)) => {
            return Err(ApiError::bad_request(format!(
                "session_id {} does not belong to tmux session {:?}",
                body.session_id.as_deref().unwrap_or_default(),
                body.tmux_name
            )));
        }
        None => None,
    };
    let session = state.supervisor.adopt(&body.tmux_name, wanted).await?;
    Ok((StatusCode::CREATED, envelope(session)))
}

/// Type into a session.
///
/// Typed into the active pane with `send-keys`, in this order: `text`
/// literally (at most 1 MiB, no NUL), then `keys` (tmux key names: `Enter`,
/// `C-c`, `Up`, `F5`...; at most 10,000, each at most 32 bytes; sent 1,000
/// to a `send-keys`, under tmux's parser limit), then Enter if `submit`.
///
/// `when` is `now` (the default), or `idle` or `waiting` to queue the text
/// (with `submit`; keys cannot be queued): FIFO, at most 64 per session (429
/// `queue_full`), typed when the session is next `idle` (a shell at its
/// prompt) or `waiting` (a program asks for input), whatever the attention
/// flag says; the head of the queue waits for its state. The queue is
/// persisted across restarts; each item is typed at most once, and dropped
/// with an `input_dropped` event if the session ends. Answers
/// `{"delivered", "queued"}`.
#[utoipa::path(post, path = "/v1/sessions/{id}/input", tag = "sessions",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    request_body = InputRequest,
    responses(
        (status = 200, description = "Typed, or queued until idle", body = InputResponse),
        (status = 400, description = "`bad_request` (also past 10,000 keys or a 32-byte key name), `invalid_keys`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended (it stays readable)", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: more than 1 MiB of input", body = ErrorBody),
        (status = 429, description = "`queue_full`", body = ErrorBody),
        (status = 502, description = "`tmux_error`", body = ErrorBody)))]
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
    let outcome = state.supervisor.input(session_id(&id)?, input).await?;
    Ok(Json(outcome.into()))
}

/// Set the session's thought: an external status.
///
/// `{"text", "state"?, "tokens_in"?, "tokens_out"?, "updated_at"?}`: a status
/// from outside (an agent's hook, a script), text at most 16 KiB and state
/// at most 64 bytes; persisted in `thoughts.json`, shown in the summary,
/// emitted as a `thought_update` event. An update older than the stored one
/// (by `updated_at`) is not applied (`"applied": false`); an `updated_at`
/// more than 5 minutes in the future is refused (400).
#[utoipa::path(put, path = "/v1/sessions/{id}/thought", tag = "sessions",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    request_body = ThoughtRequest,
    responses(
        (status = 200, description = "Stored (or a newer one kept)", body = ThoughtResponse),
        (status = 400, description = "`bad_request`: text or state too long, `updated_at` more than 5 minutes ahead", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended (it stays readable)", body = ErrorBody),
        (status = 413, description = "`payload_too_large`", body = ErrorBody),
        (status = 500, description = "`internal`: could not persist", body = ErrorBody)))]
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
    let id = session_id(&id)?;
    let (thought, applied) = state.supervisor.put_thought(id, update).await?;
    Ok(Json(ThoughtResponse {
        session_id: FleetId::local(id),
        thought: thought.into(),
        applied,
    }))
}

/// Resize the session's window.
///
/// `{"cols", "rows"}`, each 2..=1000 and at most 250,000 cells: sets the
/// window's size (`resize-window`) and answers the session at the size tmux
/// took.
#[utoipa::path(post, path = "/v1/sessions/{id}/resize", tag = "sessions",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    request_body = ResizeRequest,
    responses(
        (status = 200, description = "Resized", body = SessionEnvelope),
        (status = 400, description = "`bad_request`: out of bounds", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended (it stays readable)", body = ErrorBody),
        (status = 502, description = "`tmux_error`", body = ErrorBody)))]
pub async fn resize(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ResizeRequest>,
) -> ApiResult<Json<SessionEnvelope>> {
    let session = state
        .supervisor
        .resize(session_id(&id)?, body.cols, body.rows)
        .await?;
    Ok(envelope(session))
}

/// The session's screen, parsed.
///
/// From memory, without asking tmux: `lines`, `cursor`, `cols`, `rows`,
/// `title`, `alternate_screen`, `seq`, `ended`; for an ended session still
/// kept, its last screen with `"ended": true`. While a person has a pane of
/// it in copy mode, `copy_mode` (`pane`, `mode`, `position`, `history`:
/// tmux's `[position/history]`); the lines stay the live screen.
///
/// `format=ansi` lines carry SGR colors and attributes (spaces for blanks,
/// each line resets at its end). `pane=active` crops to the active pane as
/// `capture-pane` shows it, and adds `pane`: its `left`, `top`, `cols` and
/// `rows` in the window.
#[utoipa::path(get, path = "/v1/sessions/{id}/snapshot", tag = "sessions",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`"), SnapshotQuery),
    responses(
        (status = 200, description = "The parsed screen, from memory; for an ended session still kept, its last screen (`ended: true`)", body = Snapshot),
        (status = 400, description = "`bad_request`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`session_ended`: an ended session whose screen tmuxd never saw", body = ErrorBody)))]
pub async fn snapshot(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<SnapshotQuery>,
) -> ApiResult<Json<Snapshot>> {
    let format = query.format.unwrap_or_default().into();
    let served = state
        .supervisor
        .snapshot(session_id(&id)?, format, query.pane.into())
        .await?;
    let mut snapshot: Snapshot = served.snapshot.into();
    snapshot.ended = served.ended;
    Ok(Json(snapshot))
}

/// The history above the screen.
///
/// `{"session_id", "lines", "ended"}`: the last `lines` lines above the
/// screen (default 100, 1..=`session.max_scrollback_lines`), oldest first,
/// from tmux (`capture-pane -J`: wrapped lines joined).
///
/// For an ended session still kept (also one that ends meanwhile): the last
/// N of the lines its end kept, with `"ended": true`, and when none were
/// kept `missing`: `disabled` (`session.ended_scrollback_lines` is 0),
/// `not_captured` (the pane was gone before tmuxd could read it: killed
/// outside tmuxd, tmux server gone, an adopted session's program ended, or
/// it ended before tmuxd attached), `refused` (tmux did not give it) or
/// `lost` (its file could not be written or read).
#[utoipa::path(get, path = "/v1/sessions/{id}/scrollback", tag = "sessions",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`"), ScrollbackQuery),
    responses(
        (status = 200, description = "History above the screen; for an ended session still kept, the history its end kept (`ended: true`, and `missing` when there is none)", body = ScrollbackResponse),
        (status = 400, description = "`bad_request`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 502, description = "`tmux_error`", body = ErrorBody),
        (status = 503, description = "`tmux_unavailable`", body = ErrorBody)))]
pub async fn scrollback(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ScrollbackQuery>,
) -> ApiResult<Json<ScrollbackResponse>> {
    let lines = query.lines.unwrap_or(DEFAULT_SCROLLBACK_LINES);
    let id = session_id(&id)?;
    let scrollback = state.supervisor.scrollback(id, lines).await?;
    Ok(Json(ScrollbackResponse {
        session_id: FleetId::local(id),
        lines: scrollback.lines,
        ended: scrollback.ended,
        missing: scrollback.missing.map(|m| m.as_str().to_owned()),
    }))
}
