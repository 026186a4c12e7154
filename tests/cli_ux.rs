//! The CLI as people expect it (see issue 32): `new` in the caller's
//! directory, one argument a shell line; `ls` and `new` say what happened;
//! output that is exact (sizes, JSONL, exit codes); `hooks send` from inside a session reaching
//! the daemon that made it; `hooks install` running a lasting binary.
//! Each test is the real CLI, with a cleared environment, against a real
//! daemon on real tmux (a private socket).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{
    Daemon, DaemonOptions, SHELL, TmuxServer, json_ok, stderr, stdout_ok, tmuxd_bin, wait_for,
};
use serde_json::Value;

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `new` starts where it is run (`./ask.sh` is found); one argument after
/// `--` is a shell line, several an argv passed as is.
#[test]
fn new_runs_here_and_one_argument_is_a_shell_line() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let work = tempfile::tempdir().unwrap();
    executable(
        &work.path().join("ask.sh"),
        "#!/bin/sh\necho asked-in-$(basename \"$PWD\")-$((6*7))\nexec sleep 600\n",
    );
    let new = |args: &[&str]| {
        let out = daemon
            .client()
            .current_dir(work.path())
            .args(["new", "-q"])
            .args(args)
            .output()
            .unwrap();
        stdout_ok(out).trim().to_owned()
    };
    let here = new(&["--name", "here", "--", "./ask.sh"]);
    let name = work.path().file_name().unwrap().to_string_lossy();
    daemon.wait_for_snapshot(&here, &format!("asked-in-{name}-42"));
    let cwd = std::fs::canonicalize(work.path()).unwrap();
    wait_for("the session's cwd to be known", || {
        let shown = json_ok(daemon.cli(&["show", "here", "--json"]));
        (shown["session"]["cwd"] == cwd.to_string_lossy().as_ref()).then_some(())
    });

    let line = new(&["--", "echo line-$((2+3)); exec sleep 600"]);
    daemon.wait_for_snapshot(&line, "line-5");
    let argv = new(&[
        "--",
        "sh",
        "-c",
        "printf '<%s>' \"$1\"; exec sleep 600",
        "-",
        "a b",
    ]);
    daemon.wait_for_snapshot(&argv, "<a b>");
}

/// `ls` says how many sessions ended that it does not list, and,
/// once the tmux server is lost, that they can be restored and how.
#[test]
fn ls_says_what_ended_and_that_tmux_was_lost() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let live = daemon.create_named("live", "sleep 600");
    let done = daemon.create_named("done", "true");
    daemon.wait_until(&done, "exited");
    let out = daemon.cli(&["ls"]);
    let said = stderr(&out);
    let table = stdout_ok(out);
    assert!(table.contains(&live) && !table.contains(&done), "{table}");
    assert!(said.contains("1 ended — ls --all"), "{said}");
    let all = daemon.cli(&["ls", "--all"]);
    assert!(!stderr(&all).contains("ended"), "{}", stderr(&all));
    assert!(stdout_ok(all).contains(&done));
    let json = json_ok(daemon.cli(&["ls", "--json"]));
    let ids: Vec<&str> = json["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [live.as_str()], "--json lists what the table does");

    tmux.run(&["kill-server"]);
    wait_for("tmux to be found lost", || {
        let (_, health) = daemon.get("/healthz");
        health["tmux_lost"].is_object().then_some(())
    });
    let out = daemon.cli(&["ls"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("tmux was lost")
            && said.contains("1 session can be restored")
            && said.contains("tmuxd restore"),
        "{said}"
    );
}

/// `new` waits a second and says when the program ended in it,
/// with its status and last line; its row shows the end.
#[test]
fn new_warns_of_a_program_that_ends_at_once() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let out = daemon.cli(&[
        "new",
        "--name",
        "quick",
        "--",
        "sh",
        "-c",
        // A moment before the end, so tmuxd has attached and seen the
        // line (a program that ends before the attach leaves no screen:
        // "it printed nothing").
        "echo no-config-$((1+1)); sleep 0.5; exit 3",
    ]);
    let said = stderr(&out);
    let table = stdout_ok(out);
    assert!(
        said.contains("ended within 1s: exit status 3; its last line: no-config-2"),
        "{said}"
    );
    assert!(table.contains("exited(3)"), "{table}");

    let out = daemon.cli(&["new", "--name", "long", "--", "sleep", "600"]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert!(!stdout_ok(out).contains("exited"));
}

/// A session whose program ends at once never shows the tmux
/// server's fork (`tmux: server`, the `tmux new-session ...` argv that
/// started the server) as its command.
#[test]
fn a_brief_program_is_not_shown_as_the_tmux_server() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    // A fresh tmux server whose only session ends at once may exit with
    // it; a keeper session holds the server, as this test is about the
    // command shown.
    daemon.create_named("keeper", "sleep 600");
    // The fork lives a moment: 20 tries give it many chances to be seen.
    let ids: Vec<String> = (0..20)
        .map(|i| {
            let name = format!("brief{i}");
            let out = daemon.cli(&["new", "-q", "--name", &name, "--", "exit 4"]);
            stdout_ok(out).trim().to_owned()
        })
        .collect();
    for id in &ids {
        let ended = daemon.wait_until(id, "exited");
        assert_ne!(ended["current_command"], "tmux: server", "{ended}");
        let argv = ended["command_line"].to_string();
        assert!(!argv.contains("new-session"), "{ended}");
    }
}

/// Scrollback of a session with no history is empty (it repeated
/// the screen's first line), live and ended; with history, it ends where
/// the screen begins.
#[test]
fn scrollback_without_history_is_empty() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("fresh", SHELL);
    daemon.wait_until(&id, "idle");
    let history = stdout_ok(daemon.cli(&["scrollback", "fresh"]));
    assert_eq!(history, "", "no history yet");
    daemon.type_line(&id, "seq 1 40 | sed s/^/h-/");
    daemon.wait_for_snapshot(&id, "h-40");
    let screen = daemon.snapshot_lines(&id);
    let history = stdout_ok(daemon.cli(&["scrollback", "fresh", "--lines", "1000"]));
    let last = history.lines().last().unwrap_or_default();
    assert!(
        history.lines().any(|l| l == "h-1") && last != screen[0],
        "{history}"
    );
}

/// The history an ended session kept is empty when it had none
/// (it was its screen's first line).
#[test]
fn scrollback_of_an_ended_session_without_history_is_empty() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let ended = daemon.create_named("brief", "echo only-line; sleep 0.2");
    daemon.wait_until(&ended, "exited");
    let out = daemon.cli(&["scrollback", "brief"]);
    assert_eq!(stdout_ok(out), "", "an ended session with no history");
}

/// `resize` prints the new size, not the old one.
#[test]
fn resize_prints_the_new_size() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("sized", SHELL);
    let resized = stdout_ok(daemon.cli(&["resize", "sized", "100x30"]));
    let row = resized.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(row.contains(" 100x30 "), "{resized}");
    let resized = json_ok(daemon.cli(&["resize", "sized", "90x20", "--json"]));
    assert_eq!(
        (&resized["session"]["cols"], &resized["session"]["rows"]),
        (&Value::from(90), &Value::from(20)),
        "{resized}"
    );
}

/// `events --json --no-follow` is one event per line (JSONL).
#[test]
fn events_json_without_follow_is_one_event_per_line() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    daemon.create_named("e", "sleep 600");
    let out = stdout_ok(daemon.cli(&["events", "--json", "--no-follow"]));
    assert!(out.lines().count() >= 1, "{out}");
    for line in out.lines() {
        let event: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not one event per line ({e}): {out}"));
        assert!(event["seq"].is_u64(), "{line}");
    }
}

/// A value the daemon refuses (HTTP 400) exits 2, like one the
/// CLI refuses itself.
#[test]
fn a_value_the_daemon_refuses_exits_2() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    daemon.create_named("sized", SHELL);
    let refused = daemon.cli(&["new", "--cwd", "/no/such/dir/here"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("HTTP 400"),
        "{}",
        stderr(&refused)
    );
    let refused = daemon.cli(&["keys", "sized", "Entr"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

/// `hosts` lists the fleet's peers, as a table or JSON.
#[test]
fn hosts_lists_the_peers() {
    let tmux = TmuxServer::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let fleet = format!(
        "[[fleet.peers]]\nname = \"gpu1\"\nurl = \"http://127.0.0.1:{port}\"\ntoken = \"peer-token-0123456789abcdef\"\n"
    );
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: fleet,
            ..Default::default()
        },
    );
    let table = stdout_ok(daemon.cli(&["hosts"]));
    let mut lines = table.lines();
    assert!(lines.next().unwrap().starts_with("NAME  STATUS"), "{table}");
    let row = lines.next().unwrap();
    assert!(
        row.starts_with("gpu1  ") && row.contains(&format!("http://127.0.0.1:{port}")),
        "{table}"
    );
    let json = json_ok(daemon.cli(&["hosts", "--json"]));
    assert_eq!(json["hosts"][0]["name"], "gpu1", "{json}");
}

/// The shell completes `wait --until` values.
#[test]
fn until_values_complete() {
    let home = tempfile::tempdir().unwrap();
    let complete = |line: &str| -> Vec<String> {
        let out = Command::new("bash")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("TMUXD_URL", "http://127.0.0.1:9")
            .env("TMUXD", tmuxd_bin())
            .env("LINE", line)
            .args(["--norc", "--noprofile", "-c", common::BASH_COMPLETE])
            .output()
            .unwrap();
        stdout_ok(out).lines().map(str::to_owned).collect()
    };
    let words = complete("tmuxd wait build --until w");
    assert_eq!(words, ["working", "waiting"]);
    let words = complete("tmuxd wait build --until ");
    for word in ["idle", "exited", "change", "quiet="] {
        assert!(words.contains(&word.to_owned()), "{word}: {words:?}");
    }
}

/// A session tmuxd made carries its daemon's socket (never a
/// token), so `tmuxd hooks send` run by an agent there reaches that daemon,
/// here one whose data dir is not the default, and says nothing.
#[test]
fn hooks_send_inside_a_session_reaches_its_daemon_silently() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("agent", SHELL);
    daemon.wait_until(&id, "idle");
    let socket = daemon.data_dir.join("tmuxd.sock");
    daemon.type_line(
        &id,
        "env | grep ^TMUXD_ | sed s/^/seen-/; echo env-$((1+1))-done",
    );
    let lines = daemon.wait_for_snapshot(&id, "env-2-done");
    let seen: Vec<&String> = lines.iter().filter(|l| l.starts_with("seen-")).collect();
    assert_eq!(
        seen,
        [&format!("seen-TMUXD_SOCKET={}", socket.display())],
        "{lines:?}"
    );

    let err = daemon.data_dir.parent().unwrap().join("hook.err");
    let event = r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"needs-you-42"}"#;
    daemon.type_line(
        &id,
        &format!(
            "echo '{event}' | '{}' hooks send claude 2>'{}'; echo hook-rc-$?",
            tmuxd_bin(),
            err.display()
        ),
    );
    daemon.wait_for_snapshot(&id, "hook-rc-0");
    wait_for("the hook's message as the thought", || {
        (daemon.summary(&id)["thought"]["text"] == "needs-you-42").then_some(())
    });
    assert_eq!(std::fs::read_to_string(&err).unwrap(), "", "silent");
}

/// `TMUXD_SOCKET` is held to the rules of every socket: one that
/// is not ours is refused, nothing is sent over TCP instead.
#[test]
fn a_socket_named_by_the_environment_must_be_ours() {
    let home = tempfile::tempdir().unwrap();
    let run = |socket: &str| {
        common::tmuxd_command(home.path())
            .env("TMUXD_SOCKET", socket)
            .args(["ls"])
            .output()
            .unwrap()
    };
    let missing = home.path().join("none.sock");
    let out = run(&missing.to_string_lossy());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no tmuxd is running"),
        "{}",
        stderr(&out)
    );
    let file = home.path().join("file.sock");
    std::fs::write(&file, "").unwrap();
    let out = run(&file.to_string_lossy());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not a socket"), "{}", stderr(&out));
    let out = run("relative.sock");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `hooks install` run from a cargo build writes the installed
/// tmuxd on PATH, which `cargo clean` leaves; `--print` names the file.
#[test]
fn hooks_install_runs_the_installed_binary_and_print_names_the_file() {
    let home = tempfile::tempdir().unwrap();
    let installed = home.path().join("bin/tmuxd");
    executable(&installed, "#!/bin/sh\n");
    let install = |path: &str, args: &[&str]| {
        common::tmuxd_command(home.path())
            .env("PATH", path)
            .args(["hooks", "install", "claude"])
            .args(args)
            .output()
            .unwrap()
    };
    let with_installed = format!("{}:/usr/bin:/bin", installed.parent().unwrap().display());
    let printed = install(&with_installed, &["--print"]);
    let settings = home.path().join(".claude/settings.json");
    let said = stderr(&printed);
    assert!(
        said.contains(&format!("would create {}", settings.display())),
        "{said}"
    );
    let text = stdout_ok(printed);
    assert!(
        text.contains(&format!("{} hooks send claude", installed.display())),
        "{text}"
    );
    assert!(!settings.exists(), "--print writes nothing");

    let out = install("/usr/bin:/bin", &[]);
    let said = stderr(&out);
    assert!(said.contains("cargo clean"), "{said}");
    let wrote = std::fs::read_to_string(&settings).unwrap();
    assert!(wrote.contains(tmuxd_bin()), "no installed one: {wrote}");
    let printed = install(&with_installed, &["--print"]);
    assert!(
        stderr(&printed).contains(&format!("would change {}", settings.display())),
        "{}",
        stderr(&printed)
    );
}
