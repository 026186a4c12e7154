//! Creating, driving and reading sessions end to end: real tmux on a
//! private socket, the real daemon over HTTP.

use crate::common;

use common::{Daemon, SHELL, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::json;

#[test]
fn create_list_type_and_snapshot_matches_tmux() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let session = daemon.create(&json!({ "name": "work", "command": SHELL }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    assert_eq!(session["tmux_name"], "work");
    assert_eq!(
        (session["cols"].as_u64(), session["rows"].as_u64()),
        (Some(80), Some(24))
    );
    assert_eq!(daemon.session_ids(), vec![id.clone()]);

    daemon.wait_for_snapshot(&id, "$");
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo tok-$((6*7))", "submit": true }),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({ "delivered": true, "queued": false }));

    let lines = daemon.wait_for_snapshot(&id, "tok-42");
    tmux.wait_for_text("work", "tok-42");
    // Once output has settled, the snapshot equals tmux's own view of the pane.
    let settled = wait_for("snapshot to equal capture-pane", || {
        let ours = daemon.snapshot_lines(&id);
        (ours == tmux.capture("work")).then_some(ours)
    });
    assert!(settled.iter().any(|l| l == "tok-42"), "{lines:?}");

    let (status, snap) = daemon.get(&format!("/v1/sessions/{id}/snapshot"));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(snap["session_id"], id.as_str());
    assert_eq!(snap["rows"], 24);
    assert_eq!(
        snap["lines"].as_array().unwrap().len(),
        24,
        "status line is not part of the snapshot"
    );
    assert!(snap["seq"].as_u64().unwrap() > 0);
    assert_eq!(snap["cursor"]["visible"], true);
}

/// Without `cwd`, tmux would start a session wherever tmuxd itself runs
/// (`new-session` without `-c` takes the forking client's directory: here
/// the test's, the checkout). The default is the daemon's HOME instead,
/// said by `GET /v1/server`, for a shell and for a command alike.
#[test]
fn a_session_without_cwd_starts_in_the_default_the_server_names() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let home = daemon.home().to_str().unwrap().to_owned();
    let (status, server) = daemon.get("/v1/server");
    assert_eq!(status, StatusCode::OK, "{server}");
    assert_eq!(server["default_cwd"], home.as_str(), "{server}");
    let home = std::fs::canonicalize(&home).unwrap();
    let here = std::env::current_dir().unwrap();
    assert_ne!(home, here, "the daemon runs elsewhere than its HOME");

    let shell = daemon.create(&json!({ "name": "shell", "command": SHELL }));
    let id = shell["session_id"].as_str().unwrap();
    wait_for("the shell's cwd to be known", || {
        let (_, body) = daemon.get(&format!("/v1/sessions/{id}"));
        let cwd = body["session"]["cwd"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (!cwd.is_empty()).then_some(())
    });
    let (_, body) = daemon.get(&format!("/v1/sessions/{id}"));
    assert_eq!(body["session"]["cwd"], home.to_str().unwrap(), "{body}");

    let printed = daemon.create(&json!({ "name": "pwd", "command": "pwd -P; exec sleep 600" }));
    let id = printed["session_id"].as_str().unwrap();
    daemon.wait_for_snapshot(id, home.to_str().unwrap());
}
