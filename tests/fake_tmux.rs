//! The real daemon against `fixtures/fake-tmux/tmux`, found on PATH, with
//! the real tmux absent from the daemon's PATH: what CI users do. The fake
//! speaks control mode, so sessions are created, listed, typed into,
//! streamed, resized, killed, reaped, detached and adopted end to end.

use crate::common;
#[path = "fake_tmux/protocol.rs"]
mod protocol;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use common::{Daemon, DaemonOptions, TmuxServer, fake_tmux_dir, path_with_fake_tmux, wait_for};
use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

/// A fake tmux server: its state dir and socket name, ended on drop.
struct Fake {
    /// Only used for its unique socket name; the real server is never started.
    socket: TmuxServer,
    path: String,
    state: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        let dir = tempfile::tempdir().unwrap();
        Fake {
            socket: TmuxServer::new(),
            path: path_with_fake_tmux(dir.path()),
            state: dir.path().join("fake-state"),
            _dir: dir,
        }
    }

    fn output(&self, args: &[&str]) -> Output {
        Command::new(fake_tmux_dir().join("tmux"))
            .args(["-L", &self.socket.socket])
            .args(args)
            .env("FAKE_TMUX_DIR", &self.state)
            .env("PATH", &self.path)
            .output()
            .unwrap()
    }

    /// Runs the fake and insists it succeeds.
    fn run(&self, args: &[&str]) -> String {
        let out = self.output(args);
        assert!(
            out.status.success(),
            "fake tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn has_session(&self, name: &str) -> bool {
        self.output(&["has-session", "-t", &format!("={name}")])
            .status
            .success()
    }

    /// The daemon, with the fake first on its PATH and no real tmux.
    fn daemon(&self) -> Daemon {
        Daemon::start_with(
            &self.socket,
            DaemonOptions {
                path_env: Some(self.path.clone()),
                env: vec![("FAKE_TMUX_DIR".into(), self.state.display().to_string())],
                ..Default::default()
            },
        )
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        // Whatever a failed test left: no fake session outlives it.
        let _ = self.output(&["kill-server"]);
    }
}

/// A fake whose daemon finds `tmux` in a `bin` of its own, the only
/// directory on PATH (no real tmux): `install` puts the fake there.
fn fake_in_bin(install: impl FnOnce(&std::path::Path)) -> Fake {
    let mut fake = Fake::new();
    let bin = fake._dir.path().join("bin");
    install(&bin.join("tmux"));
    fake.path = bin.display().to_string();
    fake
}

#[test]
fn the_fake_works_symlinked_into_a_bin_on_path() {
    let fake =
        fake_in_bin(|at| std::os::unix::fs::symlink(fake_tmux_dir().join("tmux"), at).unwrap());
    let daemon = fake.daemon();
    let (status, ready) = daemon.get("/readyz");
    assert_eq!(status, 200, "{ready}");
    let id = id_of(&daemon.create(&json!({ "name": "linked" })));
    input(
        &daemon,
        &id,
        json!({ "text": "echo linked-$((6*7))", "submit": true }),
    );
    daemon.wait_for_snapshot(&id, "linked-42");
    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
    assert_eq!(status, 200, "{body}");
}

/// A tmux that answers `-V` but cannot make a session tmuxd can attach to
/// (the fake copied without its control-mode half) is not ready.
#[test]
fn readyz_is_503_while_tmux_cannot_create_a_session() {
    let fake = fake_in_bin(|at| {
        std::fs::copy(fake_tmux_dir().join("tmux"), at).unwrap();
    });
    let daemon = fake.daemon();
    let (status, health) = daemon.get("/healthz");
    assert_eq!(status, 200);
    assert!(
        health["tmux"].as_str().unwrap().contains("fake"),
        "{health}"
    );
    let (status, ready) = daemon.get("/readyz");
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["ready"], false);
    let reason = ready["reason"].as_str().unwrap();
    assert!(reason.contains("cannot attach"), "{reason}");
    assert!(
        daemon.session_ids().is_empty(),
        "the check leaves no session"
    );
}

fn id_of(session: &Value) -> String {
    session["session_id"].as_str().unwrap().to_owned()
}

fn input(daemon: &Daemon, id: &str, body: Value) {
    let (status, reply) = daemon.post(&format!("/v1/sessions/{id}/input"), &body);
    assert_eq!(status, 200, "input {body}: {reply}");
}

fn settle(daemon: &Daemon, id: &str, needle: &str) -> Vec<String> {
    let lines = daemon.wait_for_snapshot(id, needle);
    daemon.wait_until(id, "idle");
    lines
}

fn end_event(daemon: &Daemon, id: &str) -> Value {
    wait_for("the session's end event", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["session_id"] == id && e["kind"] == "session_deleted")
    })
}

/// The daemon's live children (its tmux control clients).
fn children(pid: u32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            // pid (comm) state ppid ...: comm may hold spaces.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid)
        })
        .count()
}

fn connect(daemon: &Daemon, id: &str) -> Socket {
    let path = format!("/v1/sessions/{id}/stream");
    let (mut socket, _) =
        tungstenite::connect(daemon.ws_request(&path)).expect("websocket connects");
    if let MaybeTlsStream::Plain(tcp) = socket.get_ref() {
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    }
    match socket.read().unwrap() {
        Message::Text(text) => {
            let ready: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(ready["type"], "ready", "{ready}");
        }
        other => panic!("expected the ready frame, got {other:?}"),
    }
    socket
}

/// Output bytes from the stream until `needle` has arrived.
fn read_until(socket: &mut Socket, needle: &str) -> String {
    let mut bytes = Vec::new();
    while !String::from_utf8_lossy(&bytes).contains(needle) {
        match socket.read().expect("stream stays open") {
            Message::Binary(data) => bytes.extend_from_slice(&data[8..]),
            Message::Text(_) | Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn the_daemon_runs_against_the_fake_tmux_on_path() {
    let fake = Fake::new();
    let which = Command::new("sh")
        .args(["-c", "command -v tmux"])
        .env("PATH", &fake.path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&which.stdout).trim(),
        fake_tmux_dir().join("tmux").display().to_string()
    );
    let daemon = fake.daemon();
    let (status, health) = daemon.get("/healthz");
    assert_eq!(status, 200);
    assert!(
        health["tmux"].as_str().unwrap().contains("fake"),
        "{health}"
    );
    // The fake has no server socket: its clients are `tmux -C` children.
    assert!(
        health["tmux_client"]
            .as_str()
            .unwrap()
            .starts_with("tmux -C child"),
        "{health}"
    );

    let id = id_of(&daemon.create(&json!({ "name": "ci" })));
    // tmuxd makes a session, marks it and keeps its exit in one call (a
    // command sequence), on the fake as on tmux.
    let tag = fake.run(&["show-environment", "-h", "-t", "=ci", "tmuxd_id"]);
    assert_eq!(tag.trim_end(), format!("tmuxd_id={id}"));
    let kept = fake.run(&[
        "display-message",
        "-p",
        "-t",
        "=ci:",
        "#{@tmuxd-keep-exit} #{remain-on-exit}",
    ]);
    assert_eq!(kept.trim_end(), "1 on");
    input(
        &daemon,
        &id,
        json!({ "text": "echo hello-$((2+3))", "submit": true }),
    );
    daemon.wait_for_snapshot(&id, "hello-5");

    fake.run(&["new-session", "-d", "-s", "made-outside"]);
    let adopted = wait_for("discovery to adopt", || {
        daemon
            .sessions()
            .into_iter()
            .find(|s| s["tmux_name"] == "made-outside")
            .map(|s| id_of(&s))
    });
    fake.run(&["kill-session", "-t", "=made-outside"]);
    wait_for("removal", || {
        daemon
            .session_ids()
            .iter()
            .all(|s| *s != adopted)
            .then_some(())
    });
    assert_eq!(end_event(&daemon, &adopted)["reason"], "process_exit");

    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
    assert_eq!(status, 200, "{body}");
    assert!(daemon.session_ids().is_empty());
}

/// Commands chained in one argv run in turn, as tmux runs them: a lone `;`
/// or a word's last `;` ends a command, `\;` is a literal `;`, and the first
/// command that fails ends the sequence with its error.
#[test]
fn the_fake_runs_command_sequences_in_one_argv() {
    let fake = Fake::new();
    let out = fake.run(&[
        "new-session",
        "-d",
        "-s",
        "seq",
        "sleep 60\\;",
        ";",
        "set-option",
        "-q",
        "-t",
        "=seq:",
        "@mark",
        "a;b\\;",
        ";",
        "set-environment",
        "-h",
        "-t",
        "=seq",
        "tmuxd_id",
        "x1;",
        "display-message",
        "-p",
        "-t",
        "=seq:",
        "#{@mark} #{pane_start_command}",
    ]);
    assert_eq!(out, "a;b; sleep 60;\n");
    assert_eq!(
        fake.run(&["show-environment", "-h", "-t", "=seq"]),
        "tmuxd_id=x1\n"
    );
    let failed = fake.output(&[
        "display-message",
        "-p",
        "-t",
        "=seq:",
        "first",
        ";",
        "has-session",
        "-t",
        "=gone",
        ";",
        "display-message",
        "-p",
        "-t",
        "=seq:",
        "never",
    ]);
    assert!(!failed.status.success());
    assert_eq!(String::from_utf8_lossy(&failed.stdout), "first\n");
    assert_eq!(
        String::from_utf8_lossy(&failed.stderr).trim_end(),
        "can't find session: gone"
    );
    let unknown = fake.output(&["show-environment", "-h", "-t", "=seq", "nope"]);
    assert_eq!(
        String::from_utf8_lossy(&unknown.stderr).trim_end(),
        "unknown variable: nope"
    );
}

#[test]
fn a_fake_session_is_listed_typed_into_streamed_resized_and_killed() {
    let fake = Fake::new();
    let daemon = fake.daemon();
    let created = daemon.create(&json!({ "name": "work", "cols": 90, "rows": 20 }));
    let id = id_of(&created);
    assert_eq!(
        (created["cols"].as_u64(), created["rows"].as_u64()),
        (Some(90), Some(20))
    );
    let listed = daemon.sessions();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0]["cols"].as_u64(), listed[0]["rows"].as_u64()),
        (Some(90), Some(20))
    );

    // A fresh fake shell announces its prompt (OSC 133) once tmuxd has
    // read its screen, so it reaches idle without any input.
    let idle = daemon.wait_until(&id, "idle");
    assert_eq!(idle["state_reason"], "prompt_marker", "{idle}");

    // Text: echoed on the prompt's line (the seeded cursor sits after
    // `$ `), output on the next; the stream carries the bytes as a
    // terminal would show them.
    let mut stream = connect(&daemon, &id);
    input(
        &daemon,
        &id,
        json!({ "text": "echo out-$((6*7))", "submit": true }),
    );
    let streamed = read_until(&mut stream, "out-42\r\n");
    assert!(streamed.contains("echo out-$((6*7))\r\n"), "{streamed:?}");
    let lines = settle(&daemon, &id, "out-42");
    let at = lines.iter().position(|l| l == "$ echo out-$((6*7))");
    let at = at.unwrap_or_else(|| panic!("the echo on the prompt line: {lines:?}"));
    assert_eq!(lines[at + 1], "out-42", "{lines:?}");

    // Keys: a command holds the pane (busy) until C-c.
    input(&daemon, &id, json!({ "text": "sleep 30", "submit": true }));
    daemon.wait_until(&id, "working");
    input(&daemon, &id, json!({ "keys": ["C-c"] }));
    daemon.wait_until(&id, "idle");
    let lines = daemon.wait_for_snapshot(&id, "^C");
    // What the pane wrote since the echo, for a failure's message.
    let written = read_until(&mut stream, "^C");
    let at = lines.iter().position(|l| l == "$ sleep 30");
    assert_eq!(
        at.map(|at| lines[at + 1].as_str()),
        Some("^C"),
        "{lines:?}; written since the last check: {written:?}"
    );
    // A cursor key reaches the pane as an escape sequence, which the fake
    // shell's line discipline drops.
    input(&daemon, &id, json!({ "text": "echo up", "keys": ["Up"] }));
    input(&daemon, &id, json!({ "text": "-ok", "submit": true }));
    settle(&daemon, &id, "up-ok");

    // Raw bytes on the stream go to the pane as typed.
    stream
        .send(Message::Binary(b"echo raw-$((1+1))\r".to_vec().into()))
        .unwrap();
    read_until(&mut stream, "raw-2\r\n");
    settle(&daemon, &id, "raw-2");

    // Lines scrolled off the 20-row screen come from forked capture-pane.
    input(&daemon, &id, json!({ "text": "seq 1 50", "submit": true }));
    let lines = settle(&daemon, &id, "50");
    assert!(!lines.iter().any(|l| l == "1"), "{lines:?}");
    let (status, history) = daemon.get(&format!("/v1/sessions/{id}/scrollback?lines=500"));
    assert_eq!(status, 200, "{history}");
    let history = history["lines"].as_array().unwrap();
    assert!(history.iter().any(|l| l == "1"), "{history:?}");
    assert!(
        history.iter().any(|l| l == "$ echo out-$((6*7))"),
        "{history:?}"
    );

    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/resize"),
        &json!({ "cols": 100, "rows": 30 }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        fake.run(&[
            "display-message",
            "-p",
            "-t",
            "=work:",
            "#{window_width}x#{window_height}"
        ])
        .trim(),
        "100x30"
    );
    wait_for("the new size in the summary and the snapshot", || {
        let s = daemon.summary(&id);
        let (_, snap) = daemon.get(&format!("/v1/sessions/{id}/snapshot"));
        let sized = (s["cols"].as_u64(), s["rows"].as_u64()) == (Some(100), Some(30))
            && (snap["cols"].as_u64(), snap["rows"].as_u64()) == (Some(100), Some(30));
        let kept = snap["lines"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l == "50"));
        (sized && kept).then_some(())
    });

    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
    assert_eq!(status, 200, "{body}");
    assert!(!fake.has_session("work"));
    assert!(daemon.session_ids().is_empty());
    wait_for("the control client to be waited on", || {
        (children(daemon.pid()) == 0).then_some(())
    });
}

#[test]
fn fake_sessions_that_end_on_their_own_are_reaped() {
    let fake = Fake::new();
    let daemon = fake.daemon();
    let shell = id_of(&daemon.create(&json!({ "name": "shell" })));
    // The command ends in `;`, which tmuxd escapes (`\;`) for the fork.
    let command = "read -r line; echo got-$line; read -r again;";
    let job = id_of(&daemon.create(&json!({ "name": "job", "command": command })));
    input(&daemon, &job, json!({ "text": "first", "submit": true }));
    daemon.wait_for_snapshot(&job, "got-first");
    let started = fake.run(&[
        "display-message",
        "-p",
        "-t",
        "=job:",
        "#{pane_start_command}",
    ]);
    assert_eq!(started.trim_end(), command);
    input(&daemon, &job, json!({ "text": "second", "submit": true }));
    input(&daemon, &shell, json!({ "text": "exit", "submit": true }));
    for (id, name) in [(&shell, "shell"), (&job, "job")] {
        assert_eq!(end_event(&daemon, id)["reason"], "process_exit", "{name}");
        assert!(!fake.has_session(name), "{name}");
    }
    assert!(daemon.session_ids().is_empty());
    wait_for("the control clients to be waited on", || {
        (children(daemon.pid()) == 0).then_some(())
    });
}

#[test]
fn a_detached_fake_session_lives_on_and_is_adopted_again() {
    let fake = Fake::new();
    let daemon = fake.daemon();
    let id = id_of(&daemon.create(&json!({ "name": "keep" })));
    input(
        &daemon,
        &id,
        json!({ "text": "echo before-$((3*3))", "submit": true }),
    );
    settle(&daemon, &id, "before-9");

    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["tmux_alive"], true, "{body}");
    assert!(fake.has_session("keep"));
    // The control client left at once (its input closed) and was waited on.
    wait_for("the fake to count no client", || {
        let attached = fake.run(&["list-sessions", "-F", "#{session_name} #{session_attached}"]);
        (attached.trim() == "keep 0").then_some(())
    });
    wait_for("the control client to be waited on", || {
        (children(daemon.pid()) == 0).then_some(())
    });

    let (status, body) = daemon.post("/v1/sessions/adopt", &json!({ "tmux_name": "keep" }));
    assert_eq!(status, 201, "{body}");
    let again = id_of(&body["session"]);
    // The screen comes back from capture-pane, then follows the output.
    daemon.wait_for_snapshot(&again, "before-9");
    input(
        &daemon,
        &again,
        json!({ "text": "echo after-$((4*4))", "submit": true }),
    );
    let lines = daemon.wait_for_snapshot(&again, "after-16");
    assert!(lines.iter().any(|l| l == "before-9"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l == "$ echo after-$((4*4))"),
        "{lines:?}"
    );

    let (status, body) = daemon.delete(&format!("/v1/sessions/{again}?mode=kill"));
    assert_eq!(status, 200, "{body}");
    assert!(!fake.has_session("keep"));
}
