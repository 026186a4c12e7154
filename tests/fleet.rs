//! The fleet on one machine: a hub and peers on loopback, each peer with
//! its own tmux server. Lists and ids, every kind of session route through
//! the hub, events fanned in without loss or repeat across peer and hub
//! restarts, a frozen peer. (`fleet_netns.rs` cuts real links.)

use crate::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};

const READ_TOKEN: &str = "read-only-token-for-the-fleet-hub-0123";
const HUB_TOKEN: &str = "read-write-token-for-the-fleet-hub-0123";

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn peer_table(name: &str, peer: &Daemon) -> String {
    format!(
        "[[fleet.peers]]\nname = {name:?}\nurl = {:?}\ntoken = {:?}\n",
        peer.base,
        peer.token().unwrap()
    )
}

/// A hub of `peers` with a read-write and a read token; the harness finds
/// the read-write one where it looks for a generated token.
fn hub(tmux: &TmuxServer, peers: &[(&str, &Daemon)], data_dir: &std::path::Path) -> Daemon {
    hub_waiting(tmux, peers, data_dir, 1500)
}

/// `hub`, giving up on a peer's answer after `request_timeout_ms`.
fn hub_waiting(
    tmux: &TmuxServer,
    peers: &[(&str, &Daemon)],
    data_dir: &std::path::Path,
    request_timeout_ms: u64,
) -> Daemon {
    use std::os::unix::fs::PermissionsExt;
    let tables: String = peers.iter().map(|(n, d)| peer_table(n, d)).collect();
    let extra_config = format!(
        "[auth]\ntoken = {HUB_TOKEN:?}\nread_token = {READ_TOKEN:?}\n\n[http]\nmax_body_bytes = 65536\n\n[fleet]\nheartbeat_ms = 200\nrequest_timeout_ms = {request_timeout_ms}\n\n{tables}"
    );
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let token = data_dir.join("token");
    std::fs::write(&token, HUB_TOKEN).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    Daemon::start_with(
        tmux,
        DaemonOptions {
            extra_config,
            ..DaemonOptions::in_dir(data_dir)
        },
    )
}

/// The peer's own seqs, and the `host_seq`s the hub recorded for it: equal
/// means nothing lost, nothing repeated.
fn seqs(peer: &Daemon, hub: &Daemon, name: &str) -> (Vec<u64>, Vec<u64>) {
    let page = |d: &Daemon| {
        let (status, body) = d.get("/v1/events?format=json&since=0&limit=10000");
        assert_eq!(status, StatusCode::OK, "{body}");
        body["events"].as_array().unwrap().clone()
    };
    let own: Vec<u64> = page(peer)
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    let fanned: Vec<u64> = page(hub)
        .iter()
        .filter(|e| e["host"] == name)
        .map(|e| e["host_seq"].as_u64().unwrap())
        .collect();
    (own, fanned)
}

fn wait_fanned_in(peer: &Daemon, hub: &Daemon, name: &str) -> Vec<u64> {
    wait_for(&format!("{name}'s events on the hub"), || {
        let (own, fanned) = seqs(peer, hub, name);
        (own == fanned).then_some(own)
    })
}

fn listed(hub: &Daemon, query: &str) -> BTreeMap<String, Value> {
    let (status, body) = hub.get(&format!("/v1/sessions{query}"));
    assert_eq!(status, StatusCode::OK, "{body}");
    let sessions = body["sessions"].as_array().unwrap();
    let by_id = sessions
        .iter()
        .map(|s| (s["session_id"].as_str().unwrap().to_owned(), s.clone()));
    by_id.collect()
}

fn with_read_token(
    hub: &Daemon,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> StatusCode {
    let client = reqwest::blocking::Client::new();
    let mut request = client
        .request(method, format!("{}{path}", hub.base))
        .bearer_auth(READ_TOKEN);
    if let Some(body) = body {
        request = request.json(body);
    }
    request.send().unwrap().status()
}

#[test]
fn peer_sessions_are_served_through_the_hub() {
    let (tmux_a, tmux_b, tmux_h) = (TmuxServer::new(), TmuxServer::new(), TmuxServer::new());
    let a = Daemon::start(&tmux_a);
    let b = Daemon::start(&tmux_b);
    let on_a = a.create_named("work", common::SHELL);
    let on_b = b.create_named("build", common::SHELL);
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = hub(&tmux_h, &[("a", &a), ("b", &b)], hub_dir.path());
    let local = hub.create_named("here", common::SHELL);
    let up = hub.wait_host("a", "up");
    assert_eq!(up["version"], env!("CARGO_PKG_VERSION"));
    assert!(up["rtt_ms"].as_f64().is_some(), "{up}");
    assert_eq!(up.get("token"), None);
    hub.wait_host("b", "up");

    // Lists and ids: local unchanged, peers' qualified, with `host`.
    let remote_a = format!("a/{on_a}");
    let remote_b = format!("b/{on_b}");
    let all = wait_for("every session listed", || {
        let all = listed(&hub, "");
        (all.len() == 3).then_some(all)
    });
    assert_eq!(all[&local].get("host"), None);
    assert_eq!(all[&remote_a]["host"], "a");
    assert_eq!(all[&remote_a]["tmux_name"], "work");
    assert_eq!(all[&remote_b]["host"], "b");
    let only_b = listed(&hub, "?host=b");
    assert_eq!(only_b.keys().collect::<Vec<_>>(), [&remote_b]);
    let (status, body) = hub.get("/v1/sessions?host=nowhere");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = hub.get("/v1/sessions/nowhere%2Fsess_1");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nowhere"),
        "{body}"
    );

    // Summary, input and snapshot on a remote session, one hop each.
    let path = format!("/v1/sessions/a%2F{on_a}");
    let (status, body) = hub.get(&path);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["session"]["session_id"], remote_a.as_str());
    let (status, body) = hub.post(
        &format!("{path}/input"),
        &json!({"text": "echo fleet-$((6*7))", "submit": true}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for("the remote screen", || {
        let (_, snap) = hub.get(&format!("{path}/snapshot?format=text"));
        snap.to_string().contains("fleet-42").then_some(())
    });
    // A wait on the remote session.
    let (status, body) = hub.post(
        &format!("{path}/wait"),
        &json!({"match": "fleet-4[0-9]", "timeout_ms": 5000}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["session"]["host"], "a");

    // The read token stays read-only on the peer.
    assert_eq!(
        with_read_token(
            &hub,
            reqwest::Method::GET,
            &format!("{path}/snapshot"),
            None
        ),
        StatusCode::OK
    );
    let input = json!({"text": "echo nope", "submit": true});
    assert_eq!(
        with_read_token(
            &hub,
            reqwest::Method::POST,
            &format!("{path}/input"),
            Some(&input)
        ),
        StatusCode::FORBIDDEN
    );

    // A body past the hub's http.max_body_bytes (64 KiB here) is refused at
    // the hub, though the peer would take it.
    let huge = json!({"text": "x".repeat(100 * 1024)});
    let (status, body) = hub.post(&format!("{path}/input"), &huge);
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    // The stream WebSocket through the hub: ready, then our input's echo.
    let (mut socket, _) = tungstenite::connect(hub.ws_request(&format!("{path}/stream"))).unwrap();
    let first = socket.read().unwrap();
    let ready: Value = serde_json::from_str(first.to_text().unwrap()).unwrap();
    assert_eq!(ready["type"], "ready", "{ready}");
    socket
        .send(tungstenite::Message::text(
            json!({"type": "input", "text": "echo via-$((1+1))-ws\r"}).to_string(),
        ))
        .unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + common::PATIENCE;
    while !String::from_utf8_lossy(&seen).contains("via-2-ws") {
        assert!(
            Instant::now() < deadline,
            "no echo: {}",
            String::from_utf8_lossy(&seen)
        );
        if let tungstenite::Message::Binary(frame) = socket.read().unwrap() {
            seen.extend_from_slice(&frame[8..]);
        }
    }
    drop(socket);
    // A read-token socket authenticated by first message: input refused at the hub.
    let url = format!("{}{path}/stream", hub.base.replace("http://", "ws://"));
    let (mut socket, _) = tungstenite::connect(url).unwrap();
    socket
        .send(tungstenite::Message::text(
            json!({"type": "auth", "token": READ_TOKEN}).to_string(),
        ))
        .unwrap();
    let ready: Value = serde_json::from_str(socket.read().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(ready["type"], "ready", "{ready}");
    socket
        .send(tungstenite::Message::text(
            json!({"type": "input", "text": "echo sneaky\r"}).to_string(),
        ))
        .unwrap();
    let refused = loop {
        if let tungstenite::Message::Text(text) = socket.read().unwrap() {
            break serde_json::from_str::<Value>(text.as_str()).unwrap();
        }
    };
    assert_eq!(refused["type"], "error", "{refused}");
    drop(socket);
    // Without a bearer header, nothing of the fleet shows before the auth
    // message: an unknown host upgrades like any id, then closes after it.
    let url = format!(
        "{}/v1/sessions/nowhere%2Fsess_1/stream",
        hub.base.replace("http://", "ws://")
    );
    let (mut socket, response) = tungstenite::connect(url).unwrap();
    assert_eq!(response.status(), 101);
    socket
        .send(tungstenite::Message::text(
            json!({"type": "auth", "token": HUB_TOKEN}).to_string(),
        ))
        .unwrap();
    let closed = loop {
        match socket.read() {
            Ok(tungstenite::Message::Close(frame)) => break frame.unwrap().reason.to_string(),
            Ok(_) => continue,
            Err(e) => panic!("no close frame: {e}"),
        }
    };
    assert!(closed.contains("nowhere"), "{closed}");
    // The screen WebSocket through the hub.
    let (mut screen, _) = tungstenite::connect(hub.ws_request(&format!("{path}/screen"))).unwrap();
    let first: Value = serde_json::from_str(screen.read().unwrap().to_text().unwrap()).unwrap();
    assert!(first.to_string().contains("via-2-ws"), "{first}");
    drop(screen);

    // Events fanned in with `host`, in the hub's own numbering, each once.
    wait_fanned_in(&a, &hub, "a");
    wait_fanned_in(&b, &hub, "b");
    let (_, page) = hub.get("/v1/events?format=json&since=0&limit=10000");
    let events = page["events"].as_array().unwrap();
    let hub_seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(
        hub_seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "{hub_seqs:?}"
    );
    let created = events
        .iter()
        .find(|e| e["host"] == "a" && e["kind"] == "session_created")
        .unwrap();
    assert_eq!(created["session_id"], remote_a.as_str());

    // A remote delete leaves the hub's list.
    let (status, body) = hub.delete(&path);
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for("the deleted session gone from the list", || {
        (!listed(&hub, "").contains_key(&remote_a)).then_some(())
    });
    // Nothing of the peers' tokens in anything the hub serves or writes.
    let (_, hosts) = hub.get("/v1/hosts");
    let (_, metrics) = hub.get("/metrics");
    for peer in [&a, &b] {
        let token = peer.token().unwrap();
        assert!(!hosts.to_string().contains(token));
        assert!(!metrics.to_string().contains(token));
        assert!(!hub.log().contains(token));
        assert!(!page.to_string().contains(token));
    }
}

#[test]
fn events_resume_without_gap_or_repeat_across_restarts() {
    let (tmux_a, tmux_h) = (TmuxServer::new(), TmuxServer::new());
    let peer_dir = tempfile::tempdir().unwrap();
    let hub_dir = tempfile::tempdir().unwrap();
    let bind = format!("127.0.0.1:{}", free_port());
    let start_peer = || {
        Daemon::start_with(
            &tmux_a,
            DaemonOptions {
                bind: Some(bind.clone()),
                ..DaemonOptions::in_dir(peer_dir.path())
            },
        )
    };
    let mut a = start_peer();
    let mut hub_daemon = hub(&tmux_h, &[("a", &a)], hub_dir.path());
    let id = a.create_named("one", common::SHELL);
    let path = format!("/v1/sessions/a%2F{id}");
    wait_fanned_in(&a, &hub_daemon, "a");
    wait_for("the new session listed", || {
        listed(&hub_daemon, "")
            .contains_key(&format!("a/{id}"))
            .then_some(())
    });

    // The peer goes away: down within seconds, its sessions kept, stale.
    a.terminate();
    let down = hub_daemon.wait_host("a", "down");
    assert!(down["last_error"].as_str().is_some(), "{down}");
    let stale = &listed(&hub_daemon, "")[&format!("a/{id}")];
    assert_eq!(stale["stale"], true, "{stale}");
    assert!(stale["stale_since"].is_string(), "{stale}");
    let (status, body) = hub_daemon.get(&format!("{path}/snapshot"));
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "peer_unavailable");

    // Back, with events made meanwhile... by the peer restarting itself.
    a = start_peer();
    hub_daemon.wait_host("a", "up");
    a.create_named("two", common::SHELL);
    let after_peer = wait_fanned_in(&a, &hub_daemon, "a");
    let fresh = &listed(&hub_daemon, "")[&format!("a/{id}")];
    assert_eq!(fresh.get("stale"), None, "{fresh}");

    // The hub restarts while the peer keeps making events.
    hub_daemon.terminate();
    a.create_named("three", common::SHELL);
    a.create_named("four", common::SHELL);
    hub_daemon = hub(&tmux_h, &[("a", &a)], hub_dir.path());
    let after_hub = wait_fanned_in(&a, &hub_daemon, "a");
    assert!(after_hub.len() > after_peer.len() + 1, "{after_hub:?}");
    // Killed, not stopped: the log holds the cursor.
    a.create_named("five", common::SHELL);
    wait_fanned_in(&a, &hub_daemon, "a");
    hub_daemon.kill9();
    a.create_named("six", common::SHELL);
    hub_daemon = hub(&tmux_h, &[("a", &a)], hub_dir.path());
    wait_fanned_in(&a, &hub_daemon, "a");
    assert!(hub_daemon.data_dir.join("fleet-cursors.json").exists());
}

#[test]
fn a_frozen_peer_times_out_clearly_and_the_rest_answer() {
    let (tmux_a, tmux_b, tmux_h) = (TmuxServer::new(), TmuxServer::new(), TmuxServer::new());
    let a = Daemon::start(&tmux_a);
    let b = Daemon::start(&tmux_b);
    let on_a = a.create_named("alive", common::SHELL);
    let on_b = b.create_named("frozen", common::SHELL);
    let hub_dir = tempfile::tempdir().unwrap();
    // A timeout long enough that waiting for the frozen peer is told
    // apart from a loaded machine's slowness (the bound below is half).
    let hub = hub_waiting(&tmux_h, &[("a", &a), ("b", &b)], hub_dir.path(), 4000);
    hub.wait_host("a", "up");
    hub.wait_host("b", "up");
    b.freeze();
    // Before the hub notices, a request waits out the timeout; after, it is
    // refused at once. Either way it says which host and why.
    let started = Instant::now();
    let (status, body) = hub.get(&format!("/v1/sessions/b%2F{on_b}/snapshot"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        [StatusCode::GATEWAY_TIMEOUT, StatusCode::SERVICE_UNAVAILABLE].contains(&status),
        "{status} {body}"
    );
    assert!(
        body["error"]["message"].as_str().unwrap().contains("`b`"),
        "{body}"
    );
    hub.wait_host("b", "down");
    let started = Instant::now();
    let (status, body) = hub.get(&format!("/v1/sessions/a%2F{on_a}/snapshot"));
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = hub.get("/v1/sessions");
    assert_eq!(status, StatusCode::OK);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    b.signal(libc::SIGCONT);
    hub.wait_host("b", "up");
    let (status, body) = hub.get(&format!("/v1/sessions/b%2F{on_b}/snapshot"));
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[test]
fn bad_peer_config_exits_78_naming_the_key() {
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[[fleet.peers]]\nname = \"gpu_1\"\nurl = \"http://127.0.0.1:1\"\ntoken = \"x\"\n",
            "fleet.peers[0].name",
        ),
        (
            "[[fleet.peers]]\nname = \"gpu1\"\nurl = \"https://127.0.0.1:1\"\ntoken = \"x\"\n",
            "fleet.peers[0].url",
        ),
        (
            "[[fleet.peers]]\nname = \"gpu1\"\nurl = \"http://127.0.0.1:1\"\n",
            "fleet.peers[0].token",
        ),
        (
            "[[fleet.peers]]\nname = \"gpu1\"\nurl = \"http://127.0.0.1:1\"\ntoken_file = \"/nonexistent/token\"\n",
            "fleet.peers[0].token_file",
        ),
    ];
    for (config, key) in cases {
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            format!("{config}\n[tmux]\nsocket_name = {:?}\n", tmux.socket),
        )
        .unwrap();
        let output = common::tmuxd_command(dir.path())
            .args(["serve", "--bind", "127.0.0.1:0", "--config"])
            .arg(&path)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(78), "{key}: {stderr}");
        assert!(stderr.contains(key), "{key}: {stderr}");
    }
}

#[test]
fn the_cli_lists_hosts_and_takes_peer_ids() {
    let (tmux_a, tmux_h) = (TmuxServer::new(), TmuxServer::new());
    let a = Daemon::start(&tmux_a);
    let on_a = a.create_named("build", common::SHELL);
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = hub(&tmux_h, &[("a", &a)], hub_dir.path());
    hub.create_named("here", common::SHELL);
    hub.wait_host("a", "up");
    wait_for("a's session listed", || {
        listed(&hub, "")
            .contains_key(&format!("a/{on_a}"))
            .then_some(())
    });
    let run = |args: &[&str]| {
        let output = hub.client().args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let table = run(&["ls"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("HOST "), "{table}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- ") && l.contains("here")),
        "{table}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("a ") && l.contains(&format!("a/{on_a}"))),
        "{table}"
    );
    let only_a = run(&["ls", "--host", "a"]);
    assert!(!only_a.contains("here"), "{only_a}");
    assert!(only_a.contains("build"), "{only_a}");
    // A peer's session by HOST/NAME and by HOST/sess_N.
    run(&["send", "--enter", "a/build", "echo named-$((2+3))"]);
    let shown = wait_for("the screen through the hub", || {
        let screen = run(&["snap", &format!("a/{on_a}")]);
        screen.contains("named-5").then_some(screen)
    });
    assert!(shown.contains("named-5"));
    // attach: ssh -t to the host, its tmux as its daemon reports it (a
    // stand-in ssh prints what it was asked to run).
    let bin = tempfile::tempdir().unwrap();
    let ssh = bin.path().join("ssh");
    std::fs::write(&ssh, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let output = hub
        .client()
        .env("PATH", path)
        .args(["attach", "a/build"])
        .output()
        .unwrap();
    let argv = String::from_utf8(output.stdout).unwrap();
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(argv[..3], ["-t", "127.0.0.1", "--"], "{argv:?}");
    assert!(argv[3].contains("attach-session -t =build"), "{argv:?}");
    assert!(argv[3].contains(&tmux_a.socket), "{argv:?}");
}

/// The dashboard of a hub (`tests/browser/fleet.mjs` in chromium): the
/// wall grouped by host with each host's status; a peer's session that
/// needs you above every host's group, ended ones included (issue 32,
/// item 8); a peer gone, its tiles stale.
#[test]
fn the_wall_groups_sessions_by_host() {
    let (tmux_a, tmux_h) = (TmuxServer::new(), TmuxServer::new());
    let a = Daemon::start(&tmux_a);
    let on_a = a.create_named("remote", common::SHELL);
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = hub(&tmux_h, &[("a", &a)], hub_dir.path());
    let local = hub.create_named("local", common::SHELL);
    hub.wait_host("a", "up");
    let browser = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        browser.join("node_modules/playwright-core").exists(),
        "tests/browser/node_modules is missing: run scripts/test (it runs `npm ci` there)"
    );
    let output = std::process::Command::new("node")
        .args(["dashboard.mjs", "fleet"])
        .current_dir(&browser)
        .env("TMUXD_URL", &hub.base)
        .env("TMUXD_TEST_TOKEN", HUB_TOKEN)
        .env("TMUXD_TEST_SHELL", common::SHELL)
        .env("TMUXD_TEST_PEER_ID", format!("a/{on_a}"))
        .env("TMUXD_TEST_PEER_PID", a.pid().to_string())
        .env("TMUXD_TEST_TMUX_SOCKET", tmux_a.socket.as_str())
        .env("TMUXD_TEST_LOCAL_ID", &local)
        .output()
        .expect("node (scripts/test installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    println!("{text}");
}

/// A hub notifies of its own sessions only: a peer's events, fanned in,
/// are the peer's to notify of.
#[test]
fn a_hub_does_not_notify_of_peer_events() {
    let (tmux_a, tmux_h) = (TmuxServer::new(), TmuxServer::new());
    let a = Daemon::start(&tmux_a);
    let on_a = a.create_named("remote", common::SHELL);
    let hub_dir = tempfile::tempdir().unwrap();
    let notified = hub_dir.path().join("notified");
    let script = format!("echo \"$TMUXD_SESSION_ID\" >> {}", notified.display());
    let peer = peer_table("a", &a);
    let extra_config = format!(
        "[auth]\ntoken = {HUB_TOKEN:?}\n\n[notify]\ncommand = [\"sh\", \"-c\", {script:?}]\ncooldown_s = 0\n\n[fleet]\nheartbeat_ms = 200\n\n{peer}"
    );
    let data_dir = hub_dir.path().join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(data_dir.join("token"), HUB_TOKEN).unwrap();
    std::fs::set_permissions(
        data_dir.join("token"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let hub = Daemon::start_with(
        &tmux_h,
        DaemonOptions {
            extra_config,
            ..DaemonOptions::in_dir(&data_dir)
        },
    );
    hub.wait_host("a", "up");
    // The peer's session ends: an exit the peer notifies of, fanned in.
    let (status, body) = hub.delete(&format!("/v1/sessions/a%2F{on_a}?mode=kill"));
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_fanned_in(&a, &hub, "a");
    // Then one of the hub's own ends: notified, and after the peer's
    // (events are taken in order), so the file now says all there is.
    let local = hub.create_named("local", common::SHELL);
    let (status, body) = hub.delete(&format!("/v1/sessions/{local}?mode=kill"));
    assert_eq!(status, StatusCode::OK, "{body}");
    let lines = wait_for("the hub's own exit notified", || {
        let text = std::fs::read_to_string(&notified).ok()?;
        text.contains(&local).then_some(text)
    });
    assert_eq!(lines.trim(), local, "only the hub's own session: {lines}");
}
