//! Many sessions at once, on real tmux (a private socket): adopted at
//! startup without a `tmux -C` child (tmux's listen backlog would overflow
//! if every client connected together), the daemon answering while they
//! attach, and a stop that lets every session live. Sizes the 2-core CI
//! can afford; `scripts/bench` measures 1,000.

use crate::common;

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::Value;

/// More than tmux's listen backlog (`listen(fd, 128)` in `server.c`).
const SESSIONS: usize = 300;

/// `SESSIONS` detached sessions running `cat` (cheap), made 50 to a tmux
/// invocation so the test does not spend its time forking (tmux 3.7
/// refuses a much longer command line: "command too long").
fn many_sessions(tmux: &TmuxServer, count: usize) -> Vec<String> {
    let names: Vec<String> = (0..count).map(|n| format!("many-{n}")).collect();
    for chunk in names.chunks(50) {
        let mut args: Vec<&str> = Vec::new();
        for name in chunk {
            if !args.is_empty() {
                args.push(";");
            }
            args.extend(["new-session", "-d", "-s", name, "cat"]);
        }
        tmux.run(&args);
    }
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

/// A daemon that tracks more than the default 256 sessions, with a
/// control client for every one (no budget): every session attaches.
fn roomy() -> DaemonOptions {
    DaemonOptions {
        extra_config: "max_sessions = 1000\n".to_owned(),
        tmux_config: "live_clients = 0\n".to_owned(),
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
fn past_the_budget_adopted_sessions_start_cold_without_a_client_each() {
    let tmux = TmuxServer::new();
    let names = many_sessions(&tmux, SESSIONS);
    tmux.send_keys(&names[7], &["seeded-$((6*7))"]);
    let started = std::time::Instant::now();
    let mut daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "max_sessions = 1000\n".to_owned(),
            ..DaemonOptions::default()
        },
    );
    let (status, health) = daemon.get("/healthz");
    assert_eq!(status, StatusCode::OK, "{health}");
    let sessions = wait_for("every session looked at", || {
        let sessions = daemon.sessions();
        (sessions.len() == SESSIONS && starting(&sessions) == 0).then_some(sessions)
    });
    eprintln!("{SESSIONS} adopted cold in {:?}", started.elapsed());
    // The default budget (32): past it, sessions were looked at over one
    // server-wide client and never attached (the first few adopted, while
    // the registry still held fewer, attached and are let go again); none
    // fell back to a `tmux -C` child.
    let native = metric(&daemon, "tmuxd_control_attaches_total{via=\"native\"}");
    assert!(
        native < (SESSIONS / 2) as f64,
        "{native} native attaches for {SESSIONS} sessions"
    );
    wait_for("the budget held", || {
        let live = daemon
            .sessions()
            .iter()
            .filter(|s| s["live"] == true)
            .count();
        (live <= 32).then_some(())
    });
    assert_eq!(metric(&daemon, "tmuxd_control_attach_fallbacks_total"), 0.0);
    wait_for("at most the budget of clients", || {
        (tmux_clients(&tmux) <= 32).then_some(())
    });
    // A cold session's screen is tmux's, seeded without a client of its own.
    let seeded = sessions
        .iter()
        .find(|s| s["tmux_name"] == names[7].as_str())
        .unwrap();
    let id = seeded["session_id"].as_str().unwrap();
    let screen = daemon.snapshot_lines(id);
    assert!(
        screen.iter().any(|l| l.contains("seeded-$((6*7))")),
        "{screen:?}"
    );
    let (status, took) = daemon.terminate();
    assert!(status.success(), "{}", daemon.log());
    assert!(took < PATIENCE / 2, "stopping took {took:?}");
    assert_eq!(tmux.run(&["list-sessions"]).lines().count(), SESSIONS);
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

/// The session summaries by tmux name.
fn by_name(daemon: &Daemon) -> std::collections::BTreeMap<String, Value> {
    daemon
        .sessions()
        .into_iter()
        .map(|s| (s["tmux_name"].as_str().unwrap().to_owned(), s))
        .collect()
}

/// tmux's clients that read a session's output: not tmuxd's server-wide
/// one (`no-output`, see `tmux::server_client`).
fn tmux_clients(tmux: &TmuxServer) -> usize {
    tmux.run(&["list-clients", "-F", "#{client_flags}"])
        .lines()
        .filter(|flags| !flags.split(',').any(|f| f == "no-output"))
        .count()
}

#[test]
fn with_a_budget_quiet_sessions_go_cold_and_a_stream_input_or_output_makes_them_hot() {
    let tmux = TmuxServer::new();
    for name in ["heat-a", "heat-b", "heat-c"] {
        tmux.new_shell(name);
    }
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            tmux_config: "live_clients = 1\n".to_owned(),
            ..DaemonOptions::default()
        },
    );
    // One client at most for the three; the others let theirs go.
    let cold = wait_for("two sessions cold", || {
        let sessions = by_name(&daemon);
        let cold: Vec<String> = sessions
            .iter()
            .filter(|(_, s)| s["live"] == false && s["state"] != "starting")
            .map(|(name, _)| name.clone())
            .collect();
        (cold.len() == 2).then_some(cold)
    });
    wait_for("tmux to hold at most one client", || {
        (tmux_clients(&tmux) <= 1).then_some(())
    });
    let id = |name: &str| {
        by_name(&daemon)[name]["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // A stream makes a cold session hot, and sees what it prints.
    let streamed = id(&cold[0]);
    let path = format!("/v1/sessions/{streamed}/stream");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    wait_for("the streamed session hot", || {
        (by_name(&daemon)[&cold[0]]["live"] == true).then_some(())
    });
    daemon.type_line(&streamed, "echo streamed-$((6*7))");
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("streamed-42") {
        if let tungstenite::Message::Binary(frame) = socket.read().unwrap() {
            seen.extend_from_slice(&frame[8..]);
        }
    }

    // Input to a cold session attaches it and lands; its screen follows.
    let typed = id(&cold[1]);
    daemon.type_line(&typed, "echo typed-$((6*7))");
    tmux.wait_for_text(&cold[1], "typed-42");
    daemon.wait_for_snapshot(&typed, "typed-42");

    // The watched session stays hot while its stream is open; once it
    // closed, the budget holds again.
    assert_eq!(by_name(&daemon)[&cold[0]]["live"], true);
    drop(socket);
    wait_for("back to one client", || {
        let live = by_name(&daemon)
            .values()
            .filter(|s| s["live"] == true)
            .count();
        (live <= 1 && tmux_clients(&tmux) <= 1).then_some(())
    });
    // A cold session that prints (typed from outside tmuxd) becomes hot,
    // and its screen follows.
    let quiet = wait_for("a cold session", || {
        by_name(&daemon)
            .into_iter()
            .find(|(_, s)| s["live"] == false)
            .map(|(name, _)| name)
    });
    tmux.send_keys(&quiet, &["echo outside-$((6*7))", "Enter"]);
    wait_for("the printing session hot", || {
        (by_name(&daemon)[&quiet]["live"] == true).then_some(())
    });
    daemon.wait_for_snapshot(&id(&quiet), "outside-42");

    // Nothing tmuxd did resized or typed into the sessions.
    for name in ["heat-a", "heat-b", "heat-c"] {
        assert_eq!(tmux.size(name), (80, 24));
    }
}

#[test]
fn a_cold_session_that_exits_ends_with_its_status() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            tmux_config: "live_clients = 1\n".to_owned(),
            ..DaemonOptions::default()
        },
    );
    // Always printing, so never settled: it holds the one client.
    daemon.create_named(
        "printer",
        "sh -c 'while true; do echo tick; sleep 0.2; done'",
    );
    // Waits for a line without echoing it: once it has settled and gone
    // cold, the line typed from outside prints nothing, and only its exit
    // can bring it back.
    let waiter = daemon.create_named("waiter", "sh -c 'stty -echo; read x; exit 5'");
    wait_for("the waiting session cold", || {
        let session = by_name(&daemon)["waiter"].clone();
        (session["live"] == false).then_some(())
    });
    tmux.send_keys("waiter", &["Enter"]);
    let ended = daemon.wait_until(&waiter, "exited");
    assert_eq!(ended["exit_status"], 5, "{ended}");
}
