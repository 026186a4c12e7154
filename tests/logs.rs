//! Secrets never reach the log: the daemon at trace level, with a token
//! sent by bearer header and by a WebSocket's first message, logs neither.

mod common;
mod wire;

use common::{Daemon, DaemonOptions, TmuxServer};
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
    let (status, _) = wire::exchange(
        &daemon.base,
        "GET",
        "/v1/sessions",
        &[("Authorization", "Bearer ro-secret-9a8b7c")],
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
