//! The fleet in the API: `GET /v1/hosts`, and the layer that hands a
//! request for a peer's session (`HOST/sess_N`, the slash encoded as `%2F`)
//! to that peer, after this daemon's own guard let it through: a caller
//! reaches on a peer only what its credential reaches here, and the peer
//! sees the hub's token for it, which no response carries.
//!
//! Which route a request is comes from the route axum matched, and the
//! path asked of the peer is built from typed parts (the session id, a
//! queued input's number), so nothing a caller puts in a path (`..`, `\`,
//! `%2e%2e`, `%2f`) changes which path the peer serves. Answers are read
//! within a limit, as the route's answer type (`fleet::answers`); a
//! redirect is an error.

use axum::Json;
use axum::body::Body;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use axum::extract::{FromRequest, FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use serde::Serialize;
use serde_json::Value;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::auth::{Access, AuthenticatedSocket, PendingSocket};
use super::error::ApiError;
use super::state::AppState;
use super::ws::{CLOSE_TRY_LATER, close};
use crate::fleet::answers;
use crate::fleet::bounded::{MAX_ANSWER_BYTES, ReadError, read_capped};
use crate::fleet::{FleetError, HostView, Peer};
use crate::id::{FleetId, HostName, SessionId};
use crate::wire::{
    DeleteResponse, ErrorBody, ErrorCode, InputResponse, QueueCancelled, QueueList,
    ScrollbackResponse, ServerInfo, SessionEnvelope, SessionList, SessionSummary, ThoughtResponse,
    WaitRequest, WaitResponse,
};

/// `GET /v1/hosts`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct HostList {
    pub hosts: Vec<HostView>,
}

/// The fleet's peers.
///
/// `{"hosts": [{"name", "url", "transport", "ssh", "status", "since",
/// "last_error", "rtt_ms", "version", "sessions", "cursor", "ssh_error"}]}`:
/// each `[[fleet.peers]]` peer; `status` is `connecting`, `up` or `down`
/// (`docs/guide.md#fleet-many-machines`).
#[utoipa::path(get, path = "/v1/hosts", tag = "fleet", operation_id = "list_hosts",
    responses((status = 200, description = "Each `[[fleet.peers]]` peer: status (`up`, `down`, `connecting`), since when, the last error, the last check's round trip, its version and session count", body = HostList)))]
pub async fn hosts(State(state): State<AppState>) -> Json<HostList> {
    Json(HostList {
        hosts: state.fleet.hosts(),
    })
}

/// A peer's tmux.
///
/// That peer's `GET /v1/server`: what `tmuxd attach HOST/...` runs over ssh.
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
    let forwarded = Forwarded {
        peer: state.fleet.peer(&host)?.clone(),
        path_and_query: "/v1/server".to_owned(),
        served: answers::serve::<ServerInfo>,
        waits: false,
    };
    forward(state, forwarded, request).await
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

/// A session's route, as the proxy forwards it: known from the route axum
/// matched (its method and path template), never from the request's path
/// text. Each says what the peer serves it at and what it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SessionRoute {
    Get,
    Delete,
    Snapshot,
    Scrollback,
    Queue,
    CancelQueued,
    Input,
    Resize,
    Wait,
    Thought,
    Stream,
    Screen,
    Answer,
}

impl SessionRoute {
    /// The session route `template` is for `method` (HEAD as GET), if it
    /// is one.
    fn matched(method: &Method, template: &str) -> Option<SessionRoute> {
        use SessionRoute::*;
        let rest = template.strip_prefix("/v1/sessions/{id}")?;
        let method = match *method {
            Method::HEAD => Method::GET,
            ref method => method.clone(),
        };
        let route = match (method, rest) {
            (Method::GET, "") => Get,
            (Method::DELETE, "") => Delete,
            (Method::GET, "/snapshot") => Snapshot,
            (Method::GET, "/scrollback") => Scrollback,
            (Method::GET, "/input/queue") => Queue,
            (Method::DELETE, "/input/queue/{n}") => CancelQueued,
            (Method::POST, "/input") => Input,
            (Method::POST, "/resize") => Resize,
            (Method::POST, "/wait") => Wait,
            (Method::PUT, "/thought") => Thought,
            (Method::GET, "/stream") => Stream,
            (Method::GET, "/screen") => Screen,
            (Method::POST, "/answer") => Answer,
            _ => return None,
        };
        Some(route)
    }

    /// Its path on the peer, for `session` there (and the queued input
    /// `item`): built from typed parts, so nothing a caller writes in the
    /// path reaches the peer as a path.
    fn peer_path(self, session: SessionId, item: u64) -> String {
        use SessionRoute::*;
        let rest = match self {
            Get | Delete => "",
            Snapshot => "/snapshot",
            Scrollback => "/scrollback",
            Queue => "/input/queue",
            CancelQueued => return format!("/v1/sessions/{session}/input/queue/{item}"),
            Input => "/input",
            Resize => "/resize",
            Wait => "/wait",
            Thought => "/thought",
            Stream => "/stream",
            Screen => "/screen",
            Answer => "/answer",
        };
        format!("/v1/sessions/{session}{rest}")
    }

    /// How the peer's successful answer is read: as this route's answer
    /// type. `None` for the sockets, whose frames `join` copies.
    fn served(self) -> Option<Served> {
        use SessionRoute::*;
        let served: Served = match self {
            Get | Resize => answers::serve::<SessionEnvelope>,
            Delete => answers::serve::<DeleteResponse>,
            Snapshot => answers::serve::<crate::wire::Snapshot>,
            Scrollback => answers::serve::<ScrollbackResponse>,
            Queue => answers::serve::<QueueList>,
            CancelQueued => answers::serve::<QueueCancelled>,
            Input => answers::serve::<InputResponse>,
            Wait => answers::serve::<WaitResponse>,
            Thought => answers::serve::<ThoughtResponse>,
            Answer => answers::serve::<crate::wire::AnswerResponse>,
            Stream | Screen => return None,
        };
        Some(served)
    }
}

/// How a forwarded request's successful answer is read and qualified.
type Served = fn(&HostName, &[u8]) -> Result<Vec<u8>, answers::Unfit>;

/// A request for a peer's session: which peer, its path there, and how
/// its answer is read.
#[derive(Debug, PartialEq, Eq)]
struct PeerTarget {
    host: HostName,
    route: SessionRoute,
    path: String,
}

/// Where a session route's parameters (`id`, percent-decoded by axum, and
/// `n`) send it: `Ok(None)` for this daemon's own session, or for an id
/// that names none (its handler says so).
fn peer_target(
    route: SessionRoute,
    id: &str,
    item: Option<&str>,
) -> Result<Option<PeerTarget>, ApiError> {
    let Ok(FleetId {
        host: Some(host),
        session,
    }) = id.parse::<FleetId>()
    else {
        return Ok(None);
    };
    let item = match (route, item) {
        (SessionRoute::CancelQueued, Some(item)) => item
            .parse()
            .map_err(|_| ApiError::bad_request(format!("{item:?} is not a queued input number")))?,
        _ => 0,
    };
    Ok(Some(PeerTarget {
        host,
        route,
        path: route.peer_path(session, item),
    }))
}

/// The layer on every session route: a peer's session goes to the peer,
/// anything else to the handler.
pub async fn proxy(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let route = parts
        .extensions
        .get::<MatchedPath>()
        .and_then(|matched| SessionRoute::matched(&parts.method, matched.as_str()));
    let params = RawPathParams::from_request_parts(&mut parts, &state).await;
    let request = Request::from_parts(parts, body);
    let (Some(route), Ok(params)) = (route, params) else {
        return next.run(request).await;
    };
    let param = |name: &str| params.iter().find(|(key, _)| *key == name).map(|(_, v)| v);
    let target = match peer_target(route, param("id").unwrap_or_default(), param("n")) {
        Ok(Some(target)) => target,
        Ok(None) => return next.run(request).await,
        Err(refused) => return refused.into_response(),
    };
    let path_and_query = match request.uri().query() {
        Some(query) => format!("{}?{query}", target.path),
        None => target.path,
    };
    let served = match (route.served(), state.fleet.peer(&target.host)) {
        (None, _) => socket(state, target.host, path_and_query, request).await,
        (Some(served), Ok(peer)) => {
            let forwarded = Forwarded {
                peer: peer.clone(),
                path_and_query,
                served,
                waits: route == SessionRoute::Wait,
            };
            forward(state.clone(), forwarded, request).await
        }
        (Some(_), Err(e)) => Err(e.into()),
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

/// A request to forward, and how its answer is read.
struct Forwarded {
    peer: std::sync::Arc<Peer>,
    /// Built by [`peer_target`] (or a constant), with the caller's query.
    path_and_query: String,
    served: Served,
    /// A wait holds its answer up to its own timeout: the hub waits that
    /// long too.
    waits: bool,
}

/// One HTTP request, one hop.
async fn forward(
    state: AppState,
    forwarded: Forwarded,
    request: Request,
) -> Result<Response, ApiError> {
    let Forwarded {
        peer,
        path_and_query,
        served,
        waits,
    } = forwarded;
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
    if waits {
        timeout += std::time::Duration::from_millis(wait_timeout_ms(&body));
    }
    let head = method == Method::HEAD;
    let method = reqwest::Method::from_bytes(method.as_str().as_bytes())
        .map_err(|_| ApiError::bad_request("unsupported method"))?;
    let url = reqwest::Url::parse(&peer.url_for(&path_and_query))
        .map_err(|e| ApiError::bad_request(format!("not a URL a peer serves: {e}")))?;
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
    let bytes = match read_capped(response, MAX_ANSWER_BYTES).await {
        Ok(bytes) => bytes,
        Err(ReadError::TooLarge(limit)) => {
            let error = format!("answered a forwarded request with more than {limit} bytes");
            return Err(misbehaved(&peer, error).into());
        }
        Err(ReadError::Request(e)) => return Err(send_error(&peer, e, timeout)),
    };
    let mut answer = match head {
        true => Response::new(Body::empty()),
        false => {
            let read = match status.is_success() {
                true => served(&peer.name, &bytes),
                false => answers::serve::<ErrorBody>(&peer.name, &bytes),
            };
            Response::new(Body::from(
                read.map_err(|unfit| unfit_answer(&state, &peer, unfit))?,
            ))
        }
    };
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(answer)
}

/// An answer the hub does not pass on: an error to the caller, and one
/// naming a session not the peer's own counted.
fn unfit_answer(state: &AppState, peer: &Peer, unfit: answers::Unfit) -> ApiError {
    tracing::warn!(host = %peer.name, "{unfit}");
    if matches!(unfit, answers::Unfit::Foreign(_)) {
        peer.refuse(&state.metrics);
    }
    let error = FleetError::BadAnswer {
        host: peer.name.clone(),
        error: unfit.to_string(),
    };
    error.into()
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
    serde_json::from_slice::<WaitRequest>(body)
        .ok()
        .and_then(|wait| wait.timeout_ms)
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

/// The merged `GET /v1/sessions`: this daemon's sessions, then each
/// peer's as last known, or only `host`'s.
pub fn merged_list(
    state: &AppState,
    mut local: Vec<SessionSummary>,
    host: Option<&str>,
) -> Result<SessionList, ApiError> {
    let sessions = match host {
        None => {
            local.extend(state.fleet.sessions(None));
            local
        }
        Some(host) => {
            let host: HostName = host
                .parse()
                .map_err(|e: crate::id::IdError| ApiError::bad_request(e.to_string()))?;
            state.fleet.peer(&host)?;
            state.fleet.sessions(Some(&host))
        }
    };
    Ok(SessionList { sessions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_routes_are_known_by_their_template() {
        // (method, matched template, route)
        let cases = [
            (Method::GET, "/v1/sessions/{id}", Some(SessionRoute::Get)),
            (Method::HEAD, "/v1/sessions/{id}", Some(SessionRoute::Get)),
            (
                Method::DELETE,
                "/v1/sessions/{id}",
                Some(SessionRoute::Delete),
            ),
            (
                Method::GET,
                "/v1/sessions/{id}/snapshot",
                Some(SessionRoute::Snapshot),
            ),
            (
                Method::GET,
                "/v1/sessions/{id}/scrollback",
                Some(SessionRoute::Scrollback),
            ),
            (
                Method::GET,
                "/v1/sessions/{id}/input/queue",
                Some(SessionRoute::Queue),
            ),
            (
                Method::DELETE,
                "/v1/sessions/{id}/input/queue/{n}",
                Some(SessionRoute::CancelQueued),
            ),
            (
                Method::POST,
                "/v1/sessions/{id}/input",
                Some(SessionRoute::Input),
            ),
            (
                Method::POST,
                "/v1/sessions/{id}/resize",
                Some(SessionRoute::Resize),
            ),
            (
                Method::POST,
                "/v1/sessions/{id}/wait",
                Some(SessionRoute::Wait),
            ),
            (
                Method::PUT,
                "/v1/sessions/{id}/thought",
                Some(SessionRoute::Thought),
            ),
            (
                Method::GET,
                "/v1/sessions/{id}/stream",
                Some(SessionRoute::Stream),
            ),
            (
                Method::GET,
                "/v1/sessions/{id}/screen",
                Some(SessionRoute::Screen),
            ),
            (
                Method::POST,
                "/v1/sessions/{id}/answer",
                Some(SessionRoute::Answer),
            ),
            (Method::POST, "/v1/sessions/{id}", None),
            (Method::GET, "/v1/sessions/{id}/wait", None),
            (Method::GET, "/v1/sessions", None),
            (Method::POST, "/v1/sessions/adopt", None),
            (Method::GET, "/v1/sessions/untracked", None),
            (Method::GET, "/v1/events", None),
            (Method::GET, "/v1/hosts/{host}/server", None),
        ];
        for (method, template, want) in cases {
            let got = SessionRoute::matched(&method, template);
            assert_eq!(got, want, "{method} {template}");
        }
    }

    /// Every route the API describes for one session reaches a peer's
    /// session too: a route added without a line above fails here.
    #[test]
    fn every_session_route_is_forwarded() {
        let document = super::super::openapi::document();
        let mut seen = 0;
        for (path, item) in &document.paths.paths {
            if !path.starts_with("/v1/sessions/{id}") {
                continue;
            }
            let methods = [
                (Method::GET, &item.get),
                (Method::POST, &item.post),
                (Method::PUT, &item.put),
                (Method::DELETE, &item.delete),
                (Method::PATCH, &item.patch),
            ];
            for (method, _) in methods.iter().filter(|(_, op)| op.is_some()) {
                assert!(
                    SessionRoute::matched(method, path).is_some(),
                    "{method} {path} is not forwarded to peers"
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 13, "session routes in the document");
    }

    #[test]
    fn peer_paths_are_built_from_the_parsed_id() {
        // (route, `id` and `n` as axum decoded them, host and path on the
        // peer; None: this daemon's own; Err: refused)
        type Want = Result<Option<(&'static str, &'static str)>, ()>;
        let cases: [(SessionRoute, &str, Option<&str>, Want); 14] = [
            (
                SessionRoute::Get,
                "gpu1/sess_3",
                None,
                Ok(Some(("gpu1", "/v1/sessions/sess_3"))),
            ),
            (
                SessionRoute::Snapshot,
                "gpu1/sess_3",
                None,
                Ok(Some(("gpu1", "/v1/sessions/sess_3/snapshot"))),
            ),
            (
                SessionRoute::CancelQueued,
                "build-2/sess_10",
                Some("4"),
                Ok(Some(("build-2", "/v1/sessions/sess_10/input/queue/4"))),
            ),
            (
                SessionRoute::Stream,
                "a/sess_1",
                None,
                Ok(Some(("a", "/v1/sessions/sess_1/stream"))),
            ),
            (SessionRoute::CancelQueued, "a/sess_1", Some(".."), Err(())),
            (
                SessionRoute::CancelQueued,
                "a/sess_1",
                Some("../../server"),
                Err(()),
            ),
            (SessionRoute::CancelQueued, "a/sess_1", Some("%zz"), Err(())),
            (SessionRoute::CancelQueued, "a/sess_1", Some("-1"), Err(())),
            (SessionRoute::Get, "sess_3", None, Ok(None)),
            (SessionRoute::CancelQueued, "sess_3", Some("x"), Ok(None)),
            (SessionRoute::Get, "gpu1/build", None, Ok(None)),
            (SessionRoute::Get, "gpu_1/sess_3", None, Ok(None)),
            (SessionRoute::Get, "gpu1/sess_3/../x", None, Ok(None)),
            (SessionRoute::Get, "gpu1%2", None, Ok(None)),
        ];
        for (route, id, item, want) in cases {
            let got = match peer_target(route, id, item) {
                Ok(target) => Ok(target.map(|t| {
                    assert_eq!(t.route, route);
                    (t.host.to_string(), t.path)
                })),
                Err(_) => Err(()),
            };
            let want = want.map(|t| t.map(|(h, p)| (h.to_owned(), p.to_owned())));
            assert_eq!(got, want, "{route:?} {id} {item:?}");
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
