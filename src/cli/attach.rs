//! `tmuxd attach SESSION`: replaces this process with `tmux attach` on the
//! daemon's own tmux server, so a person lands in the session in one
//! command, from inside tmux too. A fleet peer's session (`gpu1/build`) is
//! reached with `ssh -t` to that host, running tmux there.
//!
//! Nothing the daemon answers is run: the tmux binary is the one this CLI
//! resolves itself (config `tmux.bin`, else `tmux` in PATH; on a peer,
//! `tmux` in that host's PATH). What the daemon does choose is checked:
//! its tmux socket must be a socket of ours (else `tmux -S` would join
//! another user's server), and the ssh destination cannot be an option.

use std::ffi::OsString;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use super::args::AttachArgs;
use super::client::{Client, ClientError, encode};
use super::output::visible;
use super::resolve::session_id;
use crate::wire::{ServerInfo, SessionEnvelope};

/// The tmux a peer's host runs: its own, found in its PATH.
const REMOTE_TMUX: &str = "tmux";

/// `tmux_bin`: the configured `tmux.bin`, if the config file could be read.
pub async fn attach(
    client: &Client,
    args: AttachArgs,
    tmux_bin: Option<PathBuf>,
) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let session: SessionEnvelope = client.get(&format!("/v1/sessions/{}", encode(&id))).await?;
    let name = session.session.tmux_name;
    let argv = match id.split_once('/') {
        None => {
            let server: ServerInfo = client.get("/v1/server").await?;
            let socket = own_socket(&server.socket.path)?;
            let bin = tmux_bin.unwrap_or_else(|| PathBuf::from("tmux"));
            attach_argv(bin.into_os_string(), socket, &name, args.read_only)
        }
        Some((host, _)) => {
            let server: ServerInfo = client
                .get(&format!("/v1/hosts/{}/server", encode(host)))
                .await?;
            let hosts: serde_json::Value = client.get("/v1/hosts").await?;
            let destination = hosts["hosts"]
                .as_array()
                .and_then(|hosts| hosts.iter().find(|h| h["name"] == host))
                .and_then(|h| h["ssh"].as_str())
                .ok_or_else(|| ClientError::Protocol(format!("no host {host:?} in /v1/hosts")))?;
            let destination = ssh_destination(destination)?;
            let socket = remote_socket(&server.socket.path)?;
            let tmux = attach_argv(REMOTE_TMUX.into(), socket, &name, args.read_only);
            remote_argv(destination, &tmux)
        }
    };
    let mut command = std::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    // tmux refuses to attach from inside a tmux pane while $TMUX is set;
    // this client is a new one of its own, so nesting is what the user asked.
    command.env_remove("TMUX").env_remove("TMUX_PANE");
    let error = command.exec();
    Err(ClientError::Stream(format!(
        "cannot run {}: {error}",
        argv[0].to_string_lossy()
    )))
}

/// The daemon's tmux socket, if it is a socket of ours on this machine:
/// `tmux -S` on another user's socket would put this terminal on their
/// server (and what it draws on it).
fn own_socket(path: &str) -> Result<&Path, ClientError> {
    let refused = |why: String| {
        ClientError::Protocol(format!(
            "the daemon's tmux socket {}: {why}; attach runs tmux on a server of yours on this machine only",
            visible(path)
        ))
    };
    let socket = Path::new(path);
    if !socket.is_absolute() {
        return Err(refused("not an absolute path".into()));
    }
    let meta = std::fs::symlink_metadata(socket).map_err(|e| refused(e.to_string()))?;
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    match (meta.file_type().is_socket(), meta.uid()) {
        (false, _) => Err(refused("not a socket".into())),
        (true, uid) if uid != me => Err(refused(format!("belongs to uid {uid}, not to you"))),
        (true, _) => Ok(socket),
    }
}

/// A peer's tmux socket, for its host: an absolute path (it is quoted for
/// the remote shell).
fn remote_socket(path: &str) -> Result<&Path, ClientError> {
    match path.starts_with('/') && !path.chars().any(char::is_control) {
        true => Ok(Path::new(path)),
        false => Err(ClientError::Protocol(format!(
            "the peer's tmux socket {} is not an absolute path",
            visible(path)
        ))),
    }
}

/// An ssh destination (`user@host`, `host`) that ssh cannot take for an
/// option (`-oProxyCommand=...` runs a command here).
fn ssh_destination(destination: &str) -> Result<&str, ClientError> {
    let plain = !destination.is_empty()
        && !destination.starts_with('-')
        && !destination
            .chars()
            .any(|c| c.is_control() || c.is_whitespace());
    match plain {
        true => Ok(destination),
        false => Err(ClientError::Protocol(format!(
            "{} is not an ssh destination",
            visible(destination)
        ))),
    }
}

/// `BIN -S SOCKET attach-session [-r] -t =NAME`.
fn attach_argv(bin: OsString, socket: &Path, name: &str, read_only: bool) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![bin, "-S".into(), socket.into(), "attach-session".into()];
    if read_only {
        argv.push("-r".into());
    }
    argv.extend(["-t".into(), format!("={name}").into()]);
    argv
}

/// `ssh -t DESTINATION -- 'TMUX ARGV'`: ssh hands the remote shell one
/// string, so each word is quoted for it.
fn remote_argv(destination: &str, tmux: &[OsString]) -> Vec<OsString> {
    let words: Vec<String> = tmux
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let command = super::sessions::shell_join(&words);
    ["ssh", "-t", destination, "--", &command]
        .map(OsString::from)
        .to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv() {
        let socket = Path::new("/tmp/tmux-1000/work");
        let argv = attach_argv("/usr/bin/tmux".into(), socket, "my build", true);
        assert_eq!(
            argv,
            [
                "/usr/bin/tmux",
                "-S",
                "/tmp/tmux-1000/work",
                "attach-session",
                "-r",
                "-t",
                "=my build"
            ]
            .map(OsString::from)
        );
        let remote = remote_argv("me@gpu1", &argv);
        assert_eq!(
            remote,
            [
                "ssh",
                "-t",
                "me@gpu1",
                "--",
                "/usr/bin/tmux -S /tmp/tmux-1000/work attach-session -r -t '=my build'"
            ]
            .map(OsString::from)
        );
    }

    #[test]
    fn what_the_daemon_names_is_checked() {
        for bad in ["-oProxyCommand=touch x", "", "host name", "h\x1b[2J"] {
            assert!(ssh_destination(bad).is_err(), "{bad:?}");
        }
        assert_eq!(ssh_destination("me@gpu1").unwrap(), "me@gpu1");
        assert!(remote_socket("relative/sock").is_err());
        assert!(remote_socket("/tmp/tmux-1000/default").is_ok());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(own_socket(path.to_str().unwrap()).is_ok());
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(own_socket(file.to_str().unwrap()).is_err());
        assert!(own_socket("sock").is_err());
        let missing = own_socket("/nonexistent/tmux-0/default").unwrap_err();
        assert!(missing.to_string().contains("this machine"), "{missing}");
    }
}
