//! A peer reached through SSH: tmuxd runs `ssh -N -L` itself, keeps it
//! running (restarting it with backoff), and reports why it failed.
//!
//! The forward listens on a unix socket in the hub's private directory
//! (`transport::forward_socket`), never on a TCP port: a port picked by
//! binding and releasing it could be taken by another local user while ssh
//! reconnects, and that user would receive the peer's token.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::Peer;

const MIN_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// A client that ran this long was working: the next failure starts the
/// backoff over.
const HEALTHY_AFTER: Duration = Duration::from_secs(10);

/// One peer's forward: the hub's `socket` to `remote` as the peer host sees it.
#[derive(Clone, Debug)]
pub struct Tunnel {
    destination: String,
    args: Vec<String>,
    remote: String,
    socket: PathBuf,
}

impl Tunnel {
    /// A forward listening on `socket` (in a directory only this user
    /// can enter), to `host:port` on the far side.
    pub fn new(
        destination: &str,
        args: &[String],
        host: &str,
        port: u16,
        socket: PathBuf,
    ) -> Tunnel {
        Tunnel {
            destination: destination.to_owned(),
            args: args.to_vec(),
            remote: format!("{host}:{port}"),
            socket,
        }
    }

    /// `ssh`'s arguments: no command, fail rather than run without the
    /// forward, never prompt, notice a dead server within ~15 s; the
    /// socket made 0600 and a stale one (an ssh killed earlier) replaced.
    pub fn argv(&self) -> Vec<String> {
        let mut argv: Vec<String> = [
            "-N",
            "-o",
            "ExitOnForwardFailure=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "StreamLocalBindUnlink=yes",
            "-o",
            "StreamLocalBindMask=0177",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        argv.push("-L".to_owned());
        argv.push(format!("{}:{}", self.socket.display(), self.remote));
        argv.extend(self.args.iter().cloned());
        argv.push("--".to_owned());
        argv.push(self.destination.clone());
        argv
    }
}

/// Runs `ssh` until shutdown, restarting it when it exits; its stderr
/// lines become the peer's `last_error`. Every child is waited on.
pub async fn supervise(tunnel: Tunnel, peer: Arc<Peer>, cancel: CancellationToken) {
    let mut backoff = MIN_BACKOFF;
    while !cancel.is_cancelled() {
        let started = Instant::now();
        let spawned = Command::new("ssh")
            .args(tunnel.argv())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                peer.note_ssh_error(format!("ssh: cannot run: {e}"));
                backoff = wait(&cancel, backoff).await;
                continue;
            }
        };
        tracing::info!(host = %peer.name, pid = child.id(), "ssh forward started");
        if let Some(stderr) = child.stderr.take() {
            let peer = peer.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let line = line.trim();
                    if !line.is_empty() {
                        tracing::warn!(host = %peer.name, "ssh: {line}");
                        peer.note_ssh_error(format!("ssh: {line}"));
                    }
                }
            });
        }
        let status = tokio::select! {
            status = child.wait() => status,
            _ = cancel.cancelled() => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                return;
            }
        };
        let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
        tracing::warn!(host = %peer.name, "ssh forward exited: {status}");
        peer.note_ssh_error(format!("ssh exited: {status}"));
        if started.elapsed() >= HEALTHY_AFTER {
            backoff = MIN_BACKOFF;
        }
        backoff = wait(&cancel, backoff).await;
    }
}

/// Sleeps `backoff` (unless shutting down) and returns the next one.
async fn wait(cancel: &CancellationToken, backoff: Duration) -> Duration {
    tokio::select! {
        _ = cancel.cancelled() => {}
        _ = tokio::time::sleep(backoff) => {}
    }
    (backoff * 2).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_runs_no_command_never_prompts_and_forwards_to_the_peer() {
        let tunnel = Tunnel::new(
            "me@gpu1",
            &["-p".to_owned(), "2222".to_owned()],
            "127.0.0.1",
            7420,
            "/data/fleet/gpu1.sock".into(),
        );
        let argv = tunnel.argv().join(" ");
        for part in [
            "-N",
            "ExitOnForwardFailure=yes",
            "BatchMode=yes",
            "ServerAliveInterval=5",
            "StreamLocalBindUnlink=yes",
            "StreamLocalBindMask=0177",
            "-L /data/fleet/gpu1.sock:127.0.0.1:7420",
        ] {
            assert!(argv.contains(part), "{argv}");
        }
        assert!(argv.ends_with("-p 2222 -- me@gpu1"), "{argv}");
    }
}
