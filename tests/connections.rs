//! What outsiders cannot exhaust: silent connections time out, open
//! connections are capped, open health checks do not fork per request, and
//! shutdown is prompt whatever is connected.

use crate::common;
use crate::wire;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer};
use serde_json::json;
use wire::{read_head, read_response, send_get, wait_closed};

fn with_http(tmux: &TmuxServer, http: &str) -> Daemon {
    Daemon::start_with(
        tmux,
        DaemonOptions {
            extra_config: format!("[http]\n{http}\n"),
            ..Default::default()
        },
    )
}

fn connect(daemon: &Daemon) -> TcpStream {
    wire::connect(&daemon.base)
}

#[test]
fn a_silent_connection_is_closed_after_the_header_read_timeout() {
    let tmux = TmuxServer::new();
    let daemon = with_http(&tmux, "header_read_timeout_ms = 300");
    let opened = Instant::now();
    let mut silent = connect(&daemon);
    let mut partial = connect(&daemon);
    partial
        .write_all(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    wait_closed(&mut silent);
    wait_closed(&mut partial);
    assert!(
        opened.elapsed() >= Duration::from_millis(300),
        "not before the timeout"
    );
    // One that speaks up in time is served.
    let mut prompt = connect(&daemon);
    send_get(&mut prompt, "/version", true);
    assert_eq!(read_response(&mut prompt, PATIENCE).unwrap().0, 200);
}

/// A GET of `/v1/whoami` with the daemon's credential, kept alive.
fn send_credentialed_get(daemon: &Daemon, stream: &mut TcpStream) {
    let bearer = daemon.auth_header().unwrap();
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Connection", "keep-alive"),
    ];
    wire::send(stream, "GET", "/v1/whoami", &headers, None);
}

#[test]
fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let tmux = TmuxServer::new();
    let daemon = with_http(
        &tmux,
        "header_read_timeout_ms = 600000\nidle_timeout_ms = 400",
    );
    let mut stream = connect(&daemon);
    let mut last_sent = Instant::now();
    for _ in 0..2 {
        last_sent = Instant::now();
        send_credentialed_get(&daemon, &mut stream);
        assert_eq!(
            read_response(&mut stream, PATIENCE).unwrap().0,
            200,
            "kept alive"
        );
    }
    wait_closed(&mut stream);
    // The idle clock starts after the response, so after this request was sent.
    let idle = last_sent.elapsed();
    assert!(idle >= Duration::from_millis(400), "closed after {idle:?}");
}

/// A connection that showed no credential is not kept alive, so a stranger
/// cannot park it after one request.
#[test]
fn a_connection_without_a_credential_is_closed_after_its_answer() {
    let tmux = TmuxServer::new();
    let daemon = with_http(&tmux, "idle_timeout_ms = 600000");
    let mut stranger = connect(&daemon);
    send_get(&mut stranger, "/version", false);
    let (status, _) = read_response(&mut stranger, PATIENCE).unwrap();
    assert_eq!(status, 200);
    wait_closed(&mut stranger);
    let mut refused = connect(&daemon);
    send_get(&mut refused, "/v1/sessions", false);
    assert_eq!(read_response(&mut refused, PATIENCE).unwrap().0, 401);
    wait_closed(&mut refused);
}

#[test]
fn beyond_the_cap_a_connection_waits_until_a_credentialed_one_closes() {
    let tmux = TmuxServer::new();
    let daemon = with_http(
        &tmux,
        "max_connections = 4\nmax_streams = 2\nheader_read_timeout_ms = 600000\nidle_timeout_ms = 600000",
    );
    // Connections that showed a credential are never shed for a newcomer.
    let mut owners: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut stream = connect(&daemon);
            send_credentialed_get(&daemon, &mut stream);
            assert_eq!(read_response(&mut stream, PATIENCE).unwrap().0, 200);
            stream
        })
        .collect();
    // The kernel queues connections in order: this one is accepted only
    // once one of the four before it is gone.
    let mut waiting = connect(&daemon);
    send_get(&mut waiting, "/version", true);
    assert_eq!(
        read_response(&mut waiting, Duration::from_secs(1)),
        None,
        "served beyond the cap"
    );
    drop(owners.pop());
    let (status, _) = read_response(&mut waiting, PATIENCE).expect("served once a slot freed");
    assert_eq!(status, 200);
}

/// 1,000 connections of strangers, idle after a request or silent from the
/// start, do not keep the owner's request in the backlog until they time
/// out (10 s): strangers have a cap of their own, below the daemon's (512),
/// and the oldest is shed for a newcomer. (Answered at once on a quiet
/// machine; the bound is half the timeout, so a loaded one passes too.)
#[test]
fn a_thousand_idle_strangers_do_not_hold_the_owners_request_until_they_time_out() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let mut strangers: Vec<TcpStream> = (0..1000)
        .map(|i| {
            let mut stream = connect(&daemon);
            if i % 2 == 0 {
                send_get(&mut stream, "/version", false);
            }
            stream
        })
        .collect();
    let started = Instant::now();
    let mut owner = connect(&daemon);
    let bearer = daemon.auth_header().unwrap();
    let headers = [("Authorization", bearer.as_str()), ("Connection", "close")];
    wire::send(&mut owner, "GET", "/v1/sessions", &headers, None);
    let answer = read_response(&mut owner, PATIENCE);
    let took = started.elapsed();
    eprintln!("the owner was answered after {took:?} behind 1,000 strangers");
    assert_eq!(answer.map(|(status, _)| status), Some(200));
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    let shed = daemon.metric("tmuxd_connections_shed_total");
    assert!(shed.is_some_and(|n| n > 0.0), "counted: {shed:?}");
    // Every stranger was closed: shed, or answered and not kept alive.
    for stream in &mut strangers {
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        match stream.read_to_end(&mut Vec::new()) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("a stranger's connection stayed open: {e}"),
        }
    }
}

#[test]
fn many_silent_connections_hold_up_a_client_only_until_they_time_out() {
    let tmux = TmuxServer::new();
    let daemon = with_http(
        &tmux,
        "max_connections = 8\nmax_streams = 2\nheader_read_timeout_ms = 500",
    );
    let mut silent: Vec<TcpStream> = (0..40).map(|_| connect(&daemon)).collect();
    let started = Instant::now();
    let mut client = connect(&daemon);
    send_get(&mut client, "/version", true);
    let (status, _) = read_response(&mut client, PATIENCE).expect("served");
    assert_eq!(status, 200);
    eprintln!(
        "served after {:?} behind 40 silent connections",
        started.elapsed()
    );
    for stream in &mut silent {
        wait_closed(stream);
    }
}

#[test]
fn sigterm_exits_promptly_with_silent_sockets_streams_and_feeds_open() {
    let tmux = TmuxServer::new();
    let mut daemon = Daemon::start(&tmux);
    let session = daemon.create(&json!({ "command": common::SHELL }));
    let id = session["session_id"].as_str().unwrap();
    let _silent: Vec<TcpStream> = (0..5).map(|_| connect(&daemon)).collect();
    let mut kept_alive = connect(&daemon);
    send_get(&mut kept_alive, "/version", false);
    read_response(&mut kept_alive, PATIENCE).unwrap();
    let mut feed = connect(&daemon);
    let bearer = daemon.auth_header().unwrap();
    wire::send(
        &mut feed,
        "GET",
        "/v1/events",
        &[("Authorization", &bearer)],
        None,
    );
    assert_eq!(read_head(&mut feed, PATIENCE).unwrap().0, 200);
    let path = format!("/v1/sessions/{id}/stream");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    socket.read().unwrap();
    // An open wait must not hold the exit for the whole drain.
    let mut waiting = connect(&daemon);
    let body = json!({ "match": "never-shown", "timeout_ms": 600_000 });
    wire::send(
        &mut waiting,
        "POST",
        &format!("/v1/sessions/{id}/wait"),
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(&body),
    );
    common::wait_for("the wait to be open", || {
        (daemon.metric("tmuxd_waits") == Some(1.0)).then_some(())
    });

    let (status, took) = daemon.terminate();
    assert!(status.success(), "exit status {status:?}");
    assert!(took.as_secs_f64() < 3.0, "shutdown took {took:?}");
    let (code, _) = read_head(&mut waiting, PATIENCE).unwrap();
    assert_eq!(code, 503, "the open wait is answered");
    assert!(
        !daemon.log().contains("still open"),
        "every connection ended by itself:\n{}",
        daemon.log()
    );
}

/// A `tmux` that records each invocation's arguments, then runs the real one.
fn counting_tmux(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let calls = dir.join("calls");
    let script = dir.join("tmux");
    let text = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec tmux \"$@\"\n",
        calls.display()
    );
    std::fs::write(&script, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, calls)
}

fn version_probes(calls: &Path) -> usize {
    let text = std::fs::read_to_string(calls).unwrap_or_default();
    text.lines()
        .filter(|l| l.split(' ').any(|a| a == "-V"))
        .count()
}

#[test]
fn a_burst_of_health_checks_runs_tmux_a_handful_of_times() {
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let (script, calls) = counting_tmux(dir.path());
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            tmux_bin: Some(script),
            ..Default::default()
        },
    );
    let before = version_probes(&calls);
    let burst = 200;
    let barrier = Arc::new(Barrier::new(burst));
    let started = Instant::now();
    let threads: Vec<_> = (0..burst)
        .map(|i| {
            let (barrier, address) = (barrier.clone(), daemon.base.clone());
            let bearer = daemon.auth_header().unwrap();
            std::thread::spawn(move || {
                let mut stream =
                    TcpStream::connect(address.strip_prefix("http://").unwrap()).unwrap();
                barrier.wait();
                let path = if i % 2 == 0 { "/healthz" } else { "/readyz" };
                let headers = [("Authorization", bearer.as_str()), ("Connection", "close")];
                wire::send(&mut stream, "GET", path, &headers, None);
                read_response(&mut stream, PATIENCE).expect("answered")
            })
        })
        .collect();
    for thread in threads {
        let (status, body) = thread.join().unwrap();
        assert_eq!(status, 200, "{body}");
        assert!(
            body.contains("tmux 3") || body.contains("\"ready\":true"),
            "{body}"
        );
    }
    let took = started.elapsed();
    let probes = version_probes(&calls) - before;
    // One probe in flight at a time, each answer reused for a second.
    let bound = took.as_secs() as usize + 2;
    assert!(
        (1..=bound).contains(&probes),
        "{probes} tmux -V runs for {burst} health checks in {took:?} (at most {bound})"
    );
}
