//! `tmuxd attach SESSION`: replaces this process with `tmux attach` on the
//! daemon's own tmux server (binary and socket asked of the daemon), so a
//! person lands in the session in one command, from inside tmux too. A
//! fleet peer's session (`gpu1/build`) is reached with `ssh -t` to that
//! host, running its tmux as its daemon reports it.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use super::args::AttachArgs;
use super::client::{Client, ClientError, encode};
use super::resolve::session_id;
use crate::api::model::{ServerInfo, SessionEnvelope};

pub async fn attach(client: &Client, args: AttachArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let session: SessionEnvelope = client.get(&format!("/v1/sessions/{}", encode(&id))).await?;
    let name = session.session.tmux_name;
    let argv = match id.split_once('/') {
        None => {
            let server: ServerInfo = client.get("/v1/server").await?;
            attach_argv(&server, &name, args.read_only)?
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
                .ok_or_else(|| ClientError::Protocol(format!("no host {host:?} in /v1/hosts")))?
                .to_owned();
            let tmux = attach_argv(&server, &name, args.read_only)?;
            remote_argv(&destination, &tmux)
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

/// `BIN -S SOCKET attach-session [-r] -t =NAME`, from `GET /v1/server`.
fn attach_argv(
    server: &ServerInfo,
    name: &str,
    read_only: bool,
) -> Result<Vec<OsString>, ClientError> {
    let (bin, socket) = (server.bin.as_str(), server.socket.path.as_str());
    if bin.is_empty() || socket.is_empty() {
        return Err(ClientError::Protocol(format!(
            "no tmux binary or socket in {server:?}"
        )));
    }
    let mut argv: Vec<OsString> = vec![
        bin.into(),
        "-S".into(),
        socket.into(),
        "attach-session".into(),
    ];
    if read_only {
        argv.push("-r".into());
    }
    argv.extend(["-t".into(), format!("={name}").into()]);
    Ok(argv)
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
    use crate::api::model::ServerSocket;

    #[test]
    fn argv() {
        let server = ServerInfo {
            bin: "/usr/bin/tmux".into(),
            socket: ServerSocket {
                name: Some("work".into()),
                path: "/tmp/tmux-1000/work".into(),
            },
            version: None,
        };
        let argv = attach_argv(&server, "my build", true).unwrap();
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
        let nowhere = ServerInfo {
            bin: String::new(),
            ..server
        };
        assert!(attach_argv(&nowhere, "x", false).is_err());
    }
}
