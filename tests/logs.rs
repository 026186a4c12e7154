//! Secrets never reach the log: the daemon at trace level, with a token
//! sent by bearer header and by a WebSocket's first message, logs neither.

use crate::common;
use crate::wire;

use common::{Daemon, DaemonOptions, TmuxServer, owner_and_mode, wait_for};
use serde_json::json;
use wire::{next_json, send_json, ws_request};

const RW: &str = "rw-secret-1f2e3d-0123456789";
const RO: &str = "ro-secret-9a8b7c-0123456789";

/// `s` as the hex a frame dump would show it.
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn tokens_never_reach_the_log_even_at_trace_level() {
    let tmux = TmuxServer::new();
    let mut daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            env: vec![
                ("TMUXD_TOKEN".into(), RW.into()),
                ("TMUXD_READ_TOKEN".into(), RO.into()),
                ("TMUXD_LOG".into(), "trace,tungstenite=trace".into()),
            ],
            ..Default::default()
        },
    );
    let body = json!({ "command": common::SHELL });
    let bearer = format!("Bearer {RW}");
    let headers = [("Authorization", bearer.as_str())];
    let (status, created) =
        wire::exchange(&daemon.base, "POST", "/v1/sessions", &headers, Some(&body));
    assert_eq!(status, 201, "{created}");
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    let id = created["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let read_bearer = format!("Bearer {RO}");
    let (status, _) = wire::exchange(
        &daemon.base,
        "GET",
        "/v1/sessions",
        &[("Authorization", read_bearer.as_str())],
        None,
    );
    assert_eq!(status, 200);
    for path in ["stream", "screen"] {
        let path = format!("/v1/sessions/{id}/{path}");
        let (mut socket, _) = tungstenite::connect(ws_request(&daemon.base, &path, None)).unwrap();
        let auth = json!({ "type": "auth", "token": RW });
        send_json(&mut socket, &auth);
        next_json(&mut socket);
        let (mut socket, _) =
            tungstenite::connect(ws_request(&daemon.base, &path, Some(RO))).unwrap();
        next_json(&mut socket);
    }
    let (mut socket, _) = tungstenite::connect(ws_request(
        &daemon.base,
        &format!("/v1/sessions/{id}/stream"),
        None,
    ))
    .unwrap();
    let auth = json!({ "type": "auth", "token": RO });
    send_json(&mut socket, &auth);
    next_json(&mut socket);
    drop(socket);
    daemon.terminate();
    let log = daemon.log();
    assert!(log.contains("TRACE"), "the log is at trace level:\n{log}");
    for token in [RW, RO] {
        for form in [token.to_owned(), hex(token)] {
            assert!(!log.contains(&form), "{form} in the log:\n{log}");
        }
    }
}

/// `log_file` is not opened through a symbolic link (one planted in a
/// sticky dir would have tmuxd append to its target), nor when it belongs
/// to another user: exit 78 naming `log_file`, the target untouched.
#[test]
fn a_log_file_link_or_a_log_file_of_another_user_is_refused() {
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "the victim's own line\n").unwrap();
    let link = dir.path().join("tmuxd.log");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let (status, said) =
        common::serve_refused(&tmux, &data, "", &["--log-file", link.to_str().unwrap()]);
    assert_eq!(status.code(), Some(78), "{said}");
    assert!(said.contains("`log_file`"), "{said}");
    assert!(said.contains("is a symbolic link"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's own line\n"
    );

    // SAFETY: geteuid(2) cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: a file of another user cannot be made here");
        return;
    }
    let nobody = 65534;
    std::os::unix::fs::chown(&victim, Some(nobody), Some(nobody)).unwrap();
    let before = owner_and_mode(&victim);
    let (status, said) =
        common::serve_refused(&tmux, &data, "", &["--log-file", victim.to_str().unwrap()]);
    assert_eq!(status.code(), Some(78), "{said}");
    assert!(said.contains("`log_file`"), "{said}");
    assert!(said.contains("belongs to uid 65534"), "{said}");
    assert_eq!(owner_and_mode(&victim), before);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's own line\n"
    );
}

/// An existing log file that others could read is tightened to 0600 (and
/// says so), its earlier lines kept; a new one is created 0600.
#[test]
fn an_existing_log_file_is_made_private_and_a_new_one_created_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.log");
    std::fs::write(&old, "an earlier run's line\n").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    let fresh = dir.path().join("logs/fresh.log");
    for (path, earlier) in [(&old, "an earlier run's line\n"), (&fresh, "")] {
        let _daemon = Daemon::start_with(
            &tmux,
            DaemonOptions {
                extra_config: format!("log_file = {:?}\n", path.to_str().unwrap()),
                ..Default::default()
            },
        );
        let log = wait_for("the daemon's first lines in its log file", || {
            let log = std::fs::read_to_string(path).ok()?;
            log.contains("tmuxd serving").then_some(log)
        });
        assert_eq!(owner_and_mode(path).1, 0o600, "{}", path.display());
        assert!(log.starts_with(earlier), "{log}");
        let warned = log.contains("restricted it to 0600");
        assert_eq!(warned, !earlier.is_empty(), "{log}");
    }
}
