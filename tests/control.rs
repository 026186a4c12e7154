//! The control-mode client against real tmux on a private socket: replies
//! and errors, exact pane bytes, a lossless flood under flow control,
//! pause/continue, exits, hostile quoting, and a clean detach that leaves
//! the session (and a human's client) exactly as it was.

use crate::common;

use std::time::{Duration, Instant};

use tmuxd::tmux::command::{
    CapturePane, ClientFlag, DisplayMessage, OptionScope, PaneAction, ParseError, RefreshClient,
    SendHex, SendKeys, SendLiteral, SetOption, ShowOptions, Target, TmuxCommand,
};
use tmuxd::tmux::control::{
    ClientEvent, ControlClient, ControlError, ControlOptions, Departure, Notification, PaneId,
};
use tmuxd::tmux::{Socket, Tmux};

use common::{PATIENCE, TmuxServer, wait_for};

/// tmuxd's view of the test server: by socket path, so it finds the same
/// server whatever `TMUX_TMPDIR` the test process has.
fn tmux_for(server: &TmuxServer) -> Tmux {
    let path = server.run(&["display-message", "-p", "#{socket_path}"]);
    Tmux::new(
        "tmux".into(),
        Socket::Path(path.trim().into()),
        Some("/dev/null".into()),
        PATIENCE,
    )
}

/// The same server through tmuxd's own client, then through a `tmux -C`
/// child, for tests of what both must do alike.
fn both_paths(server: &TmuxServer) -> [Tmux; 2] {
    let tmux = tmux_for(server);
    [tmux.clone(), tmux.with_child_clients()]
}

fn options(flags: Vec<ClientFlag>) -> ControlOptions {
    ControlOptions {
        timeout: PATIENCE,
        flags,
        ..ControlOptions::default()
    }
}

async fn attach(tmux: &Tmux, name: &str) -> ControlClient {
    ControlClient::attach(
        tmux,
        name,
        ControlOptions {
            timeout: PATIENCE,
            ..Default::default()
        },
    )
    .await
    .expect("attach a control client")
}

/// Any command, for errors and measurements.
struct Raw(Vec<&'static str>);

impl TmuxCommand for Raw {
    type Output = Vec<Vec<u8>>;
    fn args(&self) -> Vec<String> {
        self.0.iter().map(|s| s.to_string()).collect()
    }
    fn parse(&self, lines: &[Vec<u8>]) -> Result<Self::Output, ParseError> {
        Ok(lines.to_vec())
    }
}

fn pane_of(server: &TmuxServer, name: &str) -> PaneId {
    let id = server.run(&[
        "display-message",
        "-p",
        "-t",
        &format!("={name}:"),
        "#{pane_id}",
    ]);
    id.trim().parse().unwrap()
}

/// A session whose pane waits for Enter, then runs `script` (no echo, so
/// the pane's output is only what `script` writes), then idles.
/// A pane that runs `script` once it is sent Enter. It is ready (echo off,
/// waiting in `read`) before this returns: an Enter that beat `stty -echo`
/// would be echoed into the output the tests count.
fn triggered_session(server: &TmuxServer, name: &str, script: &str) {
    let command = format!("stty -echo; printf TRIGGER-READY; read x; {script}; exec sleep 100000");
    server.new_session(name, (80, 24), &command);
    server.wait_for_text(name, "TRIGGER-READY");
}

/// Output of `pane` until it contains `needle` (true) or tmux pauses the
/// pane (false); fails on exit or timeout. Only new bytes are searched (a
/// flood is megabytes).
async fn read_output(
    client: &mut ControlClient,
    pane: PaneId,
    needle: &[u8],
    bytes: &mut Vec<u8>,
) -> bool {
    let mut searched: usize = 0;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if contains(&bytes[searched.saturating_sub(needle.len())..], needle) {
            return true;
        }
        searched = bytes.len();
        let event = tokio::time::timeout_at(deadline, client.next_event())
            .await
            .unwrap_or_else(|_| panic!("output never finished; {} bytes", bytes.len()));
        match event {
            Some(ClientEvent::Notification(Notification::Output { pane: p, data }))
            | Some(ClientEvent::Notification(Notification::ExtendedOutput {
                pane: p, data, ..
            })) if p == pane => bytes.extend_from_slice(&data),
            Some(ClientEvent::Notification(Notification::Pause { pane: p })) if p == pane => {
                return false;
            }
            Some(_) => {}
            None => panic!("control client exited after {} bytes", bytes.len()),
        }
    }
}

/// Output of `pane` until it contains `needle`; a `%pause` fails the test.
async fn collect_output(client: &mut ControlClient, pane: PaneId, needle: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    if !read_output(client, pane, needle, &mut bytes).await {
        panic!("{pane} paused after {} bytes", bytes.len());
    }
    bytes
}

/// Starts a pane that writes every byte it is sent into `file`, raw.
fn raw_sink(server: &TmuxServer, name: &str, file: &std::path::Path) {
    let command = format!("stty raw -echo; exec cat > '{}'", file.display());
    server.new_session(name, (80, 24), &command);
    wait_for("the sink's stty", || {
        (server.current_command(name) == "cat").then_some(())
    });
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn replies_match_requests_and_errors_carry_tmux_text() {
    let server = TmuxServer::new();
    server.new_shell("main");
    let tmux = tmux_for(&server);
    let mut client = attach(&tmux, "main").await;
    assert_eq!(client.attached().name, "main");

    let hello = DisplayMessage {
        target: None,
        format: "hello #{session_name}".into(),
    };
    assert_eq!(client.run(&hello).await.unwrap(), "hello main");
    match client.run(&Raw(vec!["no-such-command"])).await {
        Err(ControlError::Command { message, .. }) => {
            assert!(message.contains("unknown command"), "{message}")
        }
        other => panic!("expected a tmux error, got {other:?}"),
    }
    let missing = CapturePane::screen(Target::Session("nope".into()));
    match client.run(&missing).await {
        Err(ControlError::Command { message, .. }) => {
            assert!(message.contains("can't find session"), "{message}")
        }
        other => panic!("expected a tmux error, got {other:?}"),
    }

    // Sent without waiting: the replies come back in order, as events.
    let first = client
        .send(&DisplayMessage {
            target: None,
            format: "one".into(),
        })
        .await
        .unwrap();
    let failing = client.send(&Raw(vec!["bogus"])).await.unwrap();
    let third = client
        .send(&DisplayMessage {
            target: None,
            format: "three".into(),
        })
        .await
        .unwrap();
    let mut replies = Vec::new();
    while replies.len() < 3 {
        if let Some(ClientEvent::Reply { ticket, result }) = client.next_event().await {
            replies.push((ticket, result.map_err(|e| e.to_string())));
        }
    }
    assert_eq!(replies[0], (first, Ok(vec![b"one".to_vec()])));
    assert_eq!(replies[1].0, failing);
    assert!(
        replies[1]
            .1
            .as_ref()
            .unwrap_err()
            .contains("unknown command")
    );
    assert_eq!(replies[2], (third, Ok(vec![b"three".to_vec()])));
    // A run dropped while it waits loses only its own reply.
    let dropped = DisplayMessage {
        target: None,
        format: "dropped".into(),
    };
    let _ = tokio::time::timeout(Duration::ZERO, client.run(&dropped)).await;
    let after = DisplayMessage {
        target: None,
        format: "after".into(),
    };
    assert_eq!(client.run(&after).await.unwrap(), "after");
    // tmux's client exits 1 once any command failed; it exited, that is all.
    assert_eq!(client.close().await, Departure::Clean);
}

#[tokio::test]
async fn attaching_to_a_missing_session_is_a_clear_error() {
    let server = TmuxServer::new();
    server.new_shell("main");
    for tmux in both_paths(&server) {
        let error = ControlClient::attach(&tmux, "absent", options(vec![]))
            .await
            .err()
            .unwrap();
        assert!(error.to_string().contains("can't find session"), "{error}");
    }
    assert_eq!(server.run(&["list-clients"]), "", "no client left behind");
}

/// With no tmux server running (it crashed, or was killed), an attach
/// fails; it must not start a server of its own (`attach-session` would).
#[tokio::test]
async fn attaching_where_no_server_runs_starts_none() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("sock");
    // A server started here would stay up without sessions, to be seen.
    let config = dir.path().join("tmux.conf");
    std::fs::write(&config, "set -g exit-empty off\n").unwrap();
    let tmux = Tmux::new(
        "tmux".into(),
        Socket::Path(socket.clone()),
        Some(config),
        PATIENCE,
    );
    for tmux in [tmux.clone(), tmux.with_child_clients()] {
        let attached = ControlClient::attach(&tmux, "gone", options(vec![])).await;
        assert!(attached.is_err(), "attached where no server runs");
    }
    let running = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["-N", "list-sessions"])
        .output()
        .unwrap();
    if running.status.success() {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .arg("kill-server")
            .output();
        panic!("the attach started a server on {socket:?}");
    }
}

#[tokio::test]
async fn output_is_every_byte_the_program_wrote() {
    let server = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bytes");
    let all: Vec<u8> = (0..=255u8).collect();
    std::fs::write(&file, &all).unwrap();
    let script = format!("printf BEGIN; cat '{}'; printf END", file.display());
    triggered_session(&server, "bytes", &script);
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "bytes");
    let mut client = attach(&tmux, "bytes").await;
    let enter = SendKeys {
        target: Target::Pane(pane),
        keys: vec!["Enter".into()],
    };
    client.run(&enter).await.unwrap();
    let output = collect_output(&mut client, pane, b"END").await;
    let start = output.windows(5).position(|w| w == b"BEGIN").unwrap() + 5;
    let end = output.len() - 3;
    // The pane's tty (ONLCR) turns the program's \n into \r\n; nothing else.
    let mut expected = Vec::new();
    for &byte in &all {
        if byte == b'\n' {
            expected.push(b'\r');
        }
        expected.push(byte);
    }
    assert_eq!(output[start..end], expected[..]);
    client.close().await;
}

#[tokio::test]
async fn a_flood_arrives_whole_and_in_order_under_flow_control() {
    let server = TmuxServer::new();
    triggered_session(&server, "flood", "seq 1 300000; printf 'FLOOD-DONE\\n'");
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "flood");
    let mut client =
        ControlClient::attach(&tmux, "flood", options(vec![ClientFlag::PauseAfter(5)]))
            .await
            .unwrap();
    let started = Instant::now();
    let enter = SendKeys {
        target: Target::Pane(pane),
        keys: vec!["Enter".into()],
    };
    client.run(&enter).await.unwrap();
    let output = collect_output(&mut client, pane, b"FLOOD-DONE").await;
    let elapsed = started.elapsed();
    let text = String::from_utf8(output).unwrap().replace('\r', "");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 300_001, "every line, once");
    for (i, line) in lines[..300_000].iter().enumerate() {
        assert_eq!(
            line.parse::<usize>().ok(),
            Some(i + 1),
            "line {i} is {line:?}"
        );
    }
    eprintln!(
        "flood: 300000 lines in {} ms over control mode",
        elapsed.as_millis()
    );
    // Still attached and answering.
    let alive = DisplayMessage {
        target: None,
        format: "#{session_name}".into(),
    };
    assert_eq!(client.run(&alive).await.unwrap(), "flood");
    client.close().await;
}

#[tokio::test]
async fn pause_and_continue_are_reported() {
    let server = TmuxServer::new();
    server.new_shell("pc");
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "pc");
    let mut client = ControlClient::attach(&tmux, "pc", options(vec![ClientFlag::PauseAfter(1)]))
        .await
        .unwrap();
    // tmux prints these two inside the reply block; they must still come
    // out as notifications, in order.
    let pause = RefreshClient::Pane {
        pane,
        action: PaneAction::Pause,
    };
    client.run(&pause).await.unwrap();
    client.continue_pane(pane).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        if let ClientEvent::Notification(
            n @ (Notification::Pause { .. } | Notification::Continue { .. }),
        ) = client.next_event().await.unwrap()
        {
            seen.push(n);
        }
    }
    assert_eq!(
        seen,
        vec![
            Notification::Pause { pane },
            Notification::Continue { pane }
        ]
    );
    client.close().await;
}

/// tmux 3.3a answers a reader that stops reading in one of two ways: it
/// stops reading the pane (backpressure, as for a slow terminal) or, once
/// it notices output older than pause-after, pauses the pane for this
/// client. Either way the client stays attached and output resumes.
#[tokio::test]
async fn a_reader_that_stalls_is_not_disconnected() {
    let server = TmuxServer::new();
    triggered_session(&server, "stall", "while :; do seq 1 1000; done");
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "stall");
    let mut client =
        ControlClient::attach(&tmux, "stall", options(vec![ClientFlag::PauseAfter(1)]))
            .await
            .unwrap();
    let enter = SendKeys {
        target: Target::Pane(pane),
        keys: vec!["Enter".into()],
    };
    client.run(&enter).await.unwrap();
    collect_output(&mut client, pane, b"1000\r\n").await;
    // The output is flowing. Not a wait for something: this is the stall.
    std::thread::sleep(Duration::from_secs(3));
    let mut bytes = Vec::new();
    let resumed_without_pause = read_output(&mut client, pane, b"1000\r\n", &mut bytes).await;
    if !resumed_without_pause {
        client.continue_pane(pane).await.unwrap();
        collect_output(&mut client, pane, b"1000\r\n").await;
    }
    eprintln!(
        "stall of 3 s with pause-after=1: paused: {}",
        !resumed_without_pause
    );
    let alive = DisplayMessage {
        target: None,
        format: "ok".into(),
    };
    assert_eq!(client.run(&alive).await.unwrap(), "ok");
    server.run(&["kill-session", "-t", "=stall"]);
    while client.next_event().await.is_some() {}
    client.close().await;
}

#[tokio::test]
async fn killing_the_session_ends_the_client_with_exit() {
    let server = TmuxServer::new();
    server.new_shell("other");
    for (i, tmux) in both_paths(&server).iter().enumerate() {
        server.new_shell("doomed");
        let client = attach(tmux, "doomed").await;
        assert_eq!(client.is_native(), i == 0, "the path asked for");
        session_killed_under(client, &server).await;
    }
}

async fn session_killed_under(mut client: ControlClient, server: &TmuxServer) {
    let pid = client.pid();
    let listed = || server.run(&["list-clients", "-F", "#{client_pid}"]);
    assert!(listed().contains(&client.client_pid().to_string()));
    server.run(&["kill-session", "-t", "=doomed"]);
    let mut exit = None;
    while let Some(event) = client.next_event().await {
        if let ClientEvent::Notification(Notification::Exit { reason }) = event {
            exit = Some(reason);
        }
    }
    assert!(exit.is_some(), "no %exit before EOF");
    assert!(client.is_closed());
    let hello = DisplayMessage {
        target: None,
        format: "x".into(),
    };
    assert!(matches!(
        client.run(&hello).await,
        Err(ControlError::Closed { .. })
    ));
    assert_eq!(client.close().await, Departure::Clean);
    if let Some(pid) = pid {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "client {pid} not reaped"
        );
    }
    assert!(server.has_session("other"));
    assert_eq!(listed().trim(), "", "the client left tmux");
}

/// Reads the client to its end; the reason of the last `%exit` it gave.
async fn exit_before_eof(client: &mut ControlClient) -> Option<Option<String>> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut exit = None;
    while let Some(event) = tokio::time::timeout_at(deadline, client.next_event())
        .await
        .expect("EOF")
    {
        if let ClientEvent::Notification(Notification::Exit { reason }) = event {
            exit = Some(reason);
        }
    }
    exit
}

#[tokio::test]
async fn the_server_dying_ends_the_client() {
    for path in 0..2 {
        let server = TmuxServer::new();
        server.new_shell("main");
        let tmux = both_paths(&server)[path].clone();
        let mut client = attach(&tmux, "main").await;
        server.run(&["kill-server"]);
        let exit = exit_before_eof(&mut client).await;
        assert!(exit.is_some(), "path {path}: no %exit before EOF");
        assert_eq!(client.close().await, Departure::Clean);
    }
}

/// `detach-client` from outside: the client ends with `%exit` naming the
/// detach (a native client answers tmux's `MSG_DETACH` and hangs up), and
/// the session lives on.
#[tokio::test]
async fn a_client_detached_from_outside_ends_and_the_session_lives() {
    let server = TmuxServer::new();
    server.new_shell("main");
    for tmux in both_paths(&server) {
        let mut client = attach(&tmux, "main").await;
        server.run(&["detach-client", "-s", "=main"]);
        let exit = exit_before_eof(&mut client).await;
        // `tmux -C` prints a bare `%exit` for a detach; tmuxd's own client says why.
        let native = client.is_native();
        match exit.expect("%exit before EOF") {
            Some(reason) => assert!(native && reason.starts_with("detached"), "{reason}"),
            None => assert!(!native),
        }
        assert_eq!(client.close().await, Departure::Clean);
        assert!(server.has_session("main"));
        wait_for("the client to leave tmux", || {
            server.run(&["list-clients"]).is_empty().then_some(())
        });
    }
}

#[path = "control/death.rs"]
mod death;
#[path = "control/detach.rs"]
mod detach;
#[path = "control/events.rs"]
mod events;
#[path = "control/input.rs"]
mod input;
#[path = "control/latency.rs"]
mod latency;
