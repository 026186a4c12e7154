//! The HTTP API (api.md): routes, the auth guard, JSON errors.

mod auth;
mod error;
mod extract;
mod health;
mod sessions;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};

pub use auth::AuthPolicy;
pub use error::ApiError;

use crate::supervisor::Supervisor;

#[derive(Clone)]
pub struct AppState {
    pub supervisor: Supervisor,
    pub started_at: Instant,
}

pub fn router(state: AppState, auth: AuthPolicy, max_body_bytes: usize) -> Router {
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
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/version", get(health::version))
        .route("/metrics", get(health::metrics))
        .fallback(|| async { ApiError::not_found("no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed on this endpoint",
            )
        })
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(auth),
            auth::guard,
        ))
        .with_state(state)
}
