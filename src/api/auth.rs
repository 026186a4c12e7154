//! Who may talk to the daemon, decided per route group. Without a token only
//! loopback clients may: the Host and Origin checks stop DNS rebinding and
//! cross-site requests from a browser. With tokens, a bearer token is
//! required (the read token allows GET only); the two WebSocket routes alone
//! may instead authenticate with their first message.
//!
//! Each group of routes in `mod.rs` carries a [`Guard`] that states what it
//! needs; handlers then take a proof of what was checked, which only this
//! module can make: [`ReadWrite`] for anything that changes something, and
//! [`PendingSocket`] whose upgrade yields an [`AuthenticatedSocket`] only
//! after authentication.

mod socket;

use std::fmt;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use socket::{AuthenticatedSocket, PendingSocket};

use super::error::ApiError;
use super::model::ErrorCode;

/// The tokens the daemon accepts; none means loopback clients only.
#[derive(Clone, Default)]
pub struct AuthPolicy {
    token: Option<String>,
    read_token: Option<String>,
}

/// Tokens are secrets: never printed, not even by `{:?}`.
impl fmt::Debug for AuthPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mask = |t: &Option<String>| t.as_ref().map(|_| "****");
        f.debug_struct("AuthPolicy")
            .field("token", &mask(&self.token))
            .field("read_token", &mask(&self.read_token))
            .finish()
    }
}

/// What an authenticated caller may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anything.
    ReadWrite,
    /// GET and watching streams; no input, no resize.
    ReadOnly,
}

/// What a group of routes requires of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Anyone who can connect (`/healthz`, `/version`).
    Open,
    /// The read or the read-write token; the read token for GET and HEAD only.
    Read,
    /// The read-write token.
    Write,
    /// A WebSocket route: a bearer token, or, with no Authorization header
    /// at all, a WebSocket upgrade that must authenticate by first message.
    Socket,
}

/// Proof that the request carried the read-write token (or, without
/// tokens, came from loopback). Handlers that change anything take it.
#[derive(Clone, Copy, Debug)]
pub struct ReadWrite(());

/// How a WebSocket route's request got past its guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    /// By bearer header, or from loopback without tokens.
    Verified(Access),
    /// No header: the socket must send `{"type":"auth","token":...}` first.
    FirstMessage,
}

/// What a guard let through, decided from the request head alone.
#[derive(Debug, PartialEq, Eq)]
enum Admission {
    Caller(Access),
    Socket(Gate),
}

/// The guard of one route group (`route_layer` in `mod.rs`).
#[derive(Clone, Debug)]
pub struct Guard {
    policy: Arc<AuthPolicy>,
    need: Need,
}

impl Guard {
    pub fn new(policy: Arc<AuthPolicy>, need: Need) -> Self {
        Guard { policy, need }
    }
}

/// The middleware behind every [`Guard`]: refuses, or runs the route with
/// the proof of what was checked.
pub async fn require(State(guard): State<Guard>, mut request: Request, next: Next) -> Response {
    let admission = admit(
        &guard.policy,
        guard.need,
        request.method(),
        request.headers(),
    );
    match admission {
        Ok(Admission::Caller(Access::ReadWrite)) => {
            request.extensions_mut().insert(ReadWrite(()));
        }
        Ok(Admission::Caller(Access::ReadOnly)) => {}
        Ok(Admission::Socket(gate)) => {
            request.extensions_mut().insert(gate);
        }
        Err(error) => return error.into_response(),
    }
    next.run(request).await
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message)
}

fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::Forbidden, message)
}

fn admit(
    policy: &AuthPolicy,
    need: Need,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Admission, ApiError> {
    if policy.token.is_none() {
        check_loopback(headers)?;
        return Ok(match need {
            Need::Socket => Admission::Socket(Gate::Verified(Access::ReadWrite)),
            _ => Admission::Caller(Access::ReadWrite),
        });
    }
    if need == Need::Open {
        return Ok(Admission::Caller(Access::ReadOnly));
    }
    let access = match bearer(headers)? {
        Some(presented) => policy
            .access_for(presented)
            .ok_or_else(|| unauthorized("invalid token"))?,
        None if need == Need::Socket && is_websocket_upgrade(headers) => {
            return Ok(Admission::Socket(Gate::FirstMessage));
        }
        None => return Err(unauthorized("missing bearer token")),
    };
    let reads = method == Method::GET || method == Method::HEAD;
    match (need, access) {
        (Need::Socket, access) => Ok(Admission::Socket(Gate::Verified(access))),
        (_, Access::ReadWrite) => Ok(Admission::Caller(Access::ReadWrite)),
        (Need::Read, Access::ReadOnly) if reads => Ok(Admission::Caller(Access::ReadOnly)),
        (_, Access::ReadOnly) => Err(forbidden("the read token allows GET only")),
    }
}

/// The bearer token, if an Authorization header was sent; any other kind
/// of Authorization header is refused rather than ignored.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|token| Some(token.trim()))
        .ok_or_else(|| unauthorized("expected Authorization: Bearer <token>"))
}

impl AuthPolicy {
    pub fn new(token: Option<String>, read_token: Option<String>) -> Self {
        AuthPolicy { token, read_token }
    }

    /// What a presented token allows, compared in constant time.
    pub fn access_for(&self, presented: &str) -> Option<Access> {
        let matches = |t: &Option<String>| {
            t.as_ref()
                .is_some_and(|t| constant_time_eq(presented.as_bytes(), t.as_bytes()))
        };
        if matches(&self.token) {
            Some(Access::ReadWrite)
        } else if matches(&self.read_token) {
            Some(Access::ReadOnly)
        } else {
            None
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ReadWrite {
    type Rejection = ApiError;

    /// Present only when this route's guard checked for the read-write token.
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let proof = parts.extensions.get::<ReadWrite>().copied();
        proof.ok_or_else(|| forbidden("this needs the read-write token"))
    }
}

fn is_websocket_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

fn check_loopback(headers: &HeaderMap) -> Result<(), ApiError> {
    let refuse = |what: &str| forbidden(format!("{what} is not a loopback address"));
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !is_loopback_host(host) {
        return Err(refuse("Host"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        if !host.is_some_and(is_loopback_host) {
            return Err(refuse("Origin"));
        }
    }
    Ok(())
}

/// `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
fn is_loopback_host(host_port: &str) -> bool {
    let host = match host_port.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, "")) => inside,
            Some((inside, port)) if port.strip_prefix(':').is_some_and(is_port) => inside,
            _ => return false,
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => host_port,
        },
    };
    matches!(host, "127.0.0.1" | "localhost" | "::1")
}

fn is_port(digits: &str) -> bool {
    !digits.is_empty() && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests;
