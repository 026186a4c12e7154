//! Many sessions at once, on real tmux (a private socket): adopted at
//! startup without a `tmux -C` child (tmux's listen backlog would overflow
//! if every client connected together), the daemon answering while they
//! attach, and a stop that lets every session live. Sizes the 2-core CI
//! can afford; `scripts/bench` measures 1,000.

mod common;

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::Value;

/// More than tmux's listen backlog (`listen(fd, 128)` in `server.c`).
const SESSIONS: usize = 300;

/// `SESSIONS` detached sessions running `cat` (cheap), made by one tmux
/// invocation so the test does not spend its time forking.
fn many_sessions(tmux: &TmuxServer, count: usize) -> Vec<String> {
    let names: Vec<String> = (0..count).map(|n| format!("many-{n}")).collect();
    let mut args: Vec<&str> = Vec::new();
    for name in &names {
        if !args.is_empty() {
            args.push(";");
        }
        args.extend(["new-session", "-d", "-s", name, "cat"]);
    }
    tmux.run(&args);
    names
}

/// A counter's value in `/metrics`, by its full sample name and labels.
fn metric(daemon: &Daemon, sample: &str) -> f64 {
    let (status, text) = daemon.get("/metrics");
    assert_eq!(status, StatusCode::OK);
    let text = text.as_str().expect("metrics are text").to_owned();
    text.lines()
        .find_map(|line| line.strip_prefix(sample)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {sample} in:\n{text}"))
}

/// A daemon that tracks more than the default 256 sessions.
fn roomy() -> DaemonOptions {
    DaemonOptions {
        extra_config: "max_sessions = 1000\n".to_owned(),
        ..DaemonOptions::default()
    }
}

fn starting(sessions: &[Value]) -> usize {
    sessions.iter().filter(|s| s["state"] == "starting").count()
}

#[test]
fn hundreds_of_sessions_are_adopted_at_once_natively_while_the_daemon_answers() {
    let tmux = TmuxServer::new();
    let names = many_sessions(&tmux, SESSIONS);
    let mut daemon = Daemon::start_with(&tmux, roomy());

    // Listening means every session is known (listed, `starting` until its
    // client attached), and the daemon answers meanwhile.
    let (status, health) = daemon.get("/healthz");
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(daemon.sessions().len(), SESSIONS);

    let sessions = wait_for("every session attached", || {
        let sessions = daemon.sessions();
        (starting(&sessions) == 0).then_some(sessions)
    });
    assert_eq!(sessions.len(), SESSIONS);
    let mut listed: Vec<&str> = sessions
        .iter()
        .map(|s| s["tmux_name"].as_str().unwrap())
        .collect();
    listed.sort_unstable();
    let mut wanted: Vec<&str> = names.iter().map(String::as_str).collect();
    wanted.sort_unstable();
    assert_eq!(listed, wanted);
    assert_eq!(
        metric(&daemon, "tmuxd_control_attaches_total{via=\"native\"}"),
        SESSIONS as f64,
        "{}",
        daemon.log()
    );
    assert_eq!(
        metric(&daemon, "tmuxd_control_attaches_total{via=\"child\"}"),
        0.0
    );
    assert_eq!(metric(&daemon, "tmuxd_control_attach_fallbacks_total"), 0.0);

    // A stop lets every client go at once and every session live.
    let (status, took) = daemon.terminate();
    assert!(status.success(), "{}", daemon.log());
    assert!(took < PATIENCE / 2, "stopping took {took:?}");
    let alive = tmux.run(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(alive.lines().count(), SESSIONS);
    let clients = tmux.run(&["list-clients", "-F", "#{client_name}"]);
    assert_eq!(clients.trim(), "", "tmuxd left clients behind");
}

#[test]
fn a_restart_lists_the_persisted_sessions_at_once_and_attaches_them_in_the_background() {
    let tmux = TmuxServer::new();
    many_sessions(&tmux, SESSIONS / 3);
    let data = tempfile::tempdir().unwrap();
    let mut first = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    let ids = wait_for("every session attached", || {
        let sessions = first.sessions();
        (sessions.len() == SESSIONS / 3 && starting(&sessions) == 0).then(|| {
            let mut ids: Vec<String> = sessions
                .iter()
                .map(|s| s["session_id"].as_str().unwrap().to_owned())
                .collect();
            ids.sort();
            ids
        })
    });
    let (status, _) = first.terminate();
    assert!(status.success(), "{}", first.log());

    let second = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    let (status, _) = second.get("/healthz");
    assert_eq!(status, StatusCode::OK);
    let mut listed = second.session_ids();
    listed.sort();
    assert_eq!(listed, ids, "the same ids, known from the first answer");
    // A request for a session still attaching waits for it.
    let (status, snapshot) = second.get(&format!("/v1/sessions/{}/snapshot", ids[0]));
    assert_eq!(status, StatusCode::OK, "{snapshot}");
    wait_for("every session attached again", || {
        (starting(&second.sessions()) == 0).then_some(())
    });
    assert_eq!(metric(&second, "tmuxd_control_attach_fallbacks_total"), 0.0);
}
