//! `/metrics` read by a real Prometheus parser (the Python client's strict
//! OpenMetrics parser): every family is there, follows the naming
//! conventions, carries no session id, and moves as the test drives the
//! daemon (sessions, input, streams, failed writes, deletes).

use crate::common;
use crate::wire;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use common::{Daemon, DaemonOptions, PATIENCE, SHELL, TmuxServer, python, wait_for};
use serde_json::{Value, json};
use tungstenite::Message;

/// Every family the daemon reports, as the parser names them (counters
/// without `_total`).
const FAMILIES: [&str; 26] = [
    "tmuxd_sessions",
    "tmuxd_session_ends",
    "tmuxd_events_appended",
    "tmuxd_queued_inputs",
    "tmuxd_sessions_attention",
    "tmuxd_tmux_commands",
    "tmuxd_tmux_command_duration_seconds",
    "tmuxd_http_requests",
    "tmuxd_http_request_duration_seconds",
    "tmuxd_stream_subscribers",
    "tmuxd_stream_sent_bytes",
    "tmuxd_stream_subscribers_dropped",
    "tmuxd_persistence_writes",
    "tmuxd_storage_write_failures",
    "tmuxd_storage_degraded",
    "tmuxd_events_unwritten",
    "tmuxd_events_lost",
    "tmuxd_notification_deliveries",
    "tmuxd_notification_failures",
    "tmuxd_connections_shed",
    "tmuxd_uptime_seconds",
    "tmuxd_screen_checks",
    "tmuxd_screen_drift",
    "tmuxd_control_attaches",
    "tmuxd_control_attach_fallbacks",
    "tmuxd_build",
];

/// One sample: its name, labels and value.
type Sample = (String, BTreeMap<String, String>, f64);

/// A parsed scrape: family -> (type, samples).
struct Scrape(BTreeMap<String, (String, Vec<Sample>)>);

impl Scrape {
    /// The value of the sample `name` whose labels include all of `labels`,
    /// summed over the samples that match (0 if none does).
    fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.0
            .values()
            .flat_map(|(_, samples)| samples)
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(v))
            })
            .map(|(_, _, v)| v)
            .sum()
    }

    fn family_type(&self, family: &str) -> Option<&str> {
        self.0.get(family).map(|(t, _)| t.as_str())
    }
}

fn scrape(daemon: &Daemon) -> Scrape {
    let request = reqwest::blocking::Client::new().get(format!("{}/metrics", daemon.base));
    let response = daemon.authorize(request).send().unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = response.text().unwrap();
    let mut parser = Command::new(python::venv_bin("python"))
        .arg(python::script("parse_metrics.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    parser
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = parser.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the Prometheus parser rejected the scrape: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let families = parsed
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, family)| {
            let samples = family["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    let labels = s[1]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                        .collect();
                    (
                        s[0].as_str().unwrap().to_owned(),
                        labels,
                        s[2].as_f64().unwrap(),
                    )
                })
                .collect();
            (
                name.clone(),
                (family["type"].as_str().unwrap().to_owned(), samples),
            )
        })
        .collect();
    Scrape(families)
}

/// Scrapes until `check` holds (counts settle a moment after the request
/// that caused them has answered).
fn scrape_until(daemon: &Daemon, what: &str, check: impl Fn(&Scrape) -> bool) -> Scrape {
    wait_for(what, || {
        let scrape = scrape(daemon);
        check(&scrape).then_some(scrape)
    })
}

#[test]
fn every_family_is_parsed_and_moves_as_the_daemon_works() {
    let tmux = TmuxServer::new();
    let options = DaemonOptions {
        extra_config: "[http]\nmax_streams_per_session = 2\n".into(),
        ..Default::default()
    };
    let daemon = Daemon::start_with(&tmux, options);
    let before = scrape(&daemon);
    assert_eq!(before.sum("tmuxd_sessions", &[]), 0.0);
    assert_eq!(before.sum("tmuxd_stream_sent_bytes_total", &[]), 0.0);

    let shell = daemon.create(&json!({ "name": "shell", "command": SHELL }));
    let id = shell["session_id"].as_str().unwrap().to_owned();
    daemon.wait_for_snapshot(&id, "$");
    assert_eq!(scrape(&daemon).sum("tmuxd_sessions_attention", &[]), 0.0);
    // Rung through tmux itself: input through tmuxd would clear the flag.
    tmux.send_keys("shell", &["printf '\\a'", "Enter"]);
    scrape_until(&daemon, "the bell raised attention", |s| {
        s.sum("tmuxd_sessions_attention", &[]) == 1.0
    });
    let cat = daemon.create(&json!({ "name": "cat", "command": "exec cat" }));
    let cat_id = cat["session_id"].as_str().unwrap().to_owned();
    let (status, queued) = daemon.post(
        &format!("/v1/sessions/{cat_id}/input"),
        &json!({ "text": "later", "when": "idle" }),
    );
    assert_eq!(status, 200, "{queued}");
    assert_eq!(queued["queued"], true, "cat is busy, so the input waits");
    scrape_until(&daemon, "one queued input", |s| {
        s.sum("tmuxd_queued_inputs", &[]) == 1.0
    });

    drive_streams(&daemon, &id);
    let persistence = fail_a_registry_write(&daemon);

    let (status, _) = daemon.delete(&format!("/v1/sessions/{cat_id}?mode=kill"));
    assert_eq!(status, 200);
    let after = scrape_until(&daemon, "the kill counted", |s| {
        s.sum("tmuxd_session_ends_total", &[("reason", "api_kill")]) >= 1.0
    });

    for family in FAMILIES {
        assert!(after.family_type(family).is_some(), "{family} missing");
    }
    assert_eq!(
        after.family_type("tmuxd_http_request_duration_seconds"),
        Some("histogram")
    );
    assert_eq!(after.family_type("tmuxd_tmux_commands"), Some("counter"));
    assert_eq!(after.family_type("tmuxd_sessions"), Some("gauge"));
    assert_eq!(
        after.sum("tmuxd_sessions", &[]),
        daemon.sessions().len() as f64
    );
    assert!(
        after.sum(
            "tmuxd_events_appended_total",
            &[("kind", "session_created")]
        ) >= 3.0
    );
    let forked = [
        ("command", "new-session"),
        ("via", "fork"),
        ("outcome", "ok"),
    ];
    assert!(after.sum("tmuxd_tmux_commands_total", &forked) >= 3.0);
    assert!(after.sum("tmuxd_tmux_commands_total", &[("via", "control")]) >= 1.0);
    let latency = [("command", "new-session"), ("via", "fork")];
    assert!(after.sum("tmuxd_tmux_command_duration_seconds_count", &latency) >= 3.0);
    let get_one = [
        ("route", "/v1/sessions/{id}/snapshot"),
        ("method", "GET"),
        ("status", "200"),
    ];
    assert!(after.sum("tmuxd_http_requests_total", &get_one) >= 1.0);
    assert!(
        after.sum(
            "tmuxd_http_request_duration_seconds_count",
            &[("method", "POST")]
        ) >= 3.0
    );
    assert_eq!(after.sum("tmuxd_notification_deliveries_total", &[]), 0.0);
    assert!(persistence.sum("tmuxd_persistence_writes_total", &[("file", "events")]) >= 1.0);
    no_session_ids_in_labels(&after);
}

/// Output and screen WebSockets and the SSE feed: subscribers while open,
/// bytes sent, a third stream refused at the per-session limit (2), then
/// back to 0.
fn drive_streams(daemon: &Daemon, id: &str) {
    let (mut output, _) =
        tungstenite::connect(daemon.ws_request(&format!("/v1/sessions/{id}/stream"))).unwrap();
    assert_eq!(wire::next_json(&mut output)["type"], "ready");
    let (status, _) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "echo metrics-$((6*7))", "submit": true }),
    );
    assert_eq!(status, 200);
    read_until_binary(&mut output, "metrics-42");
    let (mut screen, _) =
        tungstenite::connect(daemon.ws_request(&format!("/v1/sessions/{id}/screen"))).unwrap();
    assert_eq!(wire::next_json(&mut screen)["type"], "screen");
    let (mut refused, _) =
        tungstenite::connect(daemon.ws_request(&format!("/v1/sessions/{id}/stream"))).unwrap();
    assert!(wire::close_reason(&mut refused).contains("too many open streams"));
    let mut events = wire::connect(&daemon.base);
    let bearer = daemon.auth_header().unwrap();
    let auth = [("Authorization", bearer.as_str())];
    wire::send(&mut events, "GET", "/v1/events?since=0", &auth, None);
    let (status, _) = wire::read_head(&mut events, PATIENCE).unwrap();
    assert_eq!(status, 200);

    let open = scrape_until(daemon, "three subscribers with bytes sent", |s| {
        ["output", "screen", "events"].iter().all(|k| {
            s.sum("tmuxd_stream_subscribers", &[("stream", k)]) == 1.0
                && s.sum("tmuxd_stream_sent_bytes_total", &[("stream", k)]) > 0.0
        })
    });
    let refused = [("stream", "output"), ("reason", "stream_limit")];
    assert_eq!(
        open.sum("tmuxd_stream_subscribers_dropped_total", &refused),
        1.0
    );

    output.close(None).unwrap();
    screen.close(None).unwrap();
    drop(events);
    scrape_until(daemon, "subscribers gone", |s| {
        s.sum("tmuxd_stream_subscribers", &[]) == 0.0
    });
}

fn read_until_binary(
    socket: &mut tungstenite::WebSocket<impl std::io::Read + Write>,
    needle: &str,
) {
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(needle) {
        if let Message::Binary(frame) = socket.read().unwrap() {
            seen.extend_from_slice(&frame[8..]);
        }
    }
}

/// A registry write that cannot land (a directory where the file goes)
/// counts as a failure and marks storage degraded until a retry lands.
fn fail_a_registry_write(daemon: &Daemon) -> Scrape {
    let path = daemon.data_dir.join("registry.json");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir_all(path.join("in-the-way")).unwrap();
    daemon.create(&json!({ "name": "unsaved", "command": "exec cat" }));
    scrape_until(daemon, "a failed registry write", |s| {
        s.sum("tmuxd_storage_write_failures_total", &[]) >= 1.0
            && s.sum("tmuxd_storage_degraded", &[]) == 1.0
    });
    // Taken while the write fails: any registry write that lands after
    // the path is cleared counts (the retry, or the delete's).
    let written = [("file", "registry")];
    let before = scrape(daemon).sum("tmuxd_persistence_writes_total", &written);
    std::fs::remove_dir_all(&path).unwrap();
    let ids = daemon.session_ids();
    let unsaved = ids.last().unwrap();
    let (status, _) = daemon.delete(&format!("/v1/sessions/{unsaved}?mode=kill"));
    assert_eq!(status, 200);
    let healed = scrape_until(daemon, "the registry written again", |s| {
        s.sum("tmuxd_storage_degraded", &[]) == 0.0
            && s.sum("tmuxd_persistence_writes_total", &written) > before
    });
    assert!(path.is_file(), "registry.json is back");
    healed
}

fn no_session_ids_in_labels(scrape: &Scrape) {
    for (family, (_, samples)) in &scrape.0 {
        for (_, labels, _) in samples {
            for value in labels.values() {
                assert!(
                    !value.contains("sess_"),
                    "{family} has a session id label: {labels:?}"
                );
            }
        }
    }
}
