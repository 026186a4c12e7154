//! Secure by default: other local users, pages of other origins and
//! strangers who guess get nothing, and what a stranger sends before
//! authenticating cannot grow the daemon. Loopback is not trust (any local
//! user reaches it), a WebSocket's first message is bounded before
//! authentication, and guesses are answered slowly. See issue 17.

use crate::common;
use crate::wire;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, rss_kib, stdout_ok, wait_for};
use serde_json::{Value, json};

/// What another local user (`nobody`) gets: over TCP a create without a
/// token, and on the daemon's unix socket (made reachable to that user for
/// the test: the data dir is 0700 in real life) a plain GET.
const AS_ANOTHER_USER: &str = r#"
import json, socket, sys
host, port, unix_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
body = json.dumps({"command": "sh -c 'id > /tmp/should-not-exist'"}).encode()
tcp = socket.create_connection((host, port))
tcp.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
tcp_answer = tcp.recv(65536).decode(errors="replace")
unix = socket.socket(socket.AF_UNIX)
unix.connect(unix_path)
try:
    unix.sendall(b"GET /v1/sessions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    unix_answer = unix.recv(65536).decode(errors="replace")
except OSError as e:
    unix_answer = "error: " + str(e)
print(json.dumps({"tcp": tcp_answer.split(" ")[1], "unix": unix_answer}))
"#;

#[test]
fn another_local_user_is_refused_on_tcp_and_on_the_socket() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let socket = daemon.data_dir.join("tmuxd.sock");
    assert!(socket.exists(), "the daemon serves its unix socket");
    // Open the way to the socket, so only the peer check stands between.
    for dir in [daemon.data_dir.parent().unwrap(), daemon.data_dir.as_path()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let address = daemon.base.trim_start_matches("http://");
    let (host, port) = address.rsplit_once(':').unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["/usr/bin/python3", "-c", AS_ANOTHER_USER, host, port])
        .arg(&socket)
        .env_clear()
        .output()
        .expect("setpriv (util-linux) runs");
    let answer: Value = serde_json::from_slice(&stdout_ok(out).into_bytes()).unwrap();
    assert_eq!(answer["tcp"], "401", "{answer}");
    let unix = answer["unix"].as_str().unwrap();
    // Closed at accept: no answer at all (or a reset while sending).
    assert!(
        !unix.contains("HTTP/"),
        "the socket answered another user: {answer}"
    );
    assert!(daemon.sessions().is_empty(), "nothing was created");
    assert!(
        daemon
            .log()
            .contains("refused a connection to the unix socket from another user")
    );

    // The daemon's own user needs no token on the socket.
    let own = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
             s.sendall(b'GET /v1/whoami HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n'); \
             print(s.recv(4096).decode())",
        ])
        .arg(&socket)
        .output()
        .unwrap();
    let own = stdout_ok(own);
    assert!(own.starts_with("HTTP/1.1 200"), "{own}");
    assert!(own.contains(r#"{"access":"write"}"#), "{own}");
}

#[test]
fn the_generated_token_is_private_kept_and_needed_on_tcp() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().join("data");
    let mut daemon = Daemon::start_with(&tmux, DaemonOptions::in_dir(&data_dir));
    let token = daemon.token().expect("a token was generated").to_owned();
    assert!(token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit()));
    let mode = std::fs::metadata(data_dir.join("token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    for (method, path) in [
        ("GET", "/v1/sessions"),
        ("POST", "/v1/sessions"),
        ("GET", "/metrics"),
    ] {
        let (status, _) = wire::exchange(&daemon.base, method, path, &[], Some(&json!({})));
        assert_eq!(status, 401, "{method} {path} without the token");
    }
    assert_eq!(daemon.get("/v1/whoami").1, json!({"access": "write"}));
    daemon.terminate();
    let again = Daemon::start_with(&tmux, DaemonOptions::in_dir(&data_dir));
    assert_eq!(again.token(), Some(token.as_str()), "kept across restarts");
}

/// 8 sockets each announce a 60 MiB first message and start sending it:
/// each is cut after a few KiB, and the daemon does not grow.
#[test]
fn a_stranger_cannot_make_the_daemon_buffer_before_authenticating() {
    let tmux = TmuxServer::new();
    // A configured token (the generated one acts the same).
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            env: vec![("TMUXD_TOKEN".into(), "a-configured-token-0123456789".into())],
            ..Default::default()
        },
    );
    let body = json!({ "name": "target", "command": common::SHELL });
    let auth = [("Authorization", "Bearer a-configured-token-0123456789")];
    let (status, created) =
        wire::exchange(&daemon.base, "POST", "/v1/sessions", &auth, Some(&body));
    assert_eq!(status, 201, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["session"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = rss_kib(daemon.pid());
    let path = format!("/v1/sessions/{id}/stream");
    let senders: Vec<_> = (0..8)
        .map(|_| {
            let (base, path) = (daemon.base.clone(), path.clone());
            std::thread::spawn(move || flood_first_message(&base, &path, 60 << 20))
        })
        .collect();
    let accepted: Vec<usize> = senders.into_iter().map(|s| s.join().unwrap()).collect();
    let after = rss_kib(daemon.pid());
    eprintln!("RSS {before} KiB -> {after} KiB; bytes written before the cut: {accepted:?}");
    for written in &accepted {
        // The kernel's socket buffers take some before the cut is seen.
        assert!(
            *written < 16 << 20,
            "a socket took {written} bytes unauthenticated"
        );
    }
    assert!(
        after < before + 32 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    let (status, _) = daemon.get("/healthz");
    assert_eq!(status, 200);
}

/// Upgrades without credentials, then writes one text message of `size`
/// bytes in 8 MiB frames (masked, as a client must: under the WebSocket
/// library's frame limit, up to its 64 MiB message limit); returns how much
/// was written before the daemon cut the connection.
fn flood_first_message(base: &str, path: &str, size: u64) -> usize {
    const FRAME: u64 = 8 << 20;
    let mut stream = wire::connect(base);
    let upgrade = [
        ("Connection", "Upgrade"),
        ("Upgrade", "websocket"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    wire::send(&mut stream, "GET", path, &upgrade, None);
    let (status, _) = wire::read_head(&mut stream, PATIENCE).unwrap();
    assert_eq!(status, 101, "first-message auth is offered");
    let _ = stream.set_write_timeout(Some(PATIENCE));
    let chunk = vec![b'a'; 64 * 1024];
    let mut written = 0usize;
    for index in 0..size.div_ceil(FRAME) {
        let length = FRAME.min(size - index * FRAME);
        let last = (index + 1) * FRAME >= size;
        let opcode = if index == 0 { 0x1 } else { 0x0 };
        let mut header = vec![if last { 0x80 } else { 0 } | opcode, 0xff];
        header.extend_from_slice(&length.to_be_bytes());
        header.extend_from_slice(&[1, 2, 3, 4]);
        if stream.write_all(&header).is_err() {
            return written;
        }
        let mut sent = 0u64;
        while sent < length {
            let part = &chunk[..chunk.len().min((length - sent) as usize)];
            match stream.write(part) {
                Ok(0) | Err(_) => return written,
                Ok(n) => (sent, written) = (sent + n as u64, written + n),
            }
        }
    }
    written
}

#[test]
fn wrong_guesses_are_slowed_and_counted_while_the_right_token_is_not() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let wrong = [("Authorization", "Bearer not-the-token-not-the-token")];
    let started = Instant::now();
    for _ in 0..8 {
        let (status, _) = wire::exchange(&daemon.base, "GET", "/v1/sessions", &wrong, None);
        assert_eq!(status, 401);
    }
    let guessing = started.elapsed();
    // Three free, then 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s.
    assert!(
        guessing >= Duration::from_millis(3000),
        "8 guesses in {guessing:?}"
    );
    let started = Instant::now();
    let (status, _) = daemon.get("/v1/sessions");
    assert_eq!(status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the right token waits for nothing"
    );
    assert_eq!(daemon.metric("tmuxd_auth_failures_total"), Some(8.0));
}

/// Every address of 127.0.0.0/8 is a local attacker's, so backoff per
/// address alone would let rotating addresses guess thousands of tokens
/// and login codes a second. Past a burst of 64, failures from anywhere
/// are answered at most 20 a second, while the right token still waits for
/// nothing.
#[test]
fn guesses_from_rotating_addresses_share_one_budget() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    const THREADS: usize = 8;
    const GUESSES: usize = 20;
    let started = Instant::now();
    let guessers: Vec<_> = (0..THREADS)
        .map(|thread| {
            let base = daemon.base.clone();
            std::thread::spawn(move || {
                for guess in 0..GUESSES {
                    // Each from an address of its own, a token or a login code.
                    let (status, body) = if (thread + guess) % 2 == 0 {
                        let wrong = [("Authorization", "Bearer not-the-token-not-the-token")];
                        wire::exchange_from_fresh_address(
                            &base,
                            "GET",
                            "/v1/sessions",
                            &wrong,
                            None,
                        )
                    } else {
                        let code = json!({ "code": "0123456789abcdef0123456789abcdef" });
                        wire::exchange_from_fresh_address(
                            &base,
                            "POST",
                            "/v1/login",
                            &[],
                            Some(&code),
                        )
                    };
                    assert_eq!(status, 401, "{body}");
                }
            })
        })
        .collect();
    // While guesses queue, the right token gets in at once.
    wait_for("guesses past the free burst", || {
        let failures = daemon.metric("tmuxd_auth_failures_total")?;
        (failures >= 80.0).then_some(())
    });
    let asked = Instant::now();
    let (status, _) = daemon.get("/v1/sessions");
    let owner_waited = asked.elapsed();
    assert_eq!(status, 200);
    assert!(
        owner_waited < Duration::from_secs(1),
        "the right token waited {owner_waited:?}"
    );
    for guesser in guessers {
        guesser.join().unwrap();
    }
    let took = started.elapsed();
    let guesses = THREADS * GUESSES;
    eprintln!("{guesses} guesses from {guesses} addresses took {took:?}");
    // 64 free, then 96 at most 20 a second: 4.8 s at least.
    assert!(
        took >= Duration::from_secs(4),
        "{guesses} guesses in {took:?}"
    );
}

/// A request target, its headers, and the status it must get.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);

#[test]
fn headers_a_browser_or_proxy_could_read_two_ways_are_refused() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let bearer = daemon.auth_header().unwrap();
    let auth = ("Authorization", bearer.as_str());
    let port = daemon.base.rsplit(':').next().unwrap().to_owned();
    let own_origin = format!("http://127.0.0.1:{port}");
    let own_host = format!("127.0.0.1:{port}");
    #[rustfmt::skip]
    let cases: [Case; 7] = [
        ("/v1/sessions", vec![auth, ("Host", "127.0.0.1"), ("Host", "evil.example")], 400),
        ("/v1/sessions", vec![auth, ("Origin", &own_origin), ("Origin", "http://evil.example")], 400),
        ("/v1/sessions", vec![auth, ("Sec-Fetch-Site", "cross-site")], 403),
        ("/v1/sessions", vec![auth, ("Host", "rebound.example")], 403),
        ("/v1/sessions", vec![auth, ("Host", &own_host), ("Origin", "http://localhost:8000")], 403),
        ("http://evil.example/v1/sessions", vec![auth], 400),
        ("/v1/sessions", vec![auth, ("Host", &own_host), ("Origin", &own_origin)], 200),
    ];
    for (target, headers, want) in cases {
        let (status, body) = wire::exchange(&daemon.base, "GET", target, &headers, None);
        assert_eq!(status, want, "{target} {headers:?}: {body}");
    }
    // A WebSocket upgrade from another port, even with the token.
    let id = daemon.create_named("ws", common::SHELL);
    let upgrade = [
        auth,
        ("Host", own_host.as_str()),
        ("Origin", "http://localhost:8000"),
        ("Connection", "Upgrade"),
        ("Upgrade", "websocket"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    let path = format!("/v1/sessions/{id}/stream");
    let (status, _) = wire::exchange(&daemon.base, "GET", &path, &upgrade, None);
    assert_eq!(status, 403);
}

#[test]
fn a_login_link_works_once_and_gives_a_credential_of_its_own() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let out = stdout_ok(daemon.client().args(["open", "--print"]).output().unwrap());
    let url = out.trim();
    let code = url
        .strip_prefix(&format!("{}/#login=", daemon.base))
        .unwrap_or_else(|| panic!("a link to this daemon: {url}"));
    assert!(
        !url.contains(daemon.token().unwrap()),
        "the token is not in the link"
    );
    let exchange = |code: &str| {
        let body = json!({ "code": code });
        wire::exchange(&daemon.base, "POST", "/v1/login", &[], Some(&body))
    };
    let (status, grant) = exchange(code);
    assert_eq!(status, 200, "{grant}");
    let grant: Value = serde_json::from_str(&grant).unwrap();
    let credential = grant["token"].as_str().unwrap();
    assert_ne!(credential, daemon.token().unwrap());
    let bearer = format!("Bearer {credential}");
    let headers = [("Authorization", bearer.as_str())];
    let (status, who) = wire::exchange(&daemon.base, "GET", "/v1/whoami", &headers, None);
    assert_eq!((status, who.as_str()), (200, r#"{"access":"write"}"#));
    let (status, _) = exchange(code);
    assert_eq!(status, 401, "a code works once");
}

/// `POST /v1/logout` ("Forget token") ends the page's credential on the
/// daemon, and a page's credential cannot mint login codes: one that could
/// would trade each code for a fresh credential and live forever.
#[test]
fn a_page_credential_ends_at_logout_and_cannot_renew_itself() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let out = stdout_ok(daemon.client().args(["open", "--print"]).output().unwrap());
    let code = out.trim().rsplit_once("#login=").unwrap().1.to_owned();
    let body = json!({ "code": code });
    let (status, grant) = wire::exchange(&daemon.base, "POST", "/v1/login", &[], Some(&body));
    assert_eq!(status, 200, "{grant}");
    let grant: Value = serde_json::from_str(&grant).unwrap();
    let page = format!("Bearer {}", grant["token"].as_str().unwrap());
    let as_page = [("Authorization", page.as_str())];
    let ask = |method, path, headers: &[(&str, &str)]| {
        wire::exchange_from_fresh_address(&daemon.base, method, path, headers, None)
    };

    let (status, body) = ask("POST", "/v1/login/code", &as_page);
    assert_eq!(status, 403, "a page minted a login code: {body}");
    assert!(body.contains("dashboard credential"), "{body}");
    let (status, _) = ask("GET", "/v1/whoami", &as_page);
    assert_eq!(status, 200, "still good until it logs out");

    let (status, body) = ask("POST", "/v1/logout", &as_page);
    assert_eq!((status, body.as_str()), (200, r#"{"ended":true}"#));
    for (method, path) in [
        ("GET", "/v1/whoami"),
        ("GET", "/v1/sessions"),
        ("POST", "/v1/logout"),
    ] {
        let (status, body) = ask(method, path, &as_page);
        assert_eq!(status, 401, "{method} {path} after logout: {body}");
    }

    // A logout with the token ends nothing: the token lasts.
    let token = daemon.auth_header().unwrap();
    let as_owner = [("Authorization", token.as_str())];
    let (status, body) = ask("POST", "/v1/logout", &as_owner);
    assert_eq!((status, body.as_str()), (200, r#"{"ended":false}"#));
    assert_eq!(ask("GET", "/v1/whoami", &as_owner).0, 200);
    assert_eq!(ask("POST", "/v1/login/code", &as_owner).0, 200);
}

#[test]
fn no_credential_at_all_needs_saying_so_and_warns() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: "[auth]\ninsecure_no_auth = true\n".into(),
            ..Default::default()
        },
    );
    assert!(daemon.token().is_none(), "no token is generated");
    let (status, _) = wire::exchange(&daemon.base, "GET", "/v1/sessions", &[], None);
    assert_eq!(status, 200);
    wait_for("the warning", || {
        daemon
            .log()
            .contains("auth.insecure_no_auth is set")
            .then_some(())
    });
    // Still only the daemon's own origin.
    let foreign = [("Origin", "http://localhost:8000")];
    let (status, _) = wire::exchange(&daemon.base, "GET", "/v1/sessions", &foreign, None);
    assert_eq!(status, 403);
}

#[test]
fn a_short_token_stops_startup_naming_the_key() {
    let out = common::tmuxd_command(std::env::temp_dir().as_path())
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("TMUXD_TOKEN", "zq")
        .env("TMUXD_DATA_DIR", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(78));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("auth.token") && stderr.contains("at least 24"),
        "{stderr}"
    );
}
