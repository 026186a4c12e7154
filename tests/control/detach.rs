//! A clean detach (and a dropped client) leaves the session alive, at its
//! size, with nothing typed, and a human's client at another size untouched.

use super::*;

/// Every client of the server: (control mode, width x height).
fn clients(server: &TmuxServer) -> Vec<String> {
    let out = server.run(&[
        "list-clients",
        "-F",
        "#{client_control_mode} #{client_width}x#{client_height}",
    ]);
    let mut lines: Vec<String> = out.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// What must not change: window size, the pane's screen, its cursor.
fn state(server: &TmuxServer, name: &str) -> (String, Vec<String>) {
    let format = "#{window_width}x#{window_height} #{cursor_x},#{cursor_y} #{window_layout}";
    let target = format!("={name}:");
    let geometry = server.run(&["display-message", "-p", "-t", &target, format]);
    let screen = server.run(&["capture-pane", "-p", "-e", "-t", &target]);
    (geometry, screen.lines().map(str::to_owned).collect())
}

/// Attaches, talks, and detaches: closed cleanly, or just dropped.
async fn visit(tmux: &Tmux, name: &str, pane: PaneId, clean: bool) {
    let mut client = attach(tmux, name).await;
    let size = DisplayMessage {
        target: Some(Target::Pane(pane)),
        format: "#{window_width}".into(),
    };
    client.run(&size).await.unwrap();
    client
        .run(&CapturePane::screen(Target::Pane(pane)))
        .await
        .unwrap();
    client.continue_pane(pane).await.unwrap();
    if clean {
        assert_eq!(client.close().await, Departure::Clean);
    } else {
        drop(client);
    }
}

#[tokio::test]
async fn detaching_disturbs_nothing() {
    let server = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let typed = dir.path().join("typed");
    raw_sink(&server, "watched", &typed);
    server.new_session("alone", (123, 45), common::SHELL);
    server.wait_for_text("alone", "$");
    let tmux = tmux_for(&server);
    let socket = server.run(&["display-message", "-p", "#{socket_path}"]);
    let human = common::pty::PtyClient::attach(&["-S", socket.trim()], "watched", 100, 30);
    wait_for("the human's size to apply", || {
        (server.size("watched") == (100, 29)).then_some(())
    });
    let before = (
        state(&server, "watched"),
        state(&server, "alone"),
        clients(&server),
    );
    assert_eq!(before.2, vec!["0 100x30".to_owned()]);

    for clean in [true, false] {
        for (name, pane) in [
            ("watched", pane_of(&server, "watched")),
            ("alone", pane_of(&server, "alone")),
        ] {
            visit(&tmux, name, pane, clean).await;
            wait_for("the control client to leave", || {
                (clients(&server) == before.2).then_some(())
            });
            let after = (
                state(&server, "watched"),
                state(&server, "alone"),
                clients(&server),
            );
            assert_eq!(after, before, "{name}, clean: {clean}");
        }
    }
    assert_eq!(server.size("alone"), (123, 45));
    assert!(server.has_session("watched") && server.has_session("alone"));
    assert_eq!(std::fs::read(&typed).unwrap(), b"", "something was typed");
    drop(human);
}
