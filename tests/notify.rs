//! Notifications: a webhook on a loopback server (a std TcpListener here)
//! gets one POST per raised attention, none while the session cools down,
//! and one per exit, each with its event's `seq`; a failed call is retried.
//! The notify command gets the event in its environment and no TMUXD_*
//! secret.

use crate::common;

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use common::webhook::{self, webhook};
use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::{Value, json};

fn next(rx: &mpsc::Receiver<Value>) -> Value {
    rx.recv_timeout(common::PATIENCE).expect("a notification")
}

#[test]
fn a_webhook_is_called_once_per_attention_with_a_cooldown_and_on_exit() {
    let tmux = TmuxServer::new();
    // The first call fails: it is retried, with the same event.
    let (url, calls) = webhook(vec![503]);
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("env");
    let config = format!(
        "[notify]\nwebhook_url = {url:?}\ncooldown_s = 3600\ncommand = [\"sh\", \"-c\", \"env > {}\"]\n",
        env_file.display()
    );
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: config,
            env: vec![("TMUXD_SECRET_FOR_TEST".into(), "hunter2".into())],
            ..Default::default()
        },
    );
    let session = daemon.create(&json!({ "name": "n", "command": common::SHELL }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    daemon.wait_until(&id, "idle");

    // Rung in tmux itself (input through tmuxd would clear the flag).
    tmux.send_keys("n", &["printf '\\a'", "Enter"]);
    let first = next(&calls);
    let retried = next(&calls);
    assert_eq!(
        first, retried,
        "the failed call is retried with the same body"
    );
    assert_eq!(first["trigger"], "attention");
    assert_eq!(first["event"]["session_id"], id.as_str());
    assert_eq!(first["event"]["attention"]["reason"], "bell");
    let seq = first["seq"].as_u64().unwrap();
    assert_eq!(first["event"]["seq"], seq);
    let logged = daemon
        .events()
        .into_iter()
        .find(|e| e["seq"] == seq)
        .unwrap();
    assert_eq!(logged["kind"], "session_state", "{logged}");

    // Cleared by input, rung again: the session is cooling down.
    let (status, _) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "true", "submit": true }),
    );
    assert_eq!(status, 200);
    wait_for("attention cleared", || {
        let (_, body) = daemon.get(&format!("/v1/sessions/{id}"));
        body["session"]["attention"].is_null().then_some(())
    });
    tmux.send_keys("n", &["printf '\\a'", "Enter"]);
    wait_for("the second bell", || {
        let raised = daemon
            .events()
            .into_iter()
            .filter(|e| e["session_id"] == id.as_str() && e["attention"]["reason"] == "bell")
            .filter_map(|e| e["attention"]["since"].as_str().map(str::to_owned))
            .collect::<std::collections::BTreeSet<_>>();
        (raised.len() == 2).then_some(())
    });

    // An exit is always notified; nothing came for the second bell. (A
    // second session keeps the server up: this end is the session's own.)
    tmux.new_session("keeper", (80, 24), "sleep 600");
    tmux.run(&["kill-session", "-t", "=n"]);
    let exit = next(&calls);
    assert_eq!(exit["trigger"], "exited", "{exit}");
    assert_eq!(exit["event"]["kind"], "session_deleted");
    assert_eq!(exit["event"]["reason"], "process_exit");
    assert!(exit["seq"].as_u64().unwrap() > seq);
    assert!(
        calls.recv_timeout(Duration::from_millis(500)).is_err(),
        "one call per attention, one per exit"
    );

    // The command saw the last event, and none of tmuxd's own variables.
    let env = wait_for("the command's environment", || {
        let env = std::fs::read_to_string(&env_file).ok()?;
        env.contains("TMUXD_EVENT_TRIGGER=exited").then_some(env)
    });
    assert!(env.contains(&format!("TMUXD_SESSION_ID={id}")), "{env}");
    assert!(env.contains("TMUXD_EVENT={"), "{env}");
    assert!(!env.contains("hunter2"), "{env}");
    assert!(!env.contains("TMUXD_SECRET_FOR_TEST"), "{env}");
}

/// `tmuxd_<name>_total` from `/metrics`, 0 before the first count.
fn counter(daemon: &Daemon, name: &str) -> u64 {
    daemon
        .metric(&format!("tmuxd_{name}_total"))
        .map_or(0, |n| n as u64)
}

/// A webhook that answers with a redirect does not get the event re-sent
/// elsewhere (a 307 keeps method and body): the delivery fails at once,
/// without retries, and the log says why without showing the credentials of
/// either URL.
#[test]
fn a_webhook_redirect_is_not_followed_and_counts_as_a_failure() {
    let tmux = TmuxServer::new();
    let (elsewhere, redirected) = webhook(vec![]);
    let location = elsewhere.replace("http://", "http://locuser:loc-pa55@");
    let (hook, calls) = webhook::serve_json(move || {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    });
    let hook = hook.replace("http://", "http://hookuser:hook-pa55@");
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: format!("[notify]\nwebhook_url = {hook:?}\nretries = 1\n"),
            ..Default::default()
        },
    );
    let id = daemon.create_named("r", common::SHELL);
    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
    assert_eq!(status, 200, "{body}");

    let (delivered, failed) = wait_for("the notification's outcome", || {
        let delivered = counter(&daemon, "notification_deliveries");
        let failed = counter(&daemon, "notification_failures");
        (delivered + failed > 0).then_some((delivered, failed))
    });
    assert_eq!((delivered, failed), (0, 1));
    let sent = next(&calls);
    assert_eq!(sent["trigger"], "exited", "{sent}");
    // The outcome is counted after the last attempt: had the redirect been
    // followed, or retried, it would have happened by now.
    assert!(redirected.try_recv().is_err(), "the event was re-posted");
    assert!(calls.try_recv().is_err(), "a redirect is not retried");
    let log = daemon.log();
    assert!(log.contains("redirect"), "{log}");
    for secret in ["hook-pa55", "loc-pa55", "hookuser", "locuser"] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}

/// Rings the bell in tmux session `name` (from tmux itself: input through
/// tmuxd would acknowledge the flag).
fn ring(tmux: &TmuxServer, name: &str) {
    tmux.send_keys(name, &["printf '\\a'", "Enter"]);
}

/// The notifications up to and including the attention of `marker`'s
/// session; the notifier handles events in order, so anything it would
/// send for what came before is among them.
fn until_marker(calls: &mpsc::Receiver<Value>, marker: &str) -> Vec<Value> {
    let mut got = Vec::new();
    loop {
        let call = next(calls);
        let done = call["trigger"] == "attention" && call["event"]["session_id"] == marker;
        got.push(call);
        if done {
            // A delivery of an earlier one racing the marker's.
            got.extend(calls.recv_timeout(Duration::from_millis(300)));
            return got;
        }
    }
}

/// Attention up on 5 sessions, the daemon restarted twice: not one
/// notification again; a session's end is notified once, a restart after it
/// sends nothing more.
#[test]
fn restarts_re_notify_nothing() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let (url, calls) = webhook(vec![]);
    let options = || DaemonOptions {
        extra_config: format!("[notify]\nwebhook_url = {url:?}\ncooldown_s = 3600\n"),
        ..DaemonOptions::in_dir(data.path())
    };
    let mut daemon = Daemon::start_with(&tmux, options());
    let mut ids = Vec::new();
    for n in 0..5 {
        let id = daemon.create_named(&format!("a{n}"), common::SHELL);
        daemon.wait_until(&id, "idle");
        ring(&tmux, &format!("a{n}"));
        ids.push(id);
    }
    let mut first: Vec<String> = (0..5)
        .map(|_| next(&calls))
        .inspect(|c| assert_eq!(c["trigger"], "attention", "{c}"))
        .map(|c| c["event"]["session_id"].as_str().unwrap().to_owned())
        .collect();
    first.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(first, want);

    for restart in 0..2 {
        daemon.terminate();
        daemon = Daemon::start_with(&tmux, options());
        wait_for("the 5 sessions back with attention up", || {
            let up = daemon
                .sessions()
                .iter()
                .filter(|s| ids.iter().any(|id| s["session_id"] == id.as_str()))
                .filter(|s| !s["attention"].is_null())
                .count();
            (up == 5).then_some(())
        });
        let name = format!("m{restart}");
        let marker = daemon.create_named(&name, common::SHELL);
        daemon.wait_until(&marker, "idle");
        ring(&tmux, &name);
        let got = until_marker(&calls, &marker);
        assert_eq!(got.len(), 1, "restart {restart} re-sent: {got:#?}");
    }

    // An end is notified once, and not again after a restart.
    tmux.run(&["kill-session", "-t", "=a0"]);
    let exit = next(&calls);
    assert_eq!(
        (
            exit["trigger"].as_str(),
            exit["event"]["session_id"].as_str()
        ),
        (Some("exited"), Some(ids[0].as_str())),
        "{exit}"
    );
    daemon.terminate();
    let daemon = Daemon::start_with(&tmux, options());
    let marker = daemon.create_named("m2", common::SHELL);
    daemon.wait_until(&marker, "idle");
    ring(&tmux, "m2");
    let got = until_marker(&calls, &marker);
    assert_eq!(got.len(), 1, "the last restart re-sent: {got:#?}");
}

/// The HMAC-SHA256 of `body` under `key`, hex, from `openssl` (another
/// implementation than tmuxd's).
fn openssl_hmac(key: &str, body: &[u8]) -> String {
    let mut child = std::process::Command::new("openssl")
        .args(["dgst", "-sha256", "-hmac", key, "-r"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("openssl");
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_whitespace().next().unwrap().to_owned()
}

/// A notification says what happened in one line, with the session's name,
/// cwd, command, state and last screen lines, signed with `notify.secret`.
#[test]
fn notifications_say_what_happened_and_are_signed() {
    let tmux = TmuxServer::new();
    let (url, calls) = webhook::signed();
    let secret = "a-secret-of-at-least-24-chars";
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: format!("[notify]\nwebhook_url = {url:?}\nsecret = {secret:?}\n"),
            ..Default::default()
        },
    );
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path().canonicalize().unwrap();
    let build = daemon.create(&json!({
        "name": "build",
        "command": common::SHELL,
        "cwd": cwd.to_str().unwrap(),
    }));
    let id = build["session_id"].as_str().unwrap().to_owned();
    daemon.wait_until(&id, "idle");
    tmux.send_keys("build", &["printf 'Proceed? [y/N]\\a'", "Enter"]);
    let (signature, body) = calls.recv_timeout(common::PATIENCE).expect("a call");
    let call: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        signature.as_deref(),
        Some(openssl_hmac(secret, &body).as_str()),
        "signed over the exact body"
    );
    assert_eq!(call["trigger"], "attention", "{call}");
    assert_eq!(call["event"]["session_id"], id.as_str(), "old fields kept");
    assert_eq!(call["name"], "build");
    assert_eq!(call["cwd"], cwd.to_str().unwrap(), "{call}");
    assert_eq!(call["command"], "bash", "{call}");
    assert_eq!(call["agent"], Value::Null);
    assert!(call["state"].is_string(), "{call}");
    let screen: Vec<&str> = call["screen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        screen.iter().any(|l| l.contains("Proceed? [y/N]")),
        "{call}"
    );
    assert!(screen.iter().all(|l| !l.trim().is_empty()), "{call}");
    let message = call["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("build ({id}) rang the bell: ")),
        "{message}"
    );

    tmux.new_session("keeper", (80, 24), "sleep 600");
    tmux.send_keys("build", &["exit 3", "Enter"]);
    let (signature, body) = calls.recv_timeout(common::PATIENCE).expect("a call");
    let call: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(signature.unwrap(), openssl_hmac(secret, &body));
    assert_eq!(call["trigger"], "exited", "{call}");
    assert_eq!(call["message"], format!("build ({id}) exited 3"), "{call}");
    assert_eq!(call["name"], "build");
}

/// `notify.on = ["attention", "failed_exit"]` notifies an end with a
/// non-zero status, not a clean one.
#[test]
fn notify_on_failed_exit_skips_a_clean_end() {
    let tmux = TmuxServer::new();
    let (url, calls) = webhook(vec![]);
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: format!(
                "[notify]\nwebhook_url = {url:?}\non = [\"attention\", \"failed_exit\"]\n"
            ),
            ..Default::default()
        },
    );
    let clean = daemon.create_named("clean", common::SHELL);
    let failed = daemon.create_named("failed", common::SHELL);
    daemon.wait_until(&clean, "idle");
    daemon.wait_until(&failed, "idle");
    // A keeper, so the tmux server outlives the two sessions.
    tmux.new_session("keeper", (80, 24), "sleep 600");
    tmux.send_keys("clean", &["exit 0", "Enter"]);
    let ended = daemon.wait_until(&clean, "exited");
    assert_eq!(ended["exit_status"], 0, "{ended}");
    tmux.send_keys("failed", &["exit 3", "Enter"]);
    // The notifier takes events in order: had the clean end been notified,
    // its call would come first.
    let call = next(&calls);
    assert_eq!(call["trigger"], "exited", "{call}");
    assert_eq!(call["session_id"], failed.as_str(), "{call}");
    assert_eq!(
        call["message"],
        format!("failed ({failed}) exited 3"),
        "{call}"
    );
}
