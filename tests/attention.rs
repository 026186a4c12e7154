//! Attention means "this needs you" (see issue 19), with real tmux and real
//! programs: what someone opens by typing at a shell waits without it,
//! `top` is working, an agent in epoll with a still screen is working, an
//! agent that worked and asks is waiting with it, `read -p` at a shell is
//! waiting; a program's own notification (OSC 9/777) raises it with its
//! text; opening the session in the dashboard, a tmux client attaching
//! and input acknowledge it, and the event says which.

use crate::common;

use std::io::Read;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::Value;

/// How long a state must hold, unchanged and without attention, to count
/// as what a program settled into (longer than `top`'s 3 s between redraws
/// and vim's 4 s `updatetime`).
const HOLD: Duration = Duration::from_secs(5);

/// The state events of `id`, as the event log has them.
fn state_events(daemon: &Daemon, id: &str) -> Vec<Value> {
    daemon
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "session_state" && e["session_id"] == id)
        .collect()
}

/// One program of the table: how it starts, and what a human would say
/// it is doing once it has settled.
struct Program {
    name: &'static str,
    /// Typed at a shell through tmux itself (as at an attached client), or
    /// (None) the command tmuxd's create runs.
    typed: Option<String>,
    command: String,
    state: &'static str,
    reason: &'static str,
    attention: Option<&'static str>,
}

/// What a summary says: (state, reason, attention reason).
fn seen(s: &Value) -> (String, String, Option<String>) {
    (
        s["state"].as_str().unwrap_or("").to_owned(),
        s["state_reason"].as_str().unwrap_or("").to_owned(),
        s["attention"]["reason"].as_str().map(str::to_owned),
    )
}

/// Waits until every program shows its (state, reason, attention) and has
/// held it for `HOLD`; returns their summaries. On timeout, says what each
/// showed last.
fn settle(daemon: &Daemon, programs: &[(&Program, String)]) -> Vec<Value> {
    let want = |p: &Program| {
        (
            p.state.to_owned(),
            p.reason.to_owned(),
            p.attention.map(str::to_owned),
        )
    };
    let mut held_since: Vec<Option<Instant>> = vec![None; programs.len()];
    let deadline = Instant::now() + common::PATIENCE;
    loop {
        let summaries: Vec<Value> = programs.iter().map(|(_, id)| daemon.summary(id)).collect();
        for (i, (program, _)) in programs.iter().enumerate() {
            if seen(&summaries[i]) == want(program) {
                held_since[i].get_or_insert_with(Instant::now);
            } else {
                held_since[i] = None;
            }
        }
        if held_since
            .iter()
            .all(|h| h.is_some_and(|h| h.elapsed() >= HOLD))
        {
            return summaries;
        }
        let last: Vec<String> = programs
            .iter()
            .zip(&summaries)
            .map(|((p, _), s)| format!("{}: {:?} (want {:?})", p.name, seen(s), want(p)))
            .collect();
        assert!(Instant::now() < deadline, "not settled: {last:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Real programs, each with the state a human would give it and whether
/// attention rises.
#[test]
fn real_programs_get_the_state_a_human_would_give_them() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let typed = |name, line: &str, state, reason| Program {
        name,
        typed: Some(line.to_owned()),
        command: common::SHELL.to_owned(),
        state,
        reason,
        attention: None,
    };
    let table = [
        typed("vim", "vim -n /etc/passwd", "waiting", "terminal_read"),
        typed("less", "less /etc/passwd", "waiting", "terminal_read"),
        typed("man", "man bash", "waiting", "terminal_read"),
        typed("python", "python3 -q", "waiting", "terminal_read"),
        typed("top", "top", "working", "redraw"),
        typed(
            "read",
            "read -p 'Your name? ' name",
            "waiting",
            "shell_read",
        ),
        Program {
            name: "dash-read",
            typed: Some("read answer".to_owned()),
            command: "env PS1='$ ' dash -i".to_owned(),
            state: "waiting",
            reason: "shell_read",
            attention: None,
        },
        Program {
            name: "agent-thinking",
            typed: None,
            command: common::program_fixture("agent_epoll.py"),
            state: "working",
            reason: "event_wait",
            attention: None,
        },
        Program {
            name: "agent-asks",
            typed: None,
            command: common::program_fixture("agent_asks.py"),
            state: "waiting",
            reason: "screen_question",
            attention: Some("needs_input"),
        },
    ];
    let wrong = run_table(&tmux, &daemon, &table);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Starts each program of `table` (typed at a shell, or as the command of
/// tmuxd's create), waits until each has settled into what it expects,
/// and says which raised attention it should not have.
fn run_table(tmux: &TmuxServer, daemon: &Daemon, table: &[Program]) -> Vec<String> {
    let mut ids = Vec::new();
    for program in table {
        let id = daemon.create_named(program.name, &program.command);
        if let Some(line) = &program.typed {
            daemon.wait_until(&id, "idle");
            tmux.send_keys(program.name, &[line.as_str(), "Enter"]);
        }
        ids.push(id);
    }
    let programs: Vec<(&Program, String)> = table.iter().zip(ids).collect();
    let summaries = settle(daemon, &programs);
    let mut wrong = Vec::new();
    for ((program, id), settled) in programs.iter().zip(&summaries) {
        eprintln!(
            "{}: {} · {} · attention {}",
            program.name, settled["state"], settled["state_reason"], settled["attention"]
        );
        let raised: Vec<Value> = state_events(daemon, id)
            .into_iter()
            .filter(|e| !e["attention"].is_null())
            .collect();
        if program.attention.is_none() && !raised.is_empty() {
            wrong.push(format!("{}: attention rose: {raised:?}", program.name));
        }
    }
    wrong
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Typed,
    Created,
}

/// A REPL, vim and less that have only opened wait without attention whether
/// `tmuxd new -- prog` started them or someone typed them at a shell (a file
/// whose first line is a question included: the editor's cursor at its start
/// asks nothing). A question from a program tmuxd started still needs
/// someone.
#[test]
fn a_program_only_opened_waits_without_attention_however_started() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "What should I do today?\n- write the tests\n").unwrap();
    let vim = format!("vim -n {}", notes.display());
    // Typed at a shell, or the command of tmuxd's create.
    let program = |name, how: How, line: &str| Program {
        name,
        typed: (how == How::Typed).then(|| line.to_owned()),
        command: match how {
            How::Typed => common::SHELL.to_owned(),
            How::Created => line.to_owned(),
        },
        state: "waiting",
        reason: "terminal_read",
        attention: None,
    };
    let table = [
        program("new-python", How::Created, "python3"),
        program("new-vim", How::Created, &vim),
        program("new-less", How::Created, "less /etc/services"),
        program("typed-python", How::Typed, "python3"),
        program("typed-vim", How::Typed, &vim),
        program("typed-less", How::Typed, "less /etc/services"),
        Program {
            attention: Some("needs_input"),
            ..program(
                "new-question",
                How::Created,
                "bash -c 'read -p \"Proceed? [y/N] \" a; sleep 600'",
            )
        },
    ];
    let wrong = run_table(&tmux, &daemon, &table);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Opens the session's `/screen` WebSocket (`query` after `?`), reads its
/// first frame, then pings: the server acknowledges (or not) before it
/// answers the ping, so what follows sees it.
fn open_screen(
    daemon: &Daemon,
    id: &str,
    query: &str,
) -> tungstenite::WebSocket<impl std::io::Read + std::io::Write> {
    let path = format!("/v1/sessions/{id}/screen{query}");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    let first = socket.read().unwrap();
    assert!(first.to_text().unwrap().contains("\"screen\""), "{first:?}");
    socket
        .send(tungstenite::Message::text(r#"{"type":"ping"}"#))
        .unwrap();
    loop {
        let message = socket.read().unwrap();
        if message.to_text().unwrap_or("").contains("pong") {
            return socket;
        }
    }
}

/// The `acknowledged_by` of the state event that lowered `id`'s flag.
fn acknowledged_by(daemon: &Daemon, id: &str) -> String {
    wait_for("the acknowledging event", || {
        state_events(daemon, id)
            .iter()
            .rev()
            .find_map(|e| e["acknowledged_by"].as_str().map(str::to_owned))
    })
}

/// A session tmuxd started that asks a question, once its attention flag
/// is up for it (`needs_input`); its id.
fn asking(daemon: &Daemon) -> String {
    let question = "bash -c 'read -p \"Proceed? [y/N] \" a; echo answered-$a; sleep 600'";
    let id = daemon.create_named("ask", question);
    let raised = daemon.wait_until(&id, "attention");
    assert_eq!(raised["attention"]["reason"], "needs_input", "{raised}");
    id
}

/// A question from a session tmuxd started raises attention; a thumbnail
/// on the wall (`acknowledge=false`) leaves it; opening the session in the
/// dashboard lowers it. Input through tmuxd acknowledges too.
#[test]
fn opening_the_screen_in_the_dashboard_acknowledges() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = asking(&daemon);
    let (status, body) = daemon.get(&format!("/v1/sessions/{id}/screen?acknowledge=maybe"));
    assert_eq!(status, 400, "{body}");
    let thumbnail = open_screen(&daemon, &id, "?acknowledge=false");
    let glanced = daemon.summary(&id);
    assert_eq!(glanced["attention"]["reason"], "needs_input", "{glanced}");
    drop(thumbnail);
    let socket = open_screen(&daemon, &id, "");
    let lowered = wait_for("the flag lowered", || {
        let s = daemon.summary(&id);
        s["attention"].is_null().then_some(s)
    });
    assert_eq!(lowered["state"], "waiting", "{lowered}");
    assert_eq!(acknowledged_by(&daemon, &id), "dashboard");
    drop(socket);
    // Input through tmuxd acknowledges too: a new question after the answer.
    let again = daemon.create_named(
        "again",
        "bash -c 'read -p \"First? [y/N] \" a; read -p \"Second? [y/N] \" b; sleep 600'",
    );
    daemon.wait_until(&again, "attention");
    daemon.type_line(&again, "y");
    assert_eq!(acknowledged_by(&daemon, &again), "input");
    daemon.wait_for_snapshot(&again, "Second?");
    let second = daemon.wait_until(&again, "waiting");
    assert!(
        second["attention"].is_null(),
        "answered at once: someone is there: {second}"
    );
}

/// Keys typed at a tmux client already attached (tmux does not tell its
/// control clients about keys; the program's echo shows them) acknowledge
/// a question's flag.
#[test]
fn keys_typed_at_an_attached_client_acknowledge() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = asking(&daemon);
    tmux.send_keys("ask", &["y"]);
    assert_eq!(acknowledged_by(&daemon, &id), "input");
    let still = daemon.summary(&id);
    assert_eq!(still["state"], "waiting", "{still}");
}

/// A person's tmux client attaching to the session acknowledges its flag.
#[test]
fn a_tmux_client_attaching_acknowledges() {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("ask", &common::program_fixture("agent_asks.py"));
    let raised = daemon.wait_until(&id, "attention");
    assert_eq!(raised["attention"]["reason"], "needs_input", "{raised}");
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut attach = CommandBuilder::new("tmux");
    attach.args(["-L", &tmux.socket, "attach-session", "-t", "=ask"]);
    attach.env_clear();
    attach.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    attach.env("HOME", std::env::temp_dir());
    attach.env("TERM", "xterm-256color");
    let mut client = pty.slave.spawn_command(attach).unwrap();
    // Only the client holds the terminal, so the reader ends with it.
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let drain = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
    });
    assert_eq!(acknowledged_by(&daemon, &id), "tmux_client");
    assert!(daemon.summary(&id)["attention"].is_null());
    client.kill().unwrap();
    client.wait().unwrap();
    drain.join().unwrap();
}

/// OSC 9 and OSC 777 notifications (which tmux drops) raise attention with
/// the program's text, and the notification's message says it.
#[test]
fn a_programs_own_notification_raises_attention_with_its_text() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let cases = [
        ("osc9", r"\033]9;Build finished\007", "Build finished"),
        (
            "osc777",
            r"\033]777;notify;Claude;Needs your permission\033\\",
            "Claude: Needs your permission",
        ),
    ];
    for (name, osc, text) in cases {
        let command = format!("bash -c 'sleep 1; printf \"{osc}\"; sleep 600'");
        let id = daemon.create_named(name, &command);
        let raised = daemon.wait_until(&id, "attention");
        assert_eq!(raised["attention"]["reason"], "notification", "{raised}");
        assert_eq!(raised["attention"]["text"], text, "{raised}");
        let event = wait_for("the state event", || {
            state_events(&daemon, &id)
                .into_iter()
                .find(|e| e["attention"]["reason"] == "notification")
        });
        assert_eq!(event["attention"]["text"], text, "{event}");
    }
}

/// The flag and its text survive a restart of tmuxd.
#[test]
fn a_notifications_text_survives_a_restart() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    let id = daemon.create_named(
        "note",
        r#"bash -c 'sleep 1; printf "\033]9;Deploy done\007"; sleep 600'"#,
    );
    let raised = daemon.wait_until(&id, "attention");
    assert_eq!(raised["attention"]["text"], "Deploy done", "{raised}");
    daemon.terminate();
    let daemon = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    let back = daemon.wait_until(&id, "attention");
    assert_eq!(back["attention"], raised["attention"], "{back}");
}
