//! Limits that keep an authenticated client from growing the daemon
//! without bound or getting a 5xx for input tmux cannot take: event
//! payloads, the replay memory and its pages, duplicate JSON keys, key
//! counts, races with a session's end, thoughts dated in the future.

use crate::common;

use common::{Daemon, TmuxServer, rss_kib};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

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

/// Queueing a 0.99 MiB input and cancelling it, over and over, leaves the
/// daemon's RSS bounded: a dropped input's event holds a size and a
/// 64-character prefix, not the text, and the replay memory is bounded in
/// bytes. Events holding the whole text would keep ~250 MiB over these
/// rounds (1 GiB over 1,000). `ROUNDS` is 250 as a debug build takes
/// ~0.35 s a round; measured with 1,000, RSS went from 32.1 to 37.9 MiB.
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
    let before = rss_kib(daemon.pid());
    for _ in 0..ROUNDS {
        queue_and_cancel(&daemon, &id, &body);
    }
    let after = rss_kib(daemon.pid());
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
    let session = daemon.summary(&id);
    let full = session["thought"]["text"].as_str().unwrap();
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

/// A body sent as it is written (`Daemon::post` takes a `Value`, which
/// cannot hold a key twice).
fn post_raw(daemon: &Daemon, path: &str, body: &str) -> (StatusCode, Value) {
    let mut request = reqwest::blocking::Client::new()
        .post(format!("{}{path}", daemon.base))
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    if let Some(header) = daemon.auth_header() {
        request = request.header("Authorization", header);
    }
    let response = request.send().unwrap();
    let status = response.status();
    (status, response.json().unwrap_or(Value::Null))
}

/// Every body is read with its keys checked: a key twice in one object, at
/// any depth, is a 400 that names it, and nothing happens (before, the last
/// one won, so what a proxy or a log showed was not what ran).
#[test]
fn duplicate_json_keys_are_refused_and_change_nothing() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("dup", common::SHELL);
    daemon.wait_until(&id, "idle");
    let cases = [
        (
            "/v1/sessions".to_owned(),
            r#"{"name":"one","name":"two"}"#,
            "name",
        ),
        (
            format!("/v1/sessions/{id}/input"),
            r#"{"text":"echo SAFE","text":"echo DUP-$((6*7))","submit":true}"#,
            "text",
        ),
        (
            format!("/v1/sessions/{id}/input"),
            r#"{"keys":["a"],"submit":true,"submit":false}"#,
            "submit",
        ),
        (
            format!("/v1/sessions/{id}/resize"),
            r#"{"cols":100,"rows":30,"cols":20}"#,
            "cols",
        ),
        (
            format!("/v1/sessions/{id}/wait"),
            r#"{"until":"idle","timeout_ms":10,"timeout_ms":20}"#,
            "timeout_ms",
        ),
    ];
    for (path, body, key) in cases {
        let (status, answer) = post_raw(&daemon, &path, body);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("duplicate key `{key}`")),
            "{body}: {message}"
        );
    }
    let (status, answer) = daemon.request(
        Method::PUT,
        &format!("/v1/sessions/{id}/thought"),
        Some(&json!({ "text": "kept" })),
    );
    assert_eq!(status, 200, "{answer}");
    let mut request = reqwest::blocking::Client::new()
        .put(format!("{}/v1/sessions/{id}/thought", daemon.base))
        .header("Content-Type", "application/json")
        .body(r#"{"text":"a","state":"x","text":"b"}"#);
    if let Some(header) = daemon.auth_header() {
        request = request.header("Authorization", header);
    }
    assert_eq!(request.send().unwrap().status(), StatusCode::BAD_REQUEST);

    // Nothing was created, typed, resized or stored.
    assert_eq!(daemon.session_ids(), [id.as_str()]);
    assert!(!tmux.has_session("one") && !tmux.has_session("two"));
    daemon.type_line(&id, "echo DONE-$((1+1))");
    let screen = daemon.wait_for_snapshot(&id, "DONE-2").join("\n");
    assert!(
        !screen.contains("SAFE") && !screen.contains("DUP-42"),
        "{screen}"
    );
    assert_ne!(tmux.size("dup"), (20, 30));
    let session = daemon.summary(&id);
    assert_eq!(session["thought"]["text"], "kept");
}

/// tmux parses a control client's command with a yacc stack of 10,000
/// words: 10,000 keys in one input answered 502 ("yacc stack overflow").
/// Keys now go a thousand to a command, and past `MAX_INPUT_KEYS` (10,000)
/// or a 32-byte name the input is a 400 naming the limit.
#[test]
fn ten_thousand_keys_are_typed_and_more_are_refused() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("keys", "sh -c 'head -c 10000 | wc -c; exec sleep 600'");
    // 100 lines of 99 `a`s: the terminal's line discipline takes lines of
    // at most 4,095 characters.
    let mut keys = Vec::new();
    for _ in 0..100 {
        keys.extend(std::iter::repeat_n("a", 99));
        keys.push("Enter");
    }
    assert_eq!(keys.len(), 10_000);
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "keys": keys }),
    );
    assert_eq!(status, 200, "{body}");
    daemon.wait_for_snapshot(&id, "10000");

    let too_many = vec!["a"; 10_001];
    let long_name = "C-".repeat(20) + "a";
    let cases = [
        (json!({ "keys": too_many }), "at most 10000"),
        (json!({ "keys": [long_name] }), "at most 32 bytes"),
    ];
    for (body, why) in cases {
        let (status, answer) = daemon.post(&format!("/v1/sessions/{id}/input"), &body);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{message}");
    }
}

/// Scrollback asked while the session is killed from outside: before, 3 in
/// 20 answered 502 (tmux's "can't find session" from the fork that reads
/// the history). A race with a session's end is a 404, until the ended
/// session is kept: then 200 from its record, which says there was no
/// history to read. Half the rounds keep another session, so the server
/// outlives the kill; in the other half the server exits with it.
#[test]
fn scrollback_racing_an_outside_kill_is_200_or_404() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    for round in 0..20 {
        if round == 10 {
            tmux.new_session("keeper", (80, 24), "sleep 600");
        }
        let name = format!("race{round}");
        let id = daemon.create_named(&name, "sh -c 'seq 1 3000; exec sleep 600'");
        let statuses = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut statuses = Vec::new();
                let deadline = std::time::Instant::now() + common::PATIENCE;
                while std::time::Instant::now() < deadline {
                    let (status, body) =
                        daemon.get(&format!("/v1/sessions/{id}/scrollback?lines=3000"));
                    let ended = body["ended"] == true;
                    statuses.push((status.as_u16(), body));
                    if ended {
                        break;
                    }
                }
                statuses
            });
            tmux.run(&["kill-session", "-t", &format!("={name}")]);
            reader.join().unwrap()
        });
        for (status, body) in &statuses {
            assert!(
                *status == 200 || *status == 404,
                "round {round}: {status} {body}"
            );
        }
        let (status, last) = statuses.last().unwrap();
        assert_eq!(*status, 200, "round {round}: {last}");
        assert_eq!(last["missing"], "not_captured", "round {round}: {last}");
    }
}

/// A thought dated more than 5 minutes ahead is a 400: stored, one dated
/// in the year 2999 would make every later update "older" and unapplied.
#[test]
fn a_thought_from_the_future_is_refused() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("future", common::SHELL);
    let put = |body: Value| {
        daemon.request(
            Method::PUT,
            &format!("/v1/sessions/{id}/thought"),
            Some(&body),
        )
    };
    let (status, answer) =
        put(json!({ "text": "from 2999", "updated_at": "2999-01-01T00:00:00Z" }));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("5 minutes in the future"),
        "{answer}"
    );
    let soon = (chrono::Utc::now() + chrono::TimeDelta::minutes(1)).to_rfc3339();
    let (status, answer) = put(json!({ "text": "in a minute", "updated_at": soon }));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["applied"], true, "clocks a little apart are fine");
    let (status, answer) = put(json!({ "text": "now" }));
    assert_eq!(status, 200, "{answer}");
    let session = daemon.summary(&id);
    assert_eq!(session["thought"]["text"], "in a minute");
}
