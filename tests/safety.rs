//! tmuxd never disturbs a session: detaching, deleting in detach mode,
//! SIGTERM and SIGKILL of the daemon leave every tmux session alive, at its
//! size, with nothing typed into it.

use crate::common;

use common::{Daemon, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::json;

/// A bash session at its prompt, created outside tmuxd, with a marker line
/// on screen so the capture has something to compare.
pub(crate) fn shell_at_prompt(tmux: &TmuxServer, name: &str, size: (u16, u16)) {
    tmux.new_session(name, size, common::SHELL);
    tmux.send_keys(name, &["echo marker-$((40+2))", "Enter"]);
    tmux.wait_for_text(name, "marker-42");
    // The prompt is back once the line after the output holds it.
    wait_for("prompt after marker", || {
        let lines = tmux.capture(name);
        (lines.last().map(String::as_str) == Some("$")).then_some(())
    });
}

fn adopted_id(daemon: &Daemon, name: &str) -> String {
    wait_for(&format!("{name} to be adopted"), || {
        daemon
            .sessions()
            .iter()
            .find(|s| s["tmux_name"] == name)
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
    })
}

/// Same screen, same size, cursor where it was: nothing was typed.
fn assert_untouched(tmux: &TmuxServer, name: &str, before: &[String], size: (u16, u16)) {
    assert!(tmux.has_session(name), "session {name} must still exist");
    assert_eq!(tmux.size(name), size, "window size must not change");
    assert_eq!(
        tmux.capture(name),
        before,
        "nothing may be typed into {name}"
    );
    let cursor = tmux.run(&[
        "display-message",
        "-p",
        "-t",
        &format!("={name}:"),
        "#{cursor_x} #{cursor_y}",
    ]);
    assert_eq!(
        cursor.trim(),
        format!("2 {}", before.len() - 1),
        "cursor must stay after the prompt"
    );
}

#[test]
fn detach_leaves_the_session_alone_and_adopt_brings_back_its_id() {
    let tmux = TmuxServer::new();
    shell_at_prompt(&tmux, "mine", (100, 30));
    let daemon = Daemon::start(&tmux);
    let id = adopted_id(&daemon, "mine");
    let before = tmux.capture("mine");
    assert_eq!(tmux.size("mine"), (100, 30), "attaching must not resize");

    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}"));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({ "session_id": id, "mode": "detach", "tmux_alive": true })
    );
    assert_untouched(&tmux, "mine", &before, (100, 30));

    // A later discovery tick adopts a newcomer but not the detached session.
    tmux.new_shell("newcomer");
    adopted_id(&daemon, "newcomer");
    assert!(
        daemon.sessions().iter().all(|s| s["tmux_name"] != "mine"),
        "detached session was re-adopted"
    );

    let (status, body) = daemon.post("/v1/sessions/adopt", &json!({ "tmux_name": "mine" }));
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        body["session"]["session_id"],
        id.as_str(),
        "adopt reuses the old id"
    );
    assert_untouched(&tmux, "mine", &before, (100, 30));
    let kinds: Vec<String> = daemon
        .events()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    assert!(kinds.contains(&"session_detached".to_owned()), "{kinds:?}");
}

#[test]
fn sigterm_leaves_sessions_alone_and_exits_promptly() {
    let tmux = TmuxServer::new();
    shell_at_prompt(&tmux, "a", (80, 24));
    shell_at_prompt(&tmux, "b", (132, 40));
    let mut daemon = Daemon::start(&tmux);
    adopted_id(&daemon, "a");
    adopted_id(&daemon, "b");
    let (before_a, before_b) = (tmux.capture("a"), tmux.capture("b"));

    let (status, took) = daemon.terminate();
    assert!(status.success(), "exit status {status:?}");
    assert!(took.as_secs_f64() < 3.0, "shutdown took {took:?}");
    assert_untouched(&tmux, "a", &before_a, (80, 24));
    assert_untouched(&tmux, "b", &before_b, (132, 40));
    let clients = tmux.run(&["list-clients"]);
    assert_eq!(clients.trim(), "", "tmuxd's clients must be gone");
}

#[test]
fn sigkill_leaves_sessions_alone() {
    let tmux = TmuxServer::new();
    shell_at_prompt(&tmux, "a", (90, 20));
    let mut daemon = Daemon::start(&tmux);
    adopted_id(&daemon, "a");
    let before = tmux.capture("a");

    daemon.kill9();
    // The orphaned client sees its terminal hang up and leaves.
    wait_for("tmuxd's client to leave", || {
        tmux.run(&["list-clients"]).trim().is_empty().then_some(())
    });
    assert_untouched(&tmux, "a", &before, (90, 20));
}

#[test]
fn deleting_with_kill_ends_the_tmux_session() {
    let tmux = TmuxServer::new();
    tmux.new_shell("keep");
    let daemon = Daemon::start(&tmux);
    adopted_id(&daemon, "keep");
    let doomed = daemon.create(&json!({ "name": "doomed", "command": common::SHELL }));
    let id = doomed["session_id"].as_str().unwrap();
    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["tmux_alive"], false);
    assert!(!tmux.has_session("doomed"));
    assert!(tmux.has_session("keep"));
    let ended = daemon
        .events()
        .into_iter()
        .find(|e| e["kind"] == "session_deleted" && e["session_id"] == id);
    assert_eq!(
        ended.expect("a session_deleted event")["reason"],
        "api_kill"
    );
}

/// tmuxd restarts every client's status timer at once (a `status-interval`
/// set on one session and unset at once: see `supervisor::status_timers`),
/// and leaves every option as it found it, a session's own value included.
#[test]
fn aligning_status_timers_leaves_every_option_as_it_was() {
    let tmux = TmuxServer::new();
    for name in ["a", "b", "c"] {
        tmux.new_shell(name);
    }
    tmux.run(&["set-option", "-t", "=a:", "status-interval", "7"]);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("set-options");
    tmux.run(&[
        "set-hook",
        "-g",
        "after-set-option",
        &format!("run-shell 'echo set >> {}'", log.display()),
    ]);
    let options = |target: &str| tmux.run(&["show-options", "-t", target]);
    let before: Vec<String> = ["=a:", "=b:", "=c:"].map(options).to_vec();
    let daemon = Daemon::start(&tmux);
    for name in ["a", "b", "c"] {
        adopted_id(&daemon, name);
    }
    // A pin and its unpin, once the attaches have settled.
    wait_for("the status timers to be aligned", || {
        let sets = std::fs::read_to_string(&log).unwrap_or_default();
        (sets.lines().count() >= 2).then_some(())
    });
    let after: Vec<String> = ["=a:", "=b:", "=c:"].map(options).to_vec();
    assert_eq!(after, before, "session options must end as they were");
    assert_eq!(
        tmux.run(&["show-options", "-gv", "status-interval"]).trim(),
        "15"
    );
    assert!(before[0].contains("status-interval 7"), "{}", before[0]);
}
