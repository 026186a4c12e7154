//! Web Push routes: the key a page subscribes with, its subscriptions
//! (kept per credential: a page's subscriptions go when it logs out), and
//! the answer a notification's action sends back, typed only while the
//! attention it answers is up.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use sha2::{Digest, Sha256};

use super::auth::{PageCredential, ReadWrite};
use super::error::ApiError;
use super::extract::{ApiJson, session_id};
use super::state::AppState;
use crate::push::{Owner, Push, Subscription};
use crate::wire::{
    AnswerRequest, AnswerResponse, PushInfo, SubscribeRequest, SubscribeResponse,
    UnsubscribeRequest, UnsubscribeResponse,
};
use crate::wire::{ErrorBody, ErrorCode};

type ApiResult<T> = Result<T, ApiError>;

fn push(state: &AppState) -> Result<&Push, ApiError> {
    state
        .push
        .as_ref()
        .ok_or_else(|| ApiError::not_found("web push is off (notify.web_push = false)"))
}

/// Who is subscribing: a page credential by its hash, else a token holder.
fn owner(page: Option<Extension<PageCredential>>) -> Owner {
    match page {
        Some(Extension(page)) => Owner::Page(crate::secret::hex(&Sha256::digest(page.secret()))),
        None => Owner::Token,
    }
}

/// The subscriptions file could not be written: logged, and a 500.
fn not_saved(error: crate::store::StoreError) -> ApiError {
    tracing::warn!("saving push subscriptions: {error}");
    ApiError::new(ErrorCode::Internal, "could not save the push subscriptions")
}

/// What a credential's logout ends: its push subscriptions.
pub async fn forget_page(state: &AppState, page: &PageCredential) {
    if let Some(push) = &state.push {
        push.forget(&owner(Some(Extension(page.clone())))).await;
    }
}

/// The Web Push key, and how many subscriptions tmuxd keeps.
///
/// `{"public_key", "subscriptions"}`: the VAPID public key a page subscribes
/// with (base64url) and how many subscriptions tmuxd keeps; 404 with
/// `notify.web_push = false` (`docs/guide.md#notifications-on-your-phone`).
#[utoipa::path(get, path = "/v1/push", tag = "push",
    responses(
        (status = 200, description = "The VAPID public key to subscribe with", body = PushInfo),
        (status = 404, description = "`not_found`: web push is off", body = ErrorBody)))]
pub async fn info(State(state): State<AppState>) -> ApiResult<Json<PushInfo>> {
    let push = push(&state)?;
    Ok(Json(PushInfo {
        public_key: push.public_key().to_owned(),
        subscriptions: push.count(),
    }))
}

/// Subscribe a browser to push notifications.
///
/// Read-write callers: `PushSubscription.toJSON()`
/// (`{"endpoint", "keys": {"p256dh", "auth"}}`) → 201 `{"subscribed",
/// "subscriptions"}`. The endpoint must be https (plain http only to a
/// loopback address), without a user or password, at most 1024 bytes; the
/// keys a P-256 point and a 16-byte secret; anything else is a 400 that keeps
/// nothing. Kept per credential (a page credential's SHA-256, never the
/// credential) in `push-subscriptions.json` (0600), 32 at most (the oldest
/// goes); the same endpoint again replaces the old one. A page's logout
/// removes its subscriptions; a push service's 404 or 410 removes one.
#[utoipa::path(post, path = "/v1/push/subscriptions", tag = "push",
    request_body = SubscribeRequest,
    responses(
        (status = 201, description = "Kept (one at the same endpoint is replaced)", body = SubscribeResponse),
        (status = 400, description = "`bad_request`: not an https endpoint, or keys that are not a P-256 key and a 16-byte secret", body = ErrorBody),
        (status = 404, description = "`not_found`: web push is off", body = ErrorBody)))]
pub async fn subscribe(
    _: ReadWrite,
    State(state): State<AppState>,
    page: Option<Extension<PageCredential>>,
    ApiJson(body): ApiJson<SubscribeRequest>,
) -> ApiResult<(StatusCode, Json<SubscribeResponse>)> {
    let push = push(&state)?;
    let subscription = Subscription::checked(
        &body.endpoint,
        &body.keys.p256dh,
        &body.keys.auth,
        owner(page),
        chrono::Utc::now(),
    )
    .map_err(|e| ApiError::bad_request(format!("subscription refused: {e}")))?;
    push.subscribe(subscription).await.map_err(not_saved)?;
    Ok((
        StatusCode::CREATED,
        Json(SubscribeResponse {
            subscribed: true,
            subscriptions: push.count(),
        }),
    ))
}

/// Remove a push subscription.
///
/// `{"endpoint"}` → `{"removed"}`: a page removes its own subscription (a
/// token holder any).
#[utoipa::path(post, path = "/v1/push/unsubscribe", tag = "push",
    request_body = UnsubscribeRequest,
    responses(
        (status = 200, description = "Removed if this credential made it (a token may remove any)", body = UnsubscribeResponse),
        (status = 404, description = "`not_found`: web push is off", body = ErrorBody)))]
pub async fn unsubscribe(
    _: ReadWrite,
    State(state): State<AppState>,
    page: Option<Extension<PageCredential>>,
    ApiJson(body): ApiJson<UnsubscribeRequest>,
) -> ApiResult<Json<UnsubscribeResponse>> {
    let push = push(&state)?;
    let removed = push
        .unsubscribe(&body.endpoint, &owner(page))
        .await
        .map_err(not_saved)?;
    Ok(Json(UnsubscribeResponse { removed }))
}

/// Answer the question a push notification showed.
///
/// Read-write callers: `{"since", "text"?, "keys"?}`, what a push
/// notification's action sends (`docs/guide.md#notifications-on-your-phone`):
/// the text, then the keys, typed only if the session's attention flag is up
/// and was raised at `since` (checked and typed in one step of the session's
/// actor); the flag is acknowledged (`acknowledged_by: push_action` on the
/// `session_state` event). 200 `{"typed": true}`; 409 `conflict` when the
/// session has moved on (someone answered or looked, or it asks something
/// else now): nothing is typed; 400 for nothing to type, a NUL, a bad key.
#[utoipa::path(post, path = "/v1/sessions/{id}/answer", tag = "push",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`")),
    request_body = AnswerRequest,
    responses(
        (status = 200, description = "Typed; the attention is acknowledged (`acknowledged_by: push_action`)", body = AnswerResponse),
        (status = 400, description = "`bad_request`: nothing to type, a NUL, too many keys; `invalid_keys`", body = ErrorBody),
        (status = 404, description = "`not_found`", body = ErrorBody),
        (status = 409, description = "`conflict`: the session has moved on (its attention is not the one answered); nothing was typed. `session_ended`", body = ErrorBody)))]
pub async fn answer(
    _: ReadWrite,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<AnswerRequest>,
) -> ApiResult<Json<AnswerResponse>> {
    state
        .supervisor
        .answer(
            session_id(&id)?,
            body.since,
            body.text.as_deref(),
            &body.keys,
        )
        .await?;
    Ok(Json(AnswerResponse { typed: true }))
}
