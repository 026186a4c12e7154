//! The fake's control mode against tmuxd's own control client (no daemon):
//! replies and errors, hostile quoting, the pane's bytes, layout changes,
//! session changes, the exit of a killed session and a clean detach.

use std::path::{Path, PathBuf};

use tmuxd::tmux::command::{
    CapturePane, CaptureSeed, ClientFlag, DisplayMessage, ResizeWindow, SendHex, SendKeys,
    SendLiteral, Target, WindowPanes,
};
use tmuxd::tmux::control::{
    ClientEvent, ControlClient, ControlError, ControlOptions, Departure, Notification, PaneId,
    parse_layout,
};
use tmuxd::tmux::{Socket, Tmux};

use super::Fake;
use super::common::fake_tmux_dir;
use crate::common::{PATIENCE, wait_for};

/// The fake as tmuxd runs it, its state dir and PATH set by a wrapper (the
/// client's child inherits this process's environment otherwise).
fn tmux_for(fake: &Fake, dir: &Path) -> Tmux {
    let wrapper: PathBuf = dir.join("fake-tmux");
    let script = format!(
        "#!/bin/sh\nFAKE_TMUX_DIR='{}' PATH='{}' exec '{}' \"$@\"\n",
        fake.state.display(),
        fake.path,
        fake_tmux_dir().join("tmux").display()
    );
    std::fs::write(&wrapper, script).unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    Tmux::new(
        wrapper,
        Socket::Name(fake.socket.socket.clone()),
        None,
        PATIENCE,
    )
}

fn options() -> ControlOptions {
    ControlOptions {
        timeout: PATIENCE,
        flags: vec![ClientFlag::PauseAfter(5)],
        ..ControlOptions::default()
    }
}

/// The next notification that `pick` accepts; pane output is collected
/// into `output` on the way.
async fn next<T>(
    client: &mut ControlClient,
    output: &mut Vec<u8>,
    mut pick: impl FnMut(&Notification) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let event = tokio::time::timeout_at(deadline, client.next_event())
            .await
            .expect("the notification in time")
            .expect("the client is still there");
        if let ClientEvent::Notification(note) = event {
            if let Notification::Output { data, .. } | Notification::ExtendedOutput { data, .. } =
                &note
            {
                output.extend_from_slice(data);
            }
            if let Some(found) = pick(&note) {
                return found;
            }
        }
    }
}

/// Pane output until `needle` has arrived.
async fn output_until(client: &mut ControlClient, needle: &str) -> String {
    let mut output = Vec::new();
    while !String::from_utf8_lossy(&output).contains(needle) {
        next(client, &mut output, |_| Some(())).await;
    }
    String::from_utf8_lossy(&output).into_owned()
}

#[tokio::test]
async fn the_fake_speaks_control_mode_to_tmuxds_client() {
    let fake = Fake::new();
    let dir = tempfile::tempdir().unwrap();
    let tmux = tmux_for(&fake, dir.path());
    fake.run(&["new-session", "-d", "-s", "p q", "-x", "80", "-y", "24"]);
    let mut client = ControlClient::attach(&tmux, "p q", options())
        .await
        .unwrap();
    assert_eq!(client.attached().name, "p q");

    // Arguments quoted by tmuxd come back whole (no `#`: that is a format).
    for text in [
        "plain",
        "",
        "a b",
        "it's",
        "'",
        "a;b",
        ";",
        "%0:continue",
        "~/x",
        "$HOME",
        "a\\b",
        "tab\there",
        "héllo ✓",
        "a\nb",
        "~/x\n$y \"q\" \\",
        "\x1b\x7f\n",
    ] {
        let echo = DisplayMessage {
            target: None,
            format: text.to_owned(),
        };
        assert_eq!(client.run(&echo).await.unwrap(), text, "{text:?}");
    }
    let missing = CapturePane::screen(Target::Session("nope".into()));
    match client.run(&missing).await {
        Err(ControlError::Command { message, .. }) => {
            assert_eq!(message, "can't find session: nope")
        }
        other => panic!("expected an error reply, got {other:?}"),
    }

    // What the actor reads to lay the window out and seed the screen.
    let rows = client
        .run(&WindowPanes {
            session: "p q".into(),
        })
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!((row.window_cols, row.window_rows), (80, 24));
    assert_eq!(
        (row.state.cursor_x, row.state.cursor_y),
        (2, 0),
        "after `$ `"
    );
    assert!(row.active && row.state.cursor_visible && row.pid.is_some() && !row.dead);
    assert_eq!(row.state.scroll_lower, 23);
    let pane: PaneId = row.pane;
    let seed = CaptureSeed {
        pane,
        alternate: false,
    };
    let screen = client.run(&seed).await.unwrap();
    assert_eq!(screen.len(), 24);
    assert_eq!(screen[0], b"$ ");
    // A fake shell at its prompt answers a capture of its pane with an
    // invisible prompt marker (what lets tmuxd see it idle).
    assert_eq!(
        output_until(&mut client, "\x1b]133;A\x07").await,
        "\x1b]133;A\x07"
    );

    // The pane's bytes: typed text echoed, `\n` as `\r\n`, prompt markers.
    let target = Target::Pane(pane);
    let text = SendLiteral {
        target: target.clone(),
        text: "echo hi-$((1+1))".into(),
    };
    client.run(&text).await.unwrap();
    output_until(&mut client, "echo hi-$((1+1))").await;
    // A capture while a line is typed but not submitted (tmuxd re-reads
    // screens at any time) puts no prompt marker inside the line's echo.
    client.run(&seed).await.unwrap();
    // Enter only after the runner's next looks (it polls every 50 ms), or
    // the capture would be seen only once the line had been submitted.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let enter = SendKeys {
        target: target.clone(),
        keys: vec!["Enter".into()],
    };
    client.run(&enter).await.unwrap();
    let out = output_until(&mut client, "\x1b]133;A\x07$ ").await;
    assert!(
        out.starts_with("\r\n\x1b]133;C\x07hi-2\r\n\x1b]133;D;0\x07"),
        "{out:?}"
    );
    let raw = SendHex {
        target,
        bytes: "echo été\r".as_bytes().to_vec(),
    };
    client.run(&raw).await.unwrap();
    let out = output_until(&mut client, "\x1b]133;D;0").await;
    assert!(out.contains("echo été\r\n\x1b]133;C\x07été\r\n"), "{out:?}");

    let resize = ResizeWindow {
        target: Target::Session("p q".into()),
        cols: 100,
        rows: 30,
    };
    client.run(&resize).await.unwrap();
    let mut ignored = Vec::new();
    let layout = next(&mut client, &mut ignored, |n| match n {
        Notification::LayoutChange { layout, .. } => Some(layout.clone()),
        _ => None,
    })
    .await;
    let cell = parse_layout(&layout).expect("a layout with a valid checksum");
    assert_eq!((cell.rect.cols, cell.rect.rows), (100, 30), "{layout}");

    fake.run(&["new-session", "-d", "-s", "other"]);
    next(&mut client, &mut ignored, |n| {
        matches!(n, Notification::SessionsChanged).then_some(())
    })
    .await;

    // A second client, detached by closing its input: the session lives on.
    let other = ControlClient::attach(&tmux, "other", options())
        .await
        .unwrap();
    let count = || fake.run(&["list-sessions", "-F", "#{session_name}=#{session_attached}"]);
    assert!(count().contains("other=1"), "{}", count());
    assert_eq!(other.close().await, Departure::Clean);
    wait_for("the fake to count no client", || {
        count().contains("other=0").then_some(())
    });
    assert!(fake.has_session("other"));

    // A killed session: %sessions-changed, %exit, then EOF.
    fake.run(&["kill-session", "-t", "=p q"]);
    next(&mut client, &mut ignored, |n| {
        matches!(n, Notification::SessionsChanged).then_some(())
    })
    .await;
    next(&mut client, &mut ignored, |n| {
        matches!(n, Notification::Exit { .. }).then_some(())
    })
    .await;
    assert!(client.next_event().await.is_none(), "EOF after %exit");
    assert_eq!(client.close().await, Departure::Clean);
}
