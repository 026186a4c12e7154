//! Live sessions: output streams with resume, slow subscribers, state
//! detection, wait, queued input and thoughts. Real tmux, the real daemon,
//! real WebSocket clients.

use crate::common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

fn connect(daemon: &Daemon, path: &str) -> (Socket, Value) {
    let (mut socket, _) =
        tungstenite::connect(daemon.ws_request(path)).expect("websocket connects");
    if let MaybeTlsStream::Plain(tcp) = socket.get_ref() {
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    }
    let ready = match socket.read().unwrap() {
        Message::Text(text) => serde_json::from_str(&text).unwrap(),
        other => panic!("expected the ready frame, got {other:?}"),
    };
    (socket, ready)
}

/// Reads binary frames until `stop` says so; returns (seq, bytes) pairs.
fn read_frames(
    socket: &mut Socket,
    mut stop: impl FnMut(&[(u64, Vec<u8>)]) -> bool,
) -> Vec<(u64, Vec<u8>)> {
    let mut frames = Vec::new();
    while !stop(&frames) {
        match socket.read().expect("stream stays open") {
            Message::Binary(data) => {
                let seq = u64::from_be_bytes(data[..8].try_into().unwrap());
                frames.push((seq, data[8..].to_vec()));
            }
            Message::Text(_) | Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    frames
}

fn joined(frames: &[(u64, Vec<u8>)]) -> String {
    String::from_utf8_lossy(
        &frames
            .iter()
            .flat_map(|(_, b)| b.clone())
            .collect::<Vec<u8>>(),
    )
    .into_owned()
}

fn shell(daemon: &Daemon, name: &str) -> String {
    let session = daemon.create(&json!({ "name": name, "command": common::SHELL }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    wait_state(daemon, &id, "idle", 10_000);
    id
}

fn wait_state(daemon: &Daemon, id: &str, until: &str, timeout_ms: u64) -> Value {
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/wait"),
        &json!({ "until": until, "timeout_ms": timeout_ms }),
    );
    assert_eq!(status, 200, "wait until {until}: {body}");
    body["session"].clone()
}

#[test]
fn a_resumed_stream_gets_exactly_the_missed_bytes() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = shell(&daemon, "resume");
    daemon.type_line(&id, "echo start-$((0+1))");
    daemon.wait_for_snapshot(&id, "start-1");
    let (mut steady, _) = connect(&daemon, &format!("/v1/sessions/{id}/stream?since=0"));
    let (mut leaving, ready) = connect(&daemon, &format!("/v1/sessions/{id}/stream"));
    assert!(ready["latest_seq"].as_u64().unwrap() > 0);

    daemon.type_line(&id, "echo part-$((1+1))");
    let before = read_frames(&mut leaving, |f| joined(f).contains("part-2"));
    let last_seen = before.last().unwrap().0;
    drop(leaving);
    for i in 0..5 {
        daemon.type_line(&id, &format!("echo missed-{i}-$((i*0))"));
    }
    daemon.wait_for_snapshot(&id, "missed-4-0");
    let (mut back, ready) = connect(
        &daemon,
        &format!("/v1/sessions/{id}/stream?since={last_seen}"),
    );
    assert_eq!(ready["replay_from"].as_u64(), Some(last_seen + 1));
    let latest = ready["latest_seq"].as_u64().unwrap();
    let resumed = read_frames(&mut back, |f| {
        f.last().is_some_and(|(seq, _)| *seq >= latest)
    });
    let steady_frames = read_frames(&mut steady, |f| {
        f.last().is_some_and(|(seq, _)| *seq >= latest)
    });

    let seqs: Vec<u64> = resumed.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        seqs,
        ((last_seen + 1)..=latest).collect::<Vec<_>>(),
        "in order, no gaps, no duplicates"
    );
    let expected: Vec<&(u64, Vec<u8>)> = steady_frames
        .iter()
        .filter(|(s, _)| *s > last_seen && *s <= latest)
        .collect();
    assert_eq!(
        resumed.iter().collect::<Vec<_>>(),
        expected,
        "exactly the bytes a steady subscriber saw"
    );
    assert!(joined(&resumed).contains("missed-4-0"));
}

/// A client that reads the ready frame and then nothing, over a socket
/// with a tiny receive buffer so the daemon's sends really stall.
fn stalled_client(daemon: &Daemon, path: &str) -> Socket {
    let address: std::net::SocketAddr = daemon.base.trim_start_matches("http://").parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    socket.connect(&address.into()).unwrap();
    let tcp: TcpStream = socket.into();
    let (mut ws, _) = tungstenite::client(daemon.ws_request(path), MaybeTlsStream::Plain(tcp))
        .expect("handshake");
    ws.read().expect("ready frame");
    ws
}

#[test]
fn a_stalled_subscriber_is_dropped_while_others_keep_up() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let session = daemon
        .create(&json!({ "name": "flood", "command": common::SHELL, "cols": 250, "rows": 80 }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    wait_state(&daemon, &id, "idle", 10_000);
    let _stalled = stalled_client(&daemon, &format!("/v1/sessions/{id}/stream"));
    let (mut fast, _) = connect(&daemon, &format!("/v1/sessions/{id}/stream"));
    wait_for("two subscribers", || {
        (daemon.summary(&id)["subscribers"] == 2).then_some(())
    });

    // 3 MB of text through the session (less than a subscriber's queue, so
    // a reader that keeps reading is never dropped however the machine is
    // loaded); the stalled client never reads and is dropped.
    daemon.type_line(
        &id,
        "head -c 2250000 /dev/urandom | base64 -w 100; echo flood-$((40+2))",
    );
    let started = Instant::now();
    let mut tail = Vec::new();
    let mut received = 0usize;
    while !String::from_utf8_lossy(&tail).contains("flood-42") {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the fast subscriber fell behind"
        );
        match fast.read().expect("fast subscriber stays connected") {
            Message::Binary(data) => {
                received += data.len() - 8;
                tail.extend_from_slice(&data[8..]);
                let keep = tail.len().saturating_sub(4096);
                tail.drain(..keep);
            }
            Message::Close(frame) => panic!("the fast subscriber was closed: {frame:?}"),
            _ => {}
        }
    }
    // Every byte the program wrote: 3,000,000 of base64 and a CR LF per
    // 100 of them (the pane's terminal turns each LF into CR LF).
    assert!(
        received >= 3_060_000,
        "the fast subscriber got the whole flood ({received} bytes)"
    );
    let summary = wait_for("the stalled subscriber to be dropped", || {
        let summary = daemon.summary(&id);
        (summary["subscribers"] == 1).then_some(summary)
    });
    assert_eq!(summary["transport"], "attached");
    daemon.wait_for_snapshot(&id, "flood-42");
    daemon.type_line(&id, "echo after-$((2*2))");
    daemon.wait_for_snapshot(&id, "after-4");
}

#[test]
fn a_bell_raises_attention_and_idle_follows_the_prompt_quickly() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = shell(&daemon, "states");

    daemon.type_line(&id, "sleep 2; printf '\\a'");
    let working = wait_state(&daemon, &id, "working", 5_000);
    assert_eq!(working["state"], "working");
    let attention = wait_state(&daemon, &id, "attention", 10_000);
    assert_eq!(attention["attention"]["reason"], "bell");
    let is_state = |e: &Value| e["kind"] == "session_state" && e["session_id"] == id.as_str();
    let events = daemon.events_once("the bell's state event", |events| {
        events
            .iter()
            .any(|e| is_state(e) && e["attention"]["reason"] == "bell")
    });
    let states: Vec<(String, String)> = events
        .iter()
        .filter(|e| is_state(e))
        .map(|e| {
            (
                e["state"].as_str().unwrap().to_owned(),
                e["attention"]["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert!(
        states.iter().any(|(_, attention)| attention == "bell"),
        "{states:?}"
    );

    // Input clears attention; then the prompt coming back means idle, fast.
    daemon.type_line(&id, "sleep 1; date +%s%3N");
    wait_state(&daemon, &id, "working", 5_000);
    let idle = wait_state(&daemon, &id, "idle", 10_000);
    let returned_at = chrono::Utc::now().timestamp_millis();
    let lines = daemon.snapshot_lines(&id);
    let finished_at: i64 = lines
        .iter()
        .rev()
        .find_map(|l| l.trim().parse().ok())
        .expect("the date line");
    let lag = returned_at - finished_at;
    assert!(
        lag < 1000,
        "wait returned {lag} ms after the command finished"
    );
    assert_eq!(idle["state_reason"], "shell_prompt");
}

#[test]
fn the_wait_command_line_blocks_until_the_state() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = shell(&daemon, "cli-wait");
    daemon.type_line(&id, "sleep 1");
    wait_state(&daemon, &id, "working", 5_000);
    let out = daemon
        .client()
        .args(["wait", &id, "--until", "idle", "--timeout", "30s"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("idle"));
    daemon.type_line(&id, "sleep 5");
    wait_state(&daemon, &id, "working", 5_000);
    let out = daemon
        .client()
        .args(["wait", &id, "--until", "idle", "--timeout", "300ms"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "a timed-out wait has its own status"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("timed out"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn queued_input_waits_for_idle_and_survives_a_restart() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let id = shell(&daemon, "queue");

    daemon.type_line(&id, "sleep 3; echo first-$((0+1))");
    wait_state(&daemon, &id, "working", 5_000);
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo second-$((1+1))", "submit": true, "when": "idle" }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({ "delivered": false, "queued": true }));
    assert_eq!(daemon.summary(&id)["queued_inputs"], 1);
    let registry = std::fs::read_to_string(data.path().join("registry.json")).unwrap();
    assert!(
        registry.contains("echo second-$((1+1))"),
        "queued input is persisted"
    );

    let lines = daemon.wait_for_snapshot(&id, "second-2");
    let position = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} in {lines:?}"))
    };
    assert!(
        position("first-1") < position("echo second"),
        "typed only after the sleep ended: {lines:?}"
    );
    assert_eq!(daemon.summary(&id)["queued_inputs"], 0);

    // Queued while busy, across a restart.
    daemon.type_line(&id, "sleep 4; echo third-$((1+2))");
    wait_state(&daemon, &id, "working", 5_000);
    daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo fourth-$((2+2))", "submit": true, "when": "idle" }),
    );
    let (status, _) = daemon.terminate();
    assert!(status.success());
    let daemon = Daemon::start_with(&tmux, options());
    assert_eq!(daemon.summary(&id)["queued_inputs"], 1);
    let lines = daemon.wait_for_snapshot(&id, "fourth-4");
    assert!(
        lines.iter().position(|l| l.contains("third-3"))
            < lines.iter().position(|l| l.contains("echo fourth"))
    );

    // Left in the queue when the session ends: dropped, with an event.
    daemon.type_line(&id, "sleep 30");
    wait_state(&daemon, &id, "working", 5_000);
    daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "never", "when": "idle" }),
    );
    tmux.run(&["kill-session", "-t", "=queue"]);
    let dropped = wait_for("input_dropped", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["kind"] == "input_dropped")
    });
    assert_eq!(dropped["session_id"], id.as_str());
    assert_eq!(dropped["text_prefix"], "never");
    assert_eq!(dropped["text_bytes"], 5);
}

#[test]
fn thoughts_are_merged_persisted_and_never_go_back_in_time() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let id = shell(&daemon, "thinker");
    let put = |daemon: &Daemon, body: Value| {
        daemon.request(
            reqwest::Method::PUT,
            &format!("/v1/sessions/{id}/thought"),
            Some(&body),
        )
    };

    let (status, body) = put(
        &daemon,
        json!({ "text": "planning", "state": "thinking", "tokens_in": 10, "updated_at": "2026-01-01T00:00:02Z" }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["applied"], true);
    let (_, body) = put(
        &daemon,
        json!({ "text": "stale", "updated_at": "2026-01-01T00:00:01Z" }),
    );
    assert_eq!(body["applied"], false);
    assert_eq!(body["thought"]["text"], "planning");
    let summary = daemon.summary(&id);
    assert_eq!(summary["thought"]["text"], "planning");
    assert_eq!(summary["thought"]["tokens_in"], 10);
    assert!(
        daemon
            .events()
            .iter()
            .any(|e| e["kind"] == "thought_update" && e["thought"]["text"] == "planning")
    );

    daemon.terminate();
    let daemon = Daemon::start_with(&tmux, options());
    assert_eq!(daemon.summary(&id)["thought"]["state"], "thinking");
}

#[test]
fn bad_live_input_gets_clear_errors_and_changes_nothing() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = shell(&daemon, "strict");
    let cases = [
        (
            json!({ "until": "sleepy", "timeout_ms": 10 }),
            400,
            "bad_request",
        ),
        (
            json!({ "until": "idle", "timeout_ms": -5 }),
            400,
            "bad_request",
        ),
        (
            json!({ "until": "idle", "timeout_ms": 99_999_999_999u64 }),
            400,
            "bad_request",
        ),
        (json!({ "timeout_ms": 10 }), 400, "bad_request"),
    ];
    for (body, status, code) in cases {
        let (got, answer) = daemon.post(&format!("/v1/sessions/{id}/wait"), &body);
        assert_eq!(
            (got.as_u16(), answer["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}: {answer}"
        );
    }
    daemon.type_line(&id, "sleep 5");
    wait_state(&daemon, &id, "working", 5_000);
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/wait"),
        &json!({ "until": "idle", "timeout_ms": 100 }),
    );
    assert_eq!(
        (status.as_u16(), body["error"]["code"].as_str()),
        (408, Some("timeout"))
    );

    let huge = "x".repeat(20_000);
    let (status, body) = daemon.request(
        reqwest::Method::PUT,
        &format!("/v1/sessions/{id}/thought"),
        Some(&json!({ "text": huge })),
    );
    assert_eq!(status, 400, "{body}");
    let (status, _) = daemon.request(
        reqwest::Method::PUT,
        &format!("/v1/sessions/{id}/thought"),
        Some(&json!({ "txt": "typo" })),
    );
    assert_eq!(status, 400);
    assert!(daemon.summary(&id)["thought"].is_null(), "nothing stored");
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "keys": ["Enter"], "when": "idle" }),
    );
    assert_eq!(status, 400, "{body}");

    // Bad JSON on the socket: an error frame, and the stream stays usable.
    let (mut socket, _) = connect(&daemon, &format!("/v1/sessions/{id}/stream"));
    for bad in [
        "{nope",
        r#"{"type":"launch"}"#,
        r#"{"type":"resize","cols":0,"rows":5}"#,
    ] {
        socket.send(Message::Text(bad.into())).unwrap();
        let reply = loop {
            if let Message::Text(text) = socket.read().unwrap() {
                break serde_json::from_str::<Value>(&text).unwrap();
            }
        };
        assert_eq!(reply["type"], "error", "{bad}: {reply}");
    }
    socket
        .send(Message::Text(r#"{"type":"ping"}"#.into()))
        .unwrap();
    let pong = loop {
        if let Message::Text(text) = socket.read().unwrap() {
            break serde_json::from_str::<Value>(&text).unwrap();
        }
    };
    assert_eq!(pong["type"], "pong");
    assert_eq!(
        tmux.size("strict"),
        (80, 24),
        "the bad resize changed nothing"
    );
}

/// The list serves what each actor published last, asking none: what runs
/// in the foreground still follows a program started and interrupted, and
/// the state with it, with nothing but lists asked meanwhile.
#[test]
fn the_list_follows_what_runs_without_asking_the_actors() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = shell(&daemon, "listed");
    let listed = |command: &str, state: &str| {
        wait_for(&format!("listed running {command}, {state}"), || {
            let (_, list) = daemon.get("/v1/sessions");
            let session = list["sessions"]
                .as_array()?
                .iter()
                .find(|s| s["session_id"] == id.as_str())?
                .clone();
            (session["current_command"] == command && session["state"] == state).then_some(session)
        })
    };
    listed("bash", "idle");
    daemon.type_line(&id, "sleep 30");
    let sleeping = listed("sleep", "working");
    assert_eq!(
        sleeping["command_line"],
        json!(["sleep", "30"]),
        "{sleeping}"
    );
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "keys": ["C-c"] }),
    );
    assert_eq!(status, 200, "{body}");
    listed("bash", "idle");
}

/// A daemon started over 100 sessions, and one of them still listed
/// `starting` (adopted at startup, its client not attached yet): enough
/// sessions that the daemon's paced attaches leave some `starting` for a
/// moment after it answers.
fn daemon_with_a_session_starting(tmux: &TmuxServer) -> (Daemon, String) {
    for n in 0..100 {
        tmux.new_shell(&format!("early{n}"));
    }
    let daemon = Daemon::start(tmux);
    let (_, list) = daemon.get("/v1/sessions");
    let starting: Vec<String> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "starting")
        .map(|s| s["session_id"].as_str().unwrap().to_owned())
        .collect();
    let id = starting
        .last()
        .unwrap_or_else(|| panic!("no session was still starting to type into: {list}"))
        .clone();
    (daemon, id)
}

/// Input to a session still listed `starting` waits for the attach and is
/// typed, as every other request to it waits; it used to answer 404.
#[test]
fn input_to_a_session_still_starting_waits_for_it_and_is_typed() {
    let tmux = TmuxServer::new();
    let (daemon, id) = daemon_with_a_session_starting(&tmux);
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo typed-$((20+22))", "submit": true }),
    );
    assert_eq!(status, 200, "{body}");
    daemon.wait_for_snapshot(&id, "typed-42");
}

/// Input queued for a session still listed `starting` waits for the
/// attach too, then is queued and typed once the shell is at its prompt.
#[test]
fn input_queued_for_a_session_still_starting_is_queued_and_typed() {
    let tmux = TmuxServer::new();
    let (daemon, id) = daemon_with_a_session_starting(&tmux);
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo queued-$((40+2))", "submit": true, "when": "idle" }),
    );
    assert_eq!(status, 200, "{body}");
    daemon.wait_for_snapshot(&id, "queued-42");
}
