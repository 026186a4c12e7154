//! A soak: sessions held open while sessions are created and exit, and
//! output streams and event streams connect and drop, over and over; the
//! daemon's RSS, fds, threads, child processes, zombies and tmux clients
//! are printed before and after, and must come back to where they were.
//! Short by default (the suite); `scripts/soak` runs the long one
//! (`TMUXD_SOAK=full`: 200 held, 1,000 create/exit, 200 WebSocket and 200
//! SSE connect/drop cycles).

use crate::common;
use crate::wire;

use std::time::Instant;

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use reqwest::blocking::Client;
use serde_json::{Value, json};

/// How much of everything a run does.
#[derive(Clone, Copy, Debug)]
struct Plan {
    held: usize,
    cycles: usize,
    websockets: usize,
    event_streams: usize,
}

const SHORT: Plan = Plan {
    held: 20,
    cycles: 100,
    websockets: 30,
    event_streams: 30,
};

const FULL: Plan = Plan {
    held: 200,
    cycles: 1000,
    websockets: 200,
    event_streams: 200,
};

/// What the daemon holds, from /proc and tmux.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Usage {
    rss_kib: u64,
    fds: usize,
    threads: usize,
    children: usize,
    zombies: usize,
    tmux_clients: usize,
}

fn usage(pid: u32, tmux: &TmuxServer) -> Usage {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    let (mut children, mut zombies) = (0, 0);
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parens.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let mut fields = rest.split(' ');
        let (state, ppid) = (fields.next(), fields.next());
        if ppid == Some(&pid.to_string()) {
            children += 1;
            zombies += usize::from(state == Some("Z"));
        }
    }
    let clients = tmux.output(&["list-clients"]);
    Usage {
        rss_kib: field("VmRSS:"),
        fds,
        threads: field("Threads:") as usize,
        children,
        zombies,
        tmux_clients: String::from_utf8_lossy(&clients.stdout).lines().count(),
    }
}

fn print_usage(when: &str, u: &Usage) {
    println!(
        "{when:<8} rss {:>7} KiB  fds {:>4}  threads {:>3}  children {:>4}  zombies {}  tmux clients {:>4}",
        u.rss_kib, u.fds, u.threads, u.children, u.zombies, u.tmux_clients
    );
}

#[test]
fn the_daemon_returns_to_where_it_was_after_a_soak() {
    let plan = match std::env::var("TMUXD_SOAK").as_deref() {
        Ok("full") => FULL,
        _ => SHORT,
    };
    println!("soak: {plan:?}");
    let started = Instant::now();
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    let options = DaemonOptions {
        extra_config: format!("max_sessions = {}\n", plan.held + 2),
        ..Default::default()
    };
    let daemon = Daemon::start_with(&tmux, options);
    wait_for("the anchor adopted", || {
        (daemon.sessions().len() == 1).then_some(())
    });
    print_usage("start", &usage(daemon.pid(), &tmux));
    let held: Vec<String> = (0..plan.held)
        .map(|n| cat_session(&daemon, &format!("held-{n}")))
        .collect();
    let tracked = plan.held + 1;
    let before = settled(&daemon, &tmux, tracked, None);
    print_usage("before", &before);

    create_and_exit(&daemon, plan.cycles);
    connect_and_drop_streams(&daemon, &held, plan.websockets);
    connect_and_drop_events(&daemon, plan.event_streams);

    assert!(
        tmux.has_session("anchor"),
        "the tmux server died during the soak (see scripts/tmux-control-crash)"
    );
    let after = settled(&daemon, &tmux, tracked, Some(&before));
    print_usage("after", &after);
    println!("soak took {:?}", started.elapsed());
    assert_eq!(after.zombies, 0);
    assert_eq!(
        after.children, before.children,
        "a child per session, no more"
    );
    assert_eq!(after.tmux_clients, before.tmux_clients);
    assert!(after.fds <= before.fds + 4, "fds: {before:?} -> {after:?}");
    // Memory the allocator keeps is not a leak; growth per cycle would be.
    let grown = after.rss_kib.saturating_sub(before.rss_kib);
    assert!(grown < 64 * 1024, "RSS grew by {grown} KiB");
}

/// A session running `cat`, which ends when it reads end-of-file.
fn cat_session(daemon: &Daemon, name: &str) -> String {
    let session = daemon.create(&json!({ "name": name, "command": "exec cat" }));
    session["session_id"].as_str().unwrap().to_owned()
}

/// `cycles` sessions created and ended by their program (`C-d` to `cat`),
/// one at a time, each waiting until the daemon noticed its end. One at a
/// time: tmux < 3.7 crashes when a control client is mid-handshake as a
/// session ends (scripts/tmux-control-crash), and tmuxd's turns cannot
/// cover a program that exits on its own while another session attaches
/// (measured: 4 threads of this loop crash tmux 3.3a within seconds). A
/// soak is about tmuxd's leaks, not that.
fn create_and_exit(daemon: &Daemon, cycles: usize) {
    let started = Instant::now();
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(bearer) = daemon.auth_header() {
        headers.insert(reqwest::header::AUTHORIZATION, bearer.parse().unwrap());
    }
    let http = Client::builder()
        .timeout(PATIENCE)
        .default_headers(headers)
        .build()
        .unwrap();
    for _ in 0..cycles {
        one_cycle(&http, &daemon.base);
    }
    println!("{cycles} create/exit cycles in {:?}", started.elapsed());
}

fn one_cycle(http: &Client, base: &str) {
    let body = json!({ "command": "exec cat" });
    let created: Value = http
        .post(format!("{base}/v1/sessions"))
        .json(&body)
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = created["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let eof = json!({ "keys": ["C-d"] });
    let url = format!("{base}/v1/sessions/{id}/input");
    let typed = http.post(url).json(&eof).send().unwrap();
    assert_eq!(typed.status(), 200);
    // An ended session stays readable (state `exited`) for a while.
    wait_for("the session's end noticed", || {
        let answer = http.get(format!("{base}/v1/sessions/{id}")).send().unwrap();
        let body: Value = answer.json().unwrap_or_default();
        (body["session"]["state"] == "exited").then_some(())
    });
}

/// Output streams opened, read until ready, and dropped: closed politely
/// or cut, in turn.
fn connect_and_drop_streams(daemon: &Daemon, held: &[String], count: usize) {
    for n in 0..count {
        let id = &held[n % held.len()];
        let path = format!("/v1/sessions/{id}/stream");
        let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).expect("stream opens");
        assert_eq!(wire::next_json(&mut socket)["type"], "ready");
        if n % 2 == 0 {
            socket.close(None).unwrap();
            while socket.read().is_ok() {}
        }
    }
}

/// Event streams opened (head read) and dropped.
fn connect_and_drop_events(daemon: &Daemon, count: usize) {
    for _ in 0..count {
        let mut stream = wire::connect(&daemon.base);
        let bearer = daemon.auth_header().unwrap();
        let auth = [("Authorization", bearer.as_str())];
        wire::send(&mut stream, "GET", "/v1/events?since=0", &auth, None);
        let (status, _) = wire::read_head(&mut stream, PATIENCE).unwrap();
        assert_eq!(status, 200);
    }
}

/// The daemon once it has finished with what was dropped: `tracked`
/// sessions, no subscribers, a tmux control client per session, and (when
/// comparing) no more threads than `before` had once idle ones retire.
fn settled(daemon: &Daemon, tmux: &TmuxServer, tracked: usize, before: Option<&Usage>) -> Usage {
    let deadline = Instant::now() + PATIENCE;
    // A `tmux -C` child per session, or none when tmuxd speaks tmux's
    // client protocol itself.
    let native = daemon.get("/healthz").1["tmux_client"]
        .as_str()
        .is_some_and(|c| c.starts_with("native"));
    let children = if native { 0 } else { tracked };
    loop {
        let sessions = daemon.sessions().len();
        let subscribers: f64 = daemon
            .metrics()
            .into_iter()
            .filter(|(sample, _)| sample.starts_with("tmuxd_stream_subscribers{"))
            .map(|(_, value)| value)
            .sum();
        let now = usage(daemon.pid(), tmux);
        let threads_back = before.is_none_or(|b| now.threads <= b.threads);
        let done = sessions == tracked
            && subscribers == 0.0
            && now.tmux_clients == tracked
            && now.children == children
            && threads_back;
        if done {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not settle: {sessions} sessions (want {tracked}), {subscribers} \
             subscribers, {now:?}, before {before:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
