//! Regression tests for holes found when tmuxd was attacked from outside
//! (the trust issue): secrets in sessions, input through tmux's key table,
//! names tmux expands, input sizes, races with a session's end, queued
//! input across a crash, and capacity under churn.

use crate::common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use serde_json::{Value, json};
use tungstenite::Message;

fn session_id(session: &Value) -> String {
    session["session_id"].as_str().unwrap().to_owned()
}

/// The tmux server tmuxd starts must not inherit its tokens.
#[test]
fn tokens_never_reach_the_tmux_server_or_its_sessions() {
    let tmux = TmuxServer::new();
    let token = "rw-secret-0123456789-abcdef";
    let read_token = "ro-secret-9876543210-abcdef";
    let options = DaemonOptions {
        env: vec![
            ("TMUXD_TOKEN".into(), token.into()),
            ("TMUXD_READ_TOKEN".into(), read_token.into()),
        ],
        ..Default::default()
    };
    let daemon = Daemon::start_with(&tmux, options);
    let http = reqwest::blocking::Client::new();
    // No server runs yet: this create starts it, from tmuxd's environment.
    let response = http
        .post(format!("{}/v1/sessions", daemon.base))
        .bearer_auth(token)
        .json(&json!({ "name": "leak", "command": common::SHELL }))
        .send()
        .unwrap();
    assert_eq!(response.status(), 201);
    let global = tmux.run(&["show-environment", "-g"]);
    assert!(!global.contains("TMUXD_"), "server environment: {global}");
    let pid = tmux.run(&["display-message", "-p", "-t", "=leak:", "#{pane_pid}"]);
    let environ = std::fs::read(format!("/proc/{}/environ", pid.trim())).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        !environ.contains(token) && !environ.contains(read_token),
        "pane environment: {environ}"
    );
    // Only the daemon's socket, for `tmuxd hooks send` (issue 32).
    let ours: Vec<&str> = environ
        .split('\0')
        .filter(|v| v.starts_with("TMUXD_"))
        .collect();
    let socket = daemon.data_dir.join("tmuxd.sock");
    assert_eq!(
        ours,
        [format!("TMUXD_SOCKET={}", socket.display())],
        "pane environment: {environ}"
    );
}

/// Sends raw bytes on the stream WebSocket (binary frames).
fn stream_send(daemon: &Daemon, id: &str, frames: &[&[u8]]) -> Vec<Value> {
    let path = format!("/v1/sessions/{id}/stream");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    let ready = socket.read().unwrap();
    assert!(
        matches!(ready, Message::Text(ref t) if t.contains("ready")),
        "{ready:?}"
    );
    for frame in frames {
        socket.send(Message::Binary(frame.to_vec().into())).unwrap();
    }
    // A ping answered means every earlier frame was handled.
    socket
        .send(Message::Text(r#"{"type":"ping"}"#.into()))
        .unwrap();
    let mut replies = Vec::new();
    loop {
        if let Message::Text(text) = socket.read().unwrap() {
            let reply: Value = serde_json::from_str(&text).unwrap();
            if reply["type"] == "pong" {
                return replies;
            }
            replies.push(reply);
        }
    }
}

/// Stream input reaches the program, never tmux's prefix key.
#[test]
fn raw_stream_input_never_meets_tmux_key_bindings() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let target = daemon.create(&json!({ "name": "target", "command": common::SHELL }));
    let typed_into = daemon.create(&json!({ "name": "typed", "command": "cat -v" }));
    let id = session_id(&typed_into);
    let replies = stream_send(
        &daemon,
        &id,
        &[
            b"\x02d",
            b"\x02:kill-session -t =target\r",
            b"end-of-test\r",
        ],
    );
    assert!(replies.is_empty(), "{replies:?}");
    let lines = daemon.wait_for_snapshot(&id, "end-of-test");
    let text = lines.join("\n");
    assert!(text.contains("^Bd"), "C-b d reached cat as bytes: {text}");
    assert!(
        text.contains("^B:kill-session -t =target"),
        "the command reached cat as text: {text}"
    );
    assert!(tmux.has_session("target"), "no binding ran");
    let (status, session) = daemon.get(&format!("/v1/sessions/{id}"));
    assert_eq!(status, 200, "tmuxd's client was not detached: {session}");
    assert_eq!(session["session"]["transport"], "attached");
    let (status, _) = daemon.get(&format!("/v1/sessions/{}", session_id(&target)));
    assert_eq!(status, 200);
}

/// `#` would be expanded by tmux (`#(cmd)` runs a command).
#[test]
fn names_tmux_would_expand_are_refused_and_never_adopted() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let cwd = tempfile::tempdir().unwrap();
    for name in ["job#(touch pwned)x", "a#Hb", "a##b", "#S"] {
        let (status, body) = daemon.post(
            "/v1/sessions",
            &json!({ "name": name, "cwd": cwd.path(), "command": common::SHELL }),
        );
        assert_eq!(status, 400, "{name}: {body}");
        assert_eq!(body["error"]["code"], "invalid_name", "{name}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains('#'));
        let (status, body) = daemon.post("/v1/sessions/adopt", &json!({ "tmux_name": name }));
        assert_eq!(status, 400, "adopt {name}: {body}");
    }
    assert!(!cwd.path().join("pwned").exists(), "tmux ran no command");
    // A session whose real name holds `#` (tmux turns `a##b` into `a#b`),
    // made outside tmuxd: discovery leaves it alone.
    tmux.new_session("odd##name", (80, 24), common::SHELL);
    assert!(tmux.has_session("odd#name"));
    tmux.new_shell("plain");
    wait_for("plain adopted", || {
        daemon
            .sessions()
            .iter()
            .any(|s| s["tmux_name"] == "plain")
            .then_some(())
    });
    let names: Vec<Value> = daemon
        .sessions()
        .iter()
        .map(|s| s["tmux_name"].clone())
        .collect();
    assert_eq!(names, [json!("plain")], "only plain is adopted");
    assert!(!daemon.log().contains("session_deleted"));
    assert!(
        daemon
            .events()
            .iter()
            .all(|e| e["kind"] != "session_deleted"),
        "no false end was recorded"
    );
}

/// A session whose program stores exactly `size` bytes it reads, raw.
fn sink_session(tmux: &TmuxServer, daemon: &Daemon, dir: &std::path::Path, size: usize) -> String {
    let command = format!(
        "sh -c 'stty raw -echo; head -c {size} > {out}; echo stored; exec sleep 600'",
        out = dir.join("out").display()
    );
    let session = daemon.create(&json!({ "command": command }));
    let id = session_id(&session);
    let target = format!("={}:", session["tmux_name"].as_str().unwrap());
    let tty = tmux.run(&["display-message", "-p", "-t", &target, "#{pane_tty}"]);
    wait_for("the sink's terminal to be raw", || {
        let out = std::process::Command::new("stty")
            .args(["-F", tty.trim(), "-a"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .contains("-icanon")
            .then_some(())
    });
    id
}

/// Text over every limit tmux has: ~1 MiB in pieces, in order, exactly.
fn big_text(size: usize) -> String {
    let line = "0123456789abcdefghijklmnopqrstuvwxyz; é\u{4e2d} ";
    let mut text = String::with_capacity(size + line.len());
    let mut n = 0;
    while text.len() < size {
        text.push_str(&format!("{n:06} {line}"));
        n += 1;
    }
    while text.len() > size {
        text.pop();
    }
    text
}

/// Any size up to the limit is delivered in order; larger is
/// refused with 413 before anything is typed; other requests go on.
#[test]
fn large_input_is_delivered_whole_or_refused_whole() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let dir = tempfile::tempdir().unwrap();
    let limit = 1024 * 1024;
    let text = big_text(limit);
    let id = sink_session(&tmux, &daemon, dir.path(), text.len());

    let too_big = big_text(limit + 1);
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": too_big }),
    );
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "payload_too_large");
    let replies = stream_send(&daemon, &id, &[too_big.as_bytes()]);
    assert!(
        replies.len() == 1 && replies[0]["message"].as_str().unwrap().contains("at most"),
        "{replies:?}"
    );
    let (status, body) = daemon.post(
        "/v1/sessions",
        &json!({ "command": common::SHELL, "initial_input": too_big }),
    );
    assert_eq!(status, 413, "{body}");
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": too_big, "when": "idle" }),
    );
    assert_eq!(status, 413, "{body}");
    assert_eq!(daemon.sessions().len(), 1, "nothing was created");
    assert_eq!(std::fs::metadata(dir.path().join("out")).unwrap().len(), 0);

    let started = Instant::now();
    let paste = std::thread::scope(|scope| {
        let paste = scope.spawn(|| {
            daemon.post(
                &format!("/v1/sessions/{id}/input"),
                &json!({ "text": text }),
            )
        });
        // Snapshots are served while the paste is typed.
        let mut slowest = Duration::ZERO;
        while !paste.is_finished() {
            let asked = Instant::now();
            daemon.snapshot_lines(&id);
            slowest = slowest.max(asked.elapsed());
        }
        assert!(
            slowest < Duration::from_secs(5),
            "a snapshot took {slowest:?}"
        );
        paste.join().unwrap()
    });
    assert_eq!(paste.0, 200, "{}", paste.1);
    eprintln!("typed {} bytes in {:?}", text.len(), started.elapsed());
    daemon.wait_for_snapshot(&id, "stored");
    let stored = std::fs::read_to_string(dir.path().join("out")).unwrap();
    assert!(
        stored == text,
        "the pane read exactly what was sent, in order"
    );
}

/// Input and resize racing a session's end answer 404, never
/// 502; once the ended session is kept, 409 `session_ended`.
#[test]
fn requests_racing_a_sessions_end_answer_not_found() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    for _ in 0..3 {
        let session = daemon.create(&json!({ "command": "sleep 0.5" }));
        let id = session_id(&session);
        let deadline = Instant::now() + PATIENCE;
        loop {
            let (input, body) =
                daemon.post(&format!("/v1/sessions/{id}/input"), &json!({ "text": "x" }));
            assert!(
                [200, 404, 409].contains(&input.as_u16()),
                "input: {input} {body}"
            );
            let (resize, body) = daemon.post(
                &format!("/v1/sessions/{id}/resize"),
                &json!({ "cols": 81, "rows": 25 }),
            );
            assert!(
                [200, 404, 409].contains(&resize.as_u16()),
                "resize: {resize} {body}"
            );
            if input == 409 && resize == 409 {
                assert_eq!(body["error"]["code"], "session_ended", "{body}");
                break;
            }
            assert!(Instant::now() < deadline, "the session never ended");
        }
    }
}

/// A window's cells are capped (memory per screen).
#[test]
fn huge_windows_are_refused() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let (status, body) = daemon.post(
        "/v1/sessions",
        &json!({ "command": common::SHELL, "cols": 1000, "rows": 1000 }),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("cells"));
    let session = daemon.create(&json!({ "command": common::SHELL }));
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{}/resize", session_id(&session)),
        &json!({ "cols": 1000, "rows": 1000 }),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(tmux.size(session["tmux_name"].as_str().unwrap()), (80, 24));
}

/// Under churn, sessions that have ended stop counting against
/// capacity at once; a reaper that handles ends one by one (each asks tmux
/// and writes the registry) falls behind and refuses new sessions.
#[test]
fn ended_sessions_do_not_hold_capacity_under_churn() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "max_sessions = 12\n".into(),
            ..Default::default()
        },
    );
    daemon.create(&json!({ "name": "live", "command": common::SHELL }));
    let (attempts, refused) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    let mut refused = 0;
                    for _ in 0..25 {
                        let (status, body) =
                            daemon.post("/v1/sessions", &json!({ "command": "true" }));
                        match status.as_u16() {
                            201 => {}
                            429 => refused += 1,
                            _ => panic!("{status} {body}"),
                        }
                    }
                    refused
                })
            })
            .collect();
        let refused: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
        (8 * 25, refused)
    });
    eprintln!("{refused} of {attempts} creates refused");
    // Eight clients never hold more than eight live sessions: with ends
    // freeing capacity as they happen, eleven slots are enough for all.
    assert!(
        refused * 10 <= attempts,
        "{refused} of {attempts} creates were refused"
    );
    let mut left = Vec::new();
    let reaped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for("every short session reaped", || {
            left = daemon.sessions();
            (left.len() == 1).then_some(())
        })
    }));
    if reaped.is_err() {
        let events: Vec<Value> = daemon
            .events()
            .into_iter()
            .filter(|e| left.iter().any(|s| s["session_id"] == e["session_id"]))
            .collect();
        panic!("still listed: {left:#?}\ntheir events: {events:#?}");
    }
    // tmux before 3.7 crashes when a notification meets a control client
    // in its handshake; tmuxd takes turns so its own churn never does that.
    assert!(
        tmux.has_session("live"),
        "the tmux server survived the churn"
    );
}

/// An item whose typing had begun when the daemon died is reported, never
/// typed again; the items behind it are typed once.
#[test]
fn queued_input_interrupted_by_a_crash_is_never_typed_twice() {
    let tmux = TmuxServer::new();
    tmux.new_shell("queue");
    let data = tempfile::tempdir().unwrap();
    let at = "2026-01-01T00:00:00Z";
    let registry = json!({
        "version": 1,
        "next_session_counter": 8,
        "sessions": [{
            "session_id": "sess_7",
            "tmux_name": "queue",
            "created_at": at,
            "queued_inputs": [
                { "text": "echo ONCE-$((20+2))", "submit": true, "queued_at": at, "started": true },
                { "text": "echo NEXT-$((30+3))", "submit": true, "queued_at": at },
            ],
        }],
        "detached": [],
    });
    std::fs::create_dir_all(data.path()).unwrap();
    std::fs::write(data.path().join("registry.json"), registry.to_string()).unwrap();
    let daemon = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    tmux.wait_for_text("queue", "NEXT-33");
    let dropped = wait_for("the interrupted item's event", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["kind"] == "input_dropped" && e["session_id"] == "sess_7")
    });
    assert_eq!(dropped["reason"], "interrupted");
    assert_eq!(dropped["text_prefix"], "echo ONCE-$((20+2))", "{dropped}");
    let screen = tmux.capture("queue").join("\n");
    assert!(!screen.contains("ONCE"), "{screen}");
    assert_eq!(screen.matches("NEXT-33").count(), 1, "{screen}");
}
