//! Who may reach what: every route, with every kind of credential, with and
//! without WebSocket upgrade headers, against the real daemon over HTTP.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use serde_json::{Value, json};
use tungstenite::Message;

const RW: &str = "rw-secret-1f2e3d";
const RO: &str = "ro-secret-9a8b7c";

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
    /// session, a second adopt a conflict and a second delete a 404.
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
        route("GET", "/readyz", Need::Read, None, (200, 200)),
        route("GET", "/metrics", Need::Read, None, (200, 200)),
        route("GET", "/v1/sessions", Need::Read, None, (200, 200)),
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
            "DELETE",
            "/v1/sessions/{id}?mode=kill",
            Need::Write,
            None,
            (200, 404),
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

/// One HTTP/1.1 exchange on a fresh connection, headers exactly as given.
/// Returns the status and the body (empty for 101). Raw, so nothing adds or
/// drops a header behind the test's back.
fn exchange(base: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    exchange_with_body(base, method, path, headers, None)
}

fn exchange_with_body(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, String) {
    let authority = base.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request += &format!("Host: {authority}\r\n");
    }
    for (name, value) in headers {
        request += &format!("{name}: {value}\r\n");
    }
    if !body.is_empty() {
        request += "Content-Type: application/json\r\n";
    }
    request += &format!("Content-Length: {}\r\n\r\n{body}", body.len());
    stream.write_all(request.as_bytes()).unwrap();
    read_response(&mut stream)
}

fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut buffer = Vec::new();
    let mut byte = [0u8; 1];
    while !buffer.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("the daemon answers");
        assert!(n > 0, "connection closed mid-head: {buffer:?}");
        buffer.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buffer).into_owned();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; if status == 101 { 0 } else { length }];
    stream.read_exact(&mut body).unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn headers_for(credential: Credential, upgrade: bool) -> Vec<(&'static str, &'static str)> {
    let mut headers = match credential {
        Credential::None => vec![],
        Credential::Wrong => vec![("Authorization", "Bearer not-the-token")],
        Credential::ReadOnly => vec![("Authorization", "Bearer ro-secret-9a8b7c")],
        Credential::ReadWrite => vec![("Authorization", "Bearer rw-secret-1f2e3d")],
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
    let (status, body) = exchange_with_body(
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
                    exchange_with_body(&daemon.base, route.method, &route.path, &headers, body);
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

/// Reads text frames until one parses as JSON.
fn next_json(socket: &mut tungstenite::WebSocket<impl Read + Write>) -> Value {
    loop {
        match socket.read().expect("the socket stays open") {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            Message::Close(frame) => panic!("closed: {frame:?}"),
            _ => {}
        }
    }
}

/// The close frame's reason, skipping anything sent before it.
fn close_reason(socket: &mut tungstenite::WebSocket<impl Read + Write>) -> String {
    loop {
        match socket.read() {
            Ok(Message::Close(Some(frame))) => return frame.reason.to_string(),
            Ok(Message::Close(None)) => return String::new(),
            Ok(_) => {}
            Err(e) => panic!("no close frame: {e}"),
        }
    }
}

fn ws_request(daemon: &Daemon, path: &str, bearer: Option<&str>) -> tungstenite::http::Request<()> {
    use tungstenite::client::IntoClientRequest;
    let url = daemon.base.replace("http://", "ws://") + path;
    let mut request = url.into_client_request().unwrap();
    if let Some(token) = bearer {
        let value = format!("Bearer {token}").parse().unwrap();
        request.headers_mut().insert("Authorization", value);
    }
    request
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
    let connect = |path: &str, bearer| tungstenite::connect(ws_request(&daemon, path, bearer));

    // No header: the first message must be auth; input first is refused and never typed.
    let (mut socket, _) = connect(&stream, None).unwrap();
    let input = json!({ "type": "input", "text": "echo SNEAKED-$((3*3))\r" });
    socket
        .send(Message::Text(input.to_string().into()))
        .unwrap();
    assert!(close_reason(&mut socket).contains("authentication required"));

    // The read token, by first message or by header: watch, but no input or resize.
    for bearer in [None, Some(RO)] {
        let (mut socket, _) = connect(&stream, bearer).unwrap();
        if bearer.is_none() {
            let auth = json!({ "type": "auth", "token": RO });
            socket.send(Message::Text(auth.to_string().into())).unwrap();
        }
        assert_eq!(next_json(&mut socket)["type"], "ready");
        socket
            .send(Message::Text(input.to_string().into()))
            .unwrap();
        let refused = next_json(&mut socket);
        assert!(
            refused["message"].as_str().unwrap().contains("read token"),
            "{refused}"
        );
        let resize = json!({ "type": "resize", "cols": 100, "rows": 30 });
        socket
            .send(Message::Text(resize.to_string().into()))
            .unwrap();
        let refused = next_json(&mut socket);
        assert!(
            refused["message"].as_str().unwrap().contains("read token"),
            "{refused}"
        );
    }

    // The read-write token by first message types.
    let (mut socket, _) = connect(&stream, None).unwrap();
    let auth = json!({ "type": "auth", "token": RW });
    socket.send(Message::Text(auth.to_string().into())).unwrap();
    assert_eq!(next_json(&mut socket)["type"], "ready");
    let typed = json!({ "type": "input", "text": "echo TYPED-$((4*4))\r" });
    socket
        .send(Message::Text(typed.to_string().into()))
        .unwrap();
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
    socket.send(Message::Text(auth.to_string().into())).unwrap();
    assert!(close_reason(&mut socket).contains("no session"));
    match connect(missing, Some(RW)) {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 404),
        other => panic!("expected 404, got {other:?}"),
    }
    let (mut socket, _) = connect(missing, None).unwrap();
    let auth = json!({ "type": "auth", "token": "wrong" });
    socket.send(Message::Text(auth.to_string().into())).unwrap();
    assert!(close_reason(&mut socket).contains("authentication required"));
}

/// `s` as the hex a frame dump would show it.
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn tokens_never_reach_the_log_even_at_trace_level() {
    let tmux = TmuxServer::new();
    let mut daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            env: vec![
                ("TMUXD_TOKEN".into(), RW.into()),
                ("TMUXD_READ_TOKEN".into(), RO.into()),
                ("TMUXD_LOG".into(), "trace,tungstenite=trace".into()),
            ],
            ..Default::default()
        },
    );
    let body = json!({ "command": common::SHELL });
    let (_, created) = rw(&daemon, reqwest::Method::POST, "/v1/sessions", Some(body));
    let id = created["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = exchange(
        &daemon.base,
        "GET",
        "/v1/sessions",
        &[("Authorization", "Bearer ro-secret-9a8b7c")],
    );
    assert_eq!(status, 200);
    for path in ["stream", "screen"] {
        let path = format!("/v1/sessions/{id}/{path}");
        let (mut socket, _) = tungstenite::connect(ws_request(&daemon, &path, None)).unwrap();
        let auth = json!({ "type": "auth", "token": RW });
        socket.send(Message::Text(auth.to_string().into())).unwrap();
        next_json(&mut socket);
        let (mut socket, _) = tungstenite::connect(ws_request(&daemon, &path, Some(RO))).unwrap();
        next_json(&mut socket);
    }
    let (mut socket, _) = tungstenite::connect(ws_request(
        &daemon,
        &format!("/v1/sessions/{id}/stream"),
        None,
    ))
    .unwrap();
    let auth = json!({ "type": "auth", "token": RO });
    socket.send(Message::Text(auth.to_string().into())).unwrap();
    next_json(&mut socket);
    drop(socket);
    daemon.terminate();
    let log = daemon.log();
    assert!(log.contains("TRACE"), "the log is at trace level:\n{log}");
    for token in [RW, RO] {
        for form in [token.to_owned(), hex(token)] {
            assert!(!log.contains(&form), "{form} in the log:\n{log}");
        }
    }
}
