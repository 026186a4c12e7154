//! `GET /metrics` and the middleware that counts every HTTP request by its
//! route template (`/v1/sessions/{id}`, never the raw path, so a client
//! cannot mint label values) and status.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::state::AppState;
use crate::metrics::{CONTENT_TYPE, Metrics, StorageHealth};

/// The label of requests that matched no route.
const UNMATCHED: &str = "unmatched";

/// Metrics (OpenMetrics text).
///
/// The registry as OpenMetrics text; session states and queued inputs are
/// counted at the time of the request, from the actors' current summaries,
/// and storage health read from the storage task's report. The metrics:
/// `docs/guide.md#metrics`.
#[utoipa::path(get, path = "/metrics", tag = "daemon",
    responses((status = 200, description = "Prometheus metrics in the OpenMetrics text format (see the Metrics section of docs/guide.md)",
        content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String)))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let sessions = state.supervisor.list(false).await;
    let states: Vec<String> = sessions
        .iter()
        .map(|s| serde_json::to_value(s.actor.state).unwrap_or_default())
        .map(|v| v.as_str().unwrap_or("unknown").to_owned())
        .collect();
    state
        .metrics
        .set_sessions(states.iter().map(String::as_str));
    let queued = sessions.iter().map(|s| s.queued_inputs).sum();
    state.metrics.set_queued_inputs(queued);
    let raised = sessions
        .iter()
        .filter(|s| s.actor.attention.is_some())
        .count();
    state.metrics.set_sessions_attention(raised);
    let storage = state.supervisor.storage_report();
    state.metrics.set_storage(StorageHealth {
        degraded: storage.status != "ok",
        unwritten_events: storage.unwritten_events,
        lost_events: storage.lost_events,
        failed_writes: storage.failed_writes,
    });
    (
        [(header::CONTENT_TYPE, CONTENT_TYPE)],
        state.metrics.encode(),
    )
        .into_response()
}

/// Counts a request once its response head is ready (a stream's lifetime
/// is in the stream metrics, not here).
pub async fn track_http(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let method = request.method().clone();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    metrics.http_request(&route, method.as_str(), status, started.elapsed());
    response
}
