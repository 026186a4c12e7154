//! Latency of the daemon's main paths, end to end over HTTP against real
//! tmux on a private socket: `scripts/bench` runs it; results go in
//! BENCHMARKS.md. Nothing here asserts a speed.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{Daemon, TmuxServer};
use serde_json::json;

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1000.0;
    println!(
        "{what:<34} n={:<5} p50={:>8.3} ms  p95={:>8.3} ms  p99={:>8.3} ms  max={:>8.3} ms",
        samples.len(),
        at(0.5),
        at(0.95),
        at(0.99),
        at(1.0)
    );
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let value = f();
    (started.elapsed(), value)
}

fn main() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    // Warm up connections and the tmux server.
    let first = daemon.create(&json!({ "command": common::SHELL }));
    let first_id = first["session_id"].as_str().unwrap().to_owned();

    let mut creates = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..50 {
        let (took, session) = time(|| daemon.create(&json!({ "command": common::SHELL })));
        creates.push(took);
        ids.push(session["session_id"].as_str().unwrap().to_owned());
    }
    report("create (POST /v1/sessions)", creates);

    daemon.wait_for_snapshot(&first_id, "$");
    let snapshots: Vec<Duration> = (0..2000)
        .map(|_| time(|| daemon.get(&format!("/v1/sessions/{first_id}/snapshot"))).0)
        .collect();
    report("snapshot text (80x24)", snapshots);
    let ansi: Vec<Duration> = (0..2000)
        .map(|_| time(|| daemon.get(&format!("/v1/sessions/{first_id}/snapshot?format=ansi"))).0)
        .collect();
    report("snapshot ansi (80x24)", ansi);

    let lists: Vec<Duration> = (0..500)
        .map(|_| time(|| daemon.get("/v1/sessions")).0)
        .collect();
    report(&format!("list ({} sessions)", ids.len() + 1), lists);

    let inputs: Vec<Duration> = (0..200)
        .map(|i| {
            time(|| {
                daemon.post(
                    &format!("/v1/sessions/{first_id}/input"),
                    &json!({ "text": format!("echo {i}"), "submit": true }),
                )
            })
            .0
        })
        .collect();
    report("input text+Enter (send-keys)", inputs);

    // Idle detection: from typing `true` + Enter to `wait until idle`
    // answering (includes the 250 ms prompt settle).
    let idles: Vec<Duration> = (0..20)
        .map(|_| {
            time(|| {
                daemon.post(
                    &format!("/v1/sessions/{first_id}/input"),
                    &json!({ "text": "true", "submit": true }),
                );
                let (status, _) = daemon.post(
                    &format!("/v1/sessions/{first_id}/wait"),
                    &json!({ "until": "idle", "timeout_ms": 5000 }),
                );
                assert_eq!(status, 200);
            })
            .0
        })
        .collect();
    report("input -> wait idle (prompt back)", idles);

    // Output latency: from the input request to the echoed marker on a stream.
    let path = format!("/v1/sessions/{first_id}/stream");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    socket.read().unwrap();
    let echoes: Vec<Duration> = (0..50)
        .map(|i| {
            let marker = format!("m{i}x{}", i * 7);
            time(|| {
                daemon.post(
                    &format!("/v1/sessions/{first_id}/input"),
                    &json!({ "text": format!("echo m{i}x$(({i}*7))"), "submit": true }),
                );
                let mut seen = Vec::new();
                while !String::from_utf8_lossy(&seen).contains(&marker) {
                    if let tungstenite::Message::Binary(data) = socket.read().unwrap() {
                        seen.extend_from_slice(&data[8..]);
                    }
                }
            })
            .0
        })
        .collect();
    report("input -> output on stream", echoes);

    let mut kills = Vec::new();
    for id in &ids {
        kills.push(time(|| daemon.delete(&format!("/v1/sessions/{id}?mode=kill"))).0);
    }
    report("delete mode=kill", kills);
}
