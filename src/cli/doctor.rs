//! `tmuxd doctor`: checks what the daemon needs and says what is wrong.
//! tmux is checked by doing what the daemon does (create, list and kill a
//! probe session) on a private socket, not by `tmux -V`, which a broken
//! install or a misconfigured fake answers just as well.

use std::time::Duration;

use crate::config::Config;
use crate::daemon::tmux_from_config;
use crate::store::{DataDir, StoreError};
use crate::tmux::control::{ControlClient, ControlOptions};
use crate::tmux::{NewSession, Socket, Tmux};

/// The probe session's name on the private server.
const PROBE: &str = "tmuxd-doctor-probe";

/// Prints one line per check; true when all pass.
pub async fn doctor(config: &Config) -> bool {
    let mut all_ok = true;
    let mut report = |ok: bool, what: &str, detail: String| {
        all_ok &= ok;
        println!("{} {what}: {detail}", if ok { "ok  " } else { "FAIL" });
    };
    match tmux_round_trip(config).await {
        Ok((detail, client)) => {
            report(true, "tmux", detail);
            report(true, "control client", client);
        }
        Err(detail) => report(false, "tmux", detail),
    }
    match DataDir::open(&config.data_dir) {
        Ok(_) => report(
            true,
            "data dir",
            format!("{} is usable", config.data_dir.display()),
        ),
        Err(StoreError::Locked { .. }) => report(
            true,
            "data dir",
            format!("{} is in use by a running tmuxd", config.data_dir.display()),
        ),
        Err(e) => report(false, "data dir", e.to_string()),
    }
    match std::net::TcpListener::bind(config.bind) {
        Ok(_) => report(true, "bind", format!("{} is free", config.bind)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => report(
            true,
            "bind",
            format!("{} is in use (a running tmuxd?)", config.bind),
        ),
        Err(e) => report(false, "bind", format!("{}: {e}", config.bind)),
    }
    let generated = config.data_dir.join(crate::daemon::TOKEN_FILE);
    let (ok, auth) = match (&config.auth.token, config.auth.insecure_no_auth) {
        (Some(_), _) => (true, "TCP needs the configured token; the daemon's own user needs none on its unix socket".to_owned()),
        (None, true) => (false, "auth.insecure_no_auth: every local user and any program that can reach the port gets every shell".to_owned()),
        (None, false) if generated.exists() => (true, format!("TCP needs the token in {}; the daemon's own user needs none on its unix socket", generated.display())),
        (None, false) => (true, format!("TCP will need the token tmuxd generates at first start into {}", generated.display())),
    };
    report(ok, "auth", auth);
    all_ok
}

/// `tmux -V`, then a probe session created, listed, attached to by a
/// control client and killed on a server of its own (the configured binary
/// and tmux config, never the user's server). Also says how control clients
/// attach.
async fn tmux_round_trip(config: &Config) -> Result<(String, String), String> {
    let configured = tmux_from_config(config);
    let bin = configured.bin().display().to_string();
    let version = configured.version().await.map_err(|e| e.to_string())?;
    let probe = Tmux::new(
        configured.bin().to_owned(),
        Socket::Name(format!("tmuxd-doctor-{}", std::process::id())),
        config.tmux.config_file.clone(),
        Duration::from_millis(config.tmux.command_timeout_ms),
    );
    let result = probe_session(&probe).await;
    // Whatever happened, leave no server behind (it has only the probe),
    // nor its socket file, which tmux leaves when its server exits.
    let _ = probe.run(["kill-server"]).await;
    // SAFETY: getuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    let socket = probe.socket_path(std::env::var_os("TMUX_TMPDIR").as_deref(), uid);
    let _ = std::fs::remove_file(socket);
    match result {
        Ok(client) => Ok((
            format!(
                "{version} ({bin}): created, listed, attached to and killed a probe session \
                 on a private socket"
            ),
            client,
        )),
        Err(step) => Err(format!("{version} ({bin}) answers -V, but {step}")),
    }
}

/// Returns how the control client attached.
async fn probe_session(probe: &Tmux) -> Result<String, String> {
    let request = NewSession {
        name: PROBE,
        cwd: None,
        size: Some((80, 24)),
        command: Some("sleep 30"),
        keep_exit: false,
        tag: None,
    };
    probe
        .new_session(&request)
        .await
        .map_err(|e| format!("cannot create a session: {e}"))?;
    let panes = probe
        .list_panes()
        .await
        .map_err(|e| format!("cannot list sessions: {e}"))?;
    if !panes.iter().any(|p| p.session_name == PROBE) {
        return Err(format!(
            "the session it created is not listed ({} panes listed)",
            panes.len()
        ));
    }
    let client = ControlClient::attach(probe, PROBE, ControlOptions::default())
        .await
        .map_err(|e| format!("cannot attach a control client: {e}"))?;
    let native = client.is_native();
    client.close().await;
    let path = probe.client_path().await.describe();
    let how = match native {
        true => path,
        false if probe.client_path().await.is_native() => {
            "tmux -C child (tmuxd's own client could not connect; see the log)".to_owned()
        }
        false => path,
    };
    probe
        .kill_session(PROBE)
        .await
        .map_err(|e| format!("cannot kill a session: {e}"))?;
    // The server exits with its last session, so a failing list is fine too.
    match probe.list_panes().await {
        Ok(panes) if panes.iter().any(|p| p.session_name == PROBE) => {
            Err("a killed session is still listed".to_owned())
        }
        _ => {
            let version = probe.version().await.unwrap_or_default();
            Ok(format!(
                "{how}; {}",
                crate::tmux::crash_conditions(&version, native)
            ))
        }
    }
}
