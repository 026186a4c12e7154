//! Coding agents, with real tmux: the agent in a pane's foreground shown
//! in the summary, an agent's preset applied only while that agent runs,
//! hook events fed through `POST /v1/hooks/{agent}` (and refused when bad),
//! `tmuxd hooks install` on a temporary HOME, and a fake agent that calls
//! the installed hook command exactly as Claude Code runs its hooks.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::webhook::webhook;
use common::{Daemon, DaemonOptions, TmuxServer, tmuxd_command, wait_for};
use serde_json::{Value, json};

/// Waits until the session's summary passes `check`; returns it.
fn wait_summary(daemon: &Daemon, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    wait_for(what, || {
        last = daemon.summary(id);
        check(&last).then(|| last.clone())
    })
}

/// An executable `sh` script named `name` in `dir`: run directly, the
/// kernel names its process after the file (as pip's `aider` or a
/// `claude` build), so tmuxd sees that name.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/screens/agents")
        .join(name)
}

/// The agent in the foreground is named in the summary; a plain program is none.
#[test]
fn the_foreground_agent_is_in_the_summary() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let dir = tempfile::tempdir().unwrap();
    let claude = script(dir.path(), "claude", "while read -r line; do :; done\n");
    let codex = script(dir.path(), "codex", "while read -r line; do :; done\n");
    let ids: Vec<(String, Value)> = [
        (claude.to_str().unwrap().to_owned(), json!("claude")),
        (codex.to_str().unwrap().to_owned(), json!("codex")),
        (
            "sh -c 'while read -r l; do :; done'".to_owned(),
            Value::Null,
        ),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (command, agent))| (daemon.create_named(&format!("a{i}"), &command), agent))
    .collect();
    for (id, agent) in ids {
        wait_summary(&daemon, &id, &format!("{id} agent {agent}"), |s| {
            s["current_command"] != "" && s["agent"] == agent
        });
    }
    // An agent a shell runs in the background does not hold the terminal.
    let sleeper = script(dir.path(), "claude-bg/claude", "sleep 1000\n");
    let shell = daemon.create_named("bg", common::SHELL);
    daemon.wait_until(&shell, "idle");
    daemon.type_line(&shell, &format!("{} & echo started-$!", sleeper.display()));
    daemon.wait_for_snapshot(&shell, "started-");
    let seen = daemon.wait_until(&shell, "idle");
    assert_eq!(seen["agent"], Value::Null, "{seen}");
    daemon.type_line(&shell, "kill %1");
}

/// Claude Code's permission preset: waiting with attention while `claude`
/// shows the prompt, and the notification names the agent; a shell
/// printing the very same screen is not Claude.
#[test]
fn a_preset_applies_only_while_its_agent_runs() {
    let tmux = TmuxServer::new();
    let (url, calls) = webhook(vec![]);
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: format!("[notify]\nwebhook_url = {url:?}\n"),
            ..Default::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let screen = fixture("claude_permission.txt");
    let screen = screen.to_str().unwrap();
    let claude = script(
        dir.path(),
        "claude",
        &format!("cat '{screen}'\nwhile read -r line; do :; done\n"),
    );
    let body = |command: &str| json!({ "command": command, "cols": 100, "rows": 30 });
    let asking = daemon.create(&body(claude.to_str().unwrap()));
    let asking = asking["session_id"].as_str().unwrap().to_owned();
    let seen = wait_summary(&daemon, &asking, "claude_permission", |s| {
        s["state_reason"] == "claude_permission"
    });
    assert_eq!(seen["state"], "waiting", "{seen}");
    assert_eq!(seen["agent"], "claude", "{seen}");
    assert_eq!(seen["attention"]["reason"], "needs_input", "{seen}");
    let call = calls
        .recv_timeout(common::PATIENCE)
        .expect("a notification");
    assert_eq!(call["trigger"], "attention", "{call}");
    assert_eq!(call["agent"], "claude", "{call}");
    let shell = daemon.create(&body(common::SHELL));
    let shell = shell["session_id"].as_str().unwrap().to_owned();
    daemon.wait_until(&shell, "idle");
    daemon.type_line(&shell, &format!("clear; cat '{screen}'"));
    daemon.wait_for_snapshot(&shell, "3. No, and tell Claude");
    let seen = daemon.wait_until(&shell, "idle");
    assert_ne!(seen["state_reason"], "claude_permission", "{seen}");
    assert_eq!(seen["agent"], Value::Null, "{seen}");
}

fn post_hook(daemon: &Daemon, path: &str, body: &str) -> (u16, Value) {
    let request = reqwest::blocking::Client::new()
        .post(format!("{}{path}", daemon.base))
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    let response = daemon.authorize(request).send().unwrap();
    let status = response.status().as_u16();
    let text = response.text().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The pane tmux gave the session's first window (`%N`).
fn pane_of(tmux: &TmuxServer, name: &str) -> String {
    tmux.run(&[
        "display-message",
        "-p",
        "-t",
        &format!("={name}:"),
        "#{pane_id}",
    ])
    .trim()
    .to_owned()
}

/// Bad hook input gets a 4xx naming what is wrong, and changes nothing.
#[test]
fn bad_hook_input_is_refused_and_changes_nothing() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("h", common::SHELL);
    let before = daemon.wait_until(&id, "idle");
    let pane = pane_of(&tmux, "h");
    let path =
        |agent: &str, pane: &str| format!("/v1/hooks/{agent}?pane={}", pane.replace('%', "%25"));
    let stop = r#"{"hook_event_name": "Stop"}"#;
    let big = format!(
        r#"{{"hook_event_name": "Stop", "tool_input": "{}"}}"#,
        "x".repeat(70_000)
    );
    let cases: [(String, &str, u16, &str); 9] = [
        (path("cursor", &pane), stop, 404, "no hooks for agent"),
        (path("aider", &pane), stop, 404, "use claude or codex"),
        ("/v1/hooks/claude".into(), stop, 400, "no pane"),
        (path("claude", "3"), stop, 400, "not a tmux pane id"),
        (path("claude", "%99999"), stop, 404, "with pane %99999"),
        (path("claude", &pane), "{not json", 400, "invalid JSON body"),
        (
            path("claude", &pane),
            r#"{"type": "agent-turn-complete"}"#,
            400,
            "hook_event_name",
        ),
        (path("claude", &pane), "[]", 400, "must be a JSON object"),
        (path("claude", &pane), &big, 413, "at most 65536 bytes"),
    ];
    for (path, body, status, said) in &cases {
        let (got, answer) = post_hook(&daemon, path, body);
        assert_eq!(got, *status, "{path}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{path}: {answer}");
    }
    let after = daemon.summary(&id);
    assert_eq!(
        (&after["state"], &after["state_reason"], &after["thought"]),
        (&before["state"], &before["state_reason"], &Value::Null)
    );
    // The same event, well formed, is taken.
    let (status, answer) = post_hook(&daemon, &path("claude", &pane), stop);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["session_id"], id.as_str());
    assert_eq!(answer["state_reason"], "hook_stop", "{answer}");
}

/// `tmuxd` on a temporary HOME, nothing else of the test's environment.
/// No tmuxd on PATH: `hooks install` writes this build (and warns).
fn tmuxd_in(home: &Path, args: &[&str]) -> std::process::Output {
    tmuxd_command(home)
        .env("PATH", "/usr/bin:/bin")
        .args(args)
        .output()
        .unwrap()
}

fn backups(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().contains(".bak-")
        })
        .count()
}

/// Claude Code's settings: other settings kept, a backup made, and a second
/// install changes nothing.
#[test]
fn hooks_install_merges_into_claude_settings_once() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let mine = json!({
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    });
    std::fs::write(dir.join("settings.json"), mine.to_string()).unwrap();
    let printed = tmuxd_in(home.path(), &["hooks", "install", "claude", "--print"]);
    assert!(printed.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("settings.json")).unwrap(),
        mine.to_string(),
        "--print writes nothing"
    );
    let printed: Value = serde_json::from_slice(&printed.stdout).unwrap();
    let first = tmuxd_in(home.path(), &["hooks", "install", "claude"]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stdout);
    assert!(said.contains("wrote") && said.contains(".bak-"), "{said}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings, printed);
    assert_eq!(settings["model"], "opus");
    let stop = settings["hooks"]["Stop"].to_string();
    assert!(
        stop.contains("notify-send done") && stop.contains("hooks send claude"),
        "{stop}"
    );
    for event in ["Notification", "UserPromptSubmit", "PreToolUse"] {
        let hooks = settings["hooks"][event].to_string();
        assert!(hooks.contains(common::tmuxd_bin()), "{event}: {hooks}");
    }
    assert_eq!(backups(&dir), 1);
    let second = tmuxd_in(home.path(), &["hooks", "install", "claude"]);
    assert!(second.status.success());
    assert!(String::from_utf8_lossy(&second.stdout).contains("already installed"));
    assert_eq!(backups(&dir), 1, "nothing written the second time");
}

/// Codex's config: `notify` added, comments and tables kept; another
/// program's `notify` is not replaced.
#[test]
fn hooks_install_sets_codex_notify_without_clobbering() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".codex");
    let fresh = tmuxd_in(home.path(), &["hooks", "install", "codex"]);
    assert!(fresh.status.success(), "{fresh:?}");
    let text = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(
        text.contains(&format!(
            "notify = [\"{}\", \"hooks\", \"send\", \"codex\"]",
            common::tmuxd_bin()
        )),
        "{text}"
    );
    let mine = "# mine\nmodel = \"o3\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";
    std::fs::write(dir.join("config.toml"), mine).unwrap();
    assert!(
        tmuxd_in(home.path(), &["hooks", "install", "codex"])
            .status
            .success()
    );
    let text = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(
        text.ends_with(mine) && text.contains("hooks\", \"send\", \"codex\"]"),
        "{text}"
    );
    assert_eq!(backups(&dir), 1);
    let again = tmuxd_in(home.path(), &["hooks", "install", "codex"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("already installed"));
    std::fs::write(dir.join("config.toml"), "notify = [\"notify-send\"]\n").unwrap();
    let taken = tmuxd_in(home.path(), &["hooks", "install", "codex"]);
    assert!(!taken.status.success());
    assert!(String::from_utf8_lossy(&taken.stderr).contains("will not replace yours"));
    assert_eq!(
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        "notify = [\"notify-send\"]\n"
    );
}

/// The commands `tmuxd hooks install claude` wrote, by event.
fn installed_commands(home: &Path) -> Vec<(String, String)> {
    let out = tmuxd_in(home, &["hooks", "install", "claude"]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(home.join(".claude/settings.json")).unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    ["UserPromptSubmit", "Notification", "Stop"]
        .iter()
        .map(|event| {
            let command = settings["hooks"][event][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .to_owned();
            ((*event).to_owned(), command)
        })
        .collect()
}

/// A single-quoted `sh` word.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A fake agent in a session created through tmuxd runs the hook commands
/// `tmuxd hooks install claude` wrote, as Claude Code runs hooks (`sh -c`,
/// the event's JSON on stdin, its own environment with tmux's
/// `TMUX_PANE`), reaching tmuxd over its socket in the default data dir.
/// While it asks and when it is done it sleeps on a FIFO with a still
/// screen, which /proc alone would call working: the hooks make it
/// waiting with attention, then idle.
#[test]
fn a_fake_agent_calling_the_installed_hooks_is_followed() {
    let tmux = TmuxServer::new();
    let home = tempfile::tempdir().unwrap();
    let xdg_data = home.path().join("xdg-data");
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            data_dir: Some(xdg_data.join("tmuxd")),
            ..Default::default()
        },
    );
    let commands = installed_commands(home.path());
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("steps");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let ask = dir.path().join("ask");
    let event = |name: &str, extra: &str| {
        quoted(&format!(
            r#"{{"session_id":"s-1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"{name}"{extra}}}"#
        ))
    };
    let mut body = format!(
        "export HOME={} XDG_DATA_HOME={}\nhook() {{ printf '%s' \"$2\" | sh -c \"$1\"; }}\n",
        quoted(home.path().to_str().unwrap()),
        quoted(xdg_data.to_str().unwrap()),
    );
    for (event, command) in &commands {
        body.push_str(&format!("{event}={}\n", quoted(command)));
    }
    body.push_str(&format!(
        "read -r step < {fifo}\n\
         hook \"$UserPromptSubmit\" {}\n\
         i=0; while [ ! -e {ask} ]; do i=$((i+1)); printf '\\r* Thinking (%ss)' \"$i\"; sleep 0.1; done\n\
         printf '\\nRun rm -rf build? (waiting for you)\\n'\n\
         hook \"$Notification\" {}\n\
         read -r step < {fifo}\n\
         printf 'Done.\\n'\n\
         hook \"$Stop\" {}\n\
         read -r step < {fifo}\n",
        event("UserPromptSubmit", r#","prompt":"clean the build""#),
        event("Notification", r#","message":"Claude needs your permission to use Bash""#),
        event("Stop", r#","stop_hook_active":false"#),
        ask = quoted(ask.to_str().unwrap()),
        fifo = quoted(fifo.to_str().unwrap()),
    ));
    let agent = script(dir.path(), "fake-agent", &body);
    let id = daemon.create_named("agent", agent.to_str().unwrap());
    step(&fifo, "start");
    wait_summary(&daemon, &id, "working, by the prompt hook", |s| {
        s["state"] == "working" && s["state_reason"] == "hook_prompt_submit"
    });
    std::fs::write(&ask, "").unwrap();
    // The hook's state and its message (the thought) are two updates: the
    // summary may show one before the other.
    let waiting = wait_summary(&daemon, &id, "waiting, by the notification", |s| {
        s["state"] == "waiting" && !s["thought"].is_null()
    });
    assert_eq!(waiting["state_reason"], "hook_notification", "{waiting}");
    assert_eq!(waiting["attention"]["reason"], "needs_input", "{waiting}");
    assert_eq!(
        waiting["thought"]["text"], "Claude needs your permission to use Bash",
        "{waiting}"
    );
    step(&fifo, "answered");
    let done = wait_summary(&daemon, &id, "idle, by the stop hook", |s| {
        s["state"] == "idle"
    });
    assert_eq!(done["state_reason"], "hook_stop", "{done}");
    assert_eq!(done["attention"], Value::Null, "{done}");
    // Each hook's state was reported as it came (`working` was already
    // the state when the prompt hook came, so it made no event).
    let is_state = |e: &Value| e["kind"] == "session_state" && e["session_id"] == id.as_str();
    let events = daemon.events_once("the stop hook's state event", |events| {
        events
            .iter()
            .any(|e| is_state(e) && e["reason"] == "hook_stop")
    });
    let states: Vec<(String, String)> = events
        .iter()
        .filter(|e| is_state(e))
        .map(|e| {
            let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
            (text(&e["state"]), text(&e["reason"]))
        })
        .collect();
    let hooks: Vec<&(String, String)> = states
        .iter()
        .filter(|(_, r)| r.starts_with("hook_") && r != "hook_prompt_submit")
        .collect();
    assert_eq!(
        hooks,
        [
            &("waiting".to_owned(), "hook_notification".to_owned()),
            &("idle".to_owned(), "hook_stop".to_owned()),
        ],
        "{states:?}"
    );
    step(&fifo, "end");
    daemon.wait_until(&id, "exited");
}

/// Tells the fake agent to go on: a line into its FIFO once it reads it
/// (a write-only open fails until then, rather than blocking the test).
fn step(fifo: &Path, line: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut writer = wait_for("the agent to read its FIFO", || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo)
            .ok()
    });
    writer.write_all(format!("{line}\n").as_bytes()).unwrap();
}

/// Codex runs its `notify` program with the event as its last argument:
/// `tmuxd hooks send codex '{...}'` posts it for `$TMUX_PANE`'s session,
/// whose thought becomes the turn's last answer.
#[test]
fn codex_notify_argument_is_posted() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("cx", common::SHELL);
    daemon.wait_until(&id, "idle");
    let event = json!({
        "type": "agent-turn-complete",
        "turn-id": "7",
        "input-messages": ["fix the test"],
        "last-assistant-message": "Fixed: the test passes.",
    });
    let out = daemon
        .client()
        .env("TMUX_PANE", pane_of(&tmux, "cx"))
        .args(["hooks", "send", "codex", &event.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let seen = wait_summary(&daemon, &id, "the turn's answer", |s| {
        s["thought"]["text"] == "Fixed: the test passes."
    });
    assert_eq!(seen["thought"]["state"], "agent-turn-complete", "{seen}");
}

/// The hook command never fails the agent: no tmux, no daemon, no JSON
/// all exit 0 with nothing on stdout or stderr (Codex shares its terminal
/// with it); with `--verbose`, the reason on stderr.
#[test]
fn hooks_send_never_fails_the_agent() {
    let home = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: [Case; 3] = [
        (&[], "{}", "TMUX_PANE is not set"),
        (
            &[
                ("TMUX_PANE", "%1"),
                ("TMUXD_URL", &url),
                ("TMUXD_TOKEN", "a-token-0123456789abcdefghij"),
            ],
            "{}",
            "cannot reach tmuxd",
        ),
        (
            &[("TMUX_PANE", "%1"), ("TMUXD_URL", &url)],
            "{oops",
            "not JSON",
        ),
    ];
    for ((env, stdin, said), verbose) in cases.iter().flat_map(|case| [(case, false), (case, true)])
    {
        let mut child = tmuxd_command(home.path())
            .envs(env.iter().copied())
            .args(["hooks", "send", "claude"])
            .args(verbose.then_some("--verbose"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{env:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{env:?}: {out:?}");
        match verbose {
            true => assert!(stderr.contains(said), "{env:?}: {stderr}"),
            false => assert!(stderr.is_empty(), "{env:?}: {stderr}"),
        }
    }
}
