//! `POST /v1/sessions/{id}/wait`: until a state, the attention flag, the
//! end, a quiet period, or a screen line matching a regex.

use axum::Json;
use axum::extract::{Path, State};

use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::{ApiJson, session_id};
use super::state::AppState;
use crate::supervisor::{self, MAX_WAIT_MS};
use crate::wire::{ErrorBody, ErrorCode, Until, WaitRequest, WaitResponse};

/// Wait this long when the client does not say.
const DEFAULT_WAIT_MS: u64 = 30_000;
/// Longest regex accepted, in bytes.
const MAX_MATCH_BYTES: usize = 1024;

/// Wait for a state, a quiet spell or a line on the screen.
///
/// `{"until": "idle"|"working"|"waiting"|"attention"|"exited"|"change"|"quiet",
/// "quiet_ms"?, "timeout_ms"?}` or `{"match": REGEX, "timeout_ms"?}`
/// (`timeout_ms` default 30000, at most 3600000): answers `{"session"}` as
/// soon as the condition holds (at once if it already does), with
/// `"match": {"row", "line", "text"}` for `match`; else 408 `timeout`.
///
/// - `busy` is accepted for `working`; `attention`: the flag is up;
///   `change`: a change of state or attention after the request; `quiet`:
///   no output that changed the screen for `quiet_ms` (1..=3600000, needed
///   by `quiet` and only by it).
/// - `match`: a line of the window's text matches, read as the program
///   printed it (a line wider than the pane is matched across its wrap, and
///   `line` is all of it; `row` is where it starts). A regex of at most 1024
///   bytes that compiles within 512 KiB, else 400 naming the limit (Unicode
///   `\w` repeated is large, `(?-u:\w)` is not); compiled on a blocking
///   thread, two at a time. All `match` waits on a session share one reading
///   of its window per change, at most every 50 ms and never more often than
///   the last reading took, tested on a blocking thread, each distinct regex
///   once.
/// - At most `http.max_waits_per_session` (64) waits are open on a session
///   and `http.max_waits` (256) in all; more answer 429 `capacity_exceeded`
///   naming the key. A wait still open when the daemon stops answers 503
///   `shutting_down` at once.
/// - On an ended session (or one that ends meanwhile) `exited` and `quiet`
///   answer at once, `change` answers if the end came during the wait,
///   `attention` if the flag was up at the end, and a `match` from its last
///   screen; anything else answers 409 `session_ended`.
#[utoipa::path(post, path = "/v1/sessions/{id}/wait", tag = "sessions",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    request_body = WaitRequest,
    responses(
        (status = 200, description = "The condition holds (for `match`, with the line)", body = WaitResponse),
        (status = 400, description = "`bad_request`: neither or both of `until` and `match`, a bad regex or one compiling past the size limit, `quiet_ms` missing or out of range", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 408, description = "`timeout`", body = ErrorBody),
        (status = 409, description = "`session_ended`: it ended without reaching the state", body = ErrorBody),
        (status = 429, description = "`capacity_exceeded`: `http.max_waits_per_session` or `http.max_waits` waits are open", body = ErrorBody),
        (status = 503, description = "`shutting_down`: the daemon stopped while the wait was open", body = ErrorBody)))]
pub async fn wait(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<WaitRequest>,
) -> Result<Json<WaitResponse>, ApiError> {
    let timeout_ms = body.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
    let until = match until_of(&body)? {
        Wanted::Until(until) => until,
        Wanted::Match(pattern) => {
            let regex = state
                .supervisor
                .compile_match(pattern)
                .await
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
            supervisor::Until::Match(regex)
        }
    };
    // A stopping daemon answers at once rather than hold its exit for the
    // connections' drain (Ctrl-C took 1.5 s with a wait open).
    let id = session_id(&id)?;
    let outcome = tokio::select! {
        outcome = state.supervisor.wait(id, until, timeout_ms) => outcome?,
        () = state.cancel.cancelled() => return Err(ApiError::new(
            ErrorCode::ShuttingDown,
            "tmuxd is shutting down; wait again once it is back",
        )),
    };
    Ok(Json(outcome.into()))
}

/// What a request asks to wait for; a regex is compiled apart (off the
/// async workers).
enum Wanted<'a> {
    Until(supervisor::Until),
    Match(&'a str),
}

fn until_of(body: &WaitRequest) -> Result<Wanted<'_>, ApiError> {
    use supervisor::Until as U;
    let bad = |m: &str| Err(ApiError::bad_request(m));
    if body.quiet_ms.is_some() && body.until != Some(Until::Quiet) {
        return bad("quiet_ms goes with until: \"quiet\"");
    }
    let until = match (body.until, &body.pattern) {
        (Some(_), Some(_)) => return bad("give until or match, not both"),
        (None, None) => return bad("give until (a state) or match (a regex)"),
        (None, Some(pattern)) if pattern.len() > MAX_MATCH_BYTES => {
            return bad(&format!("match is longer than {MAX_MATCH_BYTES} bytes"));
        }
        (None, Some(pattern)) => return Ok(Wanted::Match(pattern)),
        (Some(until), None) => match until {
            Until::Idle => U::Idle,
            Until::Working | Until::Busy => U::Working,
            Until::Waiting => U::Waiting,
            Until::Attention => U::Attention,
            Until::Exited => U::Exited,
            Until::Change => U::Change,
            Until::Quiet => match body.quiet_ms {
                Some(ms @ 1..=MAX_WAIT_MS) => U::Quiet(std::time::Duration::from_millis(ms)),
                Some(_) => return bad(&format!("quiet_ms must be between 1 and {MAX_WAIT_MS}")),
                None => return bad("until: \"quiet\" needs quiet_ms"),
            },
        },
    };
    Ok(Wanted::Until(until))
}
