//! Who may talk to the daemon, decided per route group.
//!
//! Every request first passes the origin check (`origin.rs`): a browser
//! request must come from the daemon's own origin, and the `Host` must be a
//! name the daemon answers to. Then a credential: the daemon's own user on
//! its unix socket (peer uid checked at accept), or over TCP the read-write
//! token (configured, or generated into the data dir), the read token (GET
//! only), or a dashboard credential from a login code (`logins.rs`). Only
//! `auth.insecure_no_auth` lets TCP clients in without one. The two
//! WebSocket routes alone may authenticate with their first message.
//!
//! Each group of routes in `mod.rs` carries a [`Guard`] that states what it
//! needs; handlers then take a proof of what was checked, which only this
//! module can make: [`ReadWrite`] for anything that changes something,
//! [`TokenHolder`] for minting login codes (which a dashboard credential
//! may not: it would renew itself), and [`PendingSocket`] whose upgrade
//! yields an [`AuthenticatedSocket`] only after authentication. A guard
//! that lets a credential through also marks its connection's
//! [`Standing`], so the listener can close strangers' connections first.

mod logins;
mod origin;
mod socket;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use logins::{CODE_TTL, CREDENTIAL_TTL, random_hex};
pub use origin::HostNames;
pub use socket::{AuthenticatedSocket, PendingSocket, ReadBudget};

use super::error::ApiError;
use crate::metrics::Metrics;
use crate::secret::{Proofs, constant_time_eq};
use crate::wire::ErrorCode;

/// Who is at the other end of a connection, as the listener saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A TCP client at this address.
    Tcp(IpAddr),
    /// A client of the unix socket running as the daemon's own user (others
    /// are turned away when they connect).
    OwnUser,
}

impl Peer {
    /// The address failures are counted under.
    fn address(self) -> IpAddr {
        match self {
            Peer::Tcp(address) => address,
            Peer::OwnUser => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        }
    }
}

/// Whether a connection has shown a credential. The listener makes one per
/// connection and hands it to every request on it; a guard marks it when a
/// request gets through with a credential (or a WebSocket authenticates by
/// its first message), so the listener can tell the connections of whoever
/// holds a credential from strangers' (`daemon/connections.rs`), whom it
/// closes first.
#[derive(Clone, Debug, Default)]
pub struct Standing(Arc<AtomicBool>);

impl Standing {
    /// A connection known at accept (the daemon's own user on the socket).
    pub fn vouched() -> Self {
        Standing(Arc::new(AtomicBool::new(true)))
    }

    pub fn vouch(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_vouched(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The credentials the daemon accepts.
#[derive(Default)]
pub struct AuthPolicy {
    /// `None` only with `auth.insecure_no_auth`: then TCP needs nothing.
    token: Option<String>,
    read_token: Option<String>,
    hosts: HostNames,
    logins: Mutex<logins::Logins>,
    backoff: Mutex<logins::Backoff>,
}

/// Tokens are secrets: never printed, not even by `{:?}`.
impl fmt::Debug for AuthPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mask = |t: &Option<String>| t.as_ref().map(|_| "****");
        f.debug_struct("AuthPolicy")
            .field("token", &mask(&self.token))
            .field("read_token", &mask(&self.read_token))
            .field("hosts", &self.hosts)
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

/// Proof that the caller holds a lasting read-write credential: the token,
/// or the daemon's own user on its socket (or, without tokens, anyone) —
/// not a dashboard credential, which must not mint the login codes that
/// would renew it past its own expiry.
#[derive(Clone, Copy, Debug)]
pub struct TokenHolder(());

/// The dashboard credential a request came with, so it can end itself
/// (`POST /v1/logout`). A secret: never printed.
#[derive(Clone)]
pub struct PageCredential(String);

/// What a presented secret is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Credential {
    /// The read-write token.
    Token,
    /// The read token.
    ReadToken,
    /// A dashboard credential from a login code.
    Page,
}

impl Credential {
    fn access(self) -> Access {
        match self {
            Credential::Token | Credential::Page => Access::ReadWrite,
            Credential::ReadToken => Access::ReadOnly,
        }
    }
}

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
    /// Read-write by a dashboard credential.
    Page,
    Socket(Gate),
}

/// The guard of one route group (`route_layer` in `mod.rs`).
#[derive(Clone, Debug)]
pub struct Guard {
    policy: Arc<AuthPolicy>,
    need: Need,
    metrics: Metrics,
}

impl Guard {
    pub fn new(policy: Arc<AuthPolicy>, need: Need, metrics: Metrics) -> Self {
        Guard {
            policy,
            need,
            metrics,
        }
    }
}

/// Why a request was turned away.
#[derive(Debug)]
enum Refusal {
    /// A credential was presented and matched nothing: counted and slowed.
    WrongCredential(ApiError),
    /// Anything else.
    Other(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal::Other(error)
    }
}

/// The middleware behind every [`Guard`]: refuses, or runs the route with
/// the proof of what was checked. Requests carry their [`Peer`] from the
/// listener; one without (none is made so) counts as a TCP stranger.
pub async fn require(State(guard): State<Guard>, mut request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<Peer>().copied();
    let peer = peer.unwrap_or(Peer::Tcp(IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
    request.extensions_mut().insert(peer);
    let checked = origin::check(request.uri(), request.headers(), &guard.policy.hosts)
        .map_err(|error| {
            // A page of another origin or a rebinding name: worth knowing about.
            tracing::info!(path = request.uri().path(), "refused: {}", error.message);
            Refusal::Other(error)
        })
        .and_then(|()| {
            let (method, headers) = (request.method(), request.headers());
            admit(&guard.policy, guard.need, peer, method, headers)
        });
    let credentialed = match &checked {
        Ok(Admission::Socket(Gate::FirstMessage)) | Err(_) => false,
        Ok(_) => guard.need != Need::Open,
    };
    if credentialed && let Some(standing) = request.extensions().get::<Standing>() {
        standing.vouch();
    }
    match checked {
        Ok(Admission::Caller(Access::ReadWrite)) => {
            request.extensions_mut().insert(ReadWrite(()));
            request.extensions_mut().insert(TokenHolder(()));
        }
        Ok(Admission::Page) => {
            let presented = bearer(request.headers()).ok().flatten().map(str::to_owned);
            request.extensions_mut().insert(ReadWrite(()));
            if let Some(presented) = presented {
                request.extensions_mut().insert(PageCredential(presented));
            }
        }
        Ok(Admission::Caller(Access::ReadOnly)) => {}
        Ok(Admission::Socket(gate)) => {
            request.extensions_mut().insert(gate);
        }
        Err(Refusal::WrongCredential(error)) => {
            guard.policy.slow_down(peer, &guard.metrics).await;
            return error.into_response();
        }
        Err(Refusal::Other(error)) => return error.into_response(),
    }
    next.run(request).await
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message)
}

fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::Forbidden, message)
}

/// The credential part of the decision, once the origin check passed.
fn admit(
    policy: &AuthPolicy,
    need: Need,
    peer: Peer,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Admission, Refusal> {
    if need == Need::Open {
        return Ok(Admission::Caller(Access::ReadOnly));
    }
    if peer == Peer::OwnUser || policy.token.is_none() {
        return Ok(match need {
            Need::Socket => Admission::Socket(Gate::Verified(Access::ReadWrite)),
            _ => Admission::Caller(Access::ReadWrite),
        });
    }
    let credential = match bearer(headers)? {
        Some(presented) => policy
            .credential_for(presented)
            .ok_or_else(|| Refusal::WrongCredential(unauthorized("invalid token")))?,
        None if need == Need::Socket && is_websocket_upgrade(headers) => {
            return Ok(Admission::Socket(Gate::FirstMessage));
        }
        None => return Err(unauthorized("missing bearer token").into()),
    };
    let reads = method == Method::GET || method == Method::HEAD;
    match (need, credential.access()) {
        (Need::Socket, access) => Ok(Admission::Socket(Gate::Verified(access))),
        _ if credential == Credential::Page => Ok(Admission::Page),
        (_, Access::ReadWrite) => Ok(Admission::Caller(Access::ReadWrite)),
        (Need::Read, Access::ReadOnly) if reads => Ok(Admission::Caller(Access::ReadOnly)),
        (_, Access::ReadOnly) => Err(forbidden("the read token allows GET only").into()),
    }
}

/// The bearer token, if an Authorization header was sent; any other kind
/// of Authorization header is refused rather than ignored.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::bad_request("more than one Authorization header"));
    }
    value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|token| Some(token.trim()))
        .ok_or_else(|| unauthorized("expected Authorization: Bearer <token>"))
}

impl AuthPolicy {
    /// `token: None` means no credential at all on TCP
    /// (`auth.insecure_no_auth`); the daemon's own user gets in on the
    /// unix socket either way.
    pub fn new(token: Option<String>, read_token: Option<String>, hosts: HostNames) -> Self {
        AuthPolicy {
            token,
            read_token,
            hosts,
            ..AuthPolicy::default()
        }
    }

    /// What a presented token allows, compared in constant time.
    pub fn access_for(&self, presented: &str) -> Option<Access> {
        self.credential_for(presented).map(Credential::access)
    }

    /// What a presented secret is, compared in constant time with each.
    fn credential_for(&self, presented: &str) -> Option<Credential> {
        let matches = |t: &Option<String>| {
            t.as_ref()
                .is_some_and(|t| constant_time_eq(presented.as_bytes(), t.as_bytes()))
        };
        let logins = self.logins.lock().expect("logins lock");
        if matches(&self.token) {
            Some(Credential::Token)
        } else if logins.is_credential(presented, Instant::now()) {
            Some(Credential::Page)
        } else if matches(&self.read_token) {
            Some(Credential::ReadToken)
        } else {
            None
        }
    }

    /// The daemon's proof that it holds its tokens, for a client's nonce
    /// (`crate::secret`).
    pub fn proofs(&self, nonce: &str) -> Proofs {
        Proofs::answer(nonce, self.token.as_deref(), self.read_token.as_deref())
    }

    /// Ends a dashboard credential (the page logged out): it matches
    /// nothing from now on. False if it was not live.
    pub fn end_page_credential(&self, credential: &PageCredential) -> bool {
        let mut logins = self.logins.lock().expect("logins lock");
        logins.end(&credential.0, Instant::now())
    }

    /// A one-time login code for the dashboard (`tmuxd open`).
    pub fn issue_login_code(&self) -> String {
        let mut logins = self.logins.lock().expect("logins lock");
        logins.issue_code(Instant::now())
    }

    /// The dashboard credential for a live login code; a wrong or used
    /// code is a failed authentication, slowed like a wrong token.
    pub async fn exchange_login_code(
        &self,
        code: &str,
        peer: Peer,
        metrics: &Metrics,
    ) -> Option<String> {
        let exchanged = {
            let mut logins = self.logins.lock().expect("logins lock");
            logins.exchange(code, Instant::now())
        };
        if exchanged.is_none() {
            self.slow_down(peer, metrics).await;
        }
        exchanged
    }

    /// Counts a failed authentication and holds its answer for the
    /// address's backoff (the daemon's own user is never slowed).
    pub async fn slow_down(&self, peer: Peer, metrics: &Metrics) {
        metrics.auth_failed();
        if peer == Peer::OwnUser {
            return;
        }
        let wait = {
            let mut backoff = self.backoff.lock().expect("backoff lock");
            backoff.failed(peer.address(), Instant::now())
        };
        if wait > Duration::ZERO {
            tracing::debug!(?peer, ?wait, "failed authentication; answer held");
            tokio::time::sleep(wait).await;
        }
    }
}

impl PageCredential {
    /// The credential's bytes, for a fingerprint (never to print).
    pub fn secret(&self) -> &[u8] {
        self.0.as_bytes()
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

impl<S: Send + Sync> FromRequestParts<S> for TokenHolder {
    type Rejection = ApiError;

    /// Present only when the read-write token (or the socket) was checked,
    /// not a dashboard credential.
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let proof = parts.extensions.get::<TokenHolder>().copied();
        proof.ok_or_else(|| {
            forbidden("this needs the read-write token: a dashboard credential cannot make login codes (run `tmuxd open` where the token is)")
        })
    }
}

fn is_websocket_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

#[cfg(test)]
mod tests;
