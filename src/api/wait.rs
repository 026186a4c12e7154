//! `POST /v1/sessions/{id}/wait`: until a state, the attention flag, the
//! end, a quiet period, or a screen line matching a regex.

use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;

use super::AppState;
use super::auth::ReadWrite;
use super::error::ApiError;
use super::extract::ApiJson;
use crate::supervisor::{MAX_WAIT_MS, Until, WaitOutcome};

/// Wait this long when the client does not say.
const DEFAULT_WAIT_MS: u64 = 30_000;
/// Longest regex accepted, in bytes.
const MAX_MATCH_BYTES: usize = 1024;

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum UntilParam {
    Idle,
    Working,
    /// The name `working` had before; kept for older clients.
    Busy,
    Waiting,
    Attention,
    Exited,
    Change,
    Quiet,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitBody {
    until: Option<UntilParam>,
    /// With `until: "quiet"`: how long without output.
    quiet_ms: Option<u64>,
    /// A regex over the screen's lines, instead of `until`.
    #[serde(rename = "match")]
    pattern: Option<String>,
    timeout_ms: Option<u64>,
}

pub async fn wait(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<WaitBody>,
) -> Result<Json<WaitOutcome>, ApiError> {
    let timeout_ms = body.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
    let until = until_of(&body)?;
    Ok(Json(state.supervisor.wait(&id, until, timeout_ms).await?))
}

fn until_of(body: &WaitBody) -> Result<Until, ApiError> {
    let bad = |m: &str| Err(ApiError::bad_request(m));
    if body.quiet_ms.is_some() && !matches!(body.until, Some(UntilParam::Quiet)) {
        return bad("quiet_ms goes with until: \"quiet\"");
    }
    let until = match (body.until, &body.pattern) {
        (Some(_), Some(_)) => return bad("give until or match, not both"),
        (None, None) => return bad("give until (a state) or match (a regex)"),
        (None, Some(pattern)) if pattern.len() > MAX_MATCH_BYTES => {
            return bad(&format!("match is longer than {MAX_MATCH_BYTES} bytes"));
        }
        (None, Some(pattern)) => match regex::Regex::new(pattern) {
            Ok(regex) => Until::Match(regex),
            Err(e) => return bad(&format!("match is not a regex: {e}")),
        },
        (Some(until), None) => match until {
            UntilParam::Idle => Until::Idle,
            UntilParam::Working | UntilParam::Busy => Until::Working,
            UntilParam::Waiting => Until::Waiting,
            UntilParam::Attention => Until::Attention,
            UntilParam::Exited => Until::Exited,
            UntilParam::Change => Until::Change,
            UntilParam::Quiet => match body.quiet_ms {
                Some(ms @ 1..=MAX_WAIT_MS) => Until::Quiet(std::time::Duration::from_millis(ms)),
                Some(_) => return bad(&format!("quiet_ms must be between 1 and {MAX_WAIT_MS}")),
                None => return bad("until: \"quiet\" needs quiet_ms"),
            },
        },
    };
    Ok(until)
}
