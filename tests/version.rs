//! `tmuxd --version` and `GET /version` name the commit the binary was
//! built from (`build.rs`).

use crate::common;

use std::process::Command;

use common::{Daemon, TmuxServer};

/// The commit `build.rs` should have found: `git rev-parse --short HEAD`,
/// or `None` when this checkout has no git to ask.
fn head() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim().to_owned())
}

/// `-dirty` marks a changed tree; `unknown` a build without git.
fn assert_names_commit(commit: &str) {
    match head() {
        Some(hash) => assert!(
            commit == hash || commit == format!("{hash}-dirty"),
            "commit {commit:?}, HEAD is {hash}"
        ),
        None => assert_eq!(commit, "unknown"),
    }
}

#[test]
fn version_flag_names_the_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_tmuxd"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rest = text
        .trim()
        .strip_prefix(concat!("tmuxd ", env!("CARGO_PKG_VERSION"), " ("))
        .unwrap_or_else(|| panic!("unexpected --version: {text:?}"));
    assert_names_commit(rest.strip_suffix(')').unwrap());
}

#[test]
fn version_route_names_the_commit() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let (status, body) = daemon.get("/version");
    assert_eq!(status, 200);
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_names_commit(body["commit"].as_str().unwrap());
}
