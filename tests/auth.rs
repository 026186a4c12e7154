//! Who may reach what: every route, with every kind of credential, with and
//! without WebSocket upgrade headers, against the real daemon over HTTP.

use crate::common;
use crate::wire;

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use serde_json::{Value, json};
use wire::{close_reason, next_json, send_json, ws_request};

const RW: &str = "rw-secret-1f2e3d-0123456789";
const RO: &str = "ro-secret-9a8b7c-0123456789";
const RW_BEARER: &str = "Bearer rw-secret-1f2e3d-0123456789";
const RO_BEARER: &str = "Bearer ro-secret-9a8b7c-0123456789";

/// What a route needs, as the table says.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Need {
    /// `/healthz`, `/version`: anyone.
    Open,
    /// GET: the read or the read-write token.
    Read,
    /// Everything that changes something: the read-write token.
    Write,
    /// The two WebSockets: a bearer header, or first-message auth after the upgrade.
    Socket,
}

#[derive(Clone, Copy, Debug)]
enum Credential {
    None,
    Wrong,
    ReadOnly,
    ReadWrite,
}

struct Route {
    method: &'static str,
    path: String,
    need: Need,
    body: Option<Value>,
    /// The handler's own answer to the read-write token: (plain, with upgrade headers).
    /// Rows run in table order, plain first, so a second create is a second
    /// session, a second adopt a conflict and a second delete removes the
    /// ended session.
    handler: (u16, u16),
}

/// Every route the router has (src/api/mod.rs), every method on it.
fn routes(id: &str, marker: &str) -> Vec<Route> {
    let route = |method, path: &str, need, body: Option<Value>, handler| Route {
        method,
        path: path.replace("{id}", id),
        need,
        body,
        handler,
    };
    let socket = (400, 101);
    vec![
        route("GET", "/healthz", Need::Open, None, (200, 200)),
        route("GET", "/version", Need::Open, None, (200, 200)),
        route("GET", "/", Need::Open, None, (200, 200)),
        route("GET", "/assets/app.js", Need::Open, None, (200, 200)),
        route("GET", "/sw.js", Need::Open, None, (200, 200)),
        route("GET", "/v1/push", Need::Read, None, (200, 200)),
        route(
            "POST",
            "/v1/push/subscriptions",
            Need::Write,
            Some(
                json!({ "endpoint": "http://push.example/x", "keys": { "p256dh": "AA", "auth": "AA" } }),
            ),
            (400, 400),
        ),
        route(
            "POST",
            "/v1/push/unsubscribe",
            Need::Write,
            Some(json!({ "endpoint": "https://push.example/x" })),
            (200, 200),
        ),
        route("GET", "/v1/server", Need::Read, None, (200, 200)),
        route("GET", "/v1/whoami", Need::Read, None, (200, 200)),
        route("GET", "/v1/hosts", Need::Read, None, (200, 200)),
        route(
            "GET",
            "/v1/hosts/nowhere/server",
            Need::Read,
            None,
            (404, 404),
        ),
        route("POST", "/v1/login/code", Need::Write, None, (200, 200)),
        route(
            "GET",
            &format!("/v1/auth/proof?nonce={}", "ab".repeat(32)),
            Need::Open,
            None,
            (200, 200),
        ),
        route("POST", "/v1/logout", Need::Write, None, (200, 200)),
        route("GET", "/readyz", Need::Read, None, (200, 200)),
        route("GET", "/metrics", Need::Read, None, (200, 200)),
        route("GET", "/v1/openapi.json", Need::Read, None, (200, 200)),
        route("GET", "/v1/sessions", Need::Read, None, (200, 200)),
        route(
            "GET",
            "/v1/sessions/untracked",
            Need::Read,
            None,
            (200, 200),
        ),
        route("GET", "/v1/sessions/{id}", Need::Read, None, (200, 200)),
        route(
            "GET",
            "/v1/sessions/{id}/snapshot",
            Need::Read,
            None,
            (200, 200),
        ),
        route(
            "GET",
            "/v1/sessions/{id}/scrollback",
            Need::Read,
            None,
            (200, 200),
        ),
        route(
            "GET",
            "/v1/sessions/{id}/input/queue",
            Need::Read,
            None,
            (200, 200),
        ),
        route(
            "GET",
            "/v1/events?format=json",
            Need::Read,
            None,
            (200, 200),
        ),
        route(
            "GET",
            "/v1/sessions/{id}/stream",
            Need::Socket,
            None,
            socket,
        ),
        route(
            "GET",
            "/v1/sessions/{id}/screen",
            Need::Socket,
            None,
            socket,
        ),
        route(
            "POST",
            "/v1/sessions",
            Need::Write,
            Some(json!({ "command": format!("touch {marker}; exec cat") })),
            (201, 201),
        ),
        route(
            "POST",
            "/v1/sessions/adopt",
            Need::Write,
            Some(json!({ "tmux_name": "outside" })),
            (201, 409),
        ),
        route(
            "POST",
            "/v1/sessions/{id}/input",
            Need::Write,
            Some(json!({ "text": "echo PWNED-$((6*7))", "submit": true })),
            (200, 200),
        ),
        route(
            "POST",
            "/v1/sessions/{id}/resize",
            Need::Write,
            Some(json!({ "cols": 100, "rows": 30 })),
            (200, 200),
        ),
        route(
            "POST",
            "/v1/sessions/{id}/wait",
            Need::Write,
            Some(json!({ "until": "exited", "timeout_ms": 1 })),
            (408, 408),
        ),
        route(
            "PUT",
            "/v1/sessions/{id}/thought",
            Need::Write,
            Some(json!({ "text": "owned" })),
            (200, 200),
        ),
        route(
            "POST",
            "/v1/hooks/claude?pane=%2599999",
            Need::Write,
            Some(json!({ "hook_event_name": "Stop" })),
            (404, 404),
        ),
        route(
            "DELETE",
            "/v1/sessions/{id}/input/queue/1",
            Need::Write,
            None,
            (404, 404),
        ),
        route(
            "POST",
            "/v1/sessions/{id}/answer",
            Need::Write,
            Some(json!({ "since": "2020-01-01T00:00:00Z", "text": "y", "keys": ["Enter"] })),
            (409, 409),
        ),
        route(
            "DELETE",
            "/v1/sessions/{id}?mode=kill",
            Need::Write,
            None,
            (200, 200),
        ),
    ]
}

/// The status the table expects, or `None` when the handler decides.
fn expected(need: Need, credential: Credential, upgrade: bool) -> Option<u16> {
    use Credential as C;
    match (need, credential) {
        (Need::Open, _) => Some(200),
        (_, C::Wrong) => Some(401),
        (Need::Socket, C::None) if upgrade => Some(101),
        (_, C::None) => Some(401),
        (Need::Write, C::ReadOnly) => Some(403),
        _ => None,
    }
}

fn headers_for(credential: Credential, upgrade: bool) -> Vec<(&'static str, &'static str)> {
    let mut headers = match credential {
        Credential::None => vec![],
        Credential::Wrong => vec![("Authorization", "Bearer not-the-token")],
        Credential::ReadOnly => vec![("Authorization", RO_BEARER)],
        Credential::ReadWrite => vec![("Authorization", RW_BEARER)],
    };
    if upgrade {
        headers.extend([
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ]);
    }
    headers
}

/// Sends one row's request; a description of the answer if it is not the table's.
fn check(base: &str, route: &Route, credential: Credential, upgrade: bool) -> Option<String> {
    let want = expected(route.need, credential, upgrade).unwrap_or(match upgrade {
        false => route.handler.0,
        true => route.handler.1,
    });
    let headers = headers_for(credential, upgrade);
    // Wrong guesses are slowed per address; this table is about decisions.
    let (status, body) = wire::exchange_from_fresh_address(
        base,
        route.method,
        &route.path,
        &headers,
        route.body.as_ref(),
    );
    if status == 401 || status == 403 {
        let code = serde_json::from_str::<Value>(&body).unwrap()["error"]["code"].clone();
        let want_code = if status == 401 {
            "unauthorized"
        } else {
            "forbidden"
        };
        assert_eq!(code, want_code, "{body}");
    }
    (status != want).then(|| {
        format!(
            "{} {} {credential:?} upgrade={upgrade}: {status} (want {want}) {body}",
            route.method, route.path
        )
    })
}

fn with_tokens(tmux: &TmuxServer) -> Daemon {
    Daemon::start_with(
        tmux,
        DaemonOptions {
            env: vec![
                ("TMUXD_TOKEN".into(), RW.into()),
                ("TMUXD_READ_TOKEN".into(), RO.into()),
            ],
            ..Default::default()
        },
    )
}

/// A request as the read-write client, through reqwest.
fn rw(daemon: &Daemon, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = reqwest::blocking::Client::builder()
        .timeout(PATIENCE)
        .build()
        .unwrap();
    let mut request = client
        .request(method, format!("{}{path}", daemon.base))
        .bearer_auth(RW);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// Waits until the session's snapshot (read with the token) shows `needle`.
fn wait_for_text(daemon: &Daemon, id: &str, needle: &str) -> Vec<String> {
    let path = format!("/v1/sessions/{id}/snapshot");
    wait_for(&format!("{needle:?} in {id}"), || {
        let (_, snap) = rw(daemon, reqwest::Method::GET, &path, None);
        let lines: Vec<String> = snap["lines"]
            .as_array()?
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        lines.iter().any(|l| l.contains(needle)).then_some(lines)
    })
}

#[test]
fn every_route_answers_only_the_credentials_it_allows() {
    let tmux = TmuxServer::new();
    let daemon = with_tokens(&tmux);
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("created");
    let marker_text = marker.to_str().unwrap();

    // The session every `{id}` route names, and an untracked tmux session to adopt.
    let create = |name: &str| {
        let body = json!({ "name": name, "command": common::SHELL });
        let (status, value) = rw(&daemon, reqwest::Method::POST, "/v1/sessions", Some(body));
        assert_eq!(status, 201, "{value}");
        value["session"]["session_id"].as_str().unwrap().to_owned()
    };
    let id = create("target");
    let outside = create("outside");
    let (status, _) = rw(
        &daemon,
        reqwest::Method::DELETE,
        &format!("/v1/sessions/{outside}"),
        None,
    );
    assert_eq!(status, 200, "detached, so only an adopt can track it again");
    let (_, target) = rw(
        &daemon,
        reqwest::Method::GET,
        &format!("/v1/sessions/{id}"),
        None,
    );
    wait_for_text(&daemon, &id, "$");
    let table = routes(&id, marker_text);

    let run = |credentials: &[Credential]| {
        let mut wrong = Vec::new();
        for &credential in credentials {
            for route in &table {
                for upgrade in [false, true] {
                    wrong.extend(check(&daemon.base, route, credential, upgrade));
                }
            }
        }
        assert!(wrong.is_empty(), "wrong answers:\n{}", wrong.join("\n"));
    };

    // Everyone without the read-write token first: none of it may change anything.
    run(&[Credential::None, Credential::Wrong, Credential::ReadOnly]);

    // Nothing was created, adopted, resized, typed, deleted or noted.
    let (_, list) = rw(&daemon, reqwest::Method::GET, "/v1/sessions", None);
    let names: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tmux_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["target"], "no session created or adopted");
    let tmux_sessions = tmux.run(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(tmux_sessions.lines().count(), 2, "{tmux_sessions}");
    assert!(
        !marker.exists(),
        "a create without the token ran its command"
    );
    assert_eq!(tmux.size("target"), (80, 24), "not resized");
    let (_, now) = rw(
        &daemon,
        reqwest::Method::GET,
        &format!("/v1/sessions/{id}"),
        None,
    );
    assert_eq!(now["session"]["thought"], Value::Null, "no thought");
    assert_eq!(
        now["session"]["created_at"],
        target["session"]["created_at"]
    );
    // Input is typed in order: once the barrier shows, earlier input would have too.
    let (status, _) = rw(
        &daemon,
        reqwest::Method::POST,
        &format!("/v1/sessions/{id}/input"),
        Some(json!({ "text": "echo BARRIER-$((2*3))", "submit": true })),
    );
    assert_eq!(status, 200);
    let lines = wait_for_text(&daemon, &id, "BARRIER-6");
    assert!(!lines.iter().any(|l| l.contains("PWNED")), "{lines:?}");

    // The read-write token reaches every handler, with or without upgrade headers.
    run(&[Credential::ReadWrite]);
    assert!(marker.exists(), "the read-write create ran its command");
}

#[test]
fn without_a_token_every_route_refuses_foreign_hosts_and_origins() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create(&json!({ "name": "local", "command": common::SHELL }))["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let foreign: [&[(&str, &str)]; 3] = [
        &[("Host", "attacker.example")],
        &[("Origin", "http://attacker.example")],
        &[("Origin", "null")],
    ];
    let mut wrong = Vec::new();
    for route in routes(&id, "/nonexistent/never-created") {
        for upgrade in [false, true] {
            for extra in foreign {
                let mut headers = headers_for(Credential::None, upgrade);
                headers.extend_from_slice(extra);
                let body = route.body.as_ref();
                let (status, text) =
                    wire::exchange(&daemon.base, route.method, &route.path, &headers, body);
                if status != 403 {
                    wrong.push(format!(
                        "{} {} {extra:?} upgrade={upgrade}: {status} {text}",
                        route.method, route.path
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "not refused:\n{}", wrong.join("\n"));
    assert_eq!(
        daemon.session_ids(),
        [id.as_str()],
        "nothing created or deleted"
    );
    assert_eq!(tmux.size("local"), (80, 24));
}

#[test]
fn a_websocket_gets_exactly_what_its_credentials_allow() {
    let tmux = TmuxServer::new();
    let daemon = with_tokens(&tmux);
    let body = json!({ "name": "watched", "command": common::SHELL });
    let (_, created) = rw(&daemon, reqwest::Method::POST, "/v1/sessions", Some(body));
    let id = created["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_for_text(&daemon, &id, "$");
    let stream = format!("/v1/sessions/{id}/stream");
    let connect = |path: &str, bearer| tungstenite::connect(ws_request(&daemon.base, path, bearer));

    // No header: the first message must be auth; input first is refused and never typed.
    let (mut socket, _) = connect(&stream, None).unwrap();
    let input = json!({ "type": "input", "text": "echo SNEAKED-$((3*3))\r" });
    send_json(&mut socket, &input);
    assert!(close_reason(&mut socket).contains("authentication required"));

    // The read token, by first message or by header: watch, but no input or resize.
    for bearer in [None, Some(RO)] {
        let (mut socket, _) = connect(&stream, bearer).unwrap();
        if bearer.is_none() {
            let auth = json!({ "type": "auth", "token": RO });
            send_json(&mut socket, &auth);
        }
        assert_eq!(next_json(&mut socket)["type"], "ready");
        send_json(&mut socket, &input);
        let refused = next_json(&mut socket);
        assert!(
            refused["message"].as_str().unwrap().contains("read token"),
            "{refused}"
        );
        let resize = json!({ "type": "resize", "cols": 100, "rows": 30 });
        send_json(&mut socket, &resize);
        let refused = next_json(&mut socket);
        assert!(
            refused["message"].as_str().unwrap().contains("read token"),
            "{refused}"
        );
    }

    // The read-write token by first message types.
    let (mut socket, _) = connect(&stream, None).unwrap();
    let auth = json!({ "type": "auth", "token": RW });
    send_json(&mut socket, &auth);
    assert_eq!(next_json(&mut socket)["type"], "ready");
    let typed = json!({ "type": "input", "text": "echo TYPED-$((4*4))\r" });
    send_json(&mut socket, &typed);
    let lines = wait_for_text(&daemon, &id, "TYPED-16");
    assert!(!lines.iter().any(|l| l.contains("SNEAKED")), "{lines:?}");
    assert_eq!(
        tmux.size("watched"),
        (80, 24),
        "the read token did not resize"
    );

    // A caller without a token learns nothing, not even whether a session exists;
    // a verified one gets a plain 404.
    let missing = "/v1/sessions/sess_999/screen";
    let (mut socket, _) = connect(missing, None).unwrap();
    let auth = json!({ "type": "auth", "token": RW });
    send_json(&mut socket, &auth);
    assert!(close_reason(&mut socket).contains("no session"));
    match connect(missing, Some(RW)) {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 404),
        other => panic!("expected 404, got {other:?}"),
    }
    let (mut socket, _) = connect(missing, None).unwrap();
    let auth = json!({ "type": "auth", "token": "wrong" });
    send_json(&mut socket, &auth);
    assert!(close_reason(&mut socket).contains("authentication required"));
}
