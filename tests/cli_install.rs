//! Installing and running tmuxd (see issue 11): completions and man pages,
//! the systemd unit, logs, the fake tmux put on PATH as is, and `doctor`
//! doing a real round trip with tmux.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{
    Daemon, DaemonOptions, TmuxServer, fake_tmux_dir, path_with_fake_tmux, stdout_ok, tmuxd_bin,
    tmuxd_command,
};
use serde_json::json;

fn run(home: &Path, args: &[&str]) -> Output {
    tmuxd_command(home).args(args).output().unwrap()
}

/// Completions load in bash and exist for zsh and fish; the man
/// page comes from the same definitions.
#[test]
fn completions_load_in_bash_and_the_man_page_matches_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = Command::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "source <(\"$TMUXD\" completions bash) && complete -p tmuxd",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TMUXD", tmuxd_bin())
        .output()
        .unwrap();
    assert!(stdout_ok(loaded).contains("-F _clap_complete_tmuxd tmuxd"));
    for shell in ["zsh", "fish"] {
        let script = stdout_ok(run(dir.path(), &["completions", shell]));
        assert!(script.contains("TMUXD_COMPLETE"), "{shell}: {script}");
    }
    let page = stdout_ok(run(dir.path(), &["man"]));
    assert!(page.contains(".TH tmuxd 1"), "{page}");
    assert!(
        page.contains("TMUXD_TOKEN") && page.contains("attach"),
        "{page}"
    );
    // What clap cannot derive from the flags.
    for section in [
        ".SH \"STATES\"",
        ".SH CONFIGURATION",
        ".SH \"ENVIRONMENT\"",
        ".SH \"FILES\"",
        ".SH \"EXIT STATUS\"",
    ] {
        assert!(page.contains(section), "{section}");
    }
    for word in [
        "waiting",
        "tmux.socket_name",
        "environment: TMUXD_BIND",
        "registry.json",
        "78",
    ] {
        assert!(page.contains(word), "{word}");
    }
    let out_dir = dir.path().join("man1");
    let written = stdout_ok(run(
        dir.path(),
        &["man", "--out-dir", out_dir.to_str().unwrap()],
    ));
    assert!(written.lines().count() > 10, "{written}");
    let main_page = std::fs::read_to_string(out_dir.join("tmuxd.1")).unwrap();
    assert!(main_page.contains(".SH \"EXIT STATUS\""), "{main_page}");
    let wait_page = std::fs::read_to_string(out_dir.join("tmuxd-wait.1")).unwrap();
    assert!(wait_page.contains("none"), "{wait_page}");
}

/// The systemd user unit never kills tmux, restarts on failure,
/// runs this binary by absolute path; `install` writes it where systemd
/// looks and says how to enable it (systemctl is not run).
#[test]
fn the_service_unit_never_kills_tmux_and_install_writes_it() {
    let home = tempfile::tempdir().unwrap();
    let printed = stdout_ok(run(home.path(), &["service", "install", "--print"]));
    let exec = format!("\nExecStart={} serve\n", tmuxd_bin());
    assert!(Path::new(tmuxd_bin()).is_absolute());
    for line in [
        exec.as_str(),
        "\nKillMode=process\n",
        "\nRestart=on-failure\n",
        "\nWantedBy=default.target\n",
    ] {
        assert!(printed.contains(line), "{line:?} in\n{printed}");
    }
    let config = home.path().join("my config.toml");
    let said = stdout_ok(run(
        home.path(),
        &["service", "install", "--config", config.to_str().unwrap()],
    ));
    let unit_path = home.path().join("xdg-config/systemd/user/tmuxd.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    assert!(
        unit.contains(&format!("serve --config \"{}\"\n", config.display())),
        "{unit}"
    );
    assert!(unit.contains("\nKillMode=process\n"));
    assert!(said.contains(&unit_path.display().to_string()), "{said}");
    assert!(
        said.contains("systemctl --user enable --now tmuxd"),
        "{said}"
    );
    assert!(said.contains("loginctl enable-linger"), "{said}");
}

/// Logs carry no colour codes when stderr is a file; `log_file`
/// sends them to a file instead.
#[test]
fn logs_have_no_colour_in_a_file_and_go_to_log_file() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    daemon.create(&json!({ "name": "logged", "command": "sleep 600" }));
    let log = daemon.log();
    assert!(log.contains("tmuxd serving"), "{log}");
    assert!(
        !log.contains('\x1b'),
        "colour codes in a redirected log:\n{log}"
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("logs/tmuxd.log");
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: format!("log_file = {:?}\n", file.display().to_string()),
            ..Default::default()
        },
    );
    daemon.create(&json!({ "name": "to-file", "command": "sleep 600" }));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("tmuxd serving"), "{written}");
    assert!(!written.contains('\x1b'), "{written}");
    assert!(!daemon.log().contains("tmuxd serving"), "{}", daemon.log());
}

/// The fake tmux simply put first on PATH (no FAKE_TMUX_DIR)
/// serves a daemon driven by the CLI, as docs/guide.md tells CI users.
#[test]
fn the_fake_tmux_first_on_path_serves_a_daemon_without_setup() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_with_fake_tmux(dir.path());
    // Its unique socket name only; the fake's server is ended below.
    let socket = TmuxServer::new();
    // No FAKE_TMUX_DIR: the fake's default state dir goes under TMUX_TMPDIR,
    // here a temp dir, so the test leaves nothing in /tmp.
    let tmpdir = dir.path().display().to_string();
    let daemon = Daemon::start_with(
        &socket,
        DaemonOptions {
            path_env: Some(path.clone()),
            env: vec![("TMUX_TMPDIR".into(), tmpdir.clone())],
            ..Default::default()
        },
    );
    let cli = |args: &[&str]| {
        daemon
            .client()
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap()
    };
    let id = stdout_ok(cli(&["new", "-q", "--name", "ci"]))
        .trim()
        .to_owned();
    stdout_ok(cli(&["send", "ci", "--enter", "echo hello-$((2+3))"]));
    daemon.wait_for_snapshot(&id, "hello-5");
    stdout_ok(cli(&["rm", "ci", "--kill"]));
    let ended = Command::new(fake_tmux_dir().join("tmux"))
        .args(["-L", &socket.socket, "kill-server"])
        .env_clear()
        .env("PATH", &path)
        .env("TMUX_TMPDIR", &tmpdir)
        .output()
        .unwrap();
    assert!(!ended.status.success(), "no fake session was left behind");
    // SAFETY: getuid(2) cannot fail.
    let state = dir
        .path()
        .join(format!("fake-tmux-{}", unsafe { libc::getuid() }));
    assert!(state.is_dir(), "the fake kept its state in its default dir");
}

fn doctor(home: &Path, tmux_bin: &str, path: Option<&str>) -> (bool, String) {
    let config = home.join("config.toml");
    std::fs::write(
        &config,
        format!("bind = \"127.0.0.1:0\"\n[tmux]\nbin = {tmux_bin:?}\n"),
    )
    .unwrap();
    let mut command = tmuxd_command(home);
    command
        .args(["doctor", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(home.join("data"));
    // The probe's socket (and the fake's default state dir) under a temp
    // dir rather than /tmp.
    command.env("TMUX_TMPDIR", home);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `doctor` creates, lists and kills a probe session on a private
/// socket: a tmux that answers `-V` but cannot run sessions fails it.
#[test]
fn doctor_creates_lists_and_kills_a_probe_session() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = doctor(dir.path(), "tmux", None);
    assert!(ok, "{text}");
    for check in ["tmux", "data dir", "bind", "auth"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("ok") && l.contains(check)),
            "{check}: {text}"
        );
    }
    assert!(
        text.contains("created, listed, attached to and killed a probe session"),
        "{text}"
    );
    // Real tmux 3.2 to 3.7: tmuxd's own client, which attached.
    assert!(text.contains("ok   control client: native"), "{text}");
    // SAFETY: getuid(2) cannot fail.
    let probes = std::fs::read_dir(
        dir.path()
            .join(format!("tmux-{}", unsafe { libc::getuid() })),
    );
    let left: Vec<_> = probes
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "the probe's socket is removed: {left:?}");

    let path = path_with_fake_tmux(dir.path());
    let (ok, text) = doctor(dir.path(), "tmux", Some(&path));
    assert!(
        ok && text.contains("fake"),
        "the fake on PATH, no FAKE_TMUX_DIR: {text}"
    );
    assert!(
        text.contains("ok   control client: tmux -C child"),
        "the fake has no server socket: {text}"
    );

    let version_only = dir.path().join("version-only-tmux");
    std::fs::write(
        &version_only,
        "#!/bin/sh\ncase \" $* \" in *' -V '*) echo 'tmux 3.3a'; exit 0 ;; esac\necho 'server exited unexpectedly' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&version_only).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&version_only, perms).unwrap();
    let (ok, text) = doctor(dir.path(), version_only.to_str().unwrap(), None);
    assert!(!ok, "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("FAIL tmux") && l.contains("cannot create a session")),
        "{text}"
    );
    let (ok, text) = doctor(dir.path(), "/nonexistent/tmux", None);
    assert!(
        !ok && text.lines().any(|l| l.starts_with("FAIL tmux")),
        "{text}"
    );
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
        (
            "",
            &[("TMUXD_LOG", "foo=bar=baz")],
            "`log`: `foo=bar=baz` is not a log filter",
        ),
        ("log = \"tmuxd=loud\"\n", &[], "`log`"),
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
        "max_sessions = 9\n[auth]\ntoken = \"s3cret-token-0123456789abcd\"\n",
    )
    .unwrap();
    let out = tmuxd_command(dir.path())
        .args(["config", "--config"])
        .arg(&path)
        .args(["--bind", "127.0.0.1:9999", "--log-file", "/var/log/t.log"])
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
    let log_file = line("log_file");
    assert!(
        log_file.contains("\"/var/log/t.log\"") && log_file.ends_with("# flag --log-file"),
        "{text}"
    );
    assert!(line("checkpoint_interval_s").contains("default"), "{text}");
}

/// `doctor` asks whoever holds the bind who it is: a running tmuxd is named
/// as one, another program fails the check.
#[test]
fn doctor_asks_who_holds_the_bind() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let dir = tempfile::tempdir().unwrap();
    let doctor_on = |bind: &str| {
        let config = dir.path().join("config.toml");
        std::fs::write(&config, format!("bind = {bind:?}\n")).unwrap();
        let out = tmuxd_command(dir.path())
            .args(["doctor", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env("TMUX_TMPDIR", dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find(|l| l.contains("bind:"))
            .unwrap_or_else(|| panic!("no bind line: {text}"))
            .to_owned()
    };
    let address = daemon.base.strip_prefix("http://").unwrap();
    let line = doctor_on(address);
    assert!(
        line.starts_with("ok   bind:") && line.contains("in use by a running tmuxd"),
        "{line}"
    );
    // A listener that never answers: not a tmuxd.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let line = doctor_on(&other.local_addr().unwrap().to_string());
    assert!(
        line.starts_with("FAIL bind:") && line.contains("another program"),
        "{line}"
    );
}

/// `service install` names the `TMUXD_*` settings of the shell that the
/// service (started by systemd) would not see.
#[test]
fn service_install_warns_about_tmuxd_settings_of_the_shell() {
    let home = tempfile::tempdir().unwrap();
    let out = tmuxd_command(home.path())
        .args(["service", "install", "--print"])
        .env("TMUXD_BIND", "127.0.0.1:7999")
        .env("TMUXD_TMUX_BIN", "/opt/tmux/bin/tmux")
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("TMUXD_BIND, TMUXD_TMUX_BIN") && said.contains("(bind, tmux.bin)"),
        "{said}"
    );
    let quiet = run(home.path(), &["service", "install", "--print"]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// Bash completes subcommands and flags, the daemon's session ids and names
/// (asked of the daemon at each TAB), and tmux key names; with no daemon to
/// ask, sessions complete to nothing, at once.
#[test]
fn completions_offer_sessions_and_key_names() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("build-box", "sleep 600");
    let complete = |line: &str, with_daemon: bool| -> Vec<String> {
        let client = daemon.client();
        let mut bash = Command::new("bash");
        bash.env_clear();
        for (key, value) in client.get_envs() {
            if let Some(value) = value
                && (with_daemon || !key.to_string_lossy().starts_with("TMUXD_"))
            {
                bash.env(key, value);
            }
        }
        if !with_daemon {
            bash.env("TMUXD_URL", "http://127.0.0.1:9");
        }
        let out = bash
            .args(["--norc", "--noprofile", "-c", common::BASH_COMPLETE])
            .env("TMUXD", tmuxd_bin())
            .env("LINE", line)
            .output()
            .unwrap();
        stdout_ok(out).lines().map(str::to_owned).collect()
    };
    let words = complete("tmuxd at", true);
    assert!(words.contains(&"attach".to_owned()), "{words:?}");
    let words = complete("tmuxd show ", true);
    assert!(words.contains(&id), "{words:?}");
    assert!(words.contains(&"build-box".to_owned()), "{words:?}");
    let words = complete("tmuxd snap build", true);
    assert_eq!(words, ["build-box"]);
    let words = complete("tmuxd keys build-box E", true);
    assert!(
        words.contains(&"Enter".to_owned()) && words.contains(&"Escape".to_owned()),
        "{words:?}"
    );
    let words = complete("tmuxd show --j", true);
    assert_eq!(words, ["--json"]);
    let started = std::time::Instant::now();
    let words = complete("tmuxd show ", false);
    assert!(!words.contains(&id), "{words:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}
