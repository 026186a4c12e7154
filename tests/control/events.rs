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

/// What a screen seed relies on: output that arrives before a capture's
/// reply is already in the capture, and output after it is not.
#[tokio::test]
async fn a_capture_reply_splits_the_output_stream_exactly() {
    let server = TmuxServer::new();
    triggered_session(
        &server,
        "count",
        "i=0; while :; do i=$((i+1)); echo $i; sleep 0.002; done",
    );
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "count");
    let mut client = attach(&tmux, "count").await;
    let enter = SendKeys {
        target: Target::Pane(pane),
        keys: vec!["Enter".into()],
    };
    client.run(&enter).await.unwrap();
    collect_output(&mut client, pane, b"\r\n20\r\n").await;
    let numbers = |bytes: &[u8]| -> Vec<u64> {
        String::from_utf8_lossy(bytes)
            .split("\r\n")
            .filter_map(|n| n.parse().ok())
            .collect()
    };
    for _ in 0..20 {
        let ticket = client
            .send(&CapturePane::screen(Target::Pane(pane)))
            .await
            .unwrap();
        let mut before = Vec::new();
        let capture = loop {
            match client.next_event().await.unwrap() {
                ClientEvent::Reply { ticket: t, result } if t == ticket => break result.unwrap(),
                ClientEvent::Notification(Notification::ExtendedOutput { data, .. }) => {
                    before.extend(data)
                }
                _ => {}
            }
        };
        let last_captured = capture
            .iter()
            .rev()
            .find_map(|line| String::from_utf8_lossy(line).trim().parse::<u64>().ok())
            .expect("a number on screen");
        let mut after = Vec::new();
        while numbers(&after).len() < 2 {
            if let Some(ClientEvent::Notification(Notification::ExtendedOutput { data, .. })) =
                client.next_event().await
            {
                after.extend(data);
            }
        }
        assert!(
            numbers(&before).iter().all(|&n| n <= last_captured),
            "{before:?} vs {last_captured}"
        );
        let first_after = String::from_utf8_lossy(&after)
            .split("\r\n")
            .next()
            .unwrap()
            .to_owned();
        assert_eq!(
            first_after,
            (last_captured + 1).to_string(),
            "after {last_captured}: {after:?}"
        );
    }
    client.close().await;
}
