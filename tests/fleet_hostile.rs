//! A hub whose peers are hostile: fake peers (HTTP servers in this test,
//! each logging every request it gets) that cannot prove they hold the
//! token, send an endless line, `data:` lines with no blank line, a huge
//! session list, a redirect, or events for another host's sessions. The
//! hub sends no token to a peer that did not prove it holds it, stays
//! within a memory and CPU bound, marks each peer down with the reason,
//! and drops (and counts) the foreign events.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tmuxd::secret::Proofs;

const HUB_TOKEN: &str = "read-write-token-for-the-hostile-hub-01";
const PEER_TOKEN: &str = "the-peer-token-a-hostile-peer-knows-0123";

/// How much each flooding peer offers to send: far past every limit (the
/// hub reads at most 16 MiB of one answer, 8 MiB of one event).
const FLOOD_BYTES: usize = 256 << 20;

/// One request a fake peer received.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
}

type Behaviour = dyn Fn(&Seen, &mut TcpStream) + Send + Sync;

/// An HTTP server standing in for a peer: each request logged, then
/// answered by `behaviour`, one request per connection.
struct FakePeer {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakePeer {
    fn start(behaviour: impl Fn(&Seen, &mut TcpStream) + Send + Sync + 'static) -> FakePeer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let behaviour: Arc<Behaviour> = Arc::new(behaviour);
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (log, behaviour) = (log.clone(), behaviour.clone());
                std::thread::spawn(move || {
                    if let Some(request) = read_request(&mut stream) {
                        log.lock().unwrap().push(request.clone());
                        behaviour(&request, &mut stream);
                    }
                });
            }
        });
        FakePeer { base, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn table(&self, name: &str) -> String {
        format!(
            "[[fleet.peers]]\nname = {name:?}\nurl = {:?}\ntoken = {PEER_TOKEN:?}\n",
            self.base
        )
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 65_536 || stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.lines();
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let authorization = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.trim().to_owned());
    Some(Seen {
        path,
        authorization,
    })
}

fn respond(stream: &mut TcpStream, status: &str, extra: &str, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
}

/// Writes `head` (no length: the body ends when the connection does), then
/// `piece` over and over until `FLOOD_BYTES` or the hub hangs up.
fn flood(stream: &mut TcpStream, head: &str, first: &[u8], piece: &[u8]) {
    let head = format!("HTTP/1.1 200 OK\r\n{head}\r\nconnection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).is_err() || stream.write_all(first).is_err() {
        return;
    }
    let block = piece.repeat((65_536 / piece.len()).max(1));
    let mut sent = 0;
    while sent < FLOOD_BYTES && stream.write_all(&block).is_ok() {
        sent += block.len();
    }
}

fn summary(id: &str) -> Value {
    json!({"session_id": id, "name": "work", "state": "idle", "created_at": "2026-01-01T00:00:00Z"})
}

/// What a real peer answers for the requests a hub makes before it
/// follows the stream, with the token proved as `prove` says; `None` when
/// the path is another.
fn honest(request: &Seen, stream: &mut TcpStream, prove: bool) -> Option<()> {
    let path = request.path.as_str();
    if path == "/version" {
        respond(stream, "200 OK", "", r#"{"version":"0.1.0"}"#);
    } else if let Some(nonce) = path.strip_prefix("/v1/auth/proof?nonce=") {
        let token = if prove {
            PEER_TOKEN
        } else {
            "a-token-it-guessed"
        };
        let proofs = Proofs::answer(nonce, Some(token), None);
        respond(
            stream,
            "200 OK",
            "",
            &serde_json::to_string(&proofs).unwrap(),
        );
    } else if path == "/v1/sessions" {
        let list = json!({"sessions": [summary("sess_1")]});
        respond(stream, "200 OK", "", &list.to_string());
    } else if path == "/v1/sessions/sess_1" {
        respond(
            stream,
            "200 OK",
            "",
            &json!({"session": summary("sess_1")}).to_string(),
        );
    } else {
        return None;
    }
    Some(())
}

const SSE_HEAD: &str = "content-type: text/event-stream";

fn event(seq: u64, kind: &str, session_id: &str) -> String {
    let data = json!({"seq": seq, "at": "2026-01-01T00:00:00Z", "kind": kind, "session_id": session_id,
        "state": "working", "state_since": "2026-01-01T00:00:00Z", "attention": null});
    format!("id: {seq}\ndata: {data}\n\n")
}

/// Holds an event stream open (after `first`) until the hub hangs up.
fn hold_stream(stream: &mut TcpStream, first: &str) {
    let head = format!("HTTP/1.1 200 OK\r\n{SSE_HEAD}\r\nconnection: close\r\n\r\n{first}");
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    while stream.write_all(b": keep-alive\n\n").is_ok() {
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn start_hub(tmux: &TmuxServer, tables: &str, data_dir: &std::path::Path) -> Daemon {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(data_dir.join("token"), HUB_TOKEN).unwrap();
    std::fs::set_permissions(
        data_dir.join("token"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    Daemon::start_with(
        tmux,
        DaemonOptions {
            extra_config: format!(
                "[auth]\ntoken = {HUB_TOKEN:?}\n\n[fleet]\nheartbeat_ms = 200\nrequest_timeout_ms = 3000\n\n{tables}"
            ),
            ..DaemonOptions::in_dir(data_dir)
        },
    )
}

fn wait_reason(hub: &Daemon, name: &str, reason: &str) -> Value {
    wait_for(&format!("{name} down with `{reason}`"), || {
        let host = hub.host(name);
        let error = host["last_error"].as_str().unwrap_or_default();
        (host["status"] == "down" && error.contains(reason)).then_some(host)
    })
}

/// A `/proc/<pid>/status` field, in KiB.
fn proc_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// CPU time the process used (user + system), from `/proc/<pid>/stat`.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, after) = stat.rsplit_once(") ").unwrap();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf(3) with a valid name.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

/// The squatter's side: a server at the peer's address that cannot prove
/// it holds the peer's token (a wrong proof, or none at all, as a listener
/// that took a port the peer left would answer) gets no request with the
/// token, and the peer is down saying why.
#[test]
fn a_peer_that_cannot_prove_the_token_never_receives_it() {
    let liar = FakePeer::start(|request, stream| {
        if honest(request, stream, false).is_none() {
            respond(stream, "200 OK", "", "{}");
        }
    });
    let squatter = FakePeer::start(|request, stream| match request.path.as_str() {
        "/version" => respond(stream, "200 OK", "", r#"{"version":"0.1.0"}"#),
        _ => respond(stream, "404 Not Found", "", "{}"),
    });
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let tables = format!("{}{}", liar.table("liar"), squatter.table("squatter"));
    let hub = start_hub(&tmux, &tables, dir.path());
    // The hub has tried each at least twice (a reconnection too), and
    // each is past `connecting`.
    wait_for("each tried twice", || {
        let tries = |p: &FakePeer| {
            let seen = p.seen();
            seen.iter()
                .filter(|s| s.path == "/version" || s.path.contains("proof"))
                .count()
        };
        let settled = ["liar", "squatter"]
            .iter()
            .all(|n| hub.host(n)["status"] != "connecting");
        (tries(&liar) >= 2 && tries(&squatter) >= 2 && settled).then_some(())
    });
    // A caller's request for its session is refused here, not forwarded.
    let (status, body) = hub.get("/v1/sessions/liar%2Fsess_1/snapshot");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    for (name, peer) in [("liar", &liar), ("squatter", &squatter)] {
        let seen = peer.seen();
        let carrying: Vec<&Seen> = seen.iter().filter(|s| s.authorization.is_some()).collect();
        assert!(
            carrying.is_empty(),
            "{name} received the token: {carrying:?}"
        );
        assert!(
            seen.iter().all(|s| !s.path.starts_with("/v1/sessions")),
            "{name}: {seen:?}"
        );
    }
    assert!(!hub.log().contains(PEER_TOKEN));
    for name in ["liar", "squatter"] {
        wait_reason(&hub, name, "did not prove it holds the token");
    }
}

/// Flooding peers holding the token (compromised): an endless line,
/// `data:` lines with no blank line, a session list with no end. Each is
/// cut off at its limit and marked down with the reason, again at every
/// retry, while the hub's memory and CPU stay within a bound.
#[test]
fn flooding_peers_leave_the_hub_bounded() {
    let endless = FakePeer::start(|request, stream| {
        if honest(request, stream, true).is_none() {
            flood(stream, SSE_HEAD, b"data: ", b"x");
        }
    });
    let no_blank = FakePeer::start(|request, stream| {
        if honest(request, stream, true).is_none() {
            let line = b"data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n";
            flood(stream, SSE_HEAD, b"", line);
        }
    });
    let huge_list = FakePeer::start(|request, stream| {
        if request.path == "/v1/sessions" {
            let item = format!("{},", summary("sess_1"));
            let head = "content-type: application/json";
            flood(stream, head, b"{\"sessions\":[", item.as_bytes());
        } else if honest(request, stream, true).is_none() {
            hold_stream(stream, "");
        }
    });
    let tables = [
        endless.table("endless"),
        no_blank.table("noblank"),
        huge_list.table("hugelist"),
    ]
    .concat();
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let hub = start_hub(&tmux, &tables, dir.path());
    let started = Instant::now();
    let reasons = [
        ("endless", "event stream: a line longer than 8388608 bytes"),
        (
            "noblank",
            "event stream: a message longer than 8388608 bytes",
        ),
        ("hugelist", "list: answered more than 16777216 bytes"),
    ];
    for (name, reason) in reasons {
        let deadline = started + common::PATIENCE;
        loop {
            let host = hub.host(name);
            let error = host["last_error"].as_str().unwrap_or_default();
            if host["status"] == "down" && error.contains(reason) {
                break;
            }
            // Said in the failure, as a measure of the code it fails on.
            assert!(
                Instant::now() < deadline,
                "{name} not down with `{reason}` after {:?}: {host}; hub CPU {:?}, peak RSS {} MiB",
                started.elapsed(),
                cpu_time(hub.pid()),
                proc_kib(hub.pid(), "VmHWM:") / 1024
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // And again: each is retried (at the slowest backoff) and cut off
    // again, so the bounds hold for a peer that keeps at it.
    let floods = |p: &FakePeer, path: &str| {
        let seen = p.seen();
        seen.iter().filter(|s| s.path.starts_with(path)).count()
    };
    wait_for("each flooding peer cut off three times", || {
        let thrice = floods(&endless, "/v1/events") >= 3
            && floods(&no_blank, "/v1/events") >= 3
            && floods(&huge_list, "/v1/sessions") >= 3;
        thrice.then_some(())
    });
    let took = started.elapsed();
    for (name, reason) in reasons {
        let error = hub.host(name)["last_error"].to_string();
        assert!(error.contains(reason), "{name}: {error}");
    }
    // Since the hub started, its start included.
    let cpu = cpu_time(hub.pid());
    let peak_mib = proc_kib(hub.pid(), "VmHWM:") / 1024;
    let rss_mib = proc_kib(hub.pid(), "VmRSS:") / 1024;
    println!(
        "three flooding peers cut off three times each in {took:?}: hub CPU {cpu:?} in all, peak RSS {peak_mib} MiB, RSS now {rss_mib} MiB"
    );
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "peak RSS {peak_mib} MiB");
    assert!(cpu < CPU_BOUND, "CPU {cpu:?} in {took:?}");
}

/// The hub's peak RSS with three flooding peers: its own ~30 MiB, plus
/// what one bounded answer or event per peer costs while it is read (and
/// what the allocator keeps of it afterwards). Measured: 60 to 130 MiB.
const PEAK_RSS_BOUND_MIB: u64 = 200;
/// CPU the hub may spend from its start until every flooding peer was cut
/// off three times (about 10 s: two retries at the 5 s backoff).
/// Measured: under 1 s.
const CPU_BOUND: Duration = Duration::from_secs(5);

/// A peer that answers a forwarded request with a redirect, or with more
/// than an answer may hold: an error to the caller, nothing fetched where
/// the redirect points, the peer marked down.
#[test]
fn a_forwarded_request_follows_no_redirect_and_reads_no_flood() {
    let elsewhere =
        FakePeer::start(|_, stream| respond(stream, "200 OK", "", r#"{"secret":"elsewhere"}"#));
    let elsewhere_url = elsewhere.base.clone();
    let redirect = FakePeer::start(move |request, stream| {
        if request.path.starts_with("/v1/sessions/sess_1/") {
            let location = format!("location: {elsewhere_url}/stolen\r\n");
            respond(stream, "307 Temporary Redirect", &location, "");
        } else if honest(request, stream, true).is_none() {
            hold_stream(stream, "");
        }
    });
    let big = FakePeer::start(move |request, stream| {
        if request.path.starts_with("/v1/sessions/sess_1/") {
            let head = "content-type: application/json";
            flood(
                stream,
                head,
                b"{\"lines\":[",
                b"\"xxxxxxxxxxxxxxxxxxxxxxxxxxxx\",",
            );
        } else if honest(request, stream, true).is_none() {
            hold_stream(stream, "");
        }
    });
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let tables = format!("{}{}", redirect.table("redirect"), big.table("big"));
    let hub = start_hub(&tmux, &tables, dir.path());
    for name in ["redirect", "big"] {
        wait_for(&format!("{name} up"), || {
            (hub.host(name)["status"] == "up").then_some(())
        });
    }
    let (status, body) = hub.get("/v1/sessions/redirect%2Fsess_1/snapshot");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("redirect (HTTP 307"), "{body}");
    assert!(!body.to_string().contains("elsewhere"), "{body}");
    wait_reason(&hub, "redirect", "redirect (HTTP 307 Temporary Redirect)");
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());

    let (status, body) = hub.get("/v1/sessions/big%2Fsess_1/scrollback");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("more than 16777216 bytes"), "{body}");
    wait_reason(&hub, "big", "more than 16777216 bytes");
}

/// A peer's events must name its own sessions (bare `sess_N`): one naming
/// `real/sess_1` (another host's session on the hub) or `../sess_1` is
/// dropped and counted, never recorded or shown.
#[test]
fn events_naming_another_hosts_sessions_are_dropped_and_counted() {
    let foreign = FakePeer::start(|request, stream| {
        if honest(request, stream, true).is_none() {
            let events = [
                event(1, "session_state", "real/sess_1"),
                event(2, "session_detached", "real/sess_1"),
                event(3, "session_state", "sess_1"),
                event(4, "session_state", "../sess_1"),
            ];
            hold_stream(stream, &events.concat());
        }
    });
    let tmux = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let hub = start_hub(&tmux, &foreign.table("foreign"), dir.path());
    let at_cursor = wait_for("foreign's events taken", || {
        let host = hub.host("foreign");
        (host["cursor"] == 4).then_some(host)
    });
    let (_, page) = hub.get("/v1/events?format=json&since=0&limit=10000");
    let events = page["events"].as_array().unwrap();
    let ids: Vec<&str> = events
        .iter()
        .filter(|e| e["host"] == "foreign")
        .filter_map(|e| e["session_id"].as_str())
        .collect();
    assert_eq!(ids, ["foreign/sess_1"], "{page}");
    assert!(!page.to_string().contains("real/sess_1"), "{page}");
    assert_eq!(at_cursor["refused"], 3, "{at_cursor}");
    assert_eq!(hub.metric("tmuxd_fleet_refused_events_total"), Some(3.0));
}
