//! Requests exactly as written: raw HTTP/1.1 over a TCP stream, so nothing
//! adds or drops a header or a connection behind a test's back; and
//! WebSocket helpers with an optional bearer header.

#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;
use tungstenite::Message;

use super::common::PATIENCE;

/// A new connection to a daemon at `base` (`http://ADDR:PORT`).
pub fn connect(base: &str) -> TcpStream {
    TcpStream::connect(base.strip_prefix("http://").unwrap()).unwrap()
}

/// A new connection from loopback address `from` (any of 127.0.0.0/8): the
/// daemon counts failed authentications per client address, so a test of
/// access decisions (not of that backoff) sends each wrong guess from an
/// address of its own.
pub fn connect_from(base: &str, from: std::net::Ipv4Addr) -> TcpStream {
    let to: std::net::SocketAddr = base.strip_prefix("http://").unwrap().parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&std::net::SocketAddr::from((from, 0)).into())
        .unwrap();
    socket.connect(&to.into()).unwrap();
    socket.into()
}

/// A loopback address not used before in this test process.
pub fn fresh_loopback() -> std::net::Ipv4Addr {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(2);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::net::Ipv4Addr::from(0x7f00_0000 | (n & 0x00ff_ffff))
}

/// Writes one request: a `Host` unless `headers` has one, `Content-Length`
/// always, and a JSON `body` if given.
pub fn send(
    stream: &mut TcpStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request += "Host: 127.0.0.1\r\n";
    }
    for (name, value) in headers {
        request += &format!("{name}: {value}\r\n");
    }
    if !body.is_empty() {
        request += "Content-Type: application/json\r\n";
    }
    request += &format!("Content-Length: {}\r\n\r\n{body}", body.len());
    stream.write_all(request.as_bytes()).unwrap();
}

/// A GET; `close` asks the server to end the connection after answering.
pub fn send_get(stream: &mut TcpStream, path: &str, close: bool) {
    let connection = if close { "close" } else { "keep-alive" };
    send(stream, "GET", path, &[("Connection", connection)], None);
}

/// A response's status and head, or `None` if none starts within `wait`.
pub fn read_head(stream: &mut TcpStream, wait: Duration) -> Option<(u16, String)> {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            Ok(_) => panic!("closed before a response: {head:?}"),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                assert!(head.is_empty(), "a response stalled midway");
                return None;
            }
            Err(e) => panic!("{e}"),
        }
    }
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let head = String::from_utf8(head).unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Some((status, head))
}

/// A response's status and body (by Content-Length; none after a 101), or
/// `None` if none starts within `wait`.
pub fn read_response(stream: &mut TcpStream, wait: Duration) -> Option<(u16, String)> {
    let (status, head) = read_head(stream, wait)?;
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; if status == 101 { 0 } else { length }];
    stream.read_exact(&mut body).unwrap();
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}

/// One request on a fresh connection and its answer.
pub fn exchange(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, String) {
    exchange_on(connect(base), method, path, headers, body)
}

/// `exchange` from a loopback address of its own (see `connect_from`).
pub fn exchange_from_fresh_address(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, String) {
    exchange_on(
        connect_from(base, fresh_loopback()),
        method,
        path,
        headers,
        body,
    )
}

fn exchange_on(
    mut stream: TcpStream,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> (u16, String) {
    send(&mut stream, method, path, headers, body);
    read_response(&mut stream, PATIENCE).expect("the daemon answers")
}

/// Waits for the server to close `stream`; returns how long that took.
pub fn wait_closed(stream: &mut TcpStream) -> Duration {
    let started = Instant::now();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut buffer = [0u8; 64];
    match stream.read(&mut buffer) {
        Ok(0) => {}
        Ok(n) => panic!(
            "expected a close, got {:?}",
            String::from_utf8_lossy(&buffer[..n])
        ),
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        Err(e) => panic!("not closed within {PATIENCE:?}: {e}"),
    }
    started.elapsed()
}

/// A WebSocket request for `path`, with a bearer header if given.
pub fn ws_request(base: &str, path: &str, bearer: Option<&str>) -> tungstenite::http::Request<()> {
    use tungstenite::client::IntoClientRequest;
    let url = base.replace("http://", "ws://") + path;
    let mut request = url.into_client_request().unwrap();
    if let Some(token) = bearer {
        let value = format!("Bearer {token}").parse().unwrap();
        request.headers_mut().insert("Authorization", value);
    }
    request
}

/// Reads frames until a text one, parsed as JSON.
pub fn next_json(socket: &mut tungstenite::WebSocket<impl Read + Write>) -> Value {
    loop {
        match socket.read().expect("the socket stays open") {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            Message::Close(frame) => panic!("closed: {frame:?}"),
            _ => {}
        }
    }
}

/// The close frame's reason, skipping anything sent before it.
pub fn close_reason(socket: &mut tungstenite::WebSocket<impl Read + Write>) -> String {
    loop {
        match socket.read() {
            Ok(Message::Close(Some(frame))) => return frame.reason.to_string(),
            Ok(Message::Close(None)) => return String::new(),
            Ok(_) => {}
            Err(e) => panic!("no close frame: {e}"),
        }
    }
}

/// Sends a JSON text frame.
pub fn send_json(socket: &mut tungstenite::WebSocket<impl Read + Write>, value: &Value) {
    socket
        .send(Message::Text(value.to_string().into()))
        .unwrap();
}
