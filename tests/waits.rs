//! Waits under load: many `match` waiters on a busy window share one
//! evaluation (the daemon stays responsive), waits are capped per session
//! and in all, and a regex too big to compile is refused quickly, off the
//! server's workers.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, SHELL, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// `/healthz` and the busy session's own summary, p50, with 200 `match`
/// waiters on a busy 500x500 window, must stay under this. Generous for a
/// loaded 2-core machine running a debug build: with shared evaluation they
/// measured ~1-2 ms; when every waiter rendered its own snapshot, the
/// session's summary queued behind their renders for 59 s.
const P50_BOUND: Duration = Duration::from_millis(250);

/// 40 regexes past the size limit must all be refused within this. Each
/// stops compiling at the limit: measured ~1.2 s for 40 in a debug build;
/// with the regex crate's default limit (10 MiB), 160 `\w{500}` took 116 s.
const REFUSALS_BOUND: Duration = Duration::from_secs(15);

/// A program redrawing every row of a large window, 20 times a second,
/// with a counter so every frame changes the screen.
const REDRAW: &str = r#"$| = 1; my $i = 0;
while (1) {
    $i++;
    my $frame = "\e[H";
    $frame .= sprintf("frame %8d row %3d %s\r\n", $i, $_, "x" x 40) for 1 .. 498;
    print $frame;
    select(undef, undef, undef, 0.05);
}
"#;

/// Sends `POST /v1/sessions/{id}/wait` with `body` on a connection of its
/// own and leaves the answer unread: the wait stays open while the stream
/// does.
fn open_wait(daemon: &Daemon, id: &str, body: &Value) -> TcpStream {
    let address = daemon.base.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(address).unwrap();
    let body = body.to_string();
    let auth = daemon
        .auth_header()
        .map(|h| format!("Authorization: {h}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /v1/sessions/{id}/wait HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// The status line and body of the answer on `stream` (read to its end).
fn read_answer(mut stream: TcpStream) -> (u16, String) {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// Waits open in the daemon, as `/metrics` counts them.
fn open_waits(daemon: &Daemon) -> u64 {
    let (status, text) = daemon.get("/metrics");
    assert_eq!(status, StatusCode::OK);
    let text = text.as_str().unwrap_or_default().to_owned();
    text.lines()
        .find_map(|line| line.strip_prefix("tmuxd_waits "))
        .and_then(|value| value.trim().parse().ok())
        .expect("tmuxd_waits in /metrics")
}

/// Waits until exactly `count` waits are open.
fn until_open(daemon: &Daemon, count: u64) {
    wait_for(&format!("{count} open waits"), || {
        (open_waits(daemon) == count).then_some(())
    });
}

/// CPU time the process has used (user + system).
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis(ticks * 1000 / per_second)
}

/// Latencies of `GET path`, one request after another.
fn latencies(daemon: &Daemon, path: &str, count: usize) -> Vec<Duration> {
    (0..count)
        .map(|_| {
            let started = Instant::now();
            let (status, _) = daemon.get(path);
            assert_eq!(status, StatusCode::OK);
            started.elapsed()
        })
        .collect()
}

fn healthz_latencies(daemon: &Daemon, count: usize) -> Vec<Duration> {
    latencies(daemon, "/healthz", count)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[test]
fn two_hundred_match_waits_on_a_busy_window_leave_the_daemon_responsive() {
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("redraw.pl");
    std::fs::write(&script, REDRAW).unwrap();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[http]\nmax_waits_per_session = 256\n".into(),
            ..Default::default()
        },
    );
    let session = daemon.create(&json!({
        "name": "busy", "cols": 500, "rows": 500,
        "command": format!("perl {}", script.display()),
    }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    daemon.wait_for_snapshot(&id, "row 400");
    let pid = daemon.pid();

    let quiet_p50 = median(healthz_latencies(&daemon, 20));
    let never = json!({ "match": "zzzq", "timeout_ms": 600_000 });
    let waits: Vec<TcpStream> = (0..200).map(|_| open_wait(&daemon, &id, &never)).collect();
    until_open(&daemon, 200);

    let cpu_before = cpu_of(pid);
    let started = Instant::now();
    let loaded_p50 = median(healthz_latencies(&daemon, 40));
    let session_p50 = median(latencies(&daemon, &format!("/v1/sessions/{id}"), 20));
    let cpu = (cpu_of(pid) - cpu_before).as_secs_f64() / started.elapsed().as_secs_f64();
    // A waiter for what is on the screen is still answered meanwhile.
    let (status, found) = daemon.post(
        &format!("/v1/sessions/{id}/wait"),
        &json!({ "match": "row 123 x+", "timeout_ms": PATIENCE.as_millis() as u64 }),
    );
    eprintln!(
        "healthz p50: {quiet_p50:?} before the waits, {loaded_p50:?} with 200; \
         the session's summary p50 {session_p50:?}; daemon CPU {:.0}% of a core",
        cpu * 100.0
    );
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["match"]["row"], 122, "{found}");
    assert!(
        loaded_p50 < P50_BOUND,
        "healthz p50 {loaded_p50:?} with 200 waiters (bound {P50_BOUND:?}; {quiet_p50:?} without)"
    );
    assert!(
        session_p50 < P50_BOUND,
        "the session's summary p50 {session_p50:?} with 200 waiters (bound {P50_BOUND:?})"
    );
    drop(waits);
}

#[test]
fn waits_past_the_caps_answer_429_naming_the_cap() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[http]\nmax_waits_per_session = 2\nmax_waits = 3\n".into(),
            ..Default::default()
        },
    );
    let a = daemon.create_named("a", SHELL);
    let b = daemon.create_named("b", SHELL);
    daemon.wait_for_snapshot(&a, "$");
    let wait = |id: &str| {
        daemon.post(
            &format!("/v1/sessions/{id}/wait"),
            &json!({ "until": "exited", "timeout_ms": 1 }),
        )
    };

    let freed = open_wait(
        &daemon,
        &a,
        &json!({ "match": "free-me", "timeout_ms": 600_000 }),
    );
    let held = open_wait(
        &daemon,
        &a,
        &json!({ "until": "exited", "timeout_ms": 600_000 }),
    );
    until_open(&daemon, 2);
    let (status, refused) = wait(&a);
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["error"]["code"], "capacity_exceeded", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("http.max_waits_per_session = 2"),
        "{message}"
    );
    // Room on `b`, within the total.
    assert_eq!(wait(&b).0, StatusCode::REQUEST_TIMEOUT);

    let on_b = open_wait(
        &daemon,
        &b,
        &json!({ "until": "exited", "timeout_ms": 600_000 }),
    );
    until_open(&daemon, 3);
    let (status, refused) = wait(&b);
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("http.max_waits = 3"), "{message}");

    // A wait that is answered frees its slot.
    daemon.type_line(&a, "echo free-me");
    let (status, answer) = read_answer(freed);
    assert_eq!(status, 200, "{answer}");
    until_open(&daemon, 2);
    assert_eq!(wait(&a).0, StatusCode::REQUEST_TIMEOUT);
    drop((held, on_b));
}

#[test]
fn a_regex_past_the_size_limit_is_refused_quickly_off_the_workers() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("s", SHELL);
    let path = format!("/v1/sessions/{id}/wait");
    let (status, body) = daemon.post(&path, &json!({ "match": r"\w{500}", "timeout_ms": 1 }));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("more than 524288 bytes"), "{message}");
    let (status, body) = daemon.post(&path, &json!({ "match": "(unclosed", "timeout_ms": 1 }));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // The same class, ASCII only, is small.
    let (status, body) = daemon.post(
        &path,
        &json!({ "match": r"(?-u:\w){500}", "timeout_ms": 1 }),
    );
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT, "{body}");

    // Many at once: the health check is answered meanwhile.
    let quiet_p50 = median(healthz_latencies(&daemon, 10));
    let big = json!({ "match": r"[\w\d]{900}", "timeout_ms": 1 });
    let started = Instant::now();
    let pending: Vec<TcpStream> = (0..40).map(|_| open_wait(&daemon, &id, &big)).collect();
    let loaded = median(healthz_latencies(&daemon, 20));
    for stream in pending {
        let (status, answer) = read_answer(stream);
        assert_eq!(status, 400, "{answer}");
    }
    let answered = started.elapsed();
    eprintln!(
        "healthz p50: {quiet_p50:?} idle, {loaded:?} with 40 oversized regexes compiling; \
         all 40 refused in {answered:?}"
    );
    assert!(
        answered < REFUSALS_BOUND,
        "40 oversized regexes took {answered:?} to refuse (bound {REFUSALS_BOUND:?})"
    );
    assert!(
        loaded < P50_BOUND,
        "healthz p50 {loaded:?} while 40 oversized regexes compile (bound {P50_BOUND:?})"
    );
}

/// A line the program printed wider than the pane is matched across the
/// wrap, and answered whole (it was cut at the pane's width: `…0 filtered
/// out; fini`). The command line typed to print it holds the text in two
/// quoted halves, so only the output matches.
#[test]
fn a_match_reads_a_wrapped_line_whole() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let line = "test result: ok. 12 passed; 0 failed; 0 filtered out; finished in 0.13s";
    let session =
        daemon.create(&json!({ "name": "narrow", "command": SHELL, "cols": 30, "rows": 12 }));
    let id = session["session_id"].as_str().unwrap();
    daemon.wait_until(id, "idle");
    daemon.type_line(
        id,
        "printf '%s %s\\n' 'test result: ok. 12 passed; 0 failed; 0' 'filtered out; finished in 0.13s'",
    );
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/wait"),
        &json!({ "match": "0 filtered out; fini", "timeout_ms": PATIENCE.as_millis() as u64 }),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["match"]["line"], line, "{body}");
    let out = daemon
        .client()
        .args([
            "wait",
            "narrow",
            "--match",
            "0 failed; 0 filtered",
            "--timeout",
            "60s",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{line}\n"));
}
