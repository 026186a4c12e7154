//! `GET /v1/openapi.json` against the checked-in `docs/openapi.json`, and
//! against the router: every route is described, with its parameters,
//! bodies and errors. Regenerate the copy after an API change with
//! `TMUXD_WRITE_OPENAPI=1 cargo test --test tests -- openapi::`.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{Daemon, TmuxServer, python};
use serde_json::Value;

/// Every operation the router serves (src/api/mod.rs and src/web).
const OPERATIONS: [&str; 39] = [
    "get /healthz",
    "get /v1/hosts",
    "get /v1/hosts/{host}/server",
    "get /version",
    "post /v1/login",
    "post /v1/login/code",
    "get /v1/auth/proof",
    "post /v1/logout",
    "get /v1/whoami",
    "get /readyz",
    "get /metrics",
    "get /v1/server",
    "get /v1/openapi.json",
    "get /",
    "get /assets/{name}",
    "get /sw.js",
    "get /v1/sessions",
    "get /v1/sessions/untracked",
    "post /v1/sessions",
    "get /v1/sessions/{id}",
    "delete /v1/sessions/{id}",
    "post /v1/sessions/adopt",
    "post /v1/sessions/restore",
    "post /v1/sessions/{id}/input",
    "post /v1/sessions/{id}/resize",
    "post /v1/sessions/{id}/wait",
    "put /v1/sessions/{id}/thought",
    "post /v1/hooks/{agent}",
    "get /v1/sessions/{id}/input/queue",
    "delete /v1/sessions/{id}/input/queue/{n}",
    "get /v1/sessions/{id}/snapshot",
    "get /v1/sessions/{id}/scrollback",
    "get /v1/events",
    "get /v1/sessions/{id}/stream",
    "get /v1/sessions/{id}/screen",
    "get /v1/push",
    "post /v1/push/subscriptions",
    "post /v1/push/unsubscribe",
    "post /v1/sessions/{id}/answer",
];

fn checked_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/openapi.json")
}

fn served(daemon: &Daemon) -> String {
    let request = reqwest::blocking::Client::new().get(format!("{}/v1/openapi.json", daemon.base));
    let response = daemon.authorize(request).send().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    response.text().unwrap()
}

#[test]
fn the_checked_in_document_is_what_the_daemon_serves() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let text = served(&daemon);
    if std::env::var_os("TMUXD_WRITE_OPENAPI").is_some() {
        std::fs::write(checked_in(), &text).unwrap();
    }
    let copy = std::fs::read_to_string(checked_in()).unwrap_or_default();
    assert!(
        copy == text,
        "docs/openapi.json differs from what the daemon serves; regenerate it with \
         TMUXD_WRITE_OPENAPI=1 cargo test --test tests -- openapi::"
    );
}

#[test]
fn every_route_is_described_with_its_errors() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let doc: Value = serde_json::from_str(&served(&daemon)).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let mut described = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            described.insert(format!("{method} {path}"));
            let responses = operation["responses"].as_object().unwrap();
            let open = operation.get("security") == Some(&serde_json::json!([{}]));
            // The login exchange is open, and answers 401 to a wrong code.
            let refuses = !open || path == "/v1/login";
            assert_eq!(responses.contains_key("401"), refuses, "{method} {path}");
            assert!(responses.contains_key("403"), "{method} {path}");
            if operation.get("requestBody").is_some() {
                assert!(responses.contains_key("400") && responses.contains_key("413"));
            }
            if path.contains("{id}") {
                assert!(responses.contains_key("404"), "{method} {path}");
                let params = operation["parameters"].as_array().unwrap();
                assert!(
                    params
                        .iter()
                        .any(|p| p["name"] == "id" && p["in"] == "path")
                );
            }
        }
    }
    let expected: BTreeSet<String> = OPERATIONS.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(described, expected);
    let schemes = &doc["components"]["securitySchemes"]["bearer"];
    assert_eq!(schemes["scheme"], "bearer");
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .unwrap();
    for code in [
        "not_found",
        "capacity_exceeded",
        "tmux_unavailable",
        "method_not_allowed",
        "session_ended",
        "conflict",
    ] {
        assert!(codes.iter().any(|c| c == code), "{code}");
    }
    let stream = &doc["paths"]["/v1/sessions/{id}/stream"]["get"];
    let described = stream["description"].as_str().unwrap();
    for word in [
        "ready",
        "replay_truncated",
        "[u64 seq, big-endian]",
        "resize",
        "auth",
    ] {
        assert!(described.contains(word), "the stream's messages: {word}");
    }
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(!refs.is_empty());
    for reference in refs {
        let pointer = reference.strip_prefix('#').unwrap_or(&reference);
        assert!(doc.pointer(pointer).is_some(), "unresolvable {reference}");
    }
}

/// What code generators read first: the document passes
/// openapi-spec-validator (it once failed on two operations named `list`).
#[test]
fn the_document_passes_openapi_spec_validator() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openapi.json");
    std::fs::write(&path, served(&daemon)).unwrap();
    let out = std::process::Command::new(python::venv_bin("openapi-spec-validator"))
        .arg(&path)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "openapi-spec-validator: {said}");
    assert!(said.contains("OK"), "openapi-spec-validator: {said}");
}

/// A client generated for `GET /v1/events` learns every kind's fields and
/// what an SSE event's `data` holds.
#[test]
fn the_event_stream_payloads_are_described() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let doc: Value = serde_json::from_str(&served(&daemon)).unwrap();
    let mut ids = BTreeSet::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let id = operation["operationId"].as_str().unwrap().to_owned();
            assert!(ids.insert(id.clone()), "operationId {id} is used twice");
        }
    }
    let schemas = &doc["components"]["schemas"];
    // One payload per kind, each tagged with its `kind`.
    let kinds: BTreeSet<&str> = schemas["EventKind"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let mut tagged = BTreeSet::new();
    for variant in schemas["Payload"]["oneOf"].as_array().unwrap() {
        let tag = (variant["allOf"].as_array().into_iter().flatten())
            .chain([variant])
            .find_map(|s| s["properties"]["kind"]["enum"][0].as_str());
        tagged.insert(tag.expect("a payload names its kind"));
    }
    assert_eq!(tagged, kinds);
    // (schema, field): described, in the schema or one it is made of.
    let fields = [
        ("Event", "cut"),
        ("Event", "host_seq"),
        ("StateChanged", "state"),
        ("StateChanged", "state_since"),
        ("StateChanged", "exit_status"),
        ("Deleted", "exit_signal"),
        ("ThoughtUpdated", "thought"),
        ("DroppedInput", "text_prefix"),
        ("Renamed", "old_name"),
        ("ServerLost", "restorable"),
        ("Restored", "resumed"),
    ];
    for (schema, field) in fields {
        let schema = &schemas[schema];
        let described = (schema["allOf"].as_array().into_iter().flatten())
            .chain([schema])
            .find_map(|s| s["properties"][field]["description"].as_str());
        assert!(described.is_some_and(|d| !d.is_empty()), "{schema}.{field}");
    }
    let data = &schemas["ServerSentEvent"]["properties"]["data"];
    assert_eq!(data["contentMediaType"], "application/json");
    let one_of = data["contentSchema"]["oneOf"].as_array().unwrap();
    assert!(
        one_of
            .iter()
            .any(|s| s["$ref"] == "#/components/schemas/Event")
    );
    assert!(
        one_of
            .iter()
            .any(|s| s["$ref"] == "#/components/schemas/ReplayTruncatedNotice")
    );
    let names = schemas["ServerSentEvent"]["properties"]["event"]["enum"]
        .as_array()
        .unwrap();
    assert!(names.iter().any(|n| n == "replay_truncated"));
}

/// docs/api.md points here for what each route does: every operation
/// says it, a one-line summary and a description (the handler's doc
/// comment), and no route is left to the old list in docs/api.md.
#[test]
fn every_operation_says_what_it_does() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let doc: Value = serde_json::from_str(&served(&daemon)).unwrap();
    let mut described = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let summary = operation["summary"].as_str().unwrap_or_default();
            assert!(
                !summary.is_empty() && !summary.contains('\n'),
                "{method} {path}: a one-line summary, not {summary:?}"
            );
            let description = operation["description"].as_str().unwrap_or_default();
            assert!(
                description.len() > summary.len(),
                "{method} {path}: a description beyond its summary"
            );
            described += 1;
        }
    }
    assert_eq!(described, OPERATIONS.len());
    let wait = &doc["paths"]["/v1/sessions/{id}/wait"]["post"]["description"];
    for limit in ["3600000", "1024", "512 KiB", "http.max_waits", "409"] {
        assert!(wait.as_str().unwrap().contains(limit), "the wait's {limit}");
    }
    let api = std::fs::read_to_string(checked_in().with_file_name("api.md")).unwrap();
    assert!(
        !api.contains("- **GET** `/v1/sessions"),
        "docs/api.md lists routes again; say it in the handler's doc comment"
    );
}

/// Every `$ref` in the document, wherever it sits.
fn collect_refs(value: &Value, refs: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("$ref", Value::String(target)) => refs.push(target.clone()),
                    _ => collect_refs(child, refs),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, refs)),
        _ => {}
    }
}
