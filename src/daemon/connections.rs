//! The HTTP server's connections: caps on how many are open at once, a
//! deadline for each one's request headers, and one graceful shutdown.
//! A silent client holds a connection for a bounded time and can hold at
//! most the cap, never every file descriptor the daemon has.
//!
//! Two listeners, each with caps of its own: TCP, and the unix socket in
//! the data dir, which serves only the daemon's own user (the peer's uid
//! is checked at accept, `SO_PEERCRED`). On TCP a connection is a
//! stranger's until a request on it shows a credential ([`Standing`]):
//! strangers get no keep-alive and a cap of their own, and the oldest is
//! shed when a newcomer needs room (`table.rs`), so idle strangers cannot
//! keep the owner out. Each request carries its connection's [`Peer`],
//! [`Standing`] and [`ReadBudget`] for the auth guard.

mod table;

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::{Service, service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use table::Caps;
use table::{Busy, Table};

use crate::api::{Peer, ReadBudget, Standing};
use crate::config::HttpConfig;
use crate::metrics::Metrics;

macro_rules! on_stream {
    ($stream:expr, $s:ident => $body:expr) => {
        match $stream {
            Stream::Tcp($s) => $body,
            Stream::Unix($s) => $body,
        }
    };
}

/// Per-connection kernel send buffer.
const SEND_BUFFER_BYTES: usize = 128 * 1024;

/// How long to pause accepting after an error such as running out of file
/// descriptors (EMFILE), so the loop does not spin while nothing can succeed.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(250);

/// The share of the TCP connections strangers (no credential shown yet)
/// may hold at once: the rest stay free for those with one.
const STRANGERS_SHARE: usize = 2;

/// What bounds the connections (`[http]` in the config).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Open connections at most, upgraded ones included.
    pub max_connections: usize,
    /// Of those, connections that have shown no credential yet.
    pub max_strangers: usize,
    /// From accept to the first request's complete headers.
    pub header_read_timeout: Duration,
    /// From a response to the next request's complete headers.
    pub idle_timeout: Duration,
}

impl Limits {
    /// The configured limits, the cap lowered to fit the open-file limit.
    pub fn from_config(http: &HttpConfig) -> Self {
        let max_connections = capped_by_fd_limit(http.max_connections, fd_soft_limit());
        if max_connections < http.max_connections {
            tracing::warn!(
                "http.max_connections lowered from {} to {max_connections}: connections may use at most half the open-file limit",
                http.max_connections
            );
        }
        Limits {
            max_connections,
            max_strangers: (max_connections / STRANGERS_SHARE).max(1),
            header_read_timeout: Duration::from_millis(http.header_read_timeout_ms),
            idle_timeout: Duration::from_millis(http.idle_timeout_ms),
        }
    }

    /// The caps of the TCP listener.
    pub fn tcp_caps(&self) -> Caps {
        Caps {
            open: self.max_connections,
            strangers: self.max_strangers,
        }
    }
}

/// Open connections on the unix socket at most: only the daemon's own user
/// gets there, so a few scripts at once, not a crowd.
pub const UNIX_CAPS: Caps = Caps {
    open: 64,
    strangers: 64,
};

/// Where connections come from.
pub enum Listener {
    Tcp(TcpListener),
    /// The unix socket; only this uid is served.
    Unix {
        listener: UnixListener,
        uid: u32,
    },
}

/// An accepted connection's stream.
enum Stream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        on_stream!(self, s => s.as_raw_fd())
    }
}

impl Listener {
    /// The next connection, `None` for one turned away (another user's).
    async fn accept(&self) -> io::Result<Option<(Stream, Peer)>> {
        match self {
            Listener::Tcp(listener) => {
                let (tcp, address) = listener.accept().await?;
                // A fixed send buffer turns off the kernel's autotuning (up
                // to 4 MiB): a client that stops reading then blocks its
                // stream after a bounded amount of output, and is dropped,
                // instead of the kernel quietly buffering megabytes for it.
                if let Err(e) = socket2::SockRef::from(&tcp).set_send_buffer_size(SEND_BUFFER_BYTES)
                {
                    tracing::debug!("cannot set the send buffer: {e}");
                }
                Ok(Some((Stream::Tcp(tcp), Peer::Tcp(address.ip()))))
            }
            Listener::Unix { listener, uid } => {
                let (unix, _) = listener.accept().await?;
                let peer = unix.peer_cred()?.uid();
                if peer != *uid {
                    tracing::warn!(
                        peer_uid = peer,
                        "refused a connection to the unix socket from another user"
                    );
                    return Ok(None);
                }
                Ok(Some((Stream::Unix(unix), Peer::OwnUser)))
            }
        }
    }
}

/// What the listeners share.
#[derive(Clone)]
pub struct Serving {
    pub app: Router,
    pub limits: Limits,
    /// Fires at shutdown.
    pub cancel: CancellationToken,
    /// How long open connections get to finish once it has.
    pub drain: Duration,
    pub metrics: Metrics,
}

/// Serves `app` on `listener` until `cancel` fires; then stops accepting,
/// lets open connections finish for up to `drain`, and closes the rest.
/// At most `caps` connections are open at once.
pub async fn serve(listener: Listener, caps: Caps, serving: Serving) {
    let Serving {
        app,
        limits,
        cancel,
        drain,
        metrics,
    } = serving;
    let table = Arc::new(Mutex::new(Table::new(caps)));
    let closed = Arc::new(Notify::new());
    let mut connections = JoinSet::new();
    let until_room = async || {
        while !lock(&table).has_room() {
            tokio::select! {
                _ = cancel.cancelled() => return false,
                () = closed.notified() => {}
            }
        }
        true
    };
    loop {
        // With no room, wait before accepting: further clients queue in
        // the kernel's backlog instead of taking descriptors.
        if !until_room().await {
            break;
        }
        let accepted = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        while connections.try_join_next().is_some() {}
        match accepted {
            // Asked again: the stranger that made room may have shown a
            // credential while the accept waited.
            Ok(Some(_)) if !until_room().await => break,
            Ok(Some((stream, peer))) => {
                tracing::trace!(?peer, "connection accepted");
                let standing = match peer {
                    Peer::OwnUser => Standing::vouched(),
                    Peer::Tcp(_) => Standing::default(),
                };
                let busy = Busy::default();
                let place = Place::take(&table, &closed, &stream, standing.clone(), busy.clone());
                metrics.connections_shed(place.shed);
                let connection = Connection {
                    place,
                    stream,
                    peer,
                    standing,
                    busy,
                };
                connections.spawn(connection.serve(app.clone(), limits, cancel.clone()));
            }
            Ok(None) => {}
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                tracing::warn!("cannot accept a connection: {e}");
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                }
            }
        }
    }
    drop(listener);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(drain, drained).await.is_err() {
        tracing::warn!("connections still open after {drain:?}; closing them");
        connections.shutdown().await;
    }
}

/// The table's lock, held only in short synchronous sections (never across
/// an `.await`): a poisoned one still holds a consistent table.
fn lock(table: &Mutex<Table<RawFd>>) -> std::sync::MutexGuard<'_, Table<RawFd>> {
    table
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A connection's entry in its listener's table, removed when dropped.
struct Place {
    table: Arc<Mutex<Table<RawFd>>>,
    closed: Arc<Notify>,
    id: u64,
    /// How many strangers were shed to make room for it.
    shed: usize,
}

impl Place {
    /// Enters `stream` in the table and shuts down the sockets of the
    /// strangers shed for it: they read end-of-file, so each one's task
    /// ends whatever it was doing (waiting for headers, or a WebSocket
    /// waiting for its first message).
    fn take(
        table: &Arc<Mutex<Table<RawFd>>>,
        closed: &Arc<Notify>,
        stream: &Stream,
        standing: Standing,
        busy: Busy,
    ) -> Place {
        let mut entries = lock(table);
        let (id, shed) = entries.open(standing, busy, stream.as_raw_fd());
        for &socket in &shed {
            tracing::debug!("shedding a connection with no credential to make room");
            // SAFETY: the descriptor is open: a connection leaves the table
            // (under this lock) before its socket is closed (see `Slotted`).
            unsafe { libc::shutdown(socket, libc::SHUT_RDWR) };
        }
        Place {
            table: table.clone(),
            closed: closed.clone(),
            id,
            shed: shed.len(),
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        lock(&self.table).close(self.id);
        self.closed.notify_one();
    }
}

/// At most half the daemon's file descriptors go to connections: the rest
/// are for tmux sessions, children and files, which must keep working
/// whatever clients do.
fn capped_by_fd_limit(configured: usize, fd_limit: Option<u64>) -> usize {
    let half = fd_limit.map_or(usize::MAX, |limit| {
        usize::try_from(limit / 2).unwrap_or(usize::MAX)
    });
    configured.min(half).max(1)
}

/// The soft RLIMIT_NOFILE; `None` when unlimited or unknown.
fn fd_soft_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own.
    let status = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (status == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Errors of one connection, not of the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// An accepted connection and its place in the table.
struct Connection {
    /// First: fields drop in order, and the place must go before the
    /// socket is closed.
    place: Place,
    stream: Stream,
    peer: Peer,
    standing: Standing,
    busy: Busy,
}

impl Connection {
    /// HTTP/1.1 with upgrades, closed if its first request's headers do not
    /// arrive within `header_read_timeout`. hyper's own header-read clock
    /// runs whenever the connection waits for a request head, from its
    /// start or from the last response, so it is the idle timeout.
    async fn serve(self, app: Router, limits: Limits, cancel: CancellationToken) {
        let requested = Arc::new(Notify::new());
        let budget = ReadBudget::default();
        let service = {
            let (requested, budget, peer) = (requested.clone(), budget.clone(), self.peer);
            let (standing, busy) = (self.standing, self.busy);
            let app = TowerToHyperService::new(app);
            service_fn(move |mut request: hyper::Request<Incoming>| {
                requested.notify_one();
                request.extensions_mut().insert(peer);
                request.extensions_mut().insert(budget.clone());
                request.extensions_mut().insert(standing.clone());
                busy.set(true);
                let answer = app.call(request);
                let (standing, busy) = (standing.clone(), busy.clone());
                async move {
                    let mut answered = answer.await;
                    busy.set(false);
                    // No keep-alive for strangers: a connection that showed
                    // no credential closes after its answer.
                    if let Ok(response) = &mut answered
                        && !standing.is_vouched()
                        && response.status() != StatusCode::SWITCHING_PROTOCOLS
                    {
                        let close = HeaderValue::from_static("close");
                        response.headers_mut().insert(header::CONNECTION, close);
                    }
                    answered
                }
            })
        };
        let io = TokioIo::new(Slotted {
            _place: self.place,
            stream: self.stream,
            budget,
        });
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.idle_timeout)
            .serve_connection(io, service)
            .with_upgrades();
        tokio::pin!(connection);
        let first_deadline = tokio::time::sleep(limits.header_read_timeout);
        tokio::pin!(first_deadline);
        let (mut requested_once, mut closing) = (false, false);
        loop {
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!("connection ended: {e}");
                    }
                    return;
                }
                () = requested.notified(), if !requested_once => requested_once = true,
                () = &mut first_deadline, if !requested_once => {
                    tracing::debug!("no request headers within {:?}; closing", limits.header_read_timeout);
                    return;
                }
                () = cancel.cancelled(), if !closing => {
                    // Idle connections close now; a request in flight finishes first.
                    connection.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// A connection's socket, holding its place in the table for as long as it
/// is open (through an upgrade to a WebSocket too), whose reads fail once
/// its [`ReadBudget`] is spent.
struct Slotted {
    /// First: it leaves the table before the socket closes, so a shed
    /// never shuts down a descriptor number reused by another file.
    _place: Place,
    stream: Stream,
    budget: ReadBudget,
}

impl AsyncRead for Slotted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = on_stream!(&mut this.stream, s => Pin::new(s).poll_read(cx, buf));
        if let Poll::Ready(Ok(())) = read
            && !this.budget.spend(buf.filled().len() - before)
        {
            let refused = "more sent before authenticating than a WebSocket may";
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, refused)));
        }
        read
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        on_stream!(&mut self.get_mut().stream, s => Pin::new(s).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        on_stream!(&mut self.get_mut().stream, s => Pin::new(s).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        on_stream!(&self.stream, s => s.is_write_vectored())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        on_stream!(&mut self.get_mut().stream, s => Pin::new(s).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        on_stream!(&mut self.get_mut().stream, s => Pin::new(s).poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_take_at_most_half_the_descriptors() {
        #[rustfmt::skip]
        let cases = [
            (512, Some(1024), 512),
            (512, Some(256), 128),
            (512, None, 512),
            (512, Some(1), 1),
            (4, Some(65_536), 4),
        ];
        for (configured, limit, want) in cases {
            assert_eq!(
                capped_by_fd_limit(configured, limit),
                want,
                "{configured} {limit:?}"
            );
        }
    }
}
