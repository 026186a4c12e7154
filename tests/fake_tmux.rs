//! The real daemon against `fixtures/fake-tmux/tmux`, found on PATH, with
//! the real tmux absent from the daemon's PATH: what CI users do.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::json;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake-tmux")
}

/// A directory linking every program in /usr/bin and /bin except tmux.
fn path_without_tmux(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for system in ["/usr/local/bin", "/usr/bin", "/bin"] {
        for entry in std::fs::read_dir(system).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if name == "tmux" || bin.join(&name).exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(entry.path(), bin.join(&name));
        }
    }
    format!("{}:{}", fixture_dir().display(), bin.display())
}

#[test]
fn the_daemon_runs_against_the_fake_tmux_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_without_tmux(dir.path());
    let which = Command::new("sh")
        .args(["-c", "command -v tmux"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&which.stdout).trim(),
        fixture_dir().join("tmux").display().to_string()
    );
    let state = dir.path().join("fake-state");
    // Only used for its unique socket name; the real server is never started.
    let socket = TmuxServer::new();
    let fake = |args: &[&str]| {
        let out = Command::new(fixture_dir().join("tmux"))
            .args(["-L", &socket.socket])
            .args(args)
            .env("FAKE_TMUX_DIR", &state)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "fake tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    let daemon = Daemon::start_with(
        &socket,
        DaemonOptions {
            path_env: Some(path.clone()),
            env: vec![("FAKE_TMUX_DIR".into(), state.display().to_string())],
            ..Default::default()
        },
    );
    let (status, health) = daemon.get("/healthz");
    assert_eq!(status, 200);
    assert!(
        health["tmux"].as_str().unwrap().contains("fake"),
        "{health}"
    );

    let session = daemon.create(&json!({ "name": "ci" }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo hello-$((2+3))", "submit": true }),
    );
    assert_eq!(status, 200, "{body}");
    daemon.wait_for_snapshot(&id, "hello-5");

    fake(&["new-session", "-d", "-s", "made-outside"]);
    let adopted = wait_for("discovery to adopt", || {
        daemon
            .sessions()
            .into_iter()
            .find(|s| s["tmux_name"] == "made-outside")
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
    });
    fake(&["kill-session", "-t", "=made-outside"]);
    wait_for("removal", || {
        daemon
            .session_ids()
            .iter()
            .all(|s| *s != adopted)
            .then_some(())
    });
    let ended = daemon
        .events()
        .into_iter()
        .find(|e| e["session_id"] == adopted.as_str() && e["kind"] == "session_deleted");
    assert_eq!(ended.expect("end event")["reason"], "process_exit");

    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
    assert_eq!(status, 200, "{body}");
    assert!(daemon.session_ids().is_empty());
}
