//! The fleet's costs (issue 22): a hub and 3 peers of 100 sessions each,
//! every daemon and tmux server on this machine over loopback. The hub's
//! list (served from its copy, no fan-out), the latency of a peer's event
//! to a subscriber of the hub's `/v1/events`, and a snapshot through the
//! hub against the same snapshot asked of the peer. `scripts/bench` runs
//! it (`TMUXD_BENCH_FLEET_N` sessions per peer); results go in
//! BENCHMARKS.md. Nothing here asserts a speed.

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::{Value, json};

const HUB_TOKEN: &str = "read-write-token-for-the-fleet-bench-0123";

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1000.0;
    println!(
        "{what:<44} n={:<5} p50={:>8.3} ms  p95={:>8.3} ms  p99={:>8.3} ms  max={:>8.3} ms",
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
    let per_peer: usize = std::env::var("TMUXD_BENCH_FLEET_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let tmuxes: Vec<TmuxServer> = (0..3).map(|_| TmuxServer::new()).collect();
    let peers: Vec<Daemon> = tmuxes
        .iter()
        .map(|tmux| {
            Daemon::start_with(
                tmux,
                DaemonOptions {
                    extra_config: format!("max_sessions = {}\n", per_peer + 16),
                    ..DaemonOptions::default()
                },
            )
        })
        .collect();
    let started = Instant::now();
    let mut first_ids = Vec::new();
    for peer in &peers {
        for i in 0..per_peer {
            let id = peer.create_named(&format!("s{i}"), "cat");
            if i == 0 {
                first_ids.push(id);
            }
        }
    }
    println!(
        "{} sessions made on 3 peers in {:.1} s",
        3 * per_peer,
        started.elapsed().as_secs_f64()
    );
    let hub_tmux = TmuxServer::new();
    let hub_dir = tempfile::tempdir().unwrap();
    let data_dir = hub_dir.path().join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(data_dir.join("token"), HUB_TOKEN).unwrap();
        std::fs::set_permissions(
            data_dir.join("token"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
    }
    let tables: String = peers
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "[[fleet.peers]]\nname = \"p{i}\"\nurl = {:?}\ntoken = {:?}\n",
                p.base,
                p.token().unwrap()
            )
        })
        .collect();
    let started = Instant::now();
    let hub = Daemon::start_with(
        &hub_tmux,
        DaemonOptions {
            extra_config: format!("[auth]\ntoken = {HUB_TOKEN:?}\n\n[fleet]\n{tables}"),
            ..DaemonOptions::in_dir(&data_dir)
        },
    );
    wait_for("every peer session listed on the hub", || {
        let (_, list) = hub.get("/v1/sessions");
        (list["sessions"].as_array()?.len() == 3 * per_peer).then_some(())
    });
    println!(
        "hub up with {} peer sessions listed in {:.2} s",
        3 * per_peer,
        started.elapsed().as_secs_f64()
    );

    let lists: Vec<Duration> = (0..300)
        .map(|_| time(|| hub.get("/v1/sessions")).0)
        .collect();
    report(&format!("hub list ({} peer sessions)", 3 * per_peer), lists);
    let direct_lists: Vec<Duration> = (0..300)
        .map(|_| time(|| peers[0].get("/v1/sessions")).0)
        .collect();
    report(
        &format!("peer list, direct ({per_peer} sessions)"),
        direct_lists,
    );

    let remote = format!("/v1/sessions/p0%2F{}/snapshot", first_ids[0]);
    let local = format!("/v1/sessions/{}/snapshot", first_ids[0]);
    let via_hub: Vec<Duration> = (0..1000).map(|_| time(|| hub.get(&remote)).0).collect();
    let direct: Vec<Duration> = (0..1000).map(|_| time(|| peers[0].get(&local)).0).collect();
    report("snapshot through the hub (80x24)", via_hub);
    report("snapshot asked of the peer (80x24)", direct);

    // A subscriber of the hub's stream; each thought put on a peer is one
    // event. Latency: from the PUT being sent to the hub's subscriber
    // reading the event (client clock), and from the peer stamping it
    // (`host_at`) to the subscriber reading it.
    let client = reqwest::blocking::Client::builder()
        .timeout(None::<Duration>)
        .build()
        .unwrap();
    let response = client
        .get(format!("{}/v1/events", hub.base))
        .bearer_auth(HUB_TOKEN)
        .send()
        .unwrap();
    let mut lines = BufReader::new(response).lines();
    let mut sent_to_seen = Vec::new();
    let mut stamped_to_seen = Vec::new();
    for i in 0..300 {
        let peer = &peers[i % 3];
        let marker = format!("bench-{i}");
        let path = format!("/v1/sessions/{}/thought", first_ids[i % 3]);
        let sent = Instant::now();
        let (status, body) =
            peer.request(reqwest::Method::PUT, &path, Some(&json!({"text": marker})));
        assert!(status.is_success(), "{body}");
        loop {
            let line = lines.next().expect("the hub's stream").unwrap();
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let event: Value = serde_json::from_str(data).unwrap();
            if event["kind"] != "thought_update" || !data.contains(&format!("\"{marker}\"")) {
                continue;
            }
            sent_to_seen.push(sent.elapsed());
            let stamped: chrono::DateTime<chrono::Utc> =
                event["host_at"].as_str().unwrap().parse().unwrap();
            let lag = chrono::Utc::now() - stamped;
            stamped_to_seen.push(lag.to_std().unwrap_or_default());
            break;
        }
    }
    report("event: PUT on a peer -> hub subscriber", sent_to_seen);
    report("event: peer's stamp -> hub subscriber", stamped_to_seen);
}
