//! WebSocket authentication: a socket reaches a handler's code only as an
//! [`AuthenticatedSocket`], made here after a verified bearer header or a
//! first message `{"type":"auth","token":"..."}` within [`AUTH_TIMEOUT`],
//! with at most [`PRE_AUTH_BYTES`] read from the connection meanwhile.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::response::Response;
use serde::Deserialize;

use super::{Access, AuthPolicy, Gate, Peer, Standing, unauthorized};
use crate::api::error::ApiError;
use crate::api::ws::{self, CLOSE_POLICY};
use crate::metrics::Metrics;

/// How long a WebSocket has to send its auth message.
const AUTH_TIMEOUT: Duration = Duration::from_secs(5);

/// What a socket may send before it has authenticated: its auth message
/// is ~100 bytes. Past this the connection is cut, so a stranger cannot
/// make the daemon buffer a message of the WebSocket library's maximum.
pub const PRE_AUTH_BYTES: u64 = 4096;

/// How many more bytes may be read from a connection; the listener's
/// stream fails its reads once they are spent. Unlimited unless a
/// WebSocket is waiting for its first-message auth.
#[derive(Clone, Debug)]
pub struct ReadBudget(Arc<AtomicU64>);

impl Default for ReadBudget {
    fn default() -> Self {
        ReadBudget(Arc::new(AtomicU64::new(u64::MAX)))
    }
}

impl ReadBudget {
    fn limit(&self, bytes: u64) {
        self.0.store(bytes, Ordering::Relaxed);
    }

    fn lift(&self) {
        self.0.store(u64::MAX, Ordering::Relaxed);
    }

    /// Takes `read` bytes from the budget; false when that overspends it.
    pub fn spend(&self, read: usize) -> bool {
        let read = read as u64;
        let left = self.0.load(Ordering::Relaxed);
        if left == u64::MAX {
            return true;
        }
        self.0.store(left.saturating_sub(read), Ordering::Relaxed);
        read <= left
    }
}

/// A WebSocket route's request as its guard let it through. The upgrade is
/// kept, not rejected, so a handler can answer 404 for a missing session
/// before 400 for a missing upgrade.
pub struct PendingSocket {
    gate: Gate,
    peer: Peer,
    budget: Option<ReadBudget>,
    standing: Option<Standing>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
}

/// A WebSocket whose caller proved a token (or, without tokens, came from
/// loopback), and what that token allows.
pub struct AuthenticatedSocket {
    socket: WebSocket,
    access: Access,
}

impl<S: Send + Sync> FromRequestParts<S> for PendingSocket {
    type Rejection = ApiError;

    /// Present only on routes behind the `Need::Socket` guard.
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let gate = parts.extensions.get::<Gate>().copied();
        let gate = gate.ok_or_else(|| unauthorized("this route needs a token"))?;
        let peer = parts.extensions.get::<Peer>().copied();
        let peer = peer.ok_or_else(|| unauthorized("this route needs a token"))?;
        let budget = parts.extensions.get::<ReadBudget>().cloned();
        let standing = parts.extensions.get::<Standing>().cloned();
        let upgrade = WebSocketUpgrade::from_request_parts(parts, state).await;
        Ok(PendingSocket {
            gate,
            peer,
            budget,
            standing,
            upgrade,
        })
    }
}

impl PendingSocket {
    /// Whether the caller is known already, before any upgrade.
    pub fn is_verified(&self) -> bool {
        matches!(self.gate, Gate::Verified(_))
    }

    /// Accepts the upgrade; `serve` runs once the socket is authenticated.
    /// A socket that fails first-message auth is closed with the reason.
    pub fn upgrade<F, Fut>(
        self,
        policy: Arc<AuthPolicy>,
        metrics: Metrics,
        serve: F,
    ) -> Result<Response, ApiError>
    where
        F: FnOnce(AuthenticatedSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let upgrade = self.upgrade.map_err(|e| {
            let reason = e.body_text();
            ApiError::bad_request(format!("expected a WebSocket upgrade: {reason}"))
        })?;
        let (gate, peer, budget, standing) = (self.gate, self.peer, self.budget, self.standing);
        if gate == Gate::FirstMessage {
            // Counted from the upgrade on: whatever the client sends first.
            budget.iter().for_each(|b| b.limit(PRE_AUTH_BYTES));
        }
        Ok(upgrade.on_upgrade(move |socket| async move {
            let authenticated = match gate {
                Gate::Verified(access) => Some(AuthenticatedSocket { socket, access }),
                Gate::FirstMessage => {
                    let first = FirstMessage {
                        policy: &policy,
                        peer,
                        metrics: &metrics,
                    };
                    let authenticated = first.authenticate(socket).await;
                    budget.iter().for_each(ReadBudget::lift);
                    if authenticated.is_some() {
                        standing.iter().for_each(Standing::vouch);
                    }
                    authenticated
                }
            };
            if let Some(socket) = authenticated {
                serve(socket).await;
            }
        }))
    }
}

impl AuthenticatedSocket {
    pub fn access(&self) -> Access {
        self.access
    }

    pub fn into_inner(self) -> WebSocket {
        self.socket
    }
}

#[derive(Deserialize)]
struct AuthMessage {
    #[serde(rename = "type")]
    kind: String,
    token: String,
}

/// First-message authentication of one socket.
struct FirstMessage<'a> {
    policy: &'a AuthPolicy,
    peer: Peer,
    metrics: &'a Metrics,
}

impl FirstMessage<'_> {
    /// Reads the first message; `None` means the socket was closed. A token
    /// that matches nothing is slowed like a wrong bearer header.
    async fn authenticate(self, mut socket: WebSocket) -> Option<AuthenticatedSocket> {
        let first = tokio::time::timeout(AUTH_TIMEOUT, socket.recv()).await;
        let presented = match first {
            Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<AuthMessage>(&text)
                .ok()
                .filter(|m| m.kind == "auth"),
            _ => None,
        };
        let granted = presented
            .as_ref()
            .and_then(|m| self.policy.access_for(&m.token));
        if let Some(access) = granted {
            return Some(AuthenticatedSocket { socket, access });
        }
        if presented.is_some() {
            self.policy.slow_down(self.peer, self.metrics).await;
        }
        let reason = "authentication required: send {\"type\":\"auth\",\"token\":...} first";
        ws::close(socket, CLOSE_POLICY, reason).await;
        None
    }
}
