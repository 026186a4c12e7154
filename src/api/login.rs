//! The dashboard's way in: `tmuxd open` asks for a one-time login code
//! (`POST /v1/login/code`, read-write callers only) and prints a link with
//! the code in its fragment; the page exchanges the code for a credential
//! of its own (`POST /v1/login`). And `GET /v1/whoami`, what a credential
//! may do.

use axum::extract::State;
use axum::{Extension, Json};
use chrono::Utc;

use super::AppState;
use super::auth::{CODE_TTL, CREDENTIAL_TTL, Peer, ReadWrite};
use super::error::ApiError;
use super::extract::ApiJson;
use super::model::{AccessLevel, ErrorCode, LoginCode, LoginGrant, LoginRequest, WhoAmI};

#[utoipa::path(post, path = "/v1/login/code", tag = "daemon",
    responses((status = 200, description = "A one-time login code for the dashboard, good for a minute", body = LoginCode)))]
pub async fn issue_code(_: ReadWrite, State(state): State<AppState>) -> Json<LoginCode> {
    let code = state.auth.issue_login_code();
    let url = format!("http://{}/#login={code}", state.http_address);
    let expires_at = Utc::now() + CODE_TTL;
    Json(LoginCode {
        code,
        url,
        expires_at,
    })
}

#[utoipa::path(post, path = "/v1/login", tag = "daemon", security(()),
    request_body = LoginRequest,
    responses(
        (status = 200, description = "The dashboard's credential: send it as a bearer token", body = LoginGrant),
        (status = 401, description = "`unauthorized`: the code is wrong, used or expired (each failure slows the next)", body = super::model::ErrorBody)))]
pub async fn exchange(
    State(state): State<AppState>,
    Extension(peer): Extension<Peer>,
    ApiJson(request): ApiJson<LoginRequest>,
) -> Result<Json<LoginGrant>, ApiError> {
    let token = state
        .auth
        .exchange_login_code(&request.code, peer, &state.metrics)
        .await
        .ok_or_else(|| {
            let message =
                "this login code is wrong, used or expired: run `tmuxd open` for a new one";
            ApiError::new(ErrorCode::Unauthorized, message)
        })?;
    Ok(Json(LoginGrant {
        token,
        access: AccessLevel::Write,
        expires_at: Utc::now() + CREDENTIAL_TTL,
    }))
}

#[utoipa::path(get, path = "/v1/whoami", tag = "daemon",
    responses((status = 200, description = "What the presented credential may do", body = WhoAmI)))]
pub async fn whoami(write: Option<Extension<ReadWrite>>) -> Json<WhoAmI> {
    let access = match write {
        Some(_) => AccessLevel::Write,
        None => AccessLevel::Read,
    };
    Json(WhoAmI { access })
}
