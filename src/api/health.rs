//! Health, readiness, version and metrics.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::AppState;

/// Liveness: the daemon answers; `tmux` says whether tmux does too.
pub async fn healthz(State(state): State<AppState>) -> Json<Value> {
    let tmux = match state.supervisor.tmux().version().await {
        Ok(version) => version,
        Err(e) => format!("unavailable: {e}"),
    };
    Json(json!({ "status": "ok", "tmux": tmux, "sessions": state.supervisor.session_count() }))
}

/// Ready when tmux can be run.
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    match state.supervisor.tmux().version().await {
        Ok(_) => (StatusCode::OK, Json(json!({ "ready": true }))),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "ready": false, "reason": e.to_string() })),
        ),
    }
}

pub async fn version() -> Json<Value> {
    Json(json!({ "version": env!("CARGO_PKG_VERSION") }))
}

/// Prometheus text format.
pub async fn metrics(State(state): State<AppState>) -> String {
    let sessions = state.supervisor.session_count();
    let uptime = state.started_at.elapsed().as_secs_f64();
    format!(
        "# HELP tmuxd_sessions Sessions tracked.\n# TYPE tmuxd_sessions gauge\ntmuxd_sessions {sessions}\n\
         # HELP tmuxd_uptime_seconds Seconds since the daemon started.\n# TYPE tmuxd_uptime_seconds gauge\ntmuxd_uptime_seconds {uptime:.3}\n"
    )
}
