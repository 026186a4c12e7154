//! What a session is doing, with real tmux and real programs: a shell at
//! its prompt (idle), a script and a sleep (working), a REPL and a `[y/N]`
//! question (waiting, within a second of going quiet), the bell as a flag
//! beside the state, and screen rules from the config.

use crate::common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::{Value, json};

/// (state, reason, attention reason) of each state event of `id`.
fn state_events(daemon: &Daemon, id: &str) -> Vec<(String, String, String)> {
    daemon
        .events()
        .iter()
        .filter(|e| e["kind"] == "session_state" && e["session_id"] == id)
        .map(|e| {
            let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
            (
                text(&e["state"]),
                text(&e["reason"]),
                text(&e["attention"]["reason"]),
            )
        })
        .collect()
}

/// A bell is a flag beside the state. The prompt coming back
/// is `idle` (wait answers), and input queued for idle is typed though the
/// flag is up; typing it clears the flag.
#[test]
fn a_bell_at_a_prompt_leaves_it_idle_and_the_queue_is_typed() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("bell", common::SHELL);
    daemon.wait_until(&id, "idle");
    daemon.type_line(&id, "sleep 2; printf '\\a'");
    daemon.wait_until(&id, "working");
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo queued-$((2+2))", "submit": true, "when": "idle" }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["queued"], true);
    let rang = daemon.wait_until(&id, "attention");
    assert_eq!(rang["attention"]["reason"], "bell", "{rang}");
    daemon.wait_for_snapshot(&id, "queued-4");
    let after = daemon.wait_until(&id, "idle");
    assert_eq!(after["queued_inputs"], 0);
    assert!(
        after["attention"].is_null(),
        "the typed input cleared it: {after}"
    );
    let events = state_events(&daemon, &id);
    assert!(
        events
            .iter()
            .any(|(state, _, attention)| state == "idle" && attention == "bell"),
        "idle with the bell flag up: {events:?}"
    );
}

/// `bash -c` is a shell, but not one at its prompt; the script is
/// working until it ends, and a loop printing every second does not flap.
#[test]
fn a_shell_script_is_working_until_it_ends() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let script = daemon.create_named("script", "bash -c 'echo start; sleep 3; echo done'");
    let looping = daemon.create_named(
        "loop",
        "bash -c 'for i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done'",
    );
    let mut seen = Vec::new();
    let deadline = Instant::now() + common::PATIENCE;
    loop {
        let (status, body) = daemon.get(&format!("/v1/sessions/{script}"));
        assert_eq!(status, 200, "{body}");
        let state = body["session"]["state"].as_str().unwrap().to_owned();
        if state == "exited" {
            break;
        }
        seen.push(state);
        assert!(Instant::now() < deadline, "the script never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(seen.contains(&"working".to_owned()), "{seen:?}");
    assert!(
        seen.iter().all(|s| s == "starting" || s == "working"),
        "working until it ends: {seen:?}"
    );
    let ended = daemon.wait_until(&looping, "exited");
    assert_eq!(ended["state_reason"], "process_exit", "{ended}");
    let states: Vec<String> = state_events(&daemon, &looping)
        .into_iter()
        .map(|(state, _, _)| state)
        .collect();
    assert_eq!(states, ["working", "exited"], "no flapping");
}

/// `sleep 900` prints nothing and uses no CPU: working, and after
/// `attention_after_s` of that, attention for the long silence.
#[test]
fn a_silent_program_is_working_then_needs_attention() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[state]\nattention_after_s = 2\n".into(),
            ..Default::default()
        },
    );
    let id = daemon.create_named("sleeper", "sleep 900");
    let working = daemon.wait_until(&id, "working");
    assert_eq!(working["state_reason"], "foreground_process", "{working}");
    let silent = daemon.wait_until(&id, "attention");
    assert_eq!(silent["state"], "working", "{silent}");
    assert_eq!(silent["attention"]["reason"], "long_silence", "{silent}");
}

/// How long after its last output `id` was reported waiting, as the
/// daemon saw both (its own clock).
fn waiting_lag(daemon: &Daemon, id: &str) -> Duration {
    let waiting = daemon.wait_until(id, "waiting");
    let at = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(waiting[field].as_str().unwrap()).unwrap()
    };
    (at("state_since") - at("last_activity_at"))
        .to_std()
        .unwrap_or_default()
}

/// A REPL at `>>>` and a `[y/N]` question are waiting within a
/// second of going quiet (median of several tries, measured by the daemon
/// from the last output it saw); the question needs attention until input
/// arrives, the REPL that only opened does not.
#[test]
fn a_repl_and_a_question_are_waiting_within_a_second() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let mut lags = Vec::new();
    for i in 0..3 {
        let question = "bash -c 'read -p \"Proceed? [y/N] \" a; echo answered-$a; sleep 600'";
        let id = daemon.create_named(&format!("ask{i}"), question);
        lags.push(waiting_lag(&daemon, &id));
        let asked = daemon.summary(&id);
        assert_eq!(asked["state_reason"], "terminal_read", "{asked}");
        assert_eq!(asked["attention"]["reason"], "needs_input", "{asked}");
        daemon.type_line(&id, "y");
        daemon.wait_for_snapshot(&id, "answered-y");
        let answered = daemon.wait_until(&id, "working");
        assert!(answered["attention"].is_null(), "{answered}");
    }
    let repl = daemon.create_named("repl", "python3 -q");
    lags.push(waiting_lag(&daemon, &repl));
    for expression in ["6*7", "2**10"] {
        daemon.type_line(&repl, expression);
        let (status, body) = daemon.post(
            &format!("/v1/sessions/{repl}/wait"),
            &json!({ "match": "^(42|1024)$", "timeout_ms": 60_000 }),
        );
        assert_eq!(status, 200, "{body}");
        lags.push(waiting_lag(&daemon, &repl));
    }
    lags.sort();
    let median = lags[lags.len() / 2];
    eprintln!("waiting after going quiet: {lags:?}, median {median:?}");
    assert!(
        median <= Duration::from_secs(1),
        "median {median:?} of {lags:?}"
    );
    // The REPL only opened and then answered what was typed: nobody was
    // needed (issue 32, item 1).
    let events = state_events(&daemon, &repl);
    assert!(
        events
            .iter()
            .any(|(s, r, _)| s == "waiting" && r == "terminal_read"),
        "{events:?}"
    );
    assert!(events.iter().all(|(_, _, a)| a.is_empty()), "{events:?}");
}

/// Input queued `when: waiting` goes to a program that asks for it, not
/// while it computes.
#[test]
fn input_queued_for_waiting_is_typed_when_the_repl_asks() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let repl = daemon.create_named("py", "python3 -q");
    daemon.wait_until(&repl, "waiting");
    daemon.type_line(&repl, "import time; time.sleep(2); print('slept')");
    daemon.wait_until(&repl, "working");
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{repl}/input"),
        &json!({ "text": "print('from-' + 'queue')", "submit": true, "when": "waiting" }),
    );
    assert_eq!((status.as_u16(), &body["queued"]), (200, &json!(true)));
    let lines = daemon.wait_for_snapshot(&repl, "from-queue");
    let at = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap();
    assert!(at("slept") < at("from-queue"), "{lines:?}");
}

/// Screen rules name what a program's screen says: an agent's permission
/// question (which /proc sees as a terminal read) and a "press any key"
/// from a program that only sleeps (which /proc sees as working).
#[test]
fn screen_rules_set_the_state_and_its_reason() {
    let tmux = TmuxServer::new();
    let rules = r#"
[[state.rules]]
regex = '(?m)^\s*Do you want to proceed\?'
rows = 8
state = "waiting"
reason = "permission_prompt"

[[state.rules]]
regex = '(?i)press any key'
rows = 2
state = "waiting"
reason = "press_any_key"
"#;
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: rules.into(),
            ..Default::default()
        },
    );
    let agent = daemon.create_named("agent", &common::program_fixture("agent_prompt.sh"));
    let asked = daemon.wait_until(&agent, "waiting");
    assert_eq!(asked["state_reason"], "permission_prompt", "{asked}");
    daemon.type_line(&agent, "1");
    daemon.wait_for_snapshot(&agent, "answered 1");
    wait_for("the agent working again", || {
        let s = daemon.summary(&agent);
        (s["state"] == "working").then_some(s)
    });
    let key = daemon.create_named("key", &common::program_fixture("press_any_key.sh"));
    let pressed = daemon.wait_until(&key, "waiting");
    assert_eq!(pressed["state_reason"], "press_any_key", "{pressed}");

    // Without the rules, /proc alone decides.
    let other = TmuxServer::new();
    let plain = Daemon::start(&other);
    let key = plain.create_named("key", &common::program_fixture("press_any_key.sh"));
    // Its output counts as work first (`output_activity`); once the screen
    // settles, the program asleep on something else says `foreground_process`.
    let working = wait_for("the prompt judged from /proc", || {
        let s = plain.summary(&key);
        (s["state"] == "working" && s["state_reason"] != "output_activity").then_some(s)
    });
    assert_eq!(working["state_reason"], "foreground_process", "{working}");
}
