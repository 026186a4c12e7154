//! Limits that keep an authenticated client from growing the daemon
//! without bound or getting a 5xx for input tmux cannot take: event
//! payloads, the replay memory and its pages, duplicate JSON keys, key
//! counts, races with a session's end, thoughts dated in the future.

mod common;

use common::{Daemon, TmuxServer};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The daemon's resident memory, in KiB.
fn rss_kib(daemon: &Daemon) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", daemon.pid())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// Queues a ~0.99 MiB input behind a state the shell never reaches, then
/// cancels it: each leaves one `input_dropped` event.
fn queue_and_cancel(daemon: &Daemon, id: &str, text: &Value) {
    let (status, body) = daemon.post(&format!("/v1/sessions/{id}/input"), text);
    assert_eq!(status, 200, "{body}");
    let (status, queue) = daemon.get(&format!("/v1/sessions/{id}/input/queue"));
    assert_eq!(status, 200);
    let n = queue["items"][0]["id"].as_u64().expect("an item queued");
    let (status, body) = daemon.delete(&format!("/v1/sessions/{id}/input/queue/{n}"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["cancelled"]["id"], n);
}

/// The case: 1,000 × (queue 0.99 MiB, cancel it) took the daemon's
/// RSS up by 1 GiB, each dropped input's event holding its whole text in
/// the replay memory. Now the event holds a size and a 64-character prefix,
/// and the replay memory is bounded in bytes. `ROUNDS` is a quarter of the
/// issue's (a debug build takes ~0.35 s a round; the old code kept ~250 MiB
/// here): measured with 1,000, RSS went from 32.1 to 37.9 MiB.
#[test]
fn dropped_inputs_leave_memory_bounded() {
    const ROUNDS: usize = 250;
    /// RSS growth allowed over the rounds after a warm-up.
    const BOUND_KIB: u64 = 64 * 1024;
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("mem", common::SHELL);
    daemon.wait_until(&id, "idle");
    let text = format!("{}{}", "é".repeat(64), "x".repeat(1_038_000 - 128));
    let body = json!({ "text": text, "when": "waiting" });
    // Allocator arenas and buffers settle in the first rounds.
    for _ in 0..50 {
        queue_and_cancel(&daemon, &id, &body);
    }
    let before = rss_kib(&daemon);
    for _ in 0..ROUNDS {
        queue_and_cancel(&daemon, &id, &body);
    }
    let after = rss_kib(&daemon);
    eprintln!("RSS after warm-up {before} KiB, after {ROUNDS} dropped inputs {after} KiB");
    assert!(
        after < before + BOUND_KIB,
        "RSS grew from {before} to {after} KiB over {ROUNDS} dropped inputs"
    );

    let (status, page) = daemon.get("/v1/events?format=json&since=0&limit=10000");
    assert_eq!(status, 200);
    let dropped: Vec<&Value> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "input_dropped")
        .collect();
    assert_eq!(dropped.len(), 50 + ROUNDS);
    let last = dropped.last().unwrap();
    assert_eq!(last["reason"], "cancelled");
    assert_eq!(last["text_bytes"], text.len());
    assert_eq!(last["text_chars"], text.chars().count());
    assert_eq!(last["text_prefix"], "é".repeat(64));
    assert!(last.get("text").is_none(), "{last}");
}

/// 1,000 thought updates of 16 KiB: each event carries 1 KiB of the text
/// (the summary has all of it), and a `format=json` page stops at 1 MiB
/// however many events its limit allows, saying where the next starts.
#[test]
fn thought_events_are_cut_and_event_pages_are_bounded() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("think", common::SHELL);
    let text = "t".repeat(16 * 1024 - 4);
    for n in 0..1000 {
        let (status, body) = daemon.request(
            Method::PUT,
            &format!("/v1/sessions/{id}/thought"),
            Some(&json!({ "text": format!("{n:04}{text}") })),
        );
        assert_eq!(status, 200, "{body}");
    }
    let (_, session) = daemon.get(&format!("/v1/sessions/{id}"));
    let full = session["session"]["thought"]["text"].as_str().unwrap();
    assert_eq!(
        full.len(),
        4 + text.len(),
        "the summary keeps the whole text"
    );

    let url = |since: u64| {
        format!(
            "{}/v1/events?format=json&since={since}&limit=10000",
            daemon.base
        )
    };
    let mut since = 0;
    let mut thoughts = 0;
    let mut pages = 0;
    loop {
        let mut request = reqwest::blocking::Client::new().get(url(since));
        if let Some(header) = daemon.auth_header() {
            request = request.header("Authorization", header);
        }
        let bytes = request.send().unwrap().bytes().unwrap();
        assert!(
            bytes.len() <= 1024 * 1024 + 1024,
            "a page of {} bytes",
            bytes.len()
        );
        let page: Value = serde_json::from_slice(&bytes).unwrap();
        pages += 1;
        for event in page["events"].as_array().unwrap() {
            if event["kind"] == "thought_update" {
                thoughts += 1;
                let thought = &event["thought"];
                assert_eq!(thought["text"].as_str().unwrap().len(), 1024, "{thought}");
                assert_eq!(thought["text_truncated"], true);
            }
        }
        if page["has_more"] != true {
            break;
        }
        assert!(
            page["next_since"].as_u64().unwrap() > since,
            "{}",
            page["next_since"]
        );
        since = page["next_since"].as_u64().unwrap();
    }
    assert!(
        pages >= 2,
        "1,000 events of ~1.2 KiB take more than one page"
    );
    assert_eq!(thoughts, 1000, "every page follows the last without a gap");

    let (status, page) = daemon.get("/v1/events?format=json&since=0&limit=3");
    assert_eq!(status, 200);
    assert_eq!(page["events"].as_array().unwrap().len(), 3);
    assert_eq!(page["has_more"], true);
    assert_eq!(page["next_since"], page["events"][2]["seq"]);
    for bad in ["format=json&limit=0", "format=json&limit=10001", "limit=5"] {
        let (status, body) = daemon.get(&format!("/v1/events?{bad}"));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains("limit"),
            "{body}"
        );
    }
}
