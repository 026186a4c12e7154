//! The dashboard's way in: `tmuxd open` asks for a one-time login code
//! (`POST /v1/login/code`, holders of the read-write token only) and prints
//! a link with the code in its fragment; the page exchanges the code for a
//! credential of its own (`POST /v1/login`) and ends it when it forgets it
//! (`POST /v1/logout`). And `GET /v1/whoami`, what a credential may do.
//!
//! A page's credential cannot mint codes: a code it minted would be
//! exchanged for a fresh credential, and so on, renewing it forever. The
//! dashboard never needs one (it is in the browser already), and the CLI
//! holds the token or the socket.

use axum::extract::State;
use axum::{Extension, Json};
use chrono::Utc;

use super::auth::{CODE_TTL, CREDENTIAL_TTL, PageCredential, Peer, ReadWrite, TokenHolder};
use super::error::ApiError;
use super::extract::ApiJson;
use super::state::AppState;
use crate::wire::{
    AccessLevel, ErrorCode, LoginCode, LoginGrant, LoginRequest, LogoutResponse, WhoAmI,
};

/// Mint a one-time login code for the dashboard.
///
/// With the read-write token or on the unix socket: `{"code", "url",
/// "expires_at"}`, a code good once, for 60 s, and the link with it in the
/// fragment (`http://ADDR/#login=CODE`): what `tmuxd open` prints. A
/// dashboard credential gets 403: a page cannot renew itself.
#[utoipa::path(post, path = "/v1/login/code", tag = "daemon",
    responses(
        (status = 200, description = "A one-time login code for the dashboard, good for a minute", body = LoginCode),
        (status = 403, description = "`forbidden`: a read token, or a dashboard credential (which cannot renew itself)", body = crate::wire::ErrorBody)))]
pub async fn issue_code(_: TokenHolder, State(state): State<AppState>) -> Json<LoginCode> {
    let code = state.auth.issue_login_code();
    let url = format!("http://{}/#login={code}", state.http_address);
    let expires_at = Utc::now() + CODE_TTL;
    Json(LoginCode {
        code,
        url,
        expires_at,
    })
}

/// Trade a login code for the dashboard's credential.
///
/// Open: `{"code"}` → `{"token", "access", "expires_at"}`, the dashboard's
/// own credential (read-write, 24 h, held in memory: a restart ends it);
/// send it as a bearer token. 401 for a wrong, used or expired code; each
/// failure slows the next from that address (`docs/api.md#auth`).
#[utoipa::path(post, path = "/v1/login", tag = "daemon", security(()),
    request_body = LoginRequest,
    responses(
        (status = 200, description = "The dashboard's credential: send it as a bearer token", body = LoginGrant),
        (status = 401, description = "`unauthorized`: the code is wrong, used or expired (each failure slows the next)", body = crate::wire::ErrorBody)))]
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

/// End the presented dashboard credential.
///
/// Read-write callers: ends the dashboard credential presented
/// (`{"ended": true}`; from then on it gets 401); with the token or on the
/// socket nothing is ended (`{"ended": false}`): a token lasts until the
/// configuration changes. What the dashboard's "Forget token" calls. Streams
/// already open stay open until they close.
#[utoipa::path(post, path = "/v1/logout", tag = "daemon",
    responses(
        (status = 200, description = "The presented dashboard credential is ended (`ended`: true); with the token or on the socket nothing is (`ended`: false): a token lasts until the configuration changes", body = LogoutResponse),
        (status = 403, description = "`forbidden`: a read token", body = crate::wire::ErrorBody)))]
pub async fn logout(
    _: ReadWrite,
    State(state): State<AppState>,
    page: Option<Extension<PageCredential>>,
) -> Json<LogoutResponse> {
    let Some(Extension(page)) = page else {
        return Json(LogoutResponse { ended: false });
    };
    let ended = state.auth.end_page_credential(&page);
    super::push::forget_page(&state, &page).await;
    Json(LogoutResponse { ended })
}

/// What the presented credential may do.
///
/// `{"access": "read"|"write"}`, so a client need not probe with a failing
/// request.
#[utoipa::path(get, path = "/v1/whoami", tag = "daemon",
    responses((status = 200, description = "What the presented credential may do", body = WhoAmI)))]
pub async fn whoami(write: Option<Extension<ReadWrite>>) -> Json<WhoAmI> {
    let access = match write {
        Some(_) => AccessLevel::Write,
        None => AccessLevel::Read,
    };
    Json(WhoAmI { access })
}
