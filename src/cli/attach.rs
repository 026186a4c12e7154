//! `tmuxd attach SESSION`: replaces this process with `tmux attach` on the
//! daemon's own tmux server (binary and socket asked of the daemon), so a
//! person lands in the session in one command, from inside tmux too.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use serde_json::Value;

use super::args::AttachArgs;
use super::client::{Client, ClientError, encode};
use super::output::text;
use super::resolve::session_id;

pub async fn attach(client: &Client, args: AttachArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let session = client.get(&format!("/v1/sessions/{}", encode(&id))).await?;
    let name = text(&session["session"]["tmux_name"]).to_owned();
    let server = client.get("/v1/server").await?;
    let argv = attach_argv(&server, &name, args.read_only)?;
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
fn attach_argv(server: &Value, name: &str, read_only: bool) -> Result<Vec<OsString>, ClientError> {
    let bin = server["bin"].as_str().filter(|b| !b.is_empty());
    let socket = server["socket"]["path"].as_str().filter(|p| !p.is_empty());
    let (Some(bin), Some(socket)) = (bin, socket) else {
        return Err(ClientError::Protocol(format!(
            "no tmux binary or socket in {server}"
        )));
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv() {
        let server = serde_json::json!({
            "bin": "/usr/bin/tmux",
            "socket": {"name": "work", "path": "/tmp/tmux-1000/work"},
        });
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
        assert!(attach_argv(&serde_json::json!({}), "x", false).is_err());
    }
}
