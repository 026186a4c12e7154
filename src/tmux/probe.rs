//! Whether the configured tmux can make a session tmuxd can attach to,
//! tried end to end on a private server of its own: `tmux -V` answering is
//! not enough (a fake tmux missing its control-mode half answered `-V` and
//! failed every create with `attach_failed`, while `/readyz` said ready).
//! `doctor` and `/readyz` both ask this.

use std::sync::atomic::{AtomicU64, Ordering};

use super::control::{ControlClient, ControlError, ControlOptions};
use super::{NewSession, Socket, Tmux, TmuxError};

/// Which step of the probe failed, and why.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot create a session: {0}")]
    Create(TmuxError),
    #[error("cannot list sessions: {0}")]
    List(TmuxError),
    #[error("the session it created is not listed ({listed} panes listed)")]
    NotListed { listed: usize },
    #[error("cannot attach a control client: {0}")]
    Attach(ControlError),
    #[error("cannot kill a session: {0}")]
    Kill(TmuxError),
    #[error("a killed session is still listed")]
    StillListed,
}

/// How the probe's control client attached.
#[derive(Clone, Debug)]
pub struct ProbeAttach {
    /// `ClientPath::describe`, or why a child client stood in.
    pub how: String,
    /// tmuxd's own client, not a `tmux -C` child.
    pub native: bool,
}

/// The probe session's name on its private server.
const PROBE: &str = "tmuxd-probe";

impl Tmux {
    /// Creates, lists, attaches a control client to and kills a session on
    /// a private server (`-L tmuxd-probe-<pid>-<n>`: the same binary, tmux
    /// config and timeout, never the configured server, whose clients would
    /// all be told), then removes that server and its socket file. Says how
    /// the control client attached, or which step failed and why.
    pub async fn check_create(&self) -> Result<ProbeAttach, ProbeError> {
        // Names probes apart within this process; the pid, from others.
        static PROBES: AtomicU64 = AtomicU64::new(0);
        let n = PROBES.fetch_add(1, Ordering::Relaxed);
        let mut probe = Tmux::new(
            self.bin.clone(),
            Socket::Name(format!("tmuxd-probe-{}-{n}", std::process::id())),
            self.config_file.clone(),
            self.timeout,
        );
        probe.child_clients_only = self.child_clients_only;
        // The same binary: its version, and so how clients attach, is known.
        probe.client_path = self.client_path.clone();
        let outcome = probe_session(&probe).await;
        // Whatever happened, leave no server behind (it has only the probe),
        // nor its socket file, which tmux leaves when its server exits.
        let _ = probe.run(["kill-server"]).await;
        // SAFETY: getuid(2) cannot fail and touches no memory.
        let uid = unsafe { libc::getuid() };
        let socket = probe.socket_path(std::env::var_os("TMUX_TMPDIR").as_deref(), uid);
        let _ = std::fs::remove_file(socket);
        outcome
    }
}

/// The probe's steps; returns how the control client attached.
async fn probe_session(probe: &Tmux) -> Result<ProbeAttach, ProbeError> {
    let request = NewSession {
        name: PROBE,
        size: Some((80, 24)),
        command: Some("sleep 30"),
        ..Default::default()
    };
    probe
        .new_session(&request)
        .await
        .map_err(ProbeError::Create)?;
    let panes = probe.list_panes().await.map_err(ProbeError::List)?;
    if !panes.iter().any(|p| p.session_name == PROBE) {
        return Err(ProbeError::NotListed {
            listed: panes.len(),
        });
    }
    let options = ControlOptions {
        timeout: probe.timeout,
        ..Default::default()
    };
    let client = ControlClient::attach(probe, PROBE, options)
        .await
        .map_err(ProbeError::Attach)?;
    let native = client.is_native();
    client.close().await;
    let path = probe.client_path().await;
    let how = match native {
        false if path.is_native() => {
            "tmux -C child (tmuxd's own client could not connect; see the log)".to_owned()
        }
        _ => path.describe(),
    };
    probe.kill_session(PROBE).await.map_err(ProbeError::Kill)?;
    // The server exits with its last session, so a failing list is fine too.
    match probe.list_panes().await {
        Ok(panes) if panes.iter().any(|p| p.session_name == PROBE) => Err(ProbeError::StillListed),
        _ => Ok(ProbeAttach { how, native }),
    }
}
