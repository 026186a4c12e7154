//! What the settled-screen check costs at N sessions (200 unless
//! `TMUXD_BENCH_N`) with realistic activity: every session prints a short
//! burst every 1 to 4 s (an agent's or a build's log), so screens settle
//! all the time. For no daemon, and the release daemon with checks off,
//! at the default budget and at a budget no session reaches: commands per
//! second tmuxd sends tmux, checks per second, tmuxd's and the tmux
//! server's CPU, and a person's keystroke echo time through their own tmux
//! client (a PTY running `tmux attach` to a session running `cat`). Prints
//! a table; asserts nothing (BENCHMARKS.md).

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// How long each configuration is measured.
const WINDOW: Duration = Duration::from_secs(20);

/// A session's activity: a burst of three lines every 1 to 4 s.
const ACTIVITY: &str = "bash --norc --noprofile -c 'while :; do for i in 1 2 3; do echo \"step $RANDOM: compiling module $i of 3\"; done; sleep $((RANDOM % 4 + 1)); done'";

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn p(samples: &mut [Duration], q: f64) -> f64 {
    samples.sort();
    ms(samples[((samples.len() - 1) as f64 * q).round() as usize])
}

/// CPU ticks (user + system) of a process, from /proc.
fn ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

/// A person's terminal: `tmux attach` on a PTY, its output read on a thread.
struct Human {
    writer: Box<dyn Write + Send>,
    output: mpsc::Receiver<Vec<u8>>,
    _child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Human {
    fn attach(tmux: &TmuxServer, name: &str) -> Human {
        let size = PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size).unwrap();
        let mut command = CommandBuilder::new("tmux");
        command.args([
            "-L",
            &tmux.socket,
            "-f",
            "/dev/null",
            "attach-session",
            "-t",
        ]);
        command.arg(format!("={name}"));
        for inherited in ["TMUX", "TMUX_PANE", "TMUX_TMPDIR"] {
            command.env_remove(inherited);
        }
        command.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(command).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let writer = pair.master.take_writer().unwrap();
        Human {
            writer,
            output,
            _child: child,
            _master: pair.master,
        }
    }

    /// Drops what the terminal showed so far.
    fn drain(&self) {
        while self.output.try_recv().is_ok() {}
    }

    /// Types one `~` and times until tmux draws it on this terminal.
    fn echo(&mut self) -> Duration {
        self.drain();
        let started = Instant::now();
        self.writer.write_all(b"~").unwrap();
        self.writer.flush().unwrap();
        loop {
            let chunk = self
                .output
                .recv_timeout(Duration::from_secs(10))
                .expect("the keystroke's echo");
            if chunk.contains(&b'~') {
                return started.elapsed();
            }
        }
    }
}

/// The sum of the `/metrics` samples of `family` whose labels contain `with`.
fn metric_sum(daemon: &Daemon, family: &str, with: &str) -> f64 {
    let (_, text) = daemon.get("/metrics");
    text.as_str()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with(&format!("{family}{{")) && l.contains(with))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

struct Measured {
    commands_per_s: f64,
    checks_per_s: f64,
    drift: f64,
    daemon_cpu: f64,
    server_cpu: f64,
    echo_p50: f64,
    echo_p99: f64,
}

/// Keystroke echoes and CPU over `WINDOW`, with `daemon` attached (or none).
fn measure(
    tmux: &TmuxServer,
    server_pid: u32,
    daemon: Option<&Daemon>,
    human: &mut Human,
) -> Measured {
    let commands = |d: &Daemon| metric_sum(d, "tmuxd_tmux_commands_total", "via=\"control\"");
    let checks = |d: &Daemon| metric_sum(d, "tmuxd_screen_checks_total", "outcome");
    let drift = |d: &Daemon| metric_sum(d, "tmuxd_screen_drift_total", "cause");
    let before = daemon.map(|d| (commands(d), checks(d), drift(d), ticks(d.pid())));
    let server_before = ticks(server_pid);
    let started = Instant::now();
    let mut echoes = Vec::new();
    while started.elapsed() < WINDOW {
        echoes.push(human.echo());
        std::thread::sleep(Duration::from_millis(50));
    }
    let secs = started.elapsed().as_secs_f64();
    let hz = 100.0;
    let server_cpu = (ticks(server_pid) - server_before) as f64 / hz / secs * 100.0;
    let (commands_per_s, checks_per_s, drift, daemon_cpu) = match (daemon, before) {
        (Some(d), Some((c0, k0, d0, t0))) => (
            (commands(d) - c0) / secs,
            (checks(d) - k0) / secs,
            drift(d) - d0,
            (ticks(d.pid()) - t0) as f64 / hz / secs * 100.0,
        ),
        _ => (0.0, 0.0, 0.0, 0.0),
    };
    let _ = tmux;
    Measured {
        commands_per_s,
        checks_per_s,
        drift,
        daemon_cpu,
        server_cpu,
        echo_p50: p(&mut echoes, 0.5),
        echo_p99: p(&mut echoes, 0.99),
    }
}

fn print(what: &str, m: &Measured) {
    println!(
        "{what:<34} {:>9.1} {:>9.1} {:>6.0} {:>9.1} % {:>9.1} % {:>7.2} / {:>6.2} ms",
        m.commands_per_s,
        m.checks_per_s,
        m.drift,
        m.daemon_cpu,
        m.server_cpu,
        m.echo_p50,
        m.echo_p99
    );
}

fn main() {
    let n: usize = std::env::var("TMUXD_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let tmux = TmuxServer::new();
    for i in 0..n {
        tmux.new_session(&format!("a{i}"), (80, 24), ACTIVITY);
    }
    tmux.new_session("human", (80, 24), "cat");
    let server_pid: u32 = tmux
        .run(&["display-message", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap();
    let mut human = Human::attach(&tmux, "human");
    // The first echo waits for the client's first full draw.
    human.echo();
    println!(
        "{n} sessions, each a burst of 3 lines every 1-4 s; {} s per row",
        WINDOW.as_secs()
    );
    println!(
        "{:<34} {:>9} {:>9} {:>6} {:>11} {:>11} {:>18}",
        "", "cmds/s", "checks/s", "drift", "tmuxd CPU", "tmux CPU", "echo p50 / p99"
    );
    print("no tmuxd", &measure(&tmux, server_pid, None, &mut human));
    for (what, per_second) in [
        ("tmuxd, checks off", 0),
        ("tmuxd, checks at 20/s (default)", 20),
        ("tmuxd, checks at 1000/s (no cap)", 1000),
    ] {
        let daemon = Daemon::start_with(
            &tmux,
            DaemonOptions {
                extra_config: format!("max_sessions = {}\n", n + 10),
                tmux_config: format!("screen_checks_per_s = {per_second}\n"),
                ..Default::default()
            },
        );
        common::wait_for("every session attached", || {
            let sessions = daemon.sessions();
            (sessions.len() > n && sessions.iter().all(|s| s["state"] != "starting")).then_some(())
        });
        // Past the attach and first seeds.
        std::thread::sleep(Duration::from_secs(5));
        print(what, &measure(&tmux, server_pid, Some(&daemon), &mut human));
        drop(daemon);
        std::thread::sleep(Duration::from_secs(2));
    }
}
