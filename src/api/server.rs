//! `GET /v1/server`: which tmux binary and server socket the daemon uses,
//! so a client can attach a terminal to the same server (`tmuxd attach`).
//! Behind auth like every `/v1` route: the socket path is for the daemon's
//! own users only.

use axum::Json;
use axum::extract::State;

use super::state::AppState;
use crate::tmux::Socket;
use crate::wire::{ServerInfo, ServerSocket};

/// The daemon's tmux, and where new sessions start.
///
/// `{"bin", "socket": {"name", "path"}, "version", "default_cwd"}`: `path`
/// is resolved as tmux does for `-L`: the socket `tmuxd attach` uses (it
/// never runs the binary a server names). `default_cwd` is where a session
/// created without `cwd` starts: the daemon's HOME, else `/` (without it,
/// tmux would start the session wherever tmuxd itself runs).
#[utoipa::path(get, path = "/v1/server", tag = "daemon",
    responses((status = 200, description = "The tmux binary and server socket the daemon uses", body = ServerInfo)))]
pub async fn server(State(state): State<AppState>) -> Json<ServerInfo> {
    let tmux = state.supervisor.tmux();
    let tmpdir = std::env::var_os("TMUX_TMPDIR");
    // SAFETY: getuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    let name = match tmux.socket() {
        Socket::Name(name) => Some(name.clone()),
        Socket::Default | Socket::Path(_) => None,
    };
    let version = tmux.version().await.ok();
    let path = tmux.socket_path(tmpdir.as_deref(), uid);
    Json(ServerInfo {
        bin: tmux.bin().to_string_lossy().into_owned(),
        socket: ServerSocket {
            name,
            path: path.to_string_lossy().into_owned(),
        },
        version,
        default_cwd: Some(state.supervisor.default_cwd().to_owned()),
    })
}
