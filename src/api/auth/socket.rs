//! WebSocket authentication: a socket reaches a handler's code only as an
//! [`AuthenticatedSocket`], made here after a verified bearer header or a
//! first message `{"type":"auth","token":"..."}` within [`AUTH_TIMEOUT`].

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::response::Response;
use serde::Deserialize;

use super::{Access, AuthPolicy, Gate, unauthorized};
use crate::api::error::ApiError;
use crate::api::ws::{self, CLOSE_POLICY};

/// How long a WebSocket has to send its auth message.
const AUTH_TIMEOUT: Duration = Duration::from_secs(5);

/// A WebSocket route's request as its guard let it through. The upgrade is
/// kept, not rejected, so a handler can answer 404 for a missing session
/// before 400 for a missing upgrade.
pub struct PendingSocket {
    gate: Gate,
    upgrade: Result<WebSocketUpgrade, String>,
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
        let upgrade = WebSocketUpgrade::from_request_parts(parts, state).await;
        Ok(PendingSocket {
            gate,
            upgrade: upgrade.map_err(|e| e.body_text()),
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
    pub fn upgrade<F, Fut>(self, policy: Arc<AuthPolicy>, serve: F) -> Result<Response, ApiError>
    where
        F: FnOnce(AuthenticatedSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let upgrade = self
            .upgrade
            .map_err(|e| ApiError::bad_request(format!("expected a WebSocket upgrade: {e}")))?;
        let gate = self.gate;
        Ok(upgrade.on_upgrade(move |socket| async move {
            let authenticated = match gate {
                Gate::Verified(access) => Some(AuthenticatedSocket { socket, access }),
                Gate::FirstMessage => first_message_auth(socket, &policy).await,
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

/// Reads the first message; `None` means the socket was closed.
async fn first_message_auth(
    mut socket: WebSocket,
    policy: &AuthPolicy,
) -> Option<AuthenticatedSocket> {
    let first = tokio::time::timeout(AUTH_TIMEOUT, socket.recv()).await;
    let granted = match first {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<AuthMessage>(&text)
            .ok()
            .filter(|m| m.kind == "auth")
            .and_then(|m| policy.access_for(&m.token)),
        _ => None,
    };
    match granted {
        Some(access) => Some(AuthenticatedSocket { socket, access }),
        None => {
            let reason = "authentication required: send {\"type\":\"auth\",\"token\":...} first";
            ws::close(socket, CLOSE_POLICY, reason).await;
            None
        }
    }
}
