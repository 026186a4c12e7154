//! tmuxd killed (SIGKILL) while a pane floods: its control client must
//! die with it, so tmux lets the client go. A helper process (this test
//! binary, re-run with one ignored test) plays tmuxd.

use super::*;

use std::io::BufRead;
use std::process::{Command, Stdio};

const HELPER: &str = "CONTROL_TEST_HELPER";

/// Not a test: the stand-in for tmuxd, started by the test below. Attaches,
/// reads until the flood is flowing, reports the tmux client's pid, then
/// stops reading until it is killed.
#[tokio::test]
#[ignore = "run by owner_killed_mid_flood_lets_tmux_drop_the_client"]
async fn helper_attach_read_then_hang() {
    let Ok(spec) = std::env::var(HELPER) else {
        return;
    };
    let (socket, name) = spec.split_once('\t').unwrap();
    let tmux = Tmux::new(
        "tmux".into(),
        Socket::Path(socket.into()),
        Some("/dev/null".into()),
        PATIENCE,
    );
    let mut client = attach(&tmux, name).await;
    let pane = client
        .run(&DisplayMessage {
            target: None,
            format: "#{pane_id}".into(),
        })
        .await
        .unwrap();
    let pane: PaneId = pane.parse().unwrap();
    client
        .run(&SendKeys {
            target: Target::Pane(pane),
            keys: vec!["Enter".into()],
        })
        .await
        .unwrap();
    collect_output(&mut client, pane, b"1000\r\n").await;
    println!("READY {}", client.client_pid());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// The helper's name as the test harness lists it: its module path
/// without the crate's name.
fn helper_test_name() -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    format!("{module}::helper_attach_read_then_hang")
}

#[test]
fn owner_killed_mid_flood_lets_tmux_drop_the_client() {
    let server = TmuxServer::new();
    triggered_session(&server, "flood", "while :; do seq 1 1000; done");
    let socket = server.run(&["display-message", "-p", "#{socket_path}"]);
    let server_pid: u32 = server
        .run(&["display-message", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap();
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &helper_test_name(), "--ignored", "--nocapture"])
        .env(HELPER, format!("{}\tflood", socket.trim()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(helper.stdout.take().unwrap());
    let ready = stdout
        .lines()
        .map(Result::unwrap)
        .find(|l| l.starts_with("READY"));
    let client_pid = ready
        .expect("the helper attached")
        .split(' ')
        .nth(1)
        .unwrap()
        .to_owned();
    // Not a wait for something: this is the stall that lets tmux's output
    // for the helper back up, so it dies with output pending (the case
    // tmux 3.3a mishandles when the client process outlives its owner).
    std::thread::sleep(Duration::from_secs(1));
    helper.kill().unwrap();
    helper.wait().unwrap();

    wait_for("tmux to drop the dead owner's client", || {
        server
            .run(&["list-clients", "-F", "#{client_pid}"])
            .trim()
            .is_empty()
            .then_some(())
    });
    assert!(!server.run(&["list-clients"]).contains(&client_pid));
    // The pane was never frozen for good: it still runs.
    let screen = server.capture("flood");
    wait_for("the pane to keep running", || {
        (server.capture("flood") != screen).then_some(())
    });
    // And the server can still be stopped.
    server.run(&["kill-server"]);
    wait_for("the tmux server to exit", || {
        let status = std::fs::read_to_string(format!("/proc/{server_pid}/status"));
        status
            .map_or(true, |s| s.contains("State:\tZ"))
            .then_some(())
    });
}
