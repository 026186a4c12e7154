//! Health, readiness and version.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use super::probe::{Answer, Unready};
use super::state::AppState;
use crate::wire::{Health, Readiness, StorageReport, StorageStatus, TmuxLost, VersionInfo};

/// Liveness: the daemon answers.
///
/// `status` is `ok`, or `degraded` with a `reason` while tmux is lost with
/// sessions to restore or a write to the data dir keeps failing (still 200,
/// as a restart would not help). Also `tmux` (`tmux -V`, or why it failed),
/// `tmux_client` (how control clients attach), `sessions`, `storage`, and
/// `tmux_lost`: `null`, or `{"since", "restorable"}` while the tmux server
/// is lost with sessions to restore. Health and readiness share one
/// `tmux -V`, run at most once a second however many ask.
#[utoipa::path(get, path = "/healthz", tag = "daemon", security(()),
    responses((status = 200, description = "The daemon answers; `tmux` says whether tmux does; \
`status` is `degraded` (with a `reason`) while tmux is lost with sessions to restore or writes to the data \
dir keep failing", body = Health)))]
pub async fn healthz(State(state): State<AppState>) -> Json<Health> {
    let tmux = match tmux_version(&state).await {
        Ok(version) => version,
        Err(e) => format!("unavailable: {e}"),
    };
    let tmux_client = state.supervisor.tmux().client_path().await.describe();
    let storage = StorageReport::from(state.supervisor.storage_report());
    let tmux_lost = tmux_lost(&state);
    let reason = match (&tmux_lost, storage.status) {
        (Some(lost), _) => Some(format!(
            "the tmux server was lost: {} sessions can be restored (`tmuxd restore`)",
            lost.restorable
        )),
        (None, StorageStatus::Degraded) => {
            Some("writes to the data dir keep failing (see `storage`)".to_owned())
        }
        (None, StorageStatus::Ok) => None,
    };
    let status = match reason {
        Some(_) => StorageStatus::Degraded,
        None => StorageStatus::Ok,
    };
    Json(Health {
        status,
        reason,
        tmux,
        tmux_client,
        sessions: state.supervisor.session_count(),
        storage,
        tmux_lost,
    })
}

/// Readiness: tmux can run and make a session tmuxd attaches to.
///
/// 503 if tmux cannot run, or cannot make a session tmuxd attaches to:
/// checked once on a private `-L tmuxd-probe-*` server; a success stands, a
/// failure is tried again after 5 s. Degraded storage keeps the daemon ready
/// (200 with `storage`): it serves every request and event from memory and
/// writes them once the disk recovers, so an orchestrator should keep
/// routing to it (and alert on `storage`). `tmux_lost` as in `/healthz`.
#[utoipa::path(get, path = "/readyz", tag = "daemon",
    responses(
        (status = 200, description = "tmux can be run and makes sessions tmuxd can attach to", body = Readiness),
        (status = 503, description = "tmux cannot be run, or cannot make a session tmuxd can attach to \
(tried on a private tmux server; `reason` says what failed)", body = Readiness)))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let storage = StorageReport::from(state.supervisor.storage_report());
    let ready = match tmux_version(&state).await {
        Ok(_) => tmux_creates(&state).await,
        Err(reason) => Err(reason),
    };
    match ready {
        Ok(_) => {
            let ready = Readiness {
                ready: true,
                reason: None,
                storage,
                tmux_lost: tmux_lost(&state),
            };
            (StatusCode::OK, Json(ready))
        }
        Err(reason) => {
            let ready = Readiness {
                ready: false,
                reason: Some(reason.to_string()),
                storage,
                tmux_lost: tmux_lost(&state),
            };
            (StatusCode::SERVICE_UNAVAILABLE, Json(ready))
        }
    }
}

fn tmux_lost(state: &AppState) -> Option<TmuxLost> {
    let lost = state.supervisor.tmux_lost()?;
    Some(TmuxLost {
        since: lost.since,
        restorable: lost.restorable,
    })
}

/// Whether the configured tmux can make a session tmuxd attaches to.
async fn tmux_creates(state: &AppState) -> Answer {
    let tmux = state.supervisor.tmux().clone();
    let run = async move {
        let bin = tmux.bin().display().to_string();
        match tmux.check_create().await {
            Ok(attached) => Ok(attached.how),
            Err(step) => Err(Unready::Create {
                bin,
                step: Arc::new(step),
            }),
        }
    };
    state.tmux_probe.create(run).await
}

async fn tmux_version(state: &AppState) -> Answer {
    let tmux = state.supervisor.tmux().clone();
    let run = async move {
        tmux.version()
            .await
            .map_err(|e| Unready::Version(Arc::new(e)))
    };
    state.tmux_probe.get(run).await
}

/// The daemon's version and commit.
///
/// Open, like `/healthz`: `{"version", "commit"}`, the commit the binary
/// was built from (`tmuxd --version` says the same).
#[utoipa::path(get, path = "/version", tag = "daemon", security(()),
    responses((status = 200, description = "The daemon's version", body = VersionInfo)))]
pub async fn version() -> Json<VersionInfo> {
    Json(VersionInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        commit: env!("TMUXD_COMMIT").to_owned(),
    })
}
