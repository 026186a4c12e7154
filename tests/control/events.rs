//! Notifications the actor and discovery rely on, from real tmux: layouts
//! (checked against `list-panes`), sessions created and renamed elsewhere,
//! `no-output` clients, and what `detach-on-destroy off` does to a client.

use super::*;

use tmuxd::tmux::control::parse_layout;

/// Events until `stop` matches one (returned last), or a timeout.
async fn events_until(
    client: &mut ControlClient,
    stop: impl Fn(&ClientEvent) -> bool,
) -> Vec<ClientEvent> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let event = tokio::time::timeout_at(deadline, client.next_event())
            .await
            .unwrap_or_else(|_| panic!("timed out; saw {seen:?}"))
            .unwrap_or_else(|| panic!("client exited; saw {seen:?}"));
        let done = stop(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn layout_changes_match_what_list_panes_reports() {
    let server = TmuxServer::new();
    server.new_session("lay", (120, 40), common::SHELL);
    let tmux = tmux_for(&server);
    let mut client = attach(&tmux, "lay").await;
    for split in [["-h"], ["-v"]] {
        server.run(&["split-window", split[0], "-t", "=lay:"]);
        let events = events_until(&mut client, |e| {
            matches!(
                e,
                ClientEvent::Notification(Notification::LayoutChange { .. })
            )
        })
        .await;
        let Some(ClientEvent::Notification(Notification::LayoutChange { layout, .. })) =
            events.last()
        else {
            unreachable!()
        };
        let mut ours: Vec<String> = parse_layout(layout)
            .unwrap()
            .panes()
            .iter()
            .map(|(id, r)| format!("{id} {} {} {} {}", r.left, r.top, r.cols, r.rows))
            .collect();
        let format = "#{pane_id} #{pane_left} #{pane_top} #{pane_width} #{pane_height}";
        let out = server.run(&["list-panes", "-t", "=lay:", "-F", format]);
        let mut theirs: Vec<String> = out.lines().map(str::to_owned).collect();
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs);
    }
    client.close().await;
}

#[tokio::test]
async fn sessions_made_and_renamed_elsewhere_are_announced() {
    let server = TmuxServer::new();
    server.new_shell("watch");
    let tmux = tmux_for(&server);
    let mut client = attach(&tmux, "watch").await;
    server.new_shell("newcomer");
    events_until(&mut client, |e| {
        matches!(e, ClientEvent::Notification(Notification::SessionsChanged))
    })
    .await;
    server.run(&["rename-session", "-t", "=watch", "watched"]);
    let id = client.attached().session;
    let events = events_until(&mut client, |e| {
        matches!(
            e,
            ClientEvent::Notification(Notification::SessionRenamed { .. })
        )
    })
    .await;
    let renamed = Notification::SessionRenamed {
        session: Some(id),
        name: "watched".into(),
    };
    assert!(matches!(events.last(), Some(ClientEvent::Notification(n)) if *n == renamed));
    client.close().await;
}

#[tokio::test]
async fn a_no_output_client_gets_notifications_but_no_output() {
    let server = TmuxServer::new();
    server.new_shell("quiet");
    let tmux = tmux_for(&server);
    let mut client = ControlClient::attach(&tmux, "quiet", options(vec![ClientFlag::NoOutput]))
        .await
        .unwrap();
    server.send_keys("quiet", &["echo", "Space", "LOUD", "Enter"]);
    server.wait_for_text("quiet", "LOUD");
    // tmux sends a pane's output before the reply to any later command, so
    // this reply is a barrier: output would have come before it.
    let barrier = client
        .send(&DisplayMessage {
            target: None,
            format: "x".into(),
        })
        .await
        .unwrap();
    let events = events_until(
        &mut client,
        |e| matches!(e, ClientEvent::Reply { ticket, .. } if *ticket == barrier),
    )
    .await;
    let output = events.iter().any(|e| {
        matches!(
            e,
            ClientEvent::Notification(
                Notification::Output { .. } | Notification::ExtendedOutput { .. }
            )
        )
    });
    assert!(!output, "{events:?}");
    server.new_shell("other");
    events_until(&mut client, |e| {
        matches!(e, ClientEvent::Notification(Notification::SessionsChanged))
    })
    .await;
    client.close().await;
}

/// A pitfall for the actor: under `detach-on-destroy off` a client whose
/// session is killed is moved to another session (`%session-changed`)
/// instead of getting `%exit`.
#[tokio::test]
async fn detach_on_destroy_off_moves_the_client_to_another_session() {
    let server = TmuxServer::new();
    server.new_shell("first");
    server.new_shell("second");
    server.run(&["set-option", "-g", "detach-on-destroy", "off"]);
    let tmux = tmux_for(&server);
    let mut client = attach(&tmux, "first").await;
    let first = client.attached().session;
    server.run(&["kill-session", "-t", "=first"]);
    let events = events_until(&mut client, |e| {
        matches!(
            e,
            ClientEvent::Notification(
                Notification::SessionChanged { .. } | Notification::Exit { .. }
            )
        )
    })
    .await;
    match events.last() {
        Some(ClientEvent::Notification(Notification::SessionChanged { session, name })) => {
            assert_ne!(*session, first);
            assert_eq!(name, "second");
        }
        other => panic!("expected %session-changed, got {other:?}"),
    }
    assert!(server.has_session("second"));
    client.close().await;
}
