//! What the WebSocket endpoints share: session lookup around
//! authentication, connection limits, bounded sends and close reasons.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use axum::response::Response;
use futures::{Sink, SinkExt};

use serde::Serialize;

use super::auth::{AuthenticatedSocket, PendingSocket};
use super::error::ApiError;
use super::state::AppState;
use crate::id::SessionId;
use crate::metrics::{DropReason, Metrics, StreamKind, SubscriberGuard};
use crate::session::SessionHandle;

/// A client that cannot take a frame within this long is too slow, and dropped.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// Close codes (RFC 6455).
pub const CLOSE_NORMAL: u16 = 1000;
pub const CLOSE_GOING_AWAY: u16 = 1001;
pub const CLOSE_POLICY: u16 = 1008;
pub const CLOSE_TRY_LATER: u16 = 1013;

/// Why a frame could not be sent.
#[derive(Debug, PartialEq, Eq)]
pub enum Gone {
    /// The client closed the connection.
    Closed,
    /// It did not take the frame within [`SEND_TIMEOUT`]: dropped as too slow.
    TooSlow,
}

/// Sends one frame, or gives up on a client that does not read.
async fn send<S>(sink: &mut S, message: Message) -> Result<(), Gone>
where
    S: Sink<Message> + Unpin,
{
    match tokio::time::timeout(SEND_TIMEOUT, sink.send(message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Gone::Closed),
        Err(_) => Err(Gone::TooSlow),
    }
}

/// The sending half of a subscriber's socket: bounded sends, counted in
/// the metrics (bytes sent, slow clients dropped) and as an open
/// subscriber while it lives.
pub struct Outbox<S> {
    sink: S,
    metrics: Metrics,
    kind: StreamKind,
    _counted: SubscriberGuard,
}

impl<S: Sink<Message> + Unpin> Outbox<S> {
    pub fn new(sink: S, metrics: &Metrics, kind: StreamKind) -> Self {
        Outbox {
            sink,
            metrics: metrics.clone(),
            kind,
            _counted: metrics.subscriber(kind),
        }
    }

    fn counted(&self, sent: Result<usize, Gone>) -> Result<(), Gone> {
        match sent {
            Ok(bytes) => {
                self.metrics.bytes_sent(self.kind, bytes);
                Ok(())
            }
            Err(Gone::TooSlow) => {
                self.metrics
                    .subscriber_dropped(self.kind, DropReason::SlowClient);
                Err(Gone::TooSlow)
            }
            Err(gone) => Err(gone),
        }
    }

    pub async fn send(&mut self, message: Message) -> Result<(), Gone> {
        let bytes = payload_len(&message);
        let sent = send(&mut self.sink, message).await.map(|()| bytes);
        self.counted(sent)
    }

    /// Sends several frames with one flush, or gives up like `send`.
    pub async fn send_all(&mut self, messages: Vec<Message>) -> Result<(), Gone> {
        let bytes = messages.iter().map(payload_len).sum();
        let sink = &mut self.sink;
        let sent = async {
            for message in messages {
                sink.feed(message).await?;
            }
            sink.flush().await
        };
        let sent = match tokio::time::timeout(SEND_TIMEOUT, sent).await {
            Ok(Ok(())) => Ok(bytes),
            Ok(Err(_)) => Err(Gone::Closed),
            Err(_) => Err(Gone::TooSlow),
        };
        self.counted(sent)
    }

    pub async fn send_json<T: Serialize>(&mut self, value: &T) -> Result<(), Gone> {
        let text = serde_json::to_string(value).unwrap_or_default();
        self.send(Message::Text(text.into())).await
    }

    /// Drops a subscriber whose queue overflowed, saying why.
    pub async fn drop_overflowed(self, reason: &str) {
        self.metrics
            .subscriber_dropped(self.kind, DropReason::OutputSkipped);
        self.close(CLOSE_POLICY, reason).await;
    }

    pub async fn close(self, code: u16, reason: &str) {
        close(self.sink, code, reason).await;
    }
}

fn payload_len(message: &Message) -> usize {
    match message {
        Message::Text(text) => text.len(),
        Message::Binary(bytes) | Message::Ping(bytes) | Message::Pong(bytes) => bytes.len(),
        Message::Close(_) => 0,
    }
}

/// Closes with a code and a reason the client can show.
pub async fn close<S>(mut sink: S, code: u16, reason: &str)
where
    S: Sink<Message> + Unpin,
{
    let frame = CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    };
    let _ = send(&mut sink, Message::Close(Some(frame))).await;
}

/// Serves a session's WebSocket. A verified caller learns at once whether
/// the session exists (404, before any upgrade); one that authenticates by
/// first message learns it only after authenticating, so a caller without a
/// token learns nothing about which sessions exist. `serve` gets the
/// state and the id back with the socket and the session's handle.
pub async fn serve_session<F, Fut>(
    state: AppState,
    id: String,
    pending: PendingSocket,
    serve: F,
) -> Result<Response, ApiError>
where
    F: FnOnce(AuthenticatedSocket, SessionHandle, AppState, SessionId) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let parsed = super::extract::session_id(&id);
    let known = match (pending.is_verified(), &parsed) {
        (true, Ok(id)) => Some(state.supervisor.handle(*id).await?),
        (true, Err(_)) => return Err(super::extract::session_id(&id).unwrap_err().into()),
        (false, _) => None,
    };
    let (policy, metrics) = (state.auth.clone(), state.metrics.clone());
    pending.upgrade(policy, metrics, move |socket| async move {
        // Without a bearer header, nothing about the id is told before
        // the upgrade, not even that it is no id at all.
        let id = match parsed {
            Ok(id) => id,
            Err(e) => return close(socket.into_inner(), CLOSE_POLICY, &e.to_string()).await,
        };
        let known = match known {
            Some(known) => Ok(known),
            None => state.supervisor.handle(id).await,
        };
        let handle = match known {
            Ok((handle, _)) => handle,
            Err(e) => return close(socket.into_inner(), CLOSE_POLICY, &e.to_string()).await,
        };
        serve(socket, handle, state, id).await
    })
}
