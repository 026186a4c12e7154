//! Never crash the user's tmux (issue 18): while tmuxd tracks 30 sessions
//! and adopts every new one, outside scripts create and kill short
//! sessions with plain tmux (as tmuxinator and sesh do), a person works a
//! real tmux client on a PTY (new windows, splits, pane and session
//! switches, renames, detaches), and sessions come and go through the API.
//! tmux before 3.7 dies (`segfault at 20`, tmux issue 4980) when any of
//! that lands while one of tmuxd's control clients is half identified; a
//! `tmux -C` child per session lost the server about once in 100 outside
//! operations. The count of server deaths must be zero.
//!
//! The suite runs a short churn (`SHORT_OPS`); `scripts/crash-churn` runs
//! the long one (`churn_long`, ignored here) and can run another build of
//! tmuxd under it (`TMUXD_TEST_DAEMON_BIN`) to compare.

use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::json;

use super::Rng;
use crate::common::pty::PtyClient;
use crate::common::{Daemon, PATIENCE, SHELL, TmuxServer, wait_for};

/// Sessions tmuxd tracks through the churn.
const TRACKED: usize = 30;
/// Outside operations (a `new-session` or `kill-session` by plain tmux)
/// in the suite's run: with `tmux -C` children, about 1 in 100 of these
/// killed tmux 3.3a, so a run of this length fails on such code nearly
/// every time (0.99^400 < 2 %).
const SHORT_OPS: usize = 400;
/// Threads running outside scripts.
const SCRIPTS: usize = 2;
/// Short sessions a script keeps at most before it kills one.
const SCRIPT_POOL: usize = 6;

#[test]
fn outside_churn_and_a_person_at_a_client_never_crash_tmux() {
    let report = churn(SHORT_OPS);
    println!("{report:?}");
    assert_eq!(report.crashes, 0, "the tmux server died: {report:?}");
    assert!(
        report.adopted > 0,
        "tmuxd attached to none of the churn: {report:?}"
    );
}

/// `TMUXD_CHURN_OPS` outside operations (1,000 unless given); run by
/// `scripts/crash-churn`.
#[test]
#[ignore = "long; run by scripts/crash-churn"]
fn churn_long() {
    let ops = std::env::var("TMUXD_CHURN_OPS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let report = churn(ops);
    println!("CHURN REPORT {report:?}");
    assert_eq!(report.crashes, 0, "the tmux server died: {report:?}");
}

#[derive(Debug, Default)]
struct Report {
    /// Outside operations by plain tmux.
    outside_ops: usize,
    /// Keys the person typed into a tmux client (prefix + key counts one).
    person_keys: usize,
    /// Creates and deletes through the API.
    api_ops: usize,
    /// Sessions tmuxd logged as adopted (discovered and attached).
    adopted: usize,
    /// tmux server deaths (the run goes on with a new server and daemon).
    crashes: usize,
    /// `segfault at 20` lines dmesg gained, when dmesg is readable.
    dmesg_segfaults: Option<usize>,
    seconds: u64,
}

/// The world of one server: it, the daemon watching it, and its pid.
struct World {
    tmux: TmuxServer,
    daemon: Daemon,
    server_pid: u32,
}

impl World {
    fn start() -> World {
        let tmux = TmuxServer::new();
        tmux.new_session("anchor", (80, 24), "sleep 100000");
        for i in 0..TRACKED {
            tmux.new_shell(&format!("held{i}"));
        }
        let server_pid = tmux
            .run(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .unwrap();
        let daemon = Daemon::start(&tmux);
        wait_for("the held sessions to be tracked", || {
            (daemon.sessions().len() > TRACKED).then_some(())
        });
        World {
            tmux,
            daemon,
            server_pid,
        }
    }

    /// Whether the server process is gone (or a zombie).
    fn server_died(&self) -> bool {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.server_pid));
        status.map_or(true, |s| s.contains("State:\tZ"))
    }

    fn adopted(&self) -> usize {
        self.daemon
            .events()
            .iter()
            .filter(|e| e["kind"] == "session_adopted")
            .count()
    }
}

fn churn(ops: usize) -> Report {
    let started = Instant::now();
    let dmesg_before = dmesg_segfaults();
    let mut report = Report::default();
    let mut world = World::start();
    let tmux_health = world.daemon.get("/healthz").1;
    println!("tmuxd's control clients: {}", tmux_health["tmux_client"]);
    let mut seed = std::process::id() as u64 * 0x9e37_79b9 + 1;
    while report.outside_ops < ops {
        let outcome = run_world(&world, ops - report.outside_ops, seed);
        seed = seed.wrapping_mul(31).wrapping_add(7);
        report.outside_ops += outcome.outside_ops;
        report.person_keys += outcome.person_keys;
        report.api_ops += outcome.api_ops;
        report.adopted += world.adopted();
        if !outcome.crashed {
            break;
        }
        report.crashes += 1;
        println!(
            "tmux server {} died after {} outside operations in all",
            world.server_pid, report.outside_ops
        );
        drop(world);
        world = World::start();
    }
    report.dmesg_segfaults = dmesg_before.and_then(|before| Some(dmesg_segfaults()? - before));
    report.seconds = started.elapsed().as_secs();
    report
}

#[derive(Default)]
struct Outcome {
    outside_ops: usize,
    person_keys: usize,
    api_ops: usize,
    crashed: bool,
}

/// Churns until `ops` outside operations are done or the server dies.
fn run_world(world: &World, ops: usize, seed: u64) -> Outcome {
    let stop = AtomicBool::new(false);
    let outside = AtomicUsize::new(0);
    let crashed = AtomicBool::new(false);
    let (mut person_keys, mut api_ops) = (0, 0);
    std::thread::scope(|scope| {
        let scripts: Vec<_> = (0..SCRIPTS)
            .map(|s| {
                let (stop, outside) = (&stop, &outside);
                let rng = Rng(seed.wrapping_add(s as u64 * 977) | 1);
                scope.spawn(move || outside_script(world, s, rng, ops, stop, outside))
            })
            .collect();
        let person = scope.spawn(|| person_at_a_client(world, Rng(seed ^ 0x5555 | 1), &stop));
        let api = scope.spawn(|| api_churn(world, Rng(seed ^ 0xaaaa | 1), &stop));
        while outside.load(Ordering::SeqCst) < ops && !stop.load(Ordering::SeqCst) {
            if world.server_died() {
                crashed.store(true, Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::SeqCst);
        for script in scripts {
            script.join().unwrap();
        }
        person_keys = person.join().unwrap();
        api_ops = api.join().unwrap();
    });
    // A death in the last moments of the run counts too.
    let crashed = crashed.load(Ordering::SeqCst) || world.server_died();
    Outcome {
        outside_ops: outside.load(Ordering::SeqCst),
        person_keys,
        api_ops,
        crashed,
    }
}

/// A script: new short sessions (some end on their own at once, as a
/// program that fails to start does), and kills of its older ones.
fn outside_script(
    world: &World,
    script: usize,
    mut rng: Rng,
    ops: usize,
    stop: &AtomicBool,
    outside: &AtomicUsize,
) {
    let mut pool: Vec<String> = Vec::new();
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) && outside.load(Ordering::SeqCst) < ops {
        let out: Output = if pool.len() < SCRIPT_POOL && rng.below(3) != 0 {
            n += 1;
            let name = format!("c{script}x{n}");
            let command = if rng.below(3) == 0 { "true" } else { "cat" };
            let out = world
                .tmux
                .output(&["new-session", "-d", "-s", &name, command]);
            if command == "cat" {
                pool.push(name);
            }
            out
        } else if !pool.is_empty() {
            let name = pool.swap_remove(rng.below(pool.len() as u64) as usize);
            world
                .tmux
                .output(&["kill-session", "-t", &format!("={name}")])
        } else {
            continue;
        };
        outside.fetch_add(1, Ordering::SeqCst);
        if is_server_gone(&out) {
            return;
        }
    }
}

fn is_server_gone(out: &Output) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.contains("server exited unexpectedly") || stderr.contains("no server running")
}

/// A person at a real tmux client: tmux's default key bindings (prefix
/// C-b), typed into the client's PTY, with a person's pauses between keys
/// (pacing, not a wait). A detach is followed by a new client.
fn person_at_a_client(world: &World, mut rng: Rng, stop: &AtomicBool) -> usize {
    world.tmux.new_shell("person");
    let mut keys = 0;
    let mut renames = 0;
    while !stop.load(Ordering::SeqCst) && !world.server_died() {
        let client = PtyClient::attach(&["-L", &world.tmux.socket], "person", 120, 40);
        loop {
            if stop.load(Ordering::SeqCst) || world.server_died() {
                return keys;
            }
            std::thread::sleep(Duration::from_millis(20 + rng.below(100)));
            let action: Vec<u8> = match rng.below(20) {
                0..=2 => b"\x02c".to_vec(),   // new-window
                3..=4 => b"\x02%".to_vec(),   // split left/right
                5 => b"\x02\"".to_vec(),      // split top/bottom
                6..=7 => b"\x02o".to_vec(),   // next pane
                8..=9 => b"\x02n".to_vec(),   // next window
                10..=11 => b"\x02)".to_vec(), // next session
                12 => b"\x02(".to_vec(),      // previous session
                13 => b"\x02L".to_vec(),      // last session
                14 => {
                    renames += 1;
                    format!("\x02,w{renames}\r").into_bytes() // rename-window
                }
                15 => b"\x02x".to_vec(), // kill-pane, then its y/n prompt
                16 => b"y".to_vec(),
                17 => b"\x02&y".to_vec(), // kill-window
                18 => b"echo hi\r".to_vec(),
                _ => {
                    keys += 1;
                    client.type_bytes(b"\x02d"); // detach
                    break;
                }
            };
            keys += 1;
            client.type_bytes(&action);
        }
        drop(client);
        // The session the person comes back to may have been killed.
        if !world.tmux.has_session("person") {
            let _ = world.tmux.output(&[
                "new-session",
                "-d",
                "-s",
                "person",
                "-x",
                "80",
                "-y",
                "24",
                SHELL,
            ]);
        }
    }
    keys
}

/// Sessions created and deleted through the API (kill or detach), a few
/// live at a time.
fn api_churn(world: &World, mut rng: Rng, stop: &AtomicBool) -> usize {
    let http = Client::builder().timeout(PATIENCE).build().unwrap();
    let base = &world.daemon.base;
    let auth = world.daemon.auth_header();
    let mut live: Vec<String> = Vec::new();
    let mut ops = 0;
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) && !world.server_died() {
        std::thread::sleep(Duration::from_millis(rng.below(100)));
        let request = if live.len() < 4 && rng.below(2) == 0 {
            n += 1;
            let body = json!({ "name": format!("api{n}"), "command": SHELL });
            http.post(format!("{base}/v1/sessions")).json(&body)
        } else if let Some(id) =
            (!live.is_empty()).then(|| live.swap_remove(rng.below(live.len() as u64) as usize))
        {
            let mode = if rng.below(2) == 0 { "kill" } else { "detach" };
            http.delete(format!("{base}/v1/sessions/{id}?mode={mode}"))
        } else {
            continue;
        };
        let request = match &auth {
            Some(header) => request.header("Authorization", header),
            None => request,
        };
        ops += 1;
        let Ok(response) = request.send() else {
            continue;
        };
        if let Ok(body) = response.json::<serde_json::Value>()
            && let Some(id) = body["session"]["session_id"].as_str()
        {
            live.push(id.to_owned());
        }
    }
    ops
}

/// How many `segfault at 20` lines the kernel log holds, if it can be read.
fn dmesg_segfaults() -> Option<usize> {
    let out = std::process::Command::new("dmesg").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.lines()
            .filter(|l| l.contains("tmux") && l.contains("segfault at 20"))
            .count(),
    )
}
