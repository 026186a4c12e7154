//! Discovery, sessions ending outside tmuxd, restarts and the data dir.

use crate::common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::json;

fn id_of(daemon: &Daemon, name: &str) -> Option<String> {
    daemon
        .sessions()
        .iter()
        .find(|s| s["tmux_name"] == name)
        .map(|s| s["session_id"].as_str().unwrap().to_owned())
}

/// The id of session `name` once its control client is attached: tmux
/// before 3.7 can crash when a session closes while a control client is
/// mid-handshake (docs/architecture.md), so tests act from outside only after that.
fn attached_id(daemon: &Daemon, name: &str) -> Option<String> {
    daemon
        .sessions()
        .iter()
        .find(|s| s["tmux_name"] == name && s["transport"] == "attached")
        .map(|s| s["session_id"].as_str().unwrap().to_owned())
}

#[test]
fn outside_sessions_are_adopted_and_outside_kills_are_noticed_at_once() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    tmux.new_shell("outside");
    tmux.new_shell("other");
    let id = wait_for("discovery to adopt", || attached_id(&daemon, "outside"));
    wait_for("discovery to adopt", || attached_id(&daemon, "other"));

    tmux.run(&["kill-session", "-t", "=outside"]);
    let killed_at = Instant::now();
    wait_for("the session to leave the list", || {
        id_of(&daemon, "outside").is_none().then_some(())
    });
    let took = killed_at.elapsed();
    // Far below the safety sweep: the end is noticed, not polled for. Loose
    // enough for a loaded CI machine.
    assert!(took < Duration::from_secs(5), "removal took {took:?}");
    let ended = wait_for("the end event", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["kind"] == "session_deleted" && e["session_id"] == id.as_str())
    });
    assert_eq!(ended["reason"], "process_exit");
    assert_eq!(ended["tmux_name"], "outside");
}

/// A discovered session is listed as `starting` while its client attaches
/// (an adoption may wait seconds for a quiet tmux server), one slow attach
/// does not keep the next discovery waiting, and a request for a session
/// still attaching waits for it.
#[test]
fn a_discovered_session_is_listed_while_its_client_attaches() {
    let tmux = TmuxServer::new();
    tmux.new_shell("first");
    let dir = tempfile::tempdir().unwrap();
    // The control client for `slow` takes SLOW to start: time for a loaded
    // machine to list it and the next one meanwhile, and within the attach's
    // deadline (`tmux.command_timeout_ms`, 5 s). The wrapper's `-V` is not a
    // release tmuxd knows the protocol of, so its clients are `tmux -C`
    // children, which the wrapper slows.
    const SLOW: Duration = Duration::from_secs(3);
    let script = dir.path().join("slow-attach-tmux");
    let wrapper = format!(
        "#!/bin/bash\nfor a in \"$@\"; do\n  [[ $a == -V ]] && {{ echo \"$(tmux -V) (slow wrapper)\"; exit; }}\n  [[ $a == =slow ]] && sleep {}\ndone\nexec tmux \"$@\"\n",
        SLOW.as_secs()
    );
    std::fs::write(&script, wrapper).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            tmux_bin: Some(script),
            ..Default::default()
        },
    );
    wait_for("first to be adopted", || id_of(&daemon, "first"));
    let started = Instant::now();
    tmux.new_shell("slow");
    let slow = wait_for("slow to be listed", || id_of(&daemon, "slow"));
    let listed_after = started.elapsed();
    tmux.new_shell("next");
    wait_for("next to be listed", || id_of(&daemon, "next"));
    let (status, body) = daemon.get(&format!("/v1/sessions/{slow}"));
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let summary = &body["session"];
    assert!(
        started.elapsed() < SLOW,
        "slow and next must be listed before slow's client attached (took {:?})",
        started.elapsed()
    );
    assert_eq!(summary["state"], "starting", "{summary}");
    assert_eq!(summary["state_reason"], "attaching", "{summary}");
    assert_eq!(summary["transport"], "disconnected", "{summary}");
    // Waits for the attach, then answers from the screen.
    let (status, snapshot) = daemon.get(&format!("/v1/sessions/{slow}/snapshot"));
    assert_eq!(status, reqwest::StatusCode::OK, "{snapshot}");
    assert!(started.elapsed() >= SLOW);
    let (_, body) = daemon.get(&format!("/v1/sessions/{slow}"));
    assert_eq!(body["session"]["transport"], "attached", "{body}");
    assert!(listed_after < SLOW, "{listed_after:?}");
}

/// A session discovery leaves alone at `max_sessions` is said once in the
/// log however often tmux announces changes, and adopted once room frees.
#[test]
fn a_full_registry_refuses_a_session_once_and_adopts_it_when_room_frees() {
    let tmux = TmuxServer::new();
    tmux.new_shell("a");
    tmux.new_shell("b");
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "max_sessions = 2\n".into(),
            ..Default::default()
        },
    );
    wait_for("two adopted", || {
        (daemon.sessions().len() == 2).then_some(())
    });
    tmux.new_shell("c");
    let refusals = || {
        let log = daemon.log();
        let about_c = |l: &&str| l.contains("not adopting") && l.ends_with("tmux_name=c");
        log.lines().filter(about_c).count()
    };
    wait_for("the refusal logged", || (refusals() == 1).then_some(()));
    // Each of these is a %sessions-changed that looks at `c` again.
    for i in 0..3 {
        let name = format!("churn{i}");
        tmux.new_session(&name, (80, 24), "sleep 0.1");
        wait_for("the churn session to end", || {
            (!tmux.has_session(&name)).then_some(())
        });
    }
    assert_eq!(refusals(), 1, "{}", daemon.log());
    tmux.run(&["kill-session", "-t", "=a"]);
    wait_for("c adopted once a slot frees", || id_of(&daemon, "c"));
}

#[test]
fn the_last_session_ending_is_a_process_exit_and_a_dead_server_is_reported() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let only = daemon.create(&json!({ "name": "only", "command": "sleep 0.3" }));
    let only = only["session_id"].as_str().unwrap().to_owned();
    let ended = wait_for("exit", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["session_id"] == only.as_str() && e["kind"] == "session_deleted")
    });
    assert_eq!(ended["reason"], "process_exit");

    let a = daemon.create(&json!({ "name": "a", "command": common::SHELL }));
    daemon.create(&json!({ "name": "b", "command": common::SHELL }));
    tmux.run(&["kill-server"]);
    let a = a["session_id"].as_str().unwrap().to_owned();
    let ended = wait_for("server gone", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["session_id"] == a.as_str() && e["kind"] == "session_deleted")
    });
    assert_eq!(ended["reason"], "tmux_server_gone");
    wait_for("empty list", || daemon.sessions().is_empty().then_some(()));
    // With no server at all the daemon still answers, lists nothing live,
    // and keeps the ended session readable with the same reason.
    let (status, body) = daemon.get(&format!("/v1/sessions/{a}"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["session"]["state"], "exited");
    assert_eq!(body["session"]["state_reason"], "tmux_server_gone");
}

#[test]
fn restart_keeps_ids_and_records_what_ended_while_down() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let keep = daemon.create(&json!({ "name": "keep", "command": common::SHELL }));
    let gone = daemon.create(&json!({ "name": "gone", "command": common::SHELL }));
    let detached = daemon.create(&json!({ "name": "parked", "command": common::SHELL }));
    let (keep, gone, parked) = [keep, gone, detached]
        .map(|s| s["session_id"].as_str().unwrap().to_owned())
        .into();
    daemon.delete(&format!("/v1/sessions/{parked}"));
    let (status, _) = daemon.terminate();
    assert!(status.success());

    tmux.run(&["kill-session", "-t", "=gone"]);
    let daemon = Daemon::start_with(&tmux, options());
    assert_eq!(
        id_of(&daemon, "keep"),
        Some(keep.clone()),
        "re-attached under its old id"
    );
    assert_eq!(id_of(&daemon, "gone"), None);
    let missing = daemon
        .events()
        .into_iter()
        .find(|e| e["session_id"] == gone.as_str() && e["kind"] == "session_deleted");
    assert_eq!(
        missing.expect("an end event for gone")["reason"],
        "startup_missing_tmux"
    );
    // Still detached after the restart: a later tick adopts a newcomer but
    // not the parked session; adopt restores its id.
    tmux.new_shell("newcomer");
    wait_for("a discovery tick", || id_of(&daemon, "newcomer"));
    assert_eq!(id_of(&daemon, "parked"), None);
    let (status, body) = daemon.post("/v1/sessions/adopt", &json!({ "tmux_name": "parked" }));
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["session"]["session_id"], parked.as_str());

    // The counter never goes back.
    let fresh = daemon.create(&json!({ "command": common::SHELL }));
    let number = |id: &str| id.trim_start_matches("sess_").parse::<u64>().unwrap();
    assert!(number(fresh["session_id"].as_str().unwrap()) > number(&parked));
    assert!(!daemon.snapshot_lines(&keep).is_empty());
}

#[test]
fn a_corrupt_registry_is_moved_aside_and_the_daemon_starts() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("registry.json"), "{ this is not json").unwrap();
    let daemon = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    let moved: Vec<String> = std::fs::read_dir(data.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("registry.json.corrupt-"))
        .collect();
    assert_eq!(moved.len(), 1, "corrupt file moved aside");
    assert_eq!(
        std::fs::read_to_string(data.path().join(&moved[0])).unwrap(),
        "{ this is not json"
    );
    daemon.create(&json!({ "name": "works", "command": common::SHELL }));
    let registry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.path().join("registry.json")).unwrap())
            .unwrap();
    assert_eq!(registry["sessions"][0]["tmux_name"], "works");
    assert!(daemon.log().contains("corrupt"), "the daemon reports it");
}

#[test]
fn a_second_daemon_on_the_same_data_dir_refuses_to_start() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let out = common::tmuxd_command(daemon.home())
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--config",
            "/dev/null",
            "--data-dir",
        ])
        .arg(&daemon.data_dir)
        .env("TMUXD_TMUX_SOCKET_NAME", &tmux.socket)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("already using data dir"), "{stderr}");
}

#[test]
fn data_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    daemon.create(&json!({ "command": common::SHELL }));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&daemon.data_dir), 0o700);
    assert_eq!(mode(&daemon.data_dir.join("registry.json")), 0o600);
    assert_eq!(mode(&daemon.data_dir.join("events.jsonl")), 0o600);
}

#[test]
fn a_tmux_older_than_3_2_is_refused_at_startup_naming_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("tmux");
    std::fs::write(&old, "#!/bin/sh\necho 'tmux 2.9a'\n").unwrap();
    std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("[tmux]\nbin = {old:?}\n")).unwrap();
    let out = common::tmuxd_command(dir.path())
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tmux 2.9a is too old") && stderr.contains("3.2"),
        "{stderr}"
    );
}

/// A session idle before a restart is idle since the same moment after it
/// (the wall said "for 0s" for every session).
#[test]
fn a_restart_keeps_state_since() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let id = daemon.create_named("steady", common::SHELL);
    let before = daemon.wait_until(&id, "idle");
    let since = before["state_since"].as_str().unwrap().to_owned();
    let (status, _) = daemon.terminate();
    assert!(status.success());

    let daemon = Daemon::start_with(&tmux, options());
    let after = daemon.wait_until(&id, "idle");
    assert_eq!(after["state_since"], since.as_str(), "{after}");
}
