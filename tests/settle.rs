//! The settled-screen check with real tmux: a screen that drifted from
//! tmux's is repaired to equal `capture-pane` and counted in `/metrics`; an
//! unchanged screen is never checked; a pane a person scrolls in copy mode
//! is left alone.

use crate::common;

use common::{Daemon, TmuxServer, wait_for};

fn checks(daemon: &Daemon) -> f64 {
    ["equal", "drift", "skipped", "failed"]
        .iter()
        .map(|o| {
            let sample = format!("tmuxd_screen_checks_total{{outcome=\"{o}\"}}");
            daemon.metric(&sample).unwrap_or(0.0)
        })
        .sum()
}

/// The adopted session's id.
fn adopted(daemon: &Daemon, name: &str) -> String {
    wait_for(&format!("{name} adopted"), || {
        daemon
            .sessions()
            .into_iter()
            .find(|s| s["tmux_name"] == name)
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
    })
}

#[test]
fn a_drifted_screen_is_repaired_to_tmuxs_and_counted() {
    let tmux = TmuxServer::new();
    // Adopted, not created: checks cover sessions tmuxd found too.
    tmux.new_shell("drift");
    let daemon = Daemon::start(&tmux);
    let id = adopted(&daemon, "drift");
    daemon.wait_for_snapshot(&id, "$");
    // A real divergence: tmux drops bytes that are not UTF-8, tmuxd's
    // parser (`vte`) shows U+FFFD for them (docs/fidelity.md).
    tmux.send_keys("drift", &["printf 'a\\xffb\\xc2c\\n'", "Enter"]);
    let repaired = wait_for("the drift counted and the screen repaired", || {
        let drift = daemon
            .metric("tmuxd_screen_drift_total{cause=\"text\"}")
            .unwrap_or(0.0);
        let lines = daemon.snapshot_lines(&id);
        (drift >= 1.0 && lines == tmux.capture("drift")).then_some(lines)
    });
    assert!(repaired.iter().any(|l| l == "abc"), "{repaired:?}");
    assert!(!repaired.iter().any(|l| l.contains('\u{fffd}')));
    assert!(
        daemon
            .metric("tmuxd_screen_checks_total{outcome=\"drift\"}")
            .unwrap_or(0.0)
            >= 1.0
    );
}

#[test]
fn an_unchanged_screen_is_not_checked() {
    let tmux = TmuxServer::new();
    tmux.new_shell("still");
    tmux.wait_for_text("still", "$");
    let daemon = Daemon::start(&tmux);
    let id = adopted(&daemon, "still");
    daemon.wait_for_snapshot(&id, "$");
    // Seeded from tmux at attach and silent since: for three seconds
    // (more than a pause and the session's interval), nothing is asked.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < until {
        assert_eq!(checks(&daemon), 0.0, "a check ran with nothing changed");
    }
    // Output then settles, and exactly one check follows it.
    tmux.send_keys("still", &["echo one", "Enter"]);
    wait_for("a check after output", || {
        (daemon
            .metric("tmuxd_screen_checks_total{outcome=\"equal\"}")
            .unwrap_or(0.0)
            >= 1.0)
            .then_some(())
    });
    let after = checks(&daemon);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < until {
        assert_eq!(checks(&daemon), after, "checked again with nothing new");
    }
    assert_eq!(
        daemon
            .metric("tmuxd_screen_drift_total{cause=\"text\"}")
            .unwrap_or(0.0),
        0.0
    );
}

#[test]
fn a_wait_matches_text_that_wrapped_before_tmuxd_attached() {
    let tmux = TmuxServer::new();
    tmux.new_session("wrapped", (40, 10), common::SHELL);
    tmux.wait_for_text("wrapped", "$");
    // 35 columns, then `needle-here`: it wraps after `needl`. The typed
    // command holds no `needle-here` of its own.
    let filler = "x".repeat(35);
    let command = format!("printf '%s%s%s\\n' {filler} needle- here");
    tmux.send_keys("wrapped", &[&command, "Enter"]);
    tmux.wait_for_text("wrapped", &format!("{filler}needl"));
    let daemon = Daemon::start(&tmux);
    let id = adopted(&daemon, "wrapped");
    daemon.wait_for_snapshot(&id, "e-here");
    let (status, found) = daemon.post(
        &format!("/v1/sessions/{id}/wait"),
        &serde_json::json!({ "match": "needle-here", "timeout_ms": 3000 }),
    );
    assert_eq!(
        status, 200,
        "the wrapped rows of the seed were not joined: {found}"
    );
    assert!(
        found["match"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("needle-here")),
        "{found}"
    );
}

#[test]
fn a_pane_in_copy_mode_is_said_so_and_left_unchecked() {
    let tmux = TmuxServer::new();
    tmux.new_shell("scroll");
    tmux.wait_for_text("scroll", "$");
    tmux.send_keys("scroll", &["seq 1 300", "Enter"]);
    tmux.wait_for_text("scroll", "300");
    let daemon = Daemon::start(&tmux);
    let id = adopted(&daemon, "scroll");
    daemon.wait_for_snapshot(&id, "300");
    let snapshot = |query: &str| {
        let (status, snap) = daemon.get(&format!("/v1/sessions/{id}/snapshot{query}"));
        assert_eq!(status, 200, "{snap}");
        snap
    };
    assert!(
        snapshot("").get("copy_mode").is_none(),
        "no one scrolls yet"
    );

    // A person at their own tmux client enters copy mode (prefix [) and
    // scrolls up a page.
    let person = common::pty::PtyClient::attach(&["-L", &tmux.socket], "scroll", 80, 24);
    wait_for("the person's client", || {
        (!tmux.run(&["list-clients"]).trim().is_empty()).then_some(())
    });
    let in_mode = || {
        let shown = tmux.run(&[
            "display-message",
            "-p",
            "-t",
            "=scroll:",
            "#{pane_in_mode} #{scroll_position}",
        ]);
        // Outside copy mode tmux leaves the position empty: "0 ".
        let mut fields = shown.split_whitespace();
        let on = fields.next() == Some("1");
        (
            on,
            fields
                .next()
                .and_then(|p| p.parse::<u32>().ok())
                .unwrap_or(0),
        )
    };
    // Keys a client gets while it still sets itself up can be lost: the
    // person presses again, as a person would.
    let mut polls = 0;
    wait_for("copy mode", || {
        if polls % 100 == 0 {
            person.type_bytes(b"\x02[");
        }
        polls += 1;
        in_mode().0.then_some(())
    });
    polls = 0;
    wait_for("a page up", || {
        if polls % 100 == 0 {
            person.type_bytes(b"\x1b[5~");
        }
        polls += 1;
        (in_mode().1 > 0).then_some(())
    });
    let scrolled = wait_for("the snapshot to say where the person is", || {
        let snap = snapshot("?pane=active");
        (snap["copy_mode"]["position"].as_u64().unwrap_or(0) > 0).then_some(snap)
    });
    assert_eq!(scrolled["copy_mode"]["mode"], "copy-mode", "{scrolled}");
    assert!(
        scrolled["copy_mode"]["history"].as_u64().unwrap() > 200,
        "{scrolled}"
    );
    // The live screen, as capture-pane shows it, not the copy-mode view.
    assert_eq!(daemon.snapshot_lines(&id), tmux.capture("scroll"));
    assert!(
        snapshot("")["copy_mode"].is_object(),
        "the window's snapshot says so too"
    );

    // Output meanwhile (written to the pane's terminal: keys would go to
    // copy mode) is shown, but not checked while the person scrolls.
    let tty = tmux.run(&["display-message", "-p", "-t", "=scroll:", "#{pane_tty}"]);
    let before = checks(&daemon);
    std::fs::write(tty.trim(), "late\r\n").unwrap();
    daemon.wait_for_snapshot(&id, "late");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < until {
        assert_eq!(checks(&daemon), before, "checked while in copy mode");
    }

    // Leaving copy mode: the flag goes, and the waiting check runs.
    person.type_bytes(b"q");
    wait_for("copy mode left", || {
        snapshot("").get("copy_mode").is_none().then_some(())
    });
    wait_for("the check after copy mode", || {
        (checks(&daemon) > before).then_some(())
    });
}
