//! The CLI and terminals: `attach` from inside a tmux pane, closed pipes,
//! `watch` starting with the screen and resetting the terminal, on a real
//! pty.

use crate::common;

use std::io::{BufRead, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, SHELL, TmuxServer, tmuxd_bin, wait_for};
use serde_json::json;

/// `tmuxd attach NAME` run inside a tmux pane ($TMUX set) lands a
/// tmux client on the session, read-only with `--read-only`.
#[test]
fn attach_from_inside_tmux_lands_a_tmux_client_on_the_session() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    daemon.create_named("target", SHELL);
    for (outer, flags, read_only) in [("outer", "", "0"), ("viewer", " --read-only", "1")] {
        let command = format!(
            "env TMUXD_URL={} TMUXD_TOKEN={} {} attach target{flags}; echo attach-ended; sleep 600",
            daemon.base,
            daemon.token().unwrap(),
            tmuxd_bin()
        );
        tmux.new_session(outer, (80, 24), &command);
        let tty = tmux.run(&[
            "display-message",
            "-p",
            "-t",
            &format!("={outer}:"),
            "#{pane_tty}",
        ]);
        let want = format!("{} target {read_only}", tty.trim());
        wait_for(&format!("a client on {want}"), || {
            let clients = tmux.run(&[
                "list-clients",
                "-F",
                "#{client_tty} #{session_name} #{client_readonly}",
            ]);
            if tmux
                .capture(outer)
                .iter()
                .any(|l| l.contains("attach-ended"))
            {
                panic!("attach failed: {:?}", tmux.capture(outer));
            }
            clients.lines().any(|l| l == want).then_some(())
        });
    }
}

/// `GET /v1/server` tells an authenticated client where tmux listens, and
/// nobody else.
#[test]
fn the_server_endpoint_needs_a_token() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[auth]\ntoken = \"rw-0123456789abcdefghijklmn\"\nread_token = \"ro-0123456789abcdefghijklmn\"\n".into(),
            ..Default::default()
        },
    );
    tmux.new_shell("running");
    let (status, _) = daemon.get("/v1/server");
    assert_eq!(status, 401);
    let server: serde_json::Value = reqwest::blocking::Client::new()
        .get(format!("{}/v1/server", daemon.base))
        .bearer_auth("ro-0123456789abcdefghijklmn")
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(server["bin"], "tmux");
    assert_eq!(server["socket"]["name"], tmux.socket.as_str());
    let path = server["socket"]["path"].as_str().unwrap();
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { libc::getuid() };
    assert_eq!(path, format!("/tmp/tmux-{uid}/{}", tmux.socket), "{server}");
    assert!(
        std::path::Path::new(path).exists(),
        "tmux listens there: {server}"
    );
    assert!(
        server["version"].as_str().unwrap().starts_with("tmux "),
        "{server}"
    );
}

/// Spawns a client with stdout piped and stderr captured.
fn spawn_piped(daemon: &Daemon, args: &[&str]) -> Child {
    daemon
        .client()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads at least `n` bytes, then drops the reader as `head -c` does, and
/// insists the command ends at once with success and without a panic.
fn read_then_close(mut child: Child, n: usize) -> Vec<u8> {
    let mut stdout = child.stdout.take().unwrap();
    let mut got = vec![0; n];
    stdout.read_exact(&mut got).unwrap();
    drop(stdout);
    wait_for_success(child);
    got
}

/// The command ends on its own, with success and without a panic.
fn wait_for_success(mut child: Child) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running {PATIENCE:?} after its reader closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(!stderr.contains("panic"), "{stderr}");
}

/// `events | head` and `watch | head -c` end quietly once the
/// reader has gone, even when nothing more is written.
#[test]
fn events_and_watch_end_quietly_when_their_reader_goes() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("piped", SHELL);
    daemon.wait_for_snapshot(&id, "$");
    let (status, idle) = daemon.post(
        &format!("/v1/sessions/{id}/wait"),
        &json!({ "until": "idle", "timeout_ms": PATIENCE.as_millis() as u64 }),
    );
    assert_eq!(status, 200, "{idle}");
    // Replay only the last event: then the feed is quiet, and only noticing
    // the closed pipe (no write fails) can end the command.
    let (_, page) = daemon.get("/v1/events?format=json");
    let since = (page["next_seq"].as_u64().unwrap() - 2).to_string();
    let events = spawn_piped(&daemon, &["events", "--since", &since, "--json"]);
    let first = read_then_close(events, 10);
    assert!(
        first.starts_with(b"{"),
        "{}",
        String::from_utf8_lossy(&first)
    );
    let watch = spawn_piped(&daemon, &["watch", "piped"]);
    let screen = read_then_close(watch, 1);
    assert_eq!(screen, b"$", "the screen comes first");
    // A session that prints nothing (no status line to redraw either): a
    // raw watch whose reader has already gone must notice without writing.
    tmux.run(&["set-option", "-g", "status", "off"]);
    daemon.create(&json!({ "name": "quiet", "command": "sleep 600" }));
    let mut raw = spawn_piped(&daemon, &["watch", "--raw", "quiet"]);
    drop(raw.stdout.take());
    wait_for_success(raw);
}

/// A pty pair: (master, slave).
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty fills two fds, owned below.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// On a terminal, `watch` draws the current screen first (the
/// session prints nothing after it starts), and Ctrl-C leaves the terminal
/// reset: scroll region, alternate screen, colours, cursor.
#[test]
fn watch_draws_the_screen_first_and_ctrl_c_resets_the_terminal() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let program = r"printf '\033[?1049h\033[3;10r\033[?25lALT-SCREEN-MARK'; exec sleep 600";
    let id = daemon.create(&json!({ "name": "alt", "command": program }))["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_for("the alternate screen in the snapshot", || {
        let (_, snap) = daemon.get(&format!("/v1/sessions/{id}/snapshot"));
        let marked = snap["lines"].to_string().contains("ALT-SCREEN-MARK");
        (marked && snap["alternate_screen"] == true).then_some(())
    });

    let (master, slave) = open_pty();
    let mut command: Command = daemon.client();
    command
        .args(["watch", "alt"])
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    drop(command);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let reader = std::thread::spawn({
        let seen = seen.clone();
        move || {
            let mut master = std::fs::File::from(master);
            let mut buf = [0u8; 4096];
            // Ends with EIO once the child, the last holder of the slave, exits.
            while let Ok(n @ 1..) = master.read(&mut buf) {
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        }
    });
    let contains = |bytes: &[u8], needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    wait_for("the screen drawn by watch", || {
        contains(&seen.lock().unwrap(), b"ALT-SCREEN-MARK").then_some(())
    });
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    let seen = seen.lock().unwrap();
    let mark = seen
        .windows(15)
        .position(|w| w == b"ALT-SCREEN-MARK")
        .unwrap();
    let (before, after) = seen.split_at(mark);
    assert!(
        contains(before, b"\x1b[?1049h"),
        "the session's screen is the alternate one"
    );
    for reset in [&b"\x1b[r"[..], b"\x1b[?1049l", b"\x1b[0m", b"\x1b[?25h"] {
        assert!(
            contains(after, reset),
            "{:?} after the screen: {:?}",
            String::from_utf8_lossy(reset),
            String::from_utf8_lossy(after)
        );
    }
}

/// `tmuxd serve` on port 0 for `tmux`'s socket, its config and data in
/// `home`, with a PATH that does not hold the binary under test.
fn serve_command(tmux: &TmuxServer, home: &std::path::Path) -> Command {
    let config = home.join("config.toml");
    let socket = format!("[tmux]\nsocket_name = {:?}\n", tmux.socket);
    std::fs::write(&config, socket).unwrap();
    let mut command = common::tmuxd_command(home);
    command
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(home.join("data"))
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null());
    command
}

/// Started at a terminal (as `scripts/serve` leaves it), the daemon's banner
/// ends with the dashboard link and how to run the CLI, whose binary (under
/// target/) is not on PATH.
#[test]
fn serve_at_a_terminal_names_the_dashboard_and_the_cli() {
    let tmux = TmuxServer::new();
    let home = tempfile::tempdir().unwrap();
    let (master, slave) = open_pty();
    let mut child = serve_command(&tmux, home.path())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let banner = Arc::new(Mutex::new(String::new()));
    let seen = banner.clone();
    std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let text = wait_for("the banner's CLI line", || {
        let text = banner.lock().unwrap().clone();
        text.contains("CLI (from another shell)").then_some(text)
    });
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    assert!(text.contains("dashboard: http://127.0.0.1:"), "{text}");
    let exe = std::path::Path::new(tmuxd_bin());
    let dir = exe.parent().unwrap().display().to_string();
    assert!(text.contains(&format!("{} ls", exe.display())), "{text}");
    assert!(
        text.contains(&format!("export PATH=\"{dir}:$PATH\"")),
        "{text}"
    );
}

/// Started as a service would be (stdout a pipe), the daemon still names its
/// dashboard and `tmuxd open`, and its log starts with what a user needs,
/// not tmux's bug history (that is `doctor`'s).
#[test]
fn serve_to_a_pipe_names_the_dashboard_and_logs_no_tmux_history() {
    let tmux = TmuxServer::new();
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("stderr.log");
    let mut child = serve_command(&tmux, home.path())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    while !lines
        .iter()
        .any(|l: &String| l.starts_with("CLI (from another shell)"))
    {
        match rx.recv_timeout(PATIENCE) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    let text = lines.join("\n");
    assert!(
        text.contains("tmuxd listening on http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("dashboard: http://127.0.0.1:"), "{text}");
    assert!(text.contains("`tmuxd open`"), "{text}");
    assert!(
        !text.contains("#login="),
        "no login code into a pipe: {text}"
    );
    assert!(text.contains("CLI (from another shell)"), "{text}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("4980"), "{logged}");
}
