//! Schemathesis against the live daemon (real tmux on a private socket),
//! driven by the daemon's own `/v1/openapi.json`: every operation, a
//! bounded number of generated cases, once without tokens and once with
//! one. No 5xx, no response that breaks the document (status, content
//! type, headers, body), no request the document forbids accepted, no
//! crash. Settings: tests/py/schemathesis.toml and tests/py/fuzz_hooks.py;
//! `TMUXD_FUZZ_EXAMPLES` and `TMUXD_FUZZ_SEED` override the defaults.

use crate::common;

use std::process::Command;

use common::{Daemon, DaemonOptions, TmuxServer, python};
use reqwest::blocking::Client;
use serde_json::{Value, json};

/// Cases per operation and phase (CI's bound: both runs take ~1 minute on 2 cores).
const EXAMPLES: &str = "20";
/// Fixed, so CI is repeatable; set TMUXD_FUZZ_SEED to explore further.
const SEED: &str = "20261123";
const TOKEN: &str = "fuzz-rw-token-5c1d-0123456789";

/// `positive_data_acceptance` expects every schema-valid request to
/// succeed, but the API refuses some for reasons a schema cannot state:
/// the session's state (408 from wait), cross-field limits (at most
/// 250,000 cells), bounds from the config (scrollback lines), a WebSocket
/// route called without an upgrade, integers written as `74.0`.
const EXCLUDED: &str = "positive_data_acceptance";

/// With `auth.insecure_no_auth`: every operation reachable without a token.
#[test]
fn schemathesis_finds_nothing_without_a_credential() {
    let summary = fuzz(None);
    println!("without a credential: {summary}");
}

#[test]
fn schemathesis_finds_nothing_with_a_token() {
    let summary = fuzz(Some(TOKEN));
    println!("with a token: {summary}");
}

/// Runs schemathesis once; returns its summary of operations and cases.
fn fuzz(token: Option<&str>) -> String {
    let tmux = TmuxServer::new();
    let auth = match token {
        Some(t) => format!("[auth]\ntoken = {t:?}\n"),
        None => "[auth]\ninsecure_no_auth = true\n".to_owned(),
    };
    let options = DaemonOptions {
        extra_config: format!("max_sessions = 24\n{auth}"),
        ..Default::default()
    };
    let daemon = Daemon::start_with(&tmux, options);
    create_targets(&daemon, token);
    let work = tempfile::tempdir().unwrap();
    let mut st = Command::new(python::venv_bin("st"));
    st.current_dir(work.path())
        .env("SCHEMATHESIS_HOOKS", "fuzz_hooks")
        .env("PYTHONPATH", python::script(""))
        .arg("--config-file")
        .arg(python::script("schemathesis.toml"))
        .args(["--no-color", "run"])
        .arg(format!("{}/v1/openapi.json", daemon.base))
        .args(["--checks", "all", "--exclude-checks"])
        .arg(EXCLUDED)
        .args(["--workers", "1", "--request-timeout", "20"])
        .args(["--max-examples", &setting("TMUXD_FUZZ_EXAMPLES", EXAMPLES)])
        .args(["--seed", &setting("TMUXD_FUZZ_SEED", SEED)])
        .args(["--report", "junit", "--report-junit-path"])
        .arg(work.path().join("junit.xml"));
    match token {
        Some(token) => st.args(["--header", &format!("Authorization: Bearer {token}")]),
        // The document's bearer requirement holds only with a token.
        None => st.env("TMUXD_FUZZ_NO_AUTH", "1"),
    };
    let out = st.output().expect("run schemathesis");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "schemathesis found failures:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!daemon.log().contains("panicked"), "{}", daemon.log());
    let health = Client::new()
        .get(format!("{}/healthz", daemon.base))
        .send()
        .unwrap();
    assert_eq!(health.status(), 200, "the daemon outlived the run");
    println!("{}", requests_by_operation(&daemon, token));
    summary(&text, work.path())
}

/// Requests the daemon answered per operation and status, from its own
/// `tmuxd_http_requests_total` (the six setup creates included).
fn requests_by_operation(daemon: &Daemon, token: Option<&str>) -> String {
    let mut request = Client::new().get(format!("{}/metrics", daemon.base));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let text = request.send().unwrap().text().unwrap();
    let mut table = std::collections::BTreeMap::<String, Vec<String>>::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("tmuxd_http_requests_total{") else {
            continue;
        };
        let (labels, count) = rest.split_once("} ").unwrap();
        let label = |name: &str| {
            let start = labels.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            labels[start..].split('"').next().unwrap().to_owned()
        };
        let operation = format!("{} {}", label("method"), label("route"));
        table
            .entry(operation)
            .or_default()
            .push(format!("{}x{count}", label("status")));
    }
    let probes = |statuses: &Vec<String>| statuses.iter().all(|s| s.starts_with("405x"));
    let unsupported = table.values().filter(|s| probes(s)).count();
    let mut out: String = table
        .iter()
        .filter(|(_, statuses)| !probes(statuses))
        .map(|(operation, statuses)| format!("  {operation}: {}\n", statuses.join(" ")))
        .collect();
    out.push_str(&format!(
        "  (and {unsupported} methods a path lacks: 405)\n"
    ));
    out
}

fn setting(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// Six sessions the run aims at (see schemathesis.toml), each running an
/// inert sleep that ignores the signals keys like `C-c` would send.
fn create_targets(daemon: &Daemon, token: Option<&str>) {
    let http = Client::new();
    for n in 1..=6 {
        let mut request = http
            .post(format!("{}/v1/sessions", daemon.base))
            .json(&json!({
                "name": format!("target-{n}"),
                "command": "trap '' INT QUIT TSTP; exec sleep 3600",
            }));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let created: Value = request.send().unwrap().json().unwrap();
        assert_eq!(created["session"]["session_id"], format!("sess_{n}"));
    }
}

/// `N operations, M cases` from schemathesis's JUnit report and summary.
fn summary(text: &str, dir: &std::path::Path) -> String {
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap_or_default();
    let operations = junit.matches("<testcase name=\"").count()
        - junit.matches("<testcase name=\"Stateful").count();
    let cases = text
        .lines()
        .map(str::trim)
        .find(|l| l.split(' ').nth(1) == Some("generated,"))
        .unwrap_or("");
    if let Ok(keep) = std::env::var("TMUXD_FUZZ_KEEP") {
        std::fs::write(keep, &junit).unwrap();
    }
    // Every operation but /v1/openapi.json, the document itself
    // (tests/openapi.rs covers that one).
    assert_eq!(operations, 38, "every operation ran:\n{junit}\n{text}");
    format!("{operations} operations; {cases}")
}
