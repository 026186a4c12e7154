//! The command line as a script uses it: client subcommands against a real
//! daemon (sessions by id or name, `--json` everywhere, exit codes,
//! durations, `--url`/`--token`), config errors and `tmuxd config`.
//! See issue 11.

use crate::common;

use common::{
    Daemon, DaemonOptions, SHELL, TmuxServer, json_ok, stderr, stdout_ok, tmuxd_command, wait_for,
};
use serde_json::{Value, json};

#[test]
fn client_commands_drive_the_daemon() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = stdout_ok(daemon.cli(&[
        "new",
        "-q",
        "--name",
        "cli",
        "--",
        "env",
        "PS1=$ ",
        "bash",
        "--norc",
        "--noprofile",
    ]))
    .trim()
    .to_owned();
    assert!(id.starts_with("sess_"), "{id}");

    let listing = stdout_ok(daemon.cli(&["ls"]));
    assert!(
        listing.lines().next().unwrap().starts_with("ID"),
        "{listing}"
    );
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with(&format!("{id}  cli"))),
        "{listing}"
    );
    stdout_ok(daemon.cli(&["send", &id, "--enter", "echo from-cli-$((3*3))"]));
    daemon.wait_for_snapshot(&id, "from-cli-9");
    let snap = stdout_ok(daemon.cli(&["snap", &id]));
    assert!(snap.lines().any(|l| l == "from-cli-9"), "{snap}");
    let ansi = stdout_ok(daemon.cli(&["snap", &id, "--ansi"]));
    assert!(ansi.contains("from-cli-9"));

    stdout_ok(daemon.cli(&["send", &id, "sleep 100"]));
    stdout_ok(daemon.cli(&["keys", &id, "Enter"]));
    wait_for("sleep to run", || {
        (tmux.current_command("cli") == "sleep").then_some(())
    });
    stdout_ok(daemon.cli(&["keys", &id, "C-c"]));
    wait_for("sleep to be interrupted", || {
        (tmux.current_command("cli") == "bash").then_some(())
    });

    let removed = stdout_ok(daemon.cli(&["rm", &id]));
    assert!(
        removed.contains("detach") && removed.contains("running"),
        "{removed}"
    );
    assert!(tmux.has_session("cli"));
    let adopted = stdout_ok(daemon.cli(&["adopt", "-q", "cli"]));
    assert_eq!(adopted.trim(), id);
    stdout_ok(daemon.cli(&["rm", &id, "--kill"]));
    assert!(!tmux.has_session("cli"));
}

/// Every command takes an id or an exact tmux name; a name that
/// is another session's id is ambiguous, and the error lists both.
#[test]
fn a_session_is_named_by_id_or_exact_tmux_name_and_ambiguity_lists_both() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let build = daemon.create_named("build", SHELL);
    stdout_ok(daemon.cli(&["send", "build", "--enter", "echo by-name-$((6*7))"]));
    daemon.wait_for_snapshot(&build, "by-name-42");
    let snap = stdout_ok(daemon.cli(&["snap", "build"]));
    assert!(snap.contains("by-name-42"), "{snap}");
    let shown = json_ok(daemon.cli(&["show", "build", "--json"]));
    assert_eq!(shown["session"]["session_id"], build.as_str());

    let impostor = daemon.create_named(&build, SHELL);
    let ambiguous = daemon.cli(&["snap", &build]);
    assert_eq!(ambiguous.status.code(), Some(2), "{}", stderr(&ambiguous));
    let message = stderr(&ambiguous);
    assert!(
        message.contains("ambiguous") && message.contains(&build) && message.contains(&impostor),
        "{message}"
    );
    assert!(stdout_ok(daemon.cli(&["snap", &impostor])).contains('$'));

    let missing = daemon.cli(&["snap", "no-such-name"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("\"no-such-name\""),
        "{}",
        stderr(&missing)
    );
    let unknown_id = daemon.cli(&["snap", "sess_404"]);
    assert_eq!(unknown_id.status.code(), Some(1));
    assert!(
        stderr(&unknown_id).contains("not_found"),
        "{}",
        stderr(&unknown_id)
    );

    stdout_ok(daemon.cli(&["rm", "build", "--kill"]));
    assert!(!tmux.has_session("build"));
    assert!(
        tmux.has_session(&build),
        "the session named like an id is untouched"
    );
}

/// `--json` prints the API's shapes, tables for people; wait
/// takes durations (`2h`, `none`) and a timeout exits 3.
#[test]
fn json_prints_api_shapes_wait_takes_durations_and_a_timeout_exits_3() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let args = [
        "new", "--json", "--name", "j", "--size", "100x30", "--", "bash", "--norc",
    ];
    let created = json_ok(daemon.cli(&args));
    let id = created["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(created["session"]["cols"], 100);
    let table = stdout_ok(daemon.cli(&["show", "j"]));
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("tmux_name:") && l.ends_with(" j")),
        "{table}"
    );

    let sent = json_ok(daemon.cli(&["send", "j", "--json", "--enter", "true"]));
    assert_eq!(sent, json!({ "delivered": true, "queued": false }));
    let keys = json_ok(daemon.cli(&["keys", "j", "--json", "Enter"]));
    assert_eq!(keys["delivered"], true);
    let waited =
        json_ok(daemon.cli(&["wait", "j", "--json", "--until", "idle", "--timeout", "60s"]));
    assert_eq!(waited["session"]["state"], "idle", "{waited}");
    let waited = stdout_ok(daemon.cli(&["wait", "j", "--until", "idle", "--timeout", "2h"]));
    assert!(
        waited.starts_with("ID") && waited.contains(" idle "),
        "{waited}"
    );
    stdout_ok(daemon.cli(&["wait", "j", "--until", "idle", "--timeout", "none"]));

    let timed_out = daemon.cli(&["wait", "j", "--until", "exited", "--timeout", "300ms"]);
    assert_eq!(timed_out.status.code(), Some(3), "{}", stderr(&timed_out));
    assert!(
        stderr(&timed_out).contains("timed out"),
        "{}",
        stderr(&timed_out)
    );

    let removed = json_ok(daemon.cli(&["rm", "j", "--json"]));
    assert_eq!(
        removed,
        json!({ "session_id": id, "mode": "detach", "tmux_alive": true })
    );
    let adopted = json_ok(daemon.cli(&["adopt", "j", "--json"]));
    assert_eq!(adopted["session"]["session_id"], id.as_str());
    let adopted_table = stdout_ok(daemon.cli(&["rm", "j", "--kill"]));
    assert!(adopted_table.starts_with("ID"), "{adopted_table}");
}

/// Flag values are checked before any request (exit 2, listing
/// what is allowed); an unreachable daemon is an error (exit 1).
#[test]
fn flag_values_are_checked_before_any_request() {
    let home = tempfile::tempdir().unwrap();
    // Nothing listens here: a command that sent a request would exit 1.
    let nowhere = |args: &[&str]| {
        tmuxd_command(home.path())
            .env("TMUXD_URL", "http://127.0.0.1:1")
            .env("TMUXD_TOKEN", "a-token-0123456789abcdefghij")
            .args(args)
            .output()
            .unwrap()
    };
    let bad_until = nowhere(&["wait", "j", "--until", "foo"]);
    assert_eq!(bad_until.status.code(), Some(2));
    assert!(
        stderr(&bad_until).contains("idle, working, busy, waiting, attention, exited, change"),
        "{}",
        stderr(&bad_until)
    );
    let bad_timeout = nowhere(&["wait", "j", "--until", "idle", "--timeout", "2x"]);
    assert_eq!(bad_timeout.status.code(), Some(2));
    assert!(
        stderr(&bad_timeout).contains("90s"),
        "{}",
        stderr(&bad_timeout)
    );
    assert_eq!(nowhere(&["resize", "j", "wide"]).status.code(), Some(2));
    assert_eq!(nowhere(&["keys"]).status.code(), Some(2));
    let unreachable = nowhere(&["ls"]);
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(stderr(&unreachable).contains("cannot reach tmuxd"));
}

/// Help describes every argument and names the environment;
/// `--url`/`--token` beside the variables; a URL without a scheme works;
/// auth errors say which variable to set. (Over TCP without a token the CLI
/// refuses before sending anything, issue 29: exit 2.)
#[test]
fn help_names_the_environment_and_auth_errors_say_what_to_set() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[auth]\ntoken = \"s3cret-0123456789abcdefghij\"\n".into(),
            ..Default::default()
        },
    );
    let help = stdout_ok(daemon.cli(&["--help"]));
    assert!(
        help.contains("TMUXD_URL") && help.contains("TMUXD_TOKEN"),
        "{help}"
    );
    let rm_help = stdout_ok(daemon.cli(&["rm", "--help"]));
    for needle in [
        "<SESSION>  Session id",
        "--kill ",
        "--url <URL>",
        "--token <TOKEN>",
    ] {
        assert!(rm_help.contains(needle), "{needle}: {rm_help}");
    }
    let events_help = stdout_ok(daemon.cli(&["events", "--help"]));
    assert!(
        events_help
            .lines()
            .any(|l| l.contains("--since <N>") && l.contains("Replay")),
        "{events_help}"
    );

    let denied = daemon.cli(&["ls"]);
    assert_eq!(denied.status.code(), Some(2));
    assert!(
        stderr(&denied).contains("TMUXD_TOKEN"),
        "{}",
        stderr(&denied)
    );
    let id = stdout_ok(daemon.cli(&[
        "new",
        "-q",
        "--token",
        "s3cret-0123456789abcdefghij",
        "--name",
        "t",
    ]))
    .trim()
    .to_owned();
    let bare = daemon.base.trim_start_matches("http://").to_owned();
    let listed = tmuxd_command(daemon.home())
        .args(["ls", "--url", &bare])
        .env("TMUXD_TOKEN", "s3cret-0123456789abcdefghij")
        .output()
        .unwrap();
    assert!(stdout_ok(listed).contains(&id));
    let by_env = tmuxd_command(daemon.home())
        .args(["show", "t", "--token", "s3cret-0123456789abcdefghij"])
        .env("TMUXD_URL", &bare)
        .output()
        .unwrap();
    assert!(stdout_ok(by_env).contains(&id));

    let watch = daemon.cli(&["watch", "t"]);
    assert_eq!(watch.status.code(), Some(2));
    assert!(stderr(&watch).contains("TMUXD_TOKEN"), "{}", stderr(&watch));
    let wrong = daemon.cli(&["watch", "t", "--token", "wrong"]);
    assert!(stderr(&wrong).contains("TMUXD_TOKEN"), "{}", stderr(&wrong));
    stdout_ok(daemon.cli(&[
        "rm",
        "t",
        "--kill",
        "--token",
        "s3cret-0123456789abcdefghij",
    ]));
}

/// Resize, scrollback and `snap --pane active`.
#[test]
fn resize_scrollback_and_snap_of_the_active_pane() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("cover", SHELL);
    stdout_ok(daemon.cli(&["resize", "cover", "100x30"]));
    assert_eq!(tmux.size("cover"), (100, 30));

    stdout_ok(daemon.cli(&[
        "send",
        "cover",
        "--enter",
        "seq 1 100; echo seq-$((1+1))-done",
    ]));
    daemon.wait_for_snapshot(&id, "seq-2-done");
    let history = stdout_ok(daemon.cli(&["scrollback", "cover", "--lines", "500"]));
    assert!(history.lines().any(|l| l == "1"), "{history}");
    let history = json_ok(daemon.cli(&["scrollback", "cover", "--json", "--lines", "5"]));
    assert_eq!(history["lines"].as_array().unwrap().len(), 5, "{history}");

    tmux.run(&["split-window", "-h", "-t", "=cover:", SHELL]);
    let active = wait_for("the split to show", || {
        let snap = json_ok(daemon.cli(&["snap", "cover", "--pane", "active", "--json"]));
        (snap["cols"].as_u64() < Some(100)).then_some(snap)
    });
    assert!(
        active["pane"]["left"].as_u64() > Some(0),
        "the right pane is active: {active}"
    );
    let window = json_ok(daemon.cli(&["snap", "cover", "--json"]));
    assert_eq!(window["cols"], 100);
}

/// `thought` sets the status `ls` shows, beside state and reason.
#[test]
fn a_thought_shows_in_ls_beside_state_and_reason() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("cover", SHELL);
    let thought = json_ok(daemon.cli(&[
        "thought",
        "cover",
        "--json",
        "--state",
        "working",
        "crate 3/9",
    ]));
    assert_eq!(thought["applied"], true, "{thought}");
    let listing = stdout_ok(daemon.cli(&["ls"]));
    let header = listing.lines().next().unwrap();
    for column in ["REASON", "QUEUED", "THOUGHT"] {
        assert!(header.contains(column), "{listing}");
    }
    let row = listing.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(row.ends_with("[working] crate 3/9"), "{listing}");
    stdout_ok(daemon.cli(&["wait", "cover", "--until", "idle", "--timeout", "60s"]));
    let shown = json_ok(daemon.cli(&["show", "cover", "--json"]));
    let reason = shown["session"]["state_reason"]
        .as_str()
        .unwrap()
        .to_owned();
    let listing = stdout_ok(daemon.cli(&["ls"]));
    let row = listing.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(
        row.contains(" idle ") && row.contains(&format!(" {reason} ")),
        "{reason} in {row}"
    );
}

#[test]
fn client_errors_go_to_stderr_with_exit_codes() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let missing = daemon.cli(&["snap", "sess_404"]);
    assert_eq!(missing.status.code(), Some(1));
    let text = stderr(&missing);
    assert!(
        text.contains("no session sess_404") && text.contains("not_found"),
        "{text}"
    );
    daemon.create_named("k", SHELL);
    // A value the daemon refuses is a usage error (issue 32).
    let bad_key = daemon.cli(&["keys", "k", "Entr"]);
    assert_eq!(bad_key.status.code(), Some(2));
    assert!(
        stderr(&bad_key).contains("invalid_keys"),
        "{}",
        stderr(&bad_key)
    );
}

/// `tmuxd config` shows no credential, wherever the configuration put one: a
/// webhook URL's userinfo and token parameter, or the notify command's
/// arguments.
#[test]
fn config_masks_credentials_in_urls_and_the_notify_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let config = r#"
[notify]
webhook_url = "http://hookuser:hook-pa55@relay.local:8080/hook?channel=ops&token=q-t0ken"
command = ["curl", "-u", "cmduser:cmd-pa55", "-H", "Authorization: Bearer cmd-t0ken", "http://u:url-pa55@h/x"]
"#;
    std::fs::write(&path, config).unwrap();
    let out = tmuxd_command(dir.path())
        .args(["config", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let text = stdout_ok(out);
    for secret in [
        "hookuser",
        "hook-pa55",
        "q-t0ken",
        "cmd-pa55",
        "cmd-t0ken",
        "url-pa55",
    ] {
        assert!(!text.contains(secret), "{secret} shown:\n{text}");
    }
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("{key} in {text}"))
            .to_owned()
    };
    // What is not a credential still shows, so the output stays useful.
    assert!(
        line("notify.webhook_url")
            .contains("\"http://****@relay.local:8080/hook?channel=ops&token=****\""),
        "{text}"
    );
    assert!(
        line("notify.command").contains("\"Authorization: ****\""),
        "{text}"
    );
}

/// A plain `tmuxd events` shows the last 20 events at once, then the live
/// ones (as `tail -f` does), instead of looking hung.
#[test]
fn events_without_flags_shows_the_recent_ones_then_follows() {
    use std::io::BufRead;
    use std::process::Stdio;

    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    for i in 0..24 {
        daemon.create(&json!({ "name": format!("e{i}"), "command": "sleep 600" }));
    }
    let (_, page) = daemon.get("/v1/events?format=json&limit=1");
    let newest = page["next_seq"].as_u64().unwrap() - 1;
    assert!(newest > 20, "enough events to leave some out: {newest}");
    let mut child = daemon
        .client()
        .args(["events", "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(event) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if tx.send(event).is_err() {
                break;
            }
        }
    });
    let next = || {
        rx.recv_timeout(common::PATIENCE)
            .expect("an event line in time")
    };
    // States may still change meanwhile: the replay starts 20 before
    // whatever was newest when the command started, never later than the
    // newest seen here, and not before.
    let first = next()["seq"].as_u64().unwrap();
    assert!(
        (newest - 19..=newest).contains(&first),
        "first {first}, newest {newest}"
    );
    let mut seq = first;
    while seq < newest {
        seq = next()["seq"].as_u64().unwrap();
    }
    let id = daemon.create(&json!({ "name": "live", "command": "sleep 600" }))["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let live = std::iter::repeat_with(next)
        .find(|e| e["kind"] == "session_created")
        .unwrap();
    assert_eq!(live["session_id"], id.as_str(), "{live}");
    let _ = child.kill();
    let _ = child.wait();
}
