//! The HTTP API (api.md): routes, the auth guard, JSON errors, and the
//! WebSocket and SSE streams.

mod auth;
mod error;
mod events;
mod extract;
mod health;
mod screen;
mod sessions;
mod stream;
mod ws;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};
use tokio_util::sync::CancellationToken;

pub use auth::{Access, AuthPolicy};
pub use error::ApiError;
pub use ws::StreamLimits;

use crate::supervisor::Supervisor;

#[derive(Clone)]
pub struct AppState {
    pub supervisor: Supervisor,
    pub started_at: Instant,
    pub auth: Arc<AuthPolicy>,
    pub streams: StreamLimits,
    /// Fires at shutdown: open streams close instead of holding the server.
    pub cancel: CancellationToken,
}

pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let auth = state.auth.clone();
    Router::new()
        .route("/v1/sessions", get(sessions::list).post(sessions::create))
        .route("/v1/sessions/adopt", post(sessions::adopt))
        .route(
            "/v1/sessions/{id}",
            get(sessions::get).delete(sessions::delete),
        )
        .route("/v1/sessions/{id}/input", post(sessions::input))
        .route("/v1/sessions/{id}/resize", post(sessions::resize))
        .route("/v1/sessions/{id}/snapshot", get(sessions::snapshot))
        .route("/v1/sessions/{id}/scrollback", get(sessions::scrollback))
        .route("/v1/sessions/{id}/wait", post(sessions::wait))
        .route(
            "/v1/sessions/{id}/thought",
            axum::routing::put(sessions::thought),
        )
        .route("/v1/sessions/{id}/stream", get(stream::stream))
        .route("/v1/sessions/{id}/screen", get(screen::screen))
        .route("/v1/events", get(events::events))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/version", get(health::version))
        .route("/metrics", get(health::metrics))
        .merge(crate::web::routes())
        .fallback(|| async { ApiError::not_found("no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed on this endpoint",
            )
        })
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(auth, auth::guard))
        .with_state(state)
}
