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
