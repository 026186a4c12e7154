//! Bad input gets a clear 4xx JSON error and changes nothing: neither the
//! daemon's list nor tmux's sessions nor the registry on disk.

use crate::common;

use common::{Daemon, DaemonOptions, TmuxServer};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// What must not change: tmuxd's list, tmux's sessions, the registry file.
fn state(daemon: &Daemon, tmux: &TmuxServer) -> (Vec<String>, String, String) {
    let tmux_sessions = String::from_utf8_lossy(
        &tmux
            .output(&[
                "list-sessions",
                "-F",
                "#{session_name} #{window_width}x#{window_height}",
            ])
            .stdout,
    )
    .into_owned();
    let registry =
        std::fs::read_to_string(daemon.data_dir.join("registry.json")).unwrap_or_default();
    (daemon.session_ids(), tmux_sessions, registry)
}

fn assert_error(
    status: StatusCode,
    body: &Value,
    want_status: u16,
    want_code: &str,
    context: &str,
) {
    assert_eq!(status.as_u16(), want_status, "{context}: {body}");
    assert_eq!(body["error"]["code"], want_code, "{context}: {body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(!message.is_empty(), "{context}: an error says why: {body}");
}

#[test]
fn bad_requests_are_refused_and_change_nothing() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "max_sessions = 2\n".into(),
            ..Default::default()
        },
    );
    let existing = daemon.create(&json!({ "name": "existing", "command": common::SHELL }));
    let id = existing["session_id"].as_str().unwrap().to_owned();
    let before = state(&daemon, &tmux);

    let huge = "x".repeat(5 * 1024 * 1024);
    let cases: Vec<(Method, String, Option<Value>, u16, &str)> = vec![
        // Bodies are objects: serde alone would fill a struct from an array
        // (schemathesis found `[null, null]` creating a session).
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!([null, null])),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/resize"),
            Some(json!([100, 30])),
            400,
            "bad_request",
        ),
        // Names tmux would rewrite, misread as targets or flags, or cannot show.
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "a:b" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "a.b" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "=x" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "-t" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "a\nb" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": " pad" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "$HOME" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": "existing" })),
            409,
            "name_taken",
        ),
        // Wrong types, unknown fields, broken JSON, oversized bodies.
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": 5 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cols": -1, "rows": 24 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cols": 70000, "rows": 24 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cols": 1, "rows": 24 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cols": 80 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "nmae": "typo" })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!([1, 2])),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "name": huge })),
            413,
            "payload_too_large",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cwd": "relative/dir" })),
            400,
            "invalid_cwd",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cwd": "/no/such/dir" })),
            400,
            "invalid_cwd",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "cwd": "/etc/hostname" })),
            400,
            "invalid_cwd",
        ),
        (
            Method::POST,
            "/v1/sessions".into(),
            Some(json!({ "command": "   " })),
            400,
            "bad_request",
        ),
        // Missing sessions and ids that are not ids.
        (
            Method::GET,
            "/v1/sessions/sess_999".into(),
            None,
            404,
            "not_found",
        ),
        (
            Method::GET,
            "/v1/sessions/nonsense".into(),
            None,
            404,
            "not_found",
        ),
        (
            Method::GET,
            "/v1/sessions/sess_01".into(),
            None,
            404,
            "not_found",
        ),
        (
            Method::DELETE,
            "/v1/sessions/sess_999".into(),
            None,
            404,
            "not_found",
        ),
        (
            Method::POST,
            "/v1/sessions/sess_999/input".into(),
            Some(json!({ "text": "x" })),
            404,
            "not_found",
        ),
        (
            Method::GET,
            "/v1/sessions/sess_999/snapshot".into(),
            None,
            404,
            "not_found",
        ),
        // Bad parameters on a real session.
        (
            Method::DELETE,
            format!("/v1/sessions/{id}?mode=explode"),
            None,
            400,
            "bad_request",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/input"),
            Some(json!({})),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/input"),
            Some(json!({ "keys": ["Entr"] })),
            400,
            "invalid_keys",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/input"),
            Some(json!({ "keys": ["Enter", "C-"] })),
            400,
            "invalid_keys",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/input"),
            Some(json!({ "text": 7 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/input"),
            Some(json!({ "text": "x", "when": "later" })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/resize"),
            Some(json!({ "cols": 0, "rows": 10 })),
            400,
            "bad_request",
        ),
        (
            Method::POST,
            format!("/v1/sessions/{id}/resize"),
            Some(json!({ "cols": 80 })),
            400,
            "bad_request",
        ),
        (
            Method::GET,
            format!("/v1/sessions/{id}/snapshot?format=html"),
            None,
            400,
            "bad_request",
        ),
        (
            Method::GET,
            format!("/v1/sessions/{id}/scrollback?lines=0"),
            None,
            400,
            "bad_request",
        ),
        (
            Method::GET,
            format!("/v1/sessions/{id}/scrollback?lines=-5"),
            None,
            400,
            "bad_request",
        ),
        (
            Method::GET,
            format!("/v1/sessions/{id}/scrollback?lines=99999999"),
            None,
            400,
            "bad_request",
        ),
        // Adopt: missing, tracked, bad names, wrong id.
        (
            Method::POST,
            "/v1/sessions/adopt".into(),
            Some(json!({ "tmux_name": "nope" })),
            404,
            "not_found",
        ),
        (
            Method::POST,
            "/v1/sessions/adopt".into(),
            Some(json!({ "tmux_name": "existing" })),
            409,
            "already_tracked",
        ),
        (
            Method::POST,
            "/v1/sessions/adopt".into(),
            Some(json!({ "tmux_name": "a:b" })),
            400,
            "invalid_name",
        ),
        (
            Method::POST,
            "/v1/sessions/adopt".into(),
            Some(json!({})),
            400,
            "bad_request",
        ),
        // Unknown endpoints and methods.
        (Method::GET, "/v2/whatever".into(), None, 404, "not_found"),
        (
            Method::PATCH,
            "/v1/sessions".into(),
            None,
            405,
            "method_not_allowed",
        ),
    ];
    for (method, path, body, want_status, want_code) in cases {
        let context = format!(
            "{method} {path} {}",
            body.as_ref()
                .map(|b| b.to_string().chars().take(80).collect::<String>())
                .unwrap_or_default()
        );
        let (status, answer) = daemon.request(method, &path, body.as_ref());
        assert_error(status, &answer, want_status, want_code, &context);
        assert_eq!(state(&daemon, &tmux), before, "{context} changed something");
    }

    // A body that is not JSON at all.
    let request = reqwest::blocking::Client::new().post(format!("{}/v1/sessions", daemon.base));
    let response = daemon
        .authorize(request)
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .unwrap();
    let status = response.status();
    assert_error(
        status,
        &response.json().unwrap(),
        400,
        "bad_request",
        "broken JSON",
    );

    // Capacity: one more fits, the next is refused with the count.
    daemon.create(&json!({ "name": "second", "command": common::SHELL }));
    let before = state(&daemon, &tmux);
    let (status, body) = daemon.post("/v1/sessions", &json!({ "command": common::SHELL }));
    assert_error(status, &body, 429, "capacity_exceeded", "capacity");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("(2/2)"),
        "{body}"
    );
    assert_eq!(state(&daemon, &tmux), before);
}

#[test]
fn odd_but_valid_names_round_trip_exactly() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    for name in ["日本語-🚀", "with space", "a=b", "'quote\"", "~tilde"] {
        let session = daemon.create(&json!({ "name": name, "command": common::SHELL }));
        assert_eq!(session["tmux_name"], name);
        assert!(tmux.has_session(name), "tmux has exactly {name:?}");
        let id = session["session_id"].as_str().unwrap();
        let (status, body) = daemon.post(
            &format!("/v1/sessions/{id}/input"),
            &json!({ "text": "echo ok-$((1+1))", "submit": true }),
        );
        assert_eq!(status, 200, "{body}");
        daemon.wait_for_snapshot(id, "ok-2");
    }
}

/// Only the daemon's own origin, with the token or not: a rebinding name,
/// another site, and another port of the same machine are refused.
#[test]
fn requests_from_other_hosts_and_origins_are_forbidden() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let client = reqwest::blocking::Client::new();
    let url = format!("{}/v1/sessions", daemon.base);
    let send =
        |request: reqwest::blocking::RequestBuilder| daemon.authorize(request).send().unwrap();
    let rebinding = send(client.get(&url).header("host", "attacker.example:7420"));
    assert_eq!(rebinding.status(), 403);
    let cross_site = send(
        client
            .post(&url)
            .header("origin", "https://evil.example")
            .json(&json!({})),
    );
    assert_eq!(cross_site.status(), 403);
    assert_eq!(
        cross_site.json::<Value>().unwrap()["error"]["code"],
        "forbidden"
    );
    assert!(
        daemon.session_ids().is_empty(),
        "the forbidden create did nothing"
    );
    let other_port = send(client.get(&url).header("origin", "http://localhost:3000"));
    assert_eq!(other_port.status(), 403, "another port is another origin");
    let own = send(client.get(&url).header("origin", daemon.base.as_str()));
    assert_eq!(own.status(), 200);
}

#[test]
fn tmux_that_cannot_run_is_reported_as_unavailable() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            tmux_bin: Some("/nonexistent/tmux".into()),
            ..Default::default()
        },
    );
    let (status, body) = daemon.post("/v1/sessions", &json!({}));
    assert_error(
        status,
        &body,
        503,
        "tmux_unavailable",
        "create without tmux",
    );
    let (status, body) = daemon.get("/healthz");
    assert_eq!(status, 200);
    assert!(
        body["tmux"].as_str().unwrap().starts_with("unavailable"),
        "{body}"
    );
    let (status, _) = daemon.get("/readyz");
    assert_eq!(status, 503);
    assert!(daemon.session_ids().is_empty());
}
