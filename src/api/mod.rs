//! The HTTP API (api.md): routes grouped by the access they need, JSON
//! errors, and the WebSocket and SSE streams.

mod auth;
mod convert;
mod error;
mod events;
mod extract;
mod health;
mod hooks;
mod hosts;
mod limits;
mod login;
mod metrics;
pub mod openapi;
mod probe;
mod proof;
mod push;
mod queue;
mod restore;
mod screen;
mod server;
mod sessions;
mod state;
mod stream;
mod untracked;
mod wait;
mod ws;

use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::routing::{delete, get, post, put};
use axum::{Router, middleware};

use crate::wire::ErrorCode;
pub use auth::{Access, AuthPolicy, HostNames, Peer, ReadBudget, Standing, random_hex};
use auth::{Guard, Need};
pub use error::ApiError;
pub use limits::StreamLimits;
pub use probe::TmuxProbe;
pub use state::AppState;

/// Every route, grouped by what it needs; each group's guard decides who
/// gets through before any handler runs, whatever headers a request carries.
/// `tests/auth.rs` runs every route here with every kind of credential.
pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let guard = |need| {
        let guard = Guard::new(state.auth.clone(), need, state.metrics.clone());
        middleware::from_fn_with_state(guard, auth::require)
    };
    let open = Router::new()
        .route("/healthz", get(health::healthz))
        .route("/version", get(health::version))
        .route("/v1/login", post(login::exchange))
        .route(crate::secret::PROOF_PATH, get(proof::proof))
        .merge(crate::web::routes(|what| {
            axum::response::IntoResponse::into_response(ApiError::not_found(what))
        }))
        .route_layer(guard(Need::Open));
    // Runs after each group's guard: a peer's session is the peer's.
    let fleet = || middleware::from_fn_with_state(state.clone(), hosts::proxy);
    let read = Router::new()
        .route("/v1/sessions", get(sessions::list))
        .route("/v1/sessions/untracked", get(untracked::list))
        .route("/v1/sessions/{id}", get(sessions::get))
        .route("/v1/sessions/{id}/snapshot", get(sessions::snapshot))
        .route("/v1/sessions/{id}/scrollback", get(sessions::scrollback))
        .route("/v1/sessions/{id}/input/queue", get(queue::list))
        .route("/v1/events", get(events::events))
        .route("/v1/server", get(server::server))
        .route("/v1/whoami", get(login::whoami))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(metrics::metrics))
        .route("/v1/openapi.json", get(openapi::openapi))
        .route("/v1/hosts", get(hosts::hosts))
        .route("/v1/hosts/{host}/server", get(hosts::host_server))
        .route("/v1/push", get(push::info))
        .route_layer(fleet())
        .route_layer(guard(Need::Read));
    let write = Router::new()
        .route("/v1/sessions", post(sessions::create))
        .route("/v1/sessions/adopt", post(sessions::adopt))
        .route("/v1/sessions/restore", post(restore::restore))
        .route("/v1/sessions/{id}", delete(sessions::delete))
        .route("/v1/sessions/{id}/input", post(sessions::input))
        .route("/v1/sessions/{id}/resize", post(sessions::resize))
        .route("/v1/sessions/{id}/wait", post(wait::wait))
        .route("/v1/sessions/{id}/input/queue/{n}", delete(queue::cancel))
        .route("/v1/sessions/{id}/thought", put(sessions::thought))
        .route("/v1/login/code", post(login::issue_code))
        .route("/v1/logout", post(login::logout))
        .route("/v1/hooks/{agent}", post(hooks::hook))
        .route("/v1/push/subscriptions", post(push::subscribe))
        .route("/v1/push/unsubscribe", post(push::unsubscribe))
        .route("/v1/sessions/{id}/answer", post(push::answer))
        .route_layer(fleet())
        .route_layer(guard(Need::Write));
    // The only routes that take an upgrade without a bearer header; their
    // handlers get a socket only once it has authenticated.
    let sockets = Router::new()
        .route("/v1/sessions/{id}/stream", get(stream::stream))
        .route("/v1/sessions/{id}/screen", get(screen::screen))
        .route_layer(fleet())
        .route_layer(guard(Need::Socket));
    // Misses need a caller too: without a token nobody learns which paths exist.
    let not_found = (|| async { ApiError::not_found("no such endpoint") }).layer(guard(Need::Read));
    let method_not_allowed = (|| async {
        ApiError::new(
            ErrorCode::MethodNotAllowed,
            "method not allowed on this endpoint",
        )
    })
    .layer(guard(Need::Read));
    let track_http = middleware::from_fn_with_state(state.metrics.clone(), metrics::track_http);
    Router::new()
        .merge(open)
        .merge(read)
        .merge(write)
        .merge(sockets)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(track_http)
        .with_state(state)
}
