//! The control-mode targets at N sessions (200 unless `TMUXD_BENCH_N`):
//! what tmuxd costs the user's tmux, and how fast it sees and does things,
//! against real tmux on a private socket and the release daemon, with the
//! last `TMUXD_BENCH_PRINTERS` (8) of them printing a line every 100 ms
//! throughout (issue 30's background load) and the default heat budget, so
//! past it most sessions are cold. Prints a table of measured value and
//! target; asserts nothing (BENCHMARKS.md).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer};
use serde_json::json;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn p(samples: &mut [Duration], q: f64) -> f64 {
    samples.sort();
    ms(samples[((samples.len() - 1) as f64 * q).round() as usize])
}

fn row(what: &str, value: String, target: &str) {
    println!("{what:<58} {value:>22}   target {target}");
}

/// One keep-alive HTTP/1.1 connection spoken by hand, for what a lean
/// client pays: reqwest's blocking client adds a runtime thread and a
/// channel round trip to every request.
struct RawClient {
    stream: std::net::TcpStream,
    host: String,
    /// `Authorization: ...\r\n`, or nothing.
    auth: String,
    buf: Vec<u8>,
}

impl RawClient {
    fn connect(base: &str, bearer: Option<String>) -> RawClient {
        let address = base.strip_prefix("http://").unwrap();
        let stream = std::net::TcpStream::connect(address).unwrap();
        stream.set_nodelay(true).unwrap();
        RawClient {
            stream,
            host: address.to_owned(),
            auth: bearer.map_or(String::new(), |b| format!("Authorization: {b}\r\n")),
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    /// GETs `path` and reads the whole answer; panics on anything but 200.
    fn get(&mut self, path: &str) {
        use std::io::{Read, Write};
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{}\r\n",
            self.host, self.auth
        );
        self.stream.write_all(request.as_bytes()).unwrap();
        self.buf.clear();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the daemon closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
            let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200"), "{head}");
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .expect("a content-length");
            if self.buf.len() >= end + 4 + length {
                return;
            }
        }
    }
}

/// CPU ticks (user + system) of a process, from /proc.
fn ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

/// Live children of `pid` and their CPU ticks.
fn children(pid: u32) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        if rest.split_whitespace().nth(1) == Some(&pid.to_string()) {
            out.push((child, ticks(child)));
        }
    }
    out
}

fn capture_cost(tmux: &TmuxServer, rounds: usize) -> f64 {
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            tmux.run(&["capture-pane", "-p", "-t", "=s0:"]);
            started.elapsed()
        })
        .collect();
    p(&mut samples, 0.5)
}

fn main() {
    let n: usize = std::env::var("TMUXD_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let printers: usize = std::env::var("TMUXD_BENCH_PRINTERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let tmux = TmuxServer::new();
    let printing = "bash --norc --noprofile -c 'while :; do echo tick-$SECONDS; sleep 0.1; done'";
    for i in 0..n {
        let command = if i >= n - printers {
            printing
        } else {
            common::SHELL
        };
        tmux.new_session(&format!("s{i}"), (80, 24), command);
    }
    println!(
        "{n} sessions, the last {printers} printing a line every 100 ms; {} cores, load {}",
        std::thread::available_parallelism().map_or(0, |c| c.get()),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let server_pid: u32 = tmux
        .run(&["display-message", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap();
    let bare = capture_cost(&tmux, 100);
    let seq_bare = {
        let started = Instant::now();
        let command = format!("seq 1 300000; tmux -L {} wait-for -S seq", tmux.socket);
        tmux.send_keys("s1", &[&command, "Enter"]);
        tmux.run(&["wait-for", "seq"]);
        started.elapsed()
    };
    // What tmux spends on its own over 20 s: idle but for the printers.
    let server_bare = {
        let before = ticks(server_pid);
        let started = Instant::now();
        std::thread::sleep(Duration::from_secs(20));
        (ticks(server_pid) - before) as f64 / 100.0 / started.elapsed().as_secs_f64() * 100.0
    };
    // Room for the sessions the bench adds to the N it starts with.
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: format!("max_sessions = {}\n", n + 200),
            ..Default::default()
        },
    );
    let started = Instant::now();
    common::wait_for("every session listed", || {
        (daemon.sessions().len() >= n).then_some(())
    });
    let listed_after = started.elapsed();
    // Attached and seeded: an actor leaves `starting` once its screen is.
    common::wait_for("every session attached", || {
        let sessions = daemon.sessions();
        (sessions.len() >= n && sessions.iter().all(|s| s["state"] != "starting")).then_some(())
    });
    row(
        &format!("adopt {n} existing sessions: listed / all attached"),
        format!("{:.0} / {:.0} ms", ms(listed_after), ms(started.elapsed())),
        "-",
    );
    std::thread::sleep(Duration::from_secs(2));
    let attached = capture_cost(&tmux, 100);
    row(
        "outside capture-pane p50, tmuxd attached vs not",
        format!("{attached:.2} / {bare:.2} ms = {:.2}x", attached / bare),
        "<= 1.5x",
    );

    // Idle (but for the printers): forks, daemon + children CPU, tmux
    // server CPU over 20 s.
    let daemon_pid = daemon.pid();
    let before: Vec<u32> = children(daemon_pid).iter().map(|(p, _)| *p).collect();
    let cpu_before = ticks(daemon_pid) + children(daemon_pid).iter().map(|(_, t)| t).sum::<u64>();
    let server_before = ticks(server_pid);
    let idle = Duration::from_secs(20);
    let idle_started = Instant::now();
    let mut forked = std::collections::BTreeSet::new();
    while idle_started.elapsed() < idle {
        for (child, _) in children(daemon_pid) {
            if !before.contains(&child) {
                forked.insert(child);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let hz = 100.0;
    let cpu_after = ticks(daemon_pid) + children(daemon_pid).iter().map(|(_, t)| t).sum::<u64>();
    let secs = idle_started.elapsed().as_secs_f64();
    row(
        "idle: tmux processes forked per minute",
        format!("{:.1}", forked.len() as f64 * 60.0 / secs),
        "0",
    );
    row(
        "idle: daemon + children CPU (% of a core)",
        format!(
            "{:.2} %",
            (cpu_after - cpu_before) as f64 / hz / secs * 100.0
        ),
        "<= 0.3 %",
    );
    row(
        "idle: tmux server CPU (% of a core), tmuxd attached vs not",
        format!(
            "{:.2} / {server_bare:.2} %",
            (ticks(server_pid) - server_before) as f64 / hz / secs * 100.0
        ),
        "<= 1 %",
    );

    let sessions = daemon.sessions();
    let id_of = |name: &str| {
        sessions
            .iter()
            .find(|s| s["tmux_name"] == name)
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let s0 = id_of("s0");
    let http = reqwest::blocking::Client::new();
    let get = |path: &str| {
        daemon
            .authorize(http.get(format!("{}{path}", daemon.base)))
            .send()
            .unwrap()
            .bytes()
            .unwrap()
    };
    // A hot session (a stream held open on it: watched) and a cold one
    // (an idle session past the budget, if there is one).
    let s1 = id_of("s1");
    let (mut watching, _) =
        tungstenite::connect(daemon.ws_request(&format!("/v1/sessions/{s1}/stream"))).unwrap();
    watching.read().unwrap();
    common::wait_for("the streamed session hot", || {
        (daemon.summary(&s1)["live"] == true).then_some(())
    });
    let cold = daemon
        .sessions()
        .into_iter()
        .find(|s| s["live"] == false && s["state"] != "starting")
        .map(|s| s["session_id"].as_str().unwrap().to_owned());
    let mut raw = RawClient::connect(&daemon.base, daemon.auth_header());
    for (heat, id) in [("hot", Some(&s1)), ("cold", cold.as_ref())] {
        let Some(id) = id else {
            row(
                &format!("snapshot p50 / p99, {heat}"),
                "(none)".to_owned(),
                "-",
            );
            continue;
        };
        let path = format!("/v1/sessions/{id}/snapshot");
        let mut snaps: Vec<Duration> = (0..2000)
            .map(|_| {
                let started = Instant::now();
                get(&path);
                started.elapsed()
            })
            .collect();
        let mut raw_snaps: Vec<Duration> = (0..2000)
            .map(|_| {
                let started = Instant::now();
                raw.get(&path);
                started.elapsed()
            })
            .collect();
        row(
            &format!("snapshot p50 / p99, {heat} (keep-alive client)"),
            format!("{:.3} / {:.3} ms", p(&mut snaps, 0.5), p(&mut snaps, 0.99)),
            if heat == "hot" {
                "p50 <= 0.3 ms"
            } else {
                "p50 <= 5 ms"
            },
        );
        row(
            &format!("snapshot p50 / p99, {heat} (raw keep-alive socket)"),
            format!(
                "{:.3} / {:.3} ms",
                p(&mut raw_snaps, 0.5),
                p(&mut raw_snaps, 0.99)
            ),
            if heat == "hot" {
                "p50 <= 0.3 ms"
            } else {
                "p50 <= 5 ms"
            },
        );
        let live = daemon.summary(id)["live"].clone();
        row(
            &format!("  the {heat} session live after"),
            live.to_string(),
            "-",
        );
    }
    drop(watching);
    let mut lists: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            get("/v1/sessions");
            started.elapsed()
        })
        .collect();
    row(
        &format!("list of {n} p50 / p99"),
        format!("{:.2} / {:.2} ms", p(&mut lists, 0.5), p(&mut lists, 0.99)),
        "p50 <= 5 ms at 1,000",
    );

    let mut echoes: Vec<Duration> = (0..30)
        .map(|i| {
            let marker = format!("e{i}x{}", i * 3);
            let started = Instant::now();
            daemon.post(
                &format!("/v1/sessions/{s0}/input"),
                &json!({ "text": format!("echo e{i}x$(({i}*3))"), "submit": true }),
            );
            loop {
                if daemon.snapshot_lines(&s0).iter().any(|l| l == &marker) {
                    break started.elapsed();
                }
            }
        })
        .collect();
    row(
        "input -> echo visible in the snapshot p50",
        format!("{:.2} ms", p(&mut echoes, 0.5)),
        "<= 5 ms",
    );

    let mut creates: Vec<Duration> = (0..50)
        .map(|_| {
            let started = Instant::now();
            daemon.create(&json!({ "command": common::SHELL }));
            started.elapsed()
        })
        .collect();
    row(
        "create p50 / p99",
        format!(
            "{:.1} / {:.1} ms",
            p(&mut creates, 0.5),
            p(&mut creates, 0.99)
        ),
        "p99 <= 100 ms",
    );

    let gone = |name: &str| !daemon.sessions().iter().any(|s| s["tmux_name"] == name);
    // Which target applies: hot <= 50 ms, cold <= 500 ms.
    let killed_hot = daemon
        .sessions()
        .iter()
        .filter(|s| {
            s["live"] == true && (10..30).any(|i| s["tmux_name"].as_str() == Some(&format!("s{i}")))
        })
        .count();
    // From before the kill, and from when the kill's own fork returned
    // (tmuxd's part: its client leaving, the reaper's check, the record).
    let (mut exits, mut after_kill): (Vec<Duration>, Vec<Duration>) = (0..20)
        .map(|i| {
            let name = format!("s{}", 10 + i);
            let started = Instant::now();
            tmux.run(&["kill-session", "-t", &format!("={name}")]);
            let killed = Instant::now();
            while !gone(&name) {}
            (started.elapsed(), killed.elapsed())
        })
        .unzip();
    row(
        &format!("exit (outside kill-session) -> gone p50, {killed_hot} of 20 hot"),
        format!("{:.1} ms", p(&mut exits, 0.5)),
        "hot <= 50 ms, cold <= 500 ms",
    );
    row(
        "exit: the kill's fork returned -> gone p50",
        format!("{:.1} ms", p(&mut after_kill, 0.5)),
        "(no target)",
    );
    // Listed as `starting` once discovered; out of it once its first look
    // is done (hot: its control client's handshake, after 150 ms of quiet
    // on tmux < 3.7; cold: over the server-wide client).
    let listed = |name: &str, looked_at: bool| {
        daemon
            .sessions()
            .iter()
            .any(|s| s["tmux_name"] == name && (!looked_at || s["state"] != "starting"))
    };
    let (mut news, mut news_attached): (Vec<Duration>, Vec<Duration>) = (0..20)
        .map(|i| {
            let name = format!("out{i}");
            let started = Instant::now();
            tmux.new_session(&name, (80, 24), common::SHELL);
            while !listed(&name, false) {}
            let listed_after = started.elapsed();
            while !listed(&name, true) {}
            (listed_after, started.elapsed())
        })
        .unzip();
    row(
        "outside new-session -> listed p50",
        format!("{:.1} ms", p(&mut news, 0.5)),
        "<= 100 ms",
    );
    row(
        "outside new-session -> out of `starting` p50",
        format!("{:.1} ms", p(&mut news_attached, 0.5)),
        "(no target)",
    );
    let started = Instant::now();
    for i in 0..20 {
        tmux.new_session(&format!("burst{i}"), (80, 24), common::SHELL);
    }
    while (0..20).any(|i| !listed(&format!("burst{i}"), false)) {}
    row(
        &format!("20 outside sessions (with {n}+ tracked) all listed"),
        format!("{:.0} ms", ms(started.elapsed())),
        "<= 1000 ms",
    );
    while (0..20).any(|i| !listed(&format!("burst{i}"), true)) {}
    row(
        "20 outside sessions all out of `starting`",
        format!("{:.0} ms", ms(started.elapsed())),
        "(no target)",
    );

    // A flood: every line on the stream, in order; time against no daemon.
    let s2 = id_of("s2");
    let path = format!("/v1/sessions/{s2}/stream");
    let (mut socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
    socket.read().unwrap();
    let started = Instant::now();
    let command = format!("seq 1 300000; tmux -L {} wait-for -S seq", tmux.socket);
    tmux.send_keys("s2", &[&command, "Enter"]);
    tmux.run(&["wait-for", "seq"]);
    let seq_attached = started.elapsed();
    let mut bytes = Vec::new();
    let want = (1..=300000)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\r\n");
    loop {
        if let tungstenite::Message::Binary(data) = socket.read().unwrap() {
            bytes.extend_from_slice(&data[8..]);
        }
        let tail = &bytes[bytes.len().saturating_sub(64)..];
        if tail.windows(8).any(|w| w == b"\r\n300000") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let whole = text.contains(&want);
    row(
        "seq 1 300000: all lines on the stream, in order",
        (if whole { "100 %" } else { "INCOMPLETE" }).to_owned(),
        "100 %",
    );
    row(
        "seq 1 300000 time, attached vs no daemon",
        format!(
            "{:.2} / {:.2} s = {:.2}x",
            seq_attached.as_secs_f64(),
            seq_bare.as_secs_f64(),
            seq_attached.as_secs_f64() / seq_bare.as_secs_f64()
        ),
        "<= 2x",
    );
}
