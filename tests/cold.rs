//! Sessions without a control client of their own ("cold", `live: false`:
//! `tmux.live_clients`), on real tmux: what they do is still seen through
//! tmuxd's one look across the server (activity, bell flags, dead panes):
//! a cold session that prints works and becomes hot, a bell raises
//! attention, a question after output needs someone, and watching them
//! sets, sizes and types nothing.

use crate::common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::Value;

/// One client for the sessions that are not busy, watched or new.
fn one_live_client() -> DaemonOptions {
    DaemonOptions {
        tmux_config: "live_clients = 1\n".to_owned(),
        ..DaemonOptions::default()
    }
}

fn summary_of(daemon: &Daemon, name: &str) -> Value {
    daemon
        .sessions()
        .into_iter()
        .find(|s| s["tmux_name"] == name)
        .unwrap_or_else(|| panic!("{name} is not listed"))
}

/// Waits until `name` is attached (no longer `starting`); its id.
fn attached_id(daemon: &Daemon, name: &str) -> String {
    wait_for(&format!("{name} attached"), || {
        let s = summary_of(daemon, name);
        (s["state"] != "starting").then(|| s["session_id"].as_str().unwrap().to_owned())
    })
}

/// Waits until `name` is listed cold (attached once, then let go); its id.
fn cold_id(daemon: &Daemon, name: &str) -> String {
    wait_for(&format!("{name} cold"), || {
        let s = summary_of(daemon, name);
        (s["live"] == false && s["state"] != "starting")
            .then(|| s["session_id"].as_str().unwrap().to_owned())
    })
}

/// A program that waits for a line without echoing it, so that an Enter
/// typed at tmux (not through tmuxd) prints nothing; then runs `then`.
fn after_enter(then: &str) -> String {
    format!("bash --norc --noprofile -c 'stty -echo; read x; {then}; sleep 600'")
}

/// Everything tmux would show of a session's and its window's options,
/// and the server's: what watching must never change.
fn options(tmux: &TmuxServer, name: &str) -> Vec<String> {
    let target = format!("={name}:");
    let mut all = Vec::new();
    for args in [
        vec!["show-options", "-t", &target],
        vec!["show-options", "-w", "-t", &target],
        vec!["show-options", "-g"],
        vec!["show-options", "-gw"],
        vec!["show-hooks", "-t", &target],
        vec!["show-hooks", "-g"],
    ] {
        all.extend(tmux.run(&args).lines().map(|l| format!("{args:?} {l}")));
    }
    all
}

#[test]
fn a_cold_session_that_rings_a_bell_raises_attention() {
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    // Rings, then waits again (work after a bell would take its flag down).
    tmux.new_session("ringer", (80, 24), &after_enter("printf \"\\a\"; read y"));
    let before = options(&tmux, "ringer");
    let daemon = Daemon::start_with(&tmux, one_live_client());
    // Typed into through tmuxd, the shell is the most recently active:
    // it holds the one client, and the ringer goes cold.
    let anchor = attached_id(&daemon, "anchor");
    daemon.type_line(&anchor, "echo anchored");
    let ringer = cold_id(&daemon, "ringer");
    assert!(
        summary_of(&daemon, "ringer")["attention"].is_null(),
        "{}",
        summary_of(&daemon, "ringer")
    );

    // The bell is the only byte it writes: no screen change to see.
    let rang = Instant::now();
    tmux.send_keys("ringer", &["Enter"]);
    let raised = wait_for("the cold session's bell", || {
        let s = summary_of(&daemon, "ringer");
        (!s["attention"].is_null()).then_some(s)
    });
    eprintln!("bell -> attention in {:?}", rang.elapsed());
    assert_eq!(raised["attention"]["reason"], "bell", "{raised}");
    assert_eq!(raised["session_id"], ringer.as_str());

    // Watching set nothing on it, resized nothing, typed nothing.
    assert_eq!(options(&tmux, "ringer"), before);
    assert_eq!(tmux.size("ringer"), (80, 24));
    assert_eq!(tmux.capture("ringer"), Vec::<String>::new());
}

#[test]
fn a_cold_session_that_prints_works_and_then_asks_for_someone() {
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    // Quiet while tmuxd adopts it and lets it go cold, then works on its
    // own (longer than a program takes to open: `work_alone`), then asks.
    let program = "bash --norc --noprofile -c 'sleep 8; \
                   for i in $(seq 16); do echo step-$i; sleep 0.5; done; \
                   read -p \"Proceed? [y/N] \" a; sleep 600'";
    tmux.new_session("asker", (80, 24), program);
    let before = options(&tmux, "asker");
    let daemon = Daemon::start_with(&tmux, one_live_client());
    let anchor = attached_id(&daemon, "anchor");
    daemon.type_line(&anchor, "echo anchored");
    let asker = cold_id(&daemon, "asker");
    assert_eq!(
        tmux.capture("asker"),
        Vec::<String>::new(),
        "the program printed before its session went cold: the machine is too slow for this test"
    );
    assert!(summary_of(&daemon, "asker")["attention"].is_null());

    // It prints on its own: working, hot, its screen followed.
    tmux.wait_for_text("asker", "step-1");
    let started = Instant::now();
    let working = wait_for("the cold session working", || {
        let s = summary_of(&daemon, "asker");
        (s["state"] == "working" && s["live"] == true).then_some(s)
    });
    eprintln!("output -> working and hot in {:?}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "working only after {:?}: {working}",
        started.elapsed()
    );

    // Then a question after the work it did on its own: someone is needed.
    let asked = daemon.wait_until(&asker, "attention");
    assert_eq!(asked["attention"]["reason"], "needs_input", "{asked}");
    assert_eq!(asked["state"], "waiting", "{asked}");
    let screen = daemon.snapshot_lines(&asker);
    assert!(
        screen.iter().any(|l| l.contains("step-16"))
            && screen.iter().any(|l| l.contains("Proceed? [y/N]")),
        "{screen:?}"
    );
    assert_eq!(options(&tmux, "asker"), before);
    assert_eq!(tmux.size("asker"), (80, 24));
}
