//! The event feed over SSE (resume across restarts), the screen stream,
//! stream limits and WebSocket auth.

use crate::common;

use std::io::{BufRead, BufReader};
use std::time::Duration;

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::{Value, json};
use tungstenite::Message;

/// Reads SSE events (seq, data) until `count` arrived.
fn read_sse(
    daemon: &Daemon,
    query: &str,
    last_event_id: Option<u64>,
    count: usize,
) -> Vec<(u64, Value)> {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let mut request = daemon.authorize(client.get(format!("{}/v1/events{query}", daemon.base)));
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id.to_string());
    }
    let response = request.send().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut events = Vec::new();
    let mut id = None;
    for line in BufReader::new(response).lines() {
        let line = line.expect("the feed stays open");
        if let Some(value) = line.strip_prefix("id:") {
            id = Some(value.trim().parse::<u64>().unwrap());
        } else if let Some(data) = line.strip_prefix("data:") {
            let event: Value = serde_json::from_str(data.trim()).unwrap();
            assert_eq!(
                Some(event["seq"].as_u64().unwrap()),
                id,
                "id: is the event's seq"
            );
            events.push((id.unwrap(), event));
            if events.len() == count {
                break;
            }
        }
    }
    events
}

#[test]
fn sse_resumes_from_last_event_id_without_gaps_after_a_restart() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    daemon.create(&json!({ "name": "one", "command": common::SHELL }));
    daemon.create(&json!({ "name": "two", "command": common::SHELL }));
    let first = read_sse(&daemon, "?since=0", None, 2);
    assert_eq!(
        first.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        vec![1, 2]
    );
    let last_seen = first[1].0;

    // More happens, the daemon restarts, more happens.
    daemon.create(&json!({ "name": "three", "command": common::SHELL }));
    tmux.run(&["kill-session", "-t", "=one"]);
    wait_for("one to end", || {
        daemon
            .sessions()
            .iter()
            .all(|s| s["tmux_name"] != "one")
            .then_some(())
    });
    daemon.terminate();
    let daemon = Daemon::start_with(&tmux, options());
    daemon.create(&json!({ "name": "four", "command": common::SHELL }));
    let (_, page) = daemon.get("/v1/events?format=json&since=0");
    let all: Vec<u64> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        all,
        (1..=all.len() as u64).collect::<Vec<_>>(),
        "seq rises by one across the restart"
    );
    assert_eq!(page["next_seq"].as_u64(), Some(all.len() as u64 + 1));

    let resumed = read_sse(&daemon, "", Some(last_seen), all.len() - last_seen as usize);
    let seqs: Vec<u64> = resumed.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(
        seqs,
        ((last_seen + 1)..=all.len() as u64).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    let kinds: Vec<&str> = resumed
        .iter()
        .map(|(_, e)| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"session_deleted") && kinds.contains(&"session_adopted"),
        "{kinds:?}"
    );

    // Live events follow the replay on the same connection.
    let from = daemon.get("/v1/events?format=json").1["next_seq"]
        .as_u64()
        .unwrap()
        - 1;
    let feed = std::thread::spawn({
        let base = daemon.base.clone();
        let token = daemon.token().unwrap().to_owned();
        move || {
            let response = reqwest::blocking::Client::new()
                .get(format!("{base}/v1/events?since={from}"))
                .bearer_auth(token)
                .send()
                .unwrap();
            common::sse_data(response)
                .find(|e| e["kind"] == "session_created")
                .unwrap()
        }
    });
    daemon.create(&json!({ "name": "live", "command": common::SHELL }));
    let live = feed.join().unwrap();
    assert_eq!(live["tmux_name"], "live");

    let (status, body) = daemon.get("/v1/events?since=abc");
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
}

#[test]
fn the_screen_stream_sends_the_screen_then_changed_rows() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let session = daemon.create(&json!({ "name": "viewer", "command": common::SHELL }));
    let id = session["session_id"].as_str().unwrap();
    daemon.wait_for_snapshot(id, "$");
    let path = format!("/v1/sessions/{id}/screen");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    let mut next = || loop {
        if let Message::Text(text) = socket.read().unwrap() {
            return serde_json::from_str::<Value>(&text).unwrap();
        }
    };
    let full = next();
    assert_eq!(full["type"], "screen");
    assert_eq!(
        (full["cols"].as_u64(), full["rows"].as_u64()),
        (Some(80), Some(24))
    );
    assert_eq!(full["lines"].as_array().unwrap().len(), 24);
    daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo shown-$((5*5))", "submit": true }),
    );
    let update = wait_for("a rows frame with the output", || {
        let frame = next();
        assert_eq!(frame["type"], "rows", "{frame}");
        let rows = frame["rows"].as_array().unwrap().clone();
        assert!(rows.len() < 24, "only changed rows: {frame}");
        rows.iter()
            .any(|r| r["line"].as_str().unwrap().contains("shown-25"))
            .then_some(frame)
    });
    assert!(update["cursor"]["row"].as_u64().is_some());
}

#[test]
fn stream_limits_close_with_a_reason() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[http]\nmax_streams_per_session = 1\n".into(),
            ..Default::default()
        },
    );
    let session = daemon.create(&json!({ "name": "busy", "command": common::SHELL }));
    let path = format!(
        "/v1/sessions/{}/stream",
        session["session_id"].as_str().unwrap()
    );
    let (mut first, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    assert!(
        matches!(first.read().unwrap(), Message::Text(_)),
        "the first stream is ready"
    );
    let (mut second, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    match second.read().unwrap() {
        Message::Close(Some(frame)) => {
            assert!(frame.reason.contains("too many open streams"), "{frame:?}")
        }
        other => panic!("expected a close, got {other:?}"),
    }
    let (status, body) = daemon.get("/v1/sessions/sess_999/stream");
    assert_eq!(status, 404, "{body}");
}

#[test]
fn with_a_token_websockets_authenticate_with_their_first_message() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            env: vec![("TMUXD_TOKEN".into(), "sekrit-1-0123456789abcdefghij".into())],
            ..Default::default()
        },
    );
    let client = reqwest::blocking::Client::new();
    let create = client
        .post(format!("{}/v1/sessions", daemon.base))
        .bearer_auth("sekrit-1-0123456789abcdefghij")
        .json(&json!({ "command": common::SHELL }))
        .send()
        .unwrap();
    assert_eq!(create.status(), 201);
    let id = create.json::<Value>().unwrap()["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        client
            .get(format!("{}/v1/sessions", daemon.base))
            .send()
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        client
            .get(format!(
                "{}/v1/sessions?token=sekrit-1-0123456789abcdefghij",
                daemon.base
            ))
            .send()
            .unwrap()
            .status(),
        401,
        "no token in URLs"
    );

    let url = daemon.base.replace("http://", "ws://") + &format!("/v1/sessions/{id}/stream");
    let (mut wrong, _) = tungstenite::connect(url.as_str()).unwrap();
    wrong
        .send(Message::Text(r#"{"type":"auth","token":"nope"}"#.into()))
        .unwrap();
    assert!(
        matches!(wrong.read().unwrap(), Message::Close(Some(f)) if f.reason.contains("authentication"))
    );
    let (mut right, _) = tungstenite::connect(url.as_str()).unwrap();
    right
        .send(Message::Text(
            r#"{"type":"auth","token":"sekrit-1-0123456789abcdefghij"}"#.into(),
        ))
        .unwrap();
    let ready = match right.read().unwrap() {
        Message::Text(text) => serde_json::from_str::<Value>(&text).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(ready["type"], "ready");
}

#[test]
fn the_cli_follows_events_and_watches_output() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let session = daemon.create(&json!({ "name": "watched", "command": common::SHELL }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    daemon.wait_for_snapshot(&id, "$");
    let spawn = |args: &[&str]| {
        daemon
            .client()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut events = spawn(&["events", "--since", "0", "--json"]);
    let first = BufReader::new(events.stdout.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let _ = events.kill();
    let _ = events.wait();
    assert_eq!(
        serde_json::from_str::<Value>(&first).unwrap()["kind"],
        "session_created"
    );

    let mut watch = spawn(&["watch", &id]);
    let stdout = watch.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut stdout = stdout;
        let mut buf = [0u8; 4096];
        while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains("watched-99") {
                break;
            }
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    wait_for("the watcher to subscribe", || {
        (daemon.get(&format!("/v1/sessions/{id}")).1["session"]["subscribers"] == 1).then_some(())
    });
    daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo watched-$((9*11))", "submit": true }),
    );
    let seen = reader.join().unwrap();
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(seen.contains("watched-99"), "{seen:?}");
}
