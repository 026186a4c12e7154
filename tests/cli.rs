//! The command line: client subcommands against a real daemon, config
//! errors and `tmuxd config`.

mod common;

use std::process::Output;

use common::{Daemon, TmuxServer, tmuxd_command, wait_for};

fn tmuxd(daemon: &Daemon, args: &[&str]) -> Output {
    daemon.client().args(args).output().unwrap()
}

fn stdout_ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn client_commands_drive_the_daemon() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let created = stdout_ok(tmuxd(
        &daemon,
        &[
            "new",
            "--name",
            "cli",
            "--",
            "env",
            "PS1=$ ",
            "bash",
            "--norc",
            "--noprofile",
        ],
    ));
    let id = created.split_whitespace().next().unwrap().to_owned();
    assert_eq!(created.trim(), format!("{id}\tcli"));

    let listing = stdout_ok(tmuxd(&daemon, &["ls"]));
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
    let json: serde_json::Value =
        serde_json::from_str(&stdout_ok(tmuxd(&daemon, &["ls", "--json"]))).unwrap();
    assert_eq!(json["sessions"][0]["session_id"], id.as_str());

    stdout_ok(tmuxd(
        &daemon,
        &["send", &id, "--enter", "echo from-cli-$((3*3))"],
    ));
    daemon.wait_for_snapshot(&id, "from-cli-9");
    let snap = stdout_ok(tmuxd(&daemon, &["snap", &id]));
    assert!(snap.lines().any(|l| l == "from-cli-9"), "{snap}");
    let ansi = stdout_ok(tmuxd(&daemon, &["snap", &id, "--ansi"]));
    assert!(ansi.contains("from-cli-9"));

    stdout_ok(tmuxd(&daemon, &["send", &id, "sleep 100"]));
    stdout_ok(tmuxd(&daemon, &["keys", &id, "Enter"]));
    wait_for("sleep to run", || {
        (tmux.current_command("cli") == "sleep").then_some(())
    });
    stdout_ok(tmuxd(&daemon, &["keys", &id, "C-c"]));
    wait_for("sleep to be interrupted", || {
        (tmux.current_command("cli") == "bash").then_some(())
    });

    let removed = stdout_ok(tmuxd(&daemon, &["rm", &id]));
    assert!(removed.contains("still running"), "{removed}");
    assert!(tmux.has_session("cli"));
    let adopted = stdout_ok(tmuxd(&daemon, &["adopt", "cli"]));
    assert_eq!(adopted.trim(), id);
    stdout_ok(tmuxd(&daemon, &["rm", &id, "--kill"]));
    assert!(!tmux.has_session("cli"));
}

#[test]
fn client_errors_go_to_stderr_with_exit_codes() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let missing = tmuxd(&daemon, &["snap", "sess_404"]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("no session sess_404") && stderr.contains("not_found"),
        "{stderr}"
    );
    let bad_key = tmuxd(&daemon, &["keys", "sess_1", "Entr"]);
    assert_eq!(bad_key.status.code(), Some(1));
    let usage = tmuxd(&daemon, &["keys"]);
    assert_eq!(usage.status.code(), Some(2), "usage errors exit 2");
    let unreachable = tmuxd_command(daemon.home())
        .args(["ls"])
        .env("TMUXD_URL", "http://127.0.0.1:1")
        .output()
        .unwrap();
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("cannot reach tmuxd"));
}

fn serve_with_config(toml: &str, env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, toml).unwrap();
    tmuxd_command(dir.path())
        .args(["serve", "--config"])
        .arg(&path)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn bad_config_exits_78_naming_the_key() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        ("bogus_key = 1\n", &[], "bogus_key"),
        ("max_sessions = \"many\"\n", &[], "max_sessions"),
        ("max_sessions = 0\n", &[], "max_sessions"),
        (
            "[tmux]\nsocket_name = \"a\"\nsocket_path = \"/tmp/b\"\n",
            &[],
            "tmux.socket_path",
        ),
        ("bind = \"0.0.0.0:7420\"\n", &[], "bind"),
        ("", &[("TMUXD_MAX_SESSIONS", "lots")], "max_sessions"),
        (
            "[discovery]\ninterval_ms = 1\n",
            &[],
            "discovery.interval_ms",
        ),
    ];
    for (toml, env, key) in cases {
        let out = serve_with_config(toml, env);
        assert_eq!(out.status.code(), Some(78), "{toml:?} {env:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(key),
            "{toml:?}: stderr names {key}: {stderr}"
        );
    }
}

#[test]
fn config_shows_effective_settings_and_sources_with_tokens_masked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "max_sessions = 9\n[auth]\ntoken = \"s3cret-token\"\n",
    )
    .unwrap();
    let out = tmuxd_command(dir.path())
        .args(["config", "--config"])
        .arg(&path)
        .args(["--bind", "127.0.0.1:9999"])
        .env("TMUXD_LOG", "debug")
        .output()
        .unwrap();
    let text = stdout_ok(out);
    assert!(!text.contains("s3cret-token"), "{text}");
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("{key} in {text}"))
            .to_owned()
    };
    assert!(line("max_sessions").contains("config file"), "{text}");
    assert!(line("bind").contains("flag"), "{text}");
    assert!(line("log").contains("env"), "{text}");
    assert!(line("checkpoint_interval_s").contains("default"), "{text}");
}

#[test]
fn doctor_reports_each_check() {
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let run = |bin: &str| {
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "bind = \"127.0.0.1:0\"\n[tmux]\nbin = {bin:?}\nsocket_name = {:?}\n",
                tmux.socket
            ),
        )
        .unwrap();
        tmuxd_command(dir.path())
            .args(["doctor", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .output()
            .unwrap()
    };
    let healthy = run("tmux");
    let text = String::from_utf8_lossy(&healthy.stdout).into_owned();
    assert!(healthy.status.success(), "{text}");
    for check in ["tmux", "data dir", "bind", "auth"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("ok") && l.contains(check)),
            "{check}: {text}"
        );
    }
    let broken = run("/nonexistent/tmux");
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&broken.stdout)
            .lines()
            .any(|l| l.starts_with("FAIL") && l.contains("tmux"))
    );
}
