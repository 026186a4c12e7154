//! The fleet in the API: `GET /v1/hosts`, and the layer that hands a
//! request for a peer's session (`HOST/sess_N`, the slash encoded as `%2F`)
//! to that peer, after this daemon's own guard let it through: a caller
//! reaches on a peer only what its credential reaches here, and the peer
//! sees the hub's token for it, which no response carries.
//!
//! The path asked of the peer is built from typed parts (the session id,
//! then each further segment percent-encoded), so nothing a caller puts in
//! a segment (`..`, `\`, `%2e%2e`, `%2f`) changes which path the peer
//! serves. Answers are read within a limit; a redirect is an error.

use axum::Json;
use axum::body::Body;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde::Serialize;
use serde_json::Value;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::AppState;
use super::auth::{Access, AuthenticatedSocket, PendingSocket};
use super::error::ApiError;
use super::ws::{CLOSE_TRY_LATER, close};
use crate::fleet::bounded::{MAX_ANSWER_BYTES, ReadError, read_capped};
use crate::fleet::fanin::qualify;
use crate::fleet::{FleetError, HostView, Peer};
use crate::id::{HostName, SessionId};
use crate::wire::ErrorCode;

/// `GET /v1/hosts`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct HostList {
    pub hosts: Vec<HostView>,
}

#[utoipa::path(get, path = "/v1/hosts", tag = "fleet", operation_id = "list_hosts",
    responses((status = 200, description = "Each `[[fleet.peers]]` peer: status (`up`, `down`, `connecting`), since when, the last error, the last check's round trip, its version and session count", body = HostList)))]
pub async fn hosts(State(state): State<AppState>) -> Json<HostList> {
    Json(HostList {
        hosts: state.fleet.hosts(),
    })
}

#[utoipa::path(get, path = "/v1/hosts/{host}/server", tag = "fleet", operation_id = "host_server",
    params(("host" = String, Path, example = "gpu1", description = "A `[[fleet.peers]]` name")),
    responses(
        (status = 200, description = "The peer's `GET /v1/server` (its tmux binary and socket, for `tmuxd attach HOST/...` over ssh)", body = crate::wire::ServerInfo),
        (status = 404, description = "`not_found`: no such peer", body = crate::wire::ErrorBody),
        (status = 503, description = "`peer_unavailable`", body = crate::wire::ErrorBody),
        (status = 504, description = "`peer_timeout`", body = crate::wire::ErrorBody)))]
pub async fn host_server(
    State(state): State<AppState>,
    axum::extract::Path(host): axum::extract::Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let host: HostName = host
        .parse()
        .map_err(|e: crate::id::IdError| ApiError::not_found(e.to_string()))?;
    let peer = state.fleet.peer(&host)?.clone();
    forward(state, peer, "/v1/server".to_owned(), request).await
}

impl From<FleetError> for ApiError {
    fn from(error: FleetError) -> Self {
        let code = match &error {
            FleetError::UnknownHost(_) => ErrorCode::NotFound,
            FleetError::Down { .. }
            | FleetError::Unreachable { .. }
            | FleetError::NotYetProven { .. }
            | FleetError::BadAnswer { .. } => ErrorCode::PeerUnavailable,
            FleetError::Timeout { .. } => ErrorCode::PeerTimeout,
        };
        ApiError::new(code, error.to_string())
    }
}

/// A session route naming a peer's session: the host, the session there,
/// and the path the peer serves it at.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: HostName,
    path: String,
}

/// What the proxy layer makes of a session route's path.
#[derive(Debug, PartialEq, Eq)]
enum Routed {
    /// Not a peer's session: this daemon's handlers answer.
    Here,
    /// A peer's.
    Peer(Target),
    /// A peer's, with a segment no peer path may hold.
    Refused(String),
}

/// `/v1/sessions/HOST%2Fsess_N[/rest]` → (`HOST`, `/v1/sessions/sess_N[/rest]`),
/// the rest rebuilt segment by segment: decoded, refused if empty, `.` or
/// `..`, and encoded again keeping only unreserved characters.
fn target(path: &str) -> Routed {
    let Some(rest) = path.strip_prefix("/v1/sessions/") else {
        return Routed::Here;
    };
    let mut segments = rest.split('/');
    let first = segments.next().unwrap_or_default();
    let Some(decoded) = percent_decode(first) else {
        return Routed::Here;
    };
    let Some((host, session)) = decoded.split_once('/') else {
        return Routed::Here;
    };
    let (Ok(host), Ok(session)) = (host.parse::<HostName>(), session.parse::<SessionId>()) else {
        return Routed::Here;
    };
    let mut peer_path = format!("/v1/sessions/{session}");
    for segment in segments {
        match percent_decode(segment).as_deref() {
            None | Some("" | "." | "..") => {
                return Routed::Refused(format!("`{segment}` is not a path segment a peer serves"));
            }
            Some(segment) => {
                peer_path.push('/');
                peer_path.push_str(&percent_encode(segment));
            }
        }
    }
    Routed::Peer(Target {
        host,
        path: peer_path,
    })
}

/// Every byte but the unreserved ones (RFC 3986: letters, digits, `-._~`)
/// is encoded: a segment stays one segment, whatever it holds.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn percent_encode(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// `%XX` decoding of one path segment; `None` when a `%` is not followed
/// by two hex digits (the crate would keep it as text) or not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let escapes = text
        .match_indices('%')
        .map(|(at, _)| text.get(at + 1..at + 3));
    let well_formed = escapes
        .into_iter()
        .all(|hex| hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())));
    if !well_formed {
        return None;
    }
    let decoded = percent_decode_str(text).decode_utf8().ok()?;
    Some(decoded.into_owned())
}

/// The layer on every session route: a peer's session goes to the peer,
/// anything else to the handler.
pub async fn proxy(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let target = match target(request.uri().path()) {
        Routed::Here => return next.run(request).await,
        Routed::Refused(why) => return ApiError::bad_request(why).into_response(),
        Routed::Peer(target) => target,
    };
    let is_socket = target.path.ends_with("/stream") || target.path.ends_with("/screen");
    let path_and_query = match request.uri().query() {
        Some(query) => format!("{}?{query}", target.path),
        None => target.path,
    };
    let served = match is_socket {
        true => socket(state, target.host, path_and_query, request).await,
        false => match state.fleet.peer(&target.host) {
            Ok(peer) => forward(state.clone(), peer.clone(), path_and_query, request).await,
            Err(e) => Err(e.into()),
        },
    };
    served.unwrap_or_else(IntoResponse::into_response)
}

/// Headers a forwarded request keeps; the rest (the caller's credential
/// first) stay at the hub.
const FORWARDED_HEADERS: [header::HeaderName; 3] = [
    header::CONTENT_TYPE,
    header::ACCEPT,
    header::HeaderName::from_static("last-event-id"),
];

/// One HTTP request, one hop.
async fn forward(
    state: AppState,
    peer: std::sync::Arc<Peer>,
    path_and_query: String,
    request: Request,
) -> Result<Response, ApiError> {
    peer.check_up()?;
    let headers = request.headers().clone();
    let method = request.method().clone();
    // Read as any handler's body is: within `http.max_body_bytes`.
    let body = axum::body::Bytes::from_request(request, &state)
        .await
        .map_err(|rejection| match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                ErrorCode::PayloadTooLarge,
                "request body is larger than http.max_body_bytes",
            ),
            _ => ApiError::bad_request(format!("cannot read the body: {}", rejection.body_text())),
        })?;
    let mut timeout = state.fleet.request_timeout;
    if path_and_query.contains("/wait") {
        // A wait holds its answer up to its own timeout: the hub waits that long too.
        timeout += std::time::Duration::from_millis(wait_timeout_ms(&body));
    }
    let method = reqwest::Method::from_bytes(method.as_str().as_bytes())
        .map_err(|_| ApiError::bad_request("unsupported method"))?;
    let url = peer_url(&peer, &path_and_query)?;
    let mut outgoing = peer
        .client()
        .request(method, url)
        .header(reqwest::header::AUTHORIZATION, peer.authorization())
        .timeout(timeout);
    for name in FORWARDED_HEADERS {
        if let Some(value) = headers.get(&name) {
            outgoing = outgoing.header(name.as_str(), value.as_bytes());
        }
    }
    if !body.is_empty() {
        outgoing = outgoing.body(body);
    }
    let response = outgoing
        .send()
        .await
        .map_err(|e| send_error(&peer, e, timeout))?;
    if response.status().is_redirection() {
        let error = format!(
            "answered a forwarded request with a redirect (HTTP {}), which the hub never follows",
            response.status()
        );
        return Err(misbehaved(&peer, error).into());
    }
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .cloned();
    let bytes = match read_capped(response, MAX_ANSWER_BYTES).await {
        Ok(bytes) => bytes,
        Err(ReadError::TooLarge(limit)) => {
            let error = format!("answered a forwarded request with more than {limit} bytes");
            return Err(misbehaved(&peer, error).into());
        }
        Err(ReadError::Request(e)) => return Err(send_error(&peer, e, timeout)),
    };
    let is_json = content_type
        .as_ref()
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let bytes = match is_json {
        true => match serde_json::from_slice::<Value>(&bytes) {
            Ok(mut value) => {
                if qualify(&peer.name, &mut value) > 0 {
                    peer.refuse(&state.metrics);
                }
                serde_json::to_vec(&value).unwrap_or_default().into()
            }
            Err(_) => bytes,
        },
        false => bytes,
    };
    let mut answer = Response::new(Body::from(bytes));
    *answer.status_mut() = status;
    if let Some(value) = content_type.and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok()) {
        answer.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    Ok(answer)
}

/// The peer's URL for a path built by [`target`] (or a constant one):
/// parsed, and refused unless its path is exactly the one built, so no
/// normalization (`..`, `\`) can make it another.
fn peer_url(peer: &Peer, path_and_query: &str) -> Result<reqwest::Url, ApiError> {
    let path = path_and_query.split('?').next().unwrap_or_default();
    match reqwest::Url::parse(&peer.url_for(path_and_query)) {
        Ok(url) if url.path() == path => Ok(url),
        _ => Err(ApiError::bad_request(format!(
            "`{path}` is not a path a peer serves"
        ))),
    }
}

/// Marks the peer down for `error` and says so to the caller.
fn misbehaved(peer: &Peer, error: String) -> FleetError {
    peer.misbehaved(error.clone());
    FleetError::BadAnswer {
        host: peer.name.clone(),
        error,
    }
}

/// A wait body's `timeout_ms`, else the default wait (30 s).
fn wait_timeout_ms(body: &[u8]) -> u64 {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("timeout_ms").and_then(Value::as_u64))
        .unwrap_or(30_000)
        .min(3_600_000)
}

fn send_error(peer: &Peer, error: reqwest::Error, after: std::time::Duration) -> ApiError {
    let host = peer.name.clone();
    let error = match error.is_timeout() {
        true => FleetError::Timeout { host, after },
        false if error.is_connect() => FleetError::Unreachable {
            host,
            error: "cannot connect".to_owned(),
        },
        false => FleetError::Unreachable {
            host,
            error: "the connection failed".to_owned(),
        },
    };
    error.into()
}

/// The stream and screen WebSockets: authenticated here as any socket,
/// then joined to the same socket on the peer. As for a local session, a
/// caller with a bearer header learns at once that the host is unknown or
/// down; one that authenticates by first message learns it only after, so
/// a stranger learns nothing of the fleet.
async fn socket(
    state: AppState,
    host: HostName,
    path_and_query: String,
    request: Request,
) -> Result<Response, ApiError> {
    let (mut parts, _) = request.into_parts();
    let pending = PendingSocket::from_request_parts(&mut parts, &state).await?;
    let fleet = state.fleet.clone();
    let reachable = move || -> Result<std::sync::Arc<Peer>, FleetError> {
        let peer = fleet.peer(&host)?.clone();
        peer.check_up()?;
        Ok(peer)
    };
    let known = match pending.is_verified() {
        true => Some(reachable()?),
        false => None,
    };
    let (policy, metrics) = (state.auth.clone(), state.metrics.clone());
    pending.upgrade(policy, metrics, move |socket| async move {
        let peer = match known.map_or_else(reachable, Ok) {
            Ok(peer) => peer,
            Err(e) => return close(socket.into_inner(), CLOSE_TRY_LATER, &e.to_string()).await,
        };
        join(socket, peer, path_and_query).await;
    })
}

/// Copies frames both ways until either side closes. A read-token
/// caller's input never reaches the peer (which sees the hub's token):
/// only pings pass, anything else is answered with an error here.
async fn join(socket: AuthenticatedSocket, peer: std::sync::Arc<Peer>, path_and_query: String) {
    let access = socket.access();
    let client = socket.into_inner();
    let request = peer
        .ws_url_for(&path_and_query)
        .into_client_request()
        .map(|mut request| {
            if let Ok(value) = peer.authorization().parse() {
                request.headers_mut().insert(header::AUTHORIZATION, value);
            }
            request
        });
    let connected = match request {
        Ok(request) => peer.connect_socket(request).await,
        Err(e) => Err(e),
    };
    let upstream = match connected {
        Ok(upstream) => upstream,
        Err(e) => {
            let reason = match e {
                tungstenite::Error::Http(response) => {
                    format!("host `{}` refused: HTTP {}", peer.name, response.status())
                }
                _ => format!("host `{}` could not be reached", peer.name),
            };
            return close(client, CLOSE_TRY_LATER, &reason).await;
        }
    };
    let (mut client_tx, mut client_rx) = client.split();
    let (mut peer_tx, mut peer_rx) = upstream.split();
    loop {
        tokio::select! {
            from_client = client_rx.next() => {
                let Some(Ok(message)) = from_client else {
                    let _ = peer_tx.close().await;
                    return;
                };
                if access != Access::ReadWrite && !allowed_read_only(&message) {
                    let refusal = r#"{"type":"error","message":"the read token cannot send input"}"#;
                    if client_tx.send(Message::Text(refusal.into())).await.is_err() {
                        return;
                    }
                    continue;
                }
                let closing = matches!(message, Message::Close(_));
                if peer_tx.send(to_peer(message)).await.is_err() || closing {
                    return;
                }
            }
            from_peer = peer_rx.next() => {
                let Some(Ok(message)) = from_peer else {
                    let _ = client_tx.close().await;
                    return;
                };
                let Some(message) = from_peer_message(message) else { continue };
                let closing = matches!(message, Message::Close(_));
                if client_tx.send(message).await.is_err() || closing {
                    return;
                }
            }
        }
    }
}

/// What a read-token caller may send through: pings, pongs, a close, and
/// the text `{"type":"ping"}`.
fn allowed_read_only(message: &Message) -> bool {
    match message {
        Message::Ping(_) | Message::Pong(_) | Message::Close(_) => true,
        Message::Binary(_) => false,
        Message::Text(text) => serde_json::from_str::<Value>(text.as_str())
            .ok()
            .is_some_and(|v| v.get("type").and_then(Value::as_str) == Some("ping")),
    }
}

fn to_peer(message: Message) -> tungstenite::Message {
    match message {
        Message::Text(text) => tungstenite::Message::text(text.as_str()),
        Message::Binary(bytes) => tungstenite::Message::Binary(bytes),
        Message::Ping(bytes) => tungstenite::Message::Ping(bytes),
        Message::Pong(bytes) => tungstenite::Message::Pong(bytes),
        Message::Close(frame) => {
            tungstenite::Message::Close(frame.map(|f| tungstenite::protocol::CloseFrame {
                code: f.code.into(),
                reason: f.reason.as_str().into(),
            }))
        }
    }
}

fn from_peer_message(message: tungstenite::Message) -> Option<Message> {
    Some(match message {
        tungstenite::Message::Text(text) => Message::Text(Utf8Bytes::from(text.as_str())),
        tungstenite::Message::Binary(bytes) => Message::Binary(bytes),
        tungstenite::Message::Ping(bytes) => Message::Ping(bytes),
        tungstenite::Message::Pong(bytes) => Message::Pong(bytes),
        tungstenite::Message::Close(frame) => Message::Close(frame.map(|f| CloseFrame {
            code: f.code.into(),
            reason: Utf8Bytes::from(f.reason.as_str()),
        })),
        tungstenite::Message::Frame(_) => return None,
    })
}

/// One listed session: this daemon's, serialized straight from its type,
/// or a peer's as the hub keeps it.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Listed {
    Local(Box<crate::wire::SessionSummary>),
    Peer(Value),
}

/// The body of `GET /v1/sessions`.
#[derive(Serialize)]
pub struct MergedList {
    sessions: Vec<Listed>,
}

/// The merged `GET /v1/sessions`: this daemon's sessions, then each
/// peer's as last known, or only `host`'s.
pub fn merged_list(
    state: &AppState,
    local: Vec<Listed>,
    host: Option<&str>,
) -> Result<MergedList, ApiError> {
    let peers = |host: Option<&HostName>| state.fleet.sessions(host).into_iter().map(Listed::Peer);
    let sessions = match host {
        None => {
            let mut all = local;
            all.extend(peers(None));
            all
        }
        Some(host) => {
            let host: HostName = host
                .parse()
                .map_err(|e: crate::id::IdError| ApiError::bad_request(e.to_string()))?;
            state.fleet.peer(&host)?;
            peers(Some(&host)).collect()
        }
    };
    Ok(MergedList { sessions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_ids_are_found_in_session_paths() {
        // (path, host and path on the peer)
        let cases = [
            (
                "/v1/sessions/gpu1%2Fsess_3",
                Some(("gpu1", "/v1/sessions/sess_3")),
            ),
            (
                "/v1/sessions/gpu1%2fsess_3/snapshot",
                Some(("gpu1", "/v1/sessions/sess_3/snapshot")),
            ),
            (
                "/v1/sessions/build-2%2Fsess_10/input/queue/4",
                Some(("build-2", "/v1/sessions/sess_10/input/queue/4")),
            ),
            ("/v1/sessions/sess_3", None),
            ("/v1/sessions/sess_3/snapshot", None),
            ("/v1/sessions/gpu1%2Fbuild", None),
            ("/v1/sessions/gpu_1%2Fsess_3", None),
            ("/v1/sessions/gpu1%2", None),
            ("/v1/sessions", None),
            ("/v1/events", None),
        ];
        for (path, want) in cases {
            let got = match target(path) {
                Routed::Peer(t) => Some((t.host.to_string(), t.path)),
                Routed::Here => None,
                Routed::Refused(why) => panic!("{path}: {why}"),
            };
            let want = want.map(|(h, p)| (h.to_owned(), p.to_owned()));
            assert_eq!(got, want, "{path}");
        }
    }

    #[test]
    fn no_segment_changes_which_path_the_peer_serves() {
        // (path on the hub, path asked of the peer; None: refused)
        let cases = [
            ("/v1/sessions/a%2Fsess_1/..", None),
            ("/v1/sessions/a%2Fsess_1/%2e%2e", None),
            ("/v1/sessions/a%2Fsess_1/%2E.", None),
            ("/v1/sessions/a%2Fsess_1/.", None),
            ("/v1/sessions/a%2Fsess_1/input/queue/", None),
            ("/v1/sessions/a%2Fsess_1//x", None),
            ("/v1/sessions/a%2Fsess_1/input/queue/%zz", None),
            (
                "/v1/sessions/a%2Fsess_1/input/queue/..%5C..%5Cserver",
                Some("/v1/sessions/sess_1/input/queue/..%5C..%5Cserver"),
            ),
            (
                "/v1/sessions/a%2Fsess_1/input/queue/..\\..\\server",
                Some("/v1/sessions/sess_1/input/queue/..%5C..%5Cserver"),
            ),
            (
                "/v1/sessions/a%2Fsess_1/input/queue/%2e%2e%2f%2e%2e%2fserver",
                Some("/v1/sessions/sess_1/input/queue/..%2F..%2Fserver"),
            ),
            (
                "/v1/sessions/a%2Fsess_1/input/queue/4",
                Some("/v1/sessions/sess_1/input/queue/4"),
            ),
        ];
        let base = "http://127.0.0.1:7420";
        for (path, want) in cases {
            match (target(path), want) {
                (Routed::Refused(_), None) => {}
                (Routed::Peer(t), Some(want)) => {
                    assert_eq!(t.path, want, "{path}");
                    let url = reqwest::Url::parse(&format!("{base}{}", t.path)).unwrap();
                    assert_eq!(url.path(), want, "{path}: the URL keeps the path");
                }
                (got, want) => panic!("{path}: {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn read_tokens_send_pings_only() {
        let cases = [
            (Message::Text(r#"{"type":"ping"}"#.into()), true),
            (
                Message::Text(r#"{"type":"input","text":"x"}"#.into()),
                false,
            ),
            (
                Message::Text(r#"{"type":"resize","cols":1,"rows":1}"#.into()),
                false,
            ),
            (Message::Text("garbage".into()), false),
            (Message::Binary(vec![1u8].into()), false),
            (Message::Ping(vec![].into()), true),
        ];
        for (message, allowed) in cases {
            assert_eq!(allowed_read_only(&message), allowed, "{message:?}");
        }
    }
}
