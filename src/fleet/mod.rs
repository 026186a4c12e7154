//! The fleet: the peers whose sessions this tmuxd (the hub) also serves.
//!
//! Each peer keeps its own tmuxd, authoritative for its tmux. The hub
//! follows each peer's event stream (`follow.rs`), keeping a live copy of
//! its session summaries, so a list never fans out, and records its
//! events in the hub's own log with `host` and the peer's `host_seq`; the
//! largest `host_seq` recorded is the cursor the hub resumes from, kept
//! in the log itself and in `fleet-cursors.json`. Requests for a peer's
//! session (`HOST/sess_N`) are forwarded in one hop (`api/hosts.rs`) with
//! the peer's token, which never leaves the hub.
//!
//! **What the hub trusts of a peer.** Nothing it has not checked: before
//! any request carrying the token, on every (re)connection and at every
//! heartbeat, the peer proves it holds that token (`GET /v1/auth/proof`);
//! every read from it is bounded (`bounded.rs`); redirects are never
//! followed (`transport.rs`); its events and summaries must name its own
//! sessions (bare `sess_N`), else they are dropped and counted.

pub mod answers;
pub mod bounded;
mod cursors;
pub mod fanin;
mod follow;
pub mod sse;
mod ssh;
pub mod transport;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{ConfigError, FleetConfig, PeerToken};
use crate::id::{HostName, SessionId};
use crate::metrics::Metrics;
use crate::supervisor::Supervisor;
use crate::wire::SessionSummary;
use transport::Route;

pub use cursors::CURSORS_FILE;

/// How a peer is doing, as `GET /v1/hosts` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostStatus {
    /// Not reached yet since the hub started.
    Connecting,
    /// Answering, its events followed.
    Up,
    /// Its last check failed; its sessions are listed `stale`.
    Down,
}

/// One peer in `GET /v1/hosts`.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct HostView {
    #[schema(example = "gpu1")]
    pub name: String,
    /// The configured URL (with `ssh`, as seen from the peer host).
    pub url: String,
    /// `http`, or `ssh` when the hub reaches it through its own `ssh -L`.
    pub transport: &'static str,
    /// Where `tmuxd attach` runs `ssh -t`: the configured `ssh`
    /// destination, else the URL's host.
    #[schema(example = "me@gpu1.lan")]
    pub ssh: String,
    pub status: HostStatus,
    /// When it entered this status.
    pub since: DateTime<Utc>,
    /// The latest failure (a check, the event stream, the ssh client), kept after recovery.
    pub last_error: Option<String>,
    /// The last check's round trip, in milliseconds.
    pub rtt_ms: Option<f64>,
    /// The peer's tmuxd version.
    pub version: Option<String>,
    /// Its sessions as last known.
    pub sessions: usize,
    /// The last peer event seq the hub recorded.
    pub cursor: u64,
    /// With `ssh`: the client's latest failure (a stderr line, or how it exited).
    pub ssh_error: Option<String>,
    /// Events and summaries it sent naming a session not its own
    /// (`other/sess_1`, not an id): dropped, never shown.
    pub refused: u64,
}

/// Why a request for a peer's session could not be served.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("no host `{0}` in fleet.peers")]
    UnknownHost(String),
    #[error("host `{host}` is down since {since}: {error}")]
    Down {
        host: HostName,
        since: DateTime<Utc>,
        error: String,
    },
    #[error("host `{host}` did not answer within {} ms", after.as_millis())]
    Timeout { host: HostName, after: Duration },
    #[error("host `{host}` could not be reached: {error}")]
    Unreachable { host: HostName, error: String },
    #[error("host `{host}` has not proved it holds its token yet")]
    NotYetProven { host: HostName },
    #[error("host `{host}` {error}")]
    BadAnswer { host: HostName, error: String },
}

/// What the hub knows of one peer; the lock is never held across an await.
#[derive(Debug)]
struct PeerState {
    status: HostStatus,
    since: DateTime<Utc>,
    last_error: Option<String>,
    rtt_ms: Option<f64>,
    version: Option<String>,
    ssh_error: Option<String>,
    /// Summaries as the hub serves them (qualified ids, `host`), by
    /// their id on the peer.
    sessions: BTreeMap<SessionId, SessionSummary>,
    cursor: u64,
    /// See [`HostView::refused`].
    refused: u64,
    /// The follower's current connection, ended when the peer misbehaves
    /// in a forwarded request, with why.
    connection: Option<CancellationToken>,
    dropped_for: Option<String>,
}

/// One configured peer.
#[derive(Debug)]
pub struct Peer {
    pub name: HostName,
    /// As configured, for `/v1/hosts`.
    url: String,
    /// `ssh`, else the URL's host: where a person's terminal goes.
    attach_to: String,
    /// `http://HOST:PORT` as the peer sees itself: requests name it (their
    /// `Host`) whichever way they go.
    base: String,
    /// `HOST:PORT` of `base`.
    authority: String,
    /// Over TCP to `base`, or the ssh forward's socket.
    route: Route,
    ssh: Option<ssh::Tunnel>,
    /// Follows no redirect; over `route`.
    client: reqwest::Client,
    /// Never logged, never served: `Debug` masks it.
    token: Token,
    state: Mutex<PeerState>,
}

/// A peer's token; `Debug` prints `****`.
struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("****")
    }
}

impl Peer {
    fn state(&self) -> std::sync::MutexGuard<'_, PeerState> {
        self.state.lock().expect("peer state lock")
    }

    /// `base` + `path` (which starts with `/`).
    pub fn url_for(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `ws://` for a WebSocket to the peer.
    pub fn ws_url_for(&self, path: &str) -> String {
        let http = self.url_for(path);
        http.replacen("http://", "ws://", 1)
    }

    /// The client requests to this peer go through.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Opens a WebSocket to the peer (the request made with
    /// [`Peer::ws_url_for`]), its messages bounded.
    pub async fn connect_socket(
        &self,
        request: tokio_tungstenite::tungstenite::handshake::client::Request,
    ) -> Result<transport::PeerSocket, tokio_tungstenite::tungstenite::Error> {
        transport::connect_socket(&self.route, &self.authority, request).await
    }

    /// The `Authorization` header value for the peer.
    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token.0)
    }

    fn view(&self) -> HostView {
        let state = self.state();
        HostView {
            name: self.name.to_string(),
            url: self.url.clone(),
            transport: if self.ssh.is_some() { "ssh" } else { "http" },
            ssh: self.attach_to.clone(),
            status: state.status,
            since: state.since,
            last_error: state.last_error.clone(),
            rtt_ms: state.rtt_ms,
            version: state.version.clone(),
            sessions: state.sessions.len(),
            cursor: state.cursor,
            ssh_error: state.ssh_error.clone(),
            refused: state.refused,
        }
    }

    /// Refuses at once unless the peer is up, which it is only after it
    /// proved it holds the token: the token goes nowhere else, and a
    /// caller learns why now instead of after the timeout.
    pub fn check_up(&self) -> Result<(), FleetError> {
        let state = self.state();
        match state.status {
            HostStatus::Down => Err(FleetError::Down {
                host: self.name.clone(),
                since: state.since,
                error: state.last_error.clone().unwrap_or_default(),
            }),
            HostStatus::Connecting => Err(FleetError::NotYetProven {
                host: self.name.clone(),
            }),
            HostStatus::Up => Ok(()),
        }
    }

    /// The peer sent what no real peer sends (too much, a redirect) in a
    /// forwarded request: down with `error`, its connection ended; it is
    /// up again only after it reconnects and proves itself again.
    pub fn misbehaved(&self, error: String) {
        tracing::warn!(host = %self.name, "{error}");
        let connection = {
            let mut state = self.state();
            state.dropped_for = Some(error.clone());
            state.connection.take()
        };
        self.set_status(HostStatus::Down, Some(error));
        if let Some(connection) = connection {
            connection.cancel();
        }
    }

    /// Counts an event or summary naming a session not this peer's.
    pub fn refuse(&self, metrics: &Metrics) {
        self.state().refused += 1;
        metrics.fleet_refused();
    }

    /// A summary it sent, qualified; `None` when it names a session not
    /// its own (counted) or is no summary (logged: a peer of another
    /// version).
    fn take_summary(
        &self,
        item: &serde_json::Value,
        asked: Option<SessionId>,
        metrics: &Metrics,
    ) -> Option<SessionSummary> {
        match answers::summary(&self.name, item, asked) {
            Ok(summary) => Some(summary),
            Err(foreign @ answers::Unfit::Foreign(_)) => {
                tracing::debug!(host = %self.name, "{foreign}");
                self.refuse(metrics);
                None
            }
            Err(unread @ answers::Unfit::Unreadable { .. }) => {
                tracing::warn!(host = %self.name, "{unread}");
                None
            }
        }
    }

    fn set_status(&self, status: HostStatus, error: Option<String>) {
        let mut state = self.state();
        if state.status != status {
            state.status = status;
            state.since = Utc::now();
            if status == HostStatus::Down {
                tracing::warn!(host = %self.name, error = error.as_deref().unwrap_or(""), "fleet peer down");
            } else if status == HostStatus::Up {
                tracing::info!(host = %self.name, "fleet peer up");
            }
        }
        if error.is_some() {
            state.last_error = error;
        }
    }

    /// Records the ssh client's failure; the status is the checks' to say.
    fn note_ssh_error(&self, error: String) {
        self.state().ssh_error = Some(error);
    }

    /// Records a failure without changing the status.
    fn note_error(&self, error: String) {
        self.state().last_error = Some(error);
    }
}

/// The peers, shared by the API and the followers.
#[derive(Clone, Debug, Default)]
pub struct Fleet {
    peers: Arc<BTreeMap<HostName, Arc<Peer>>>,
    /// Longest a forwarded request may take.
    pub request_timeout: Duration,
}

/// A `[[fleet.peers]]` token: as given, or read from its file now.
fn read_token(index: usize, token: &PeerToken) -> Result<String, ConfigError> {
    let path = match token {
        PeerToken::Given(token) => return Ok(token.clone()),
        PeerToken::File(path) => path,
    };
    let key = format!("fleet.peers[{index}].token_file");
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Invalid {
        key: key.clone(),
        reason: format!("cannot read {}: {e}", path.display()),
    })?;
    let token = text.trim().to_owned();
    if token.is_empty() {
        return Err(ConfigError::Invalid {
            key,
            reason: format!("{} is empty", path.display()),
        });
    }
    Ok(token)
}

impl Fleet {
    /// Reads the peers' tokens, starts their ssh forwards and followers.
    /// No peers: an empty fleet, nothing started. The peers were checked
    /// as the config was read; what can still fail is reading a token
    /// file and placing an ssh forward's socket.
    pub fn start(
        config: &FleetConfig,
        supervisor: &Supervisor,
        metrics: &Metrics,
        data_dir: &Path,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> Result<Fleet, ConfigError> {
        let cursors = cursors::Cursors::load(data_dir, supervisor);
        let mut peers = BTreeMap::new();
        for (index, config_peer) in config.peers.iter().enumerate() {
            let name = config_peer.name.clone();
            let token = read_token(index, &config_peer.token)?;
            let (host, port) = (&config_peer.host, config_peer.port);
            let (route, tunnel) = match &config_peer.ssh {
                None => (Route::Tcp, None),
                Some(destination) => {
                    let socket =
                        transport::forward_socket(data_dir, name.as_str()).map_err(|e| {
                            ConfigError::Invalid {
                                key: format!("fleet.peers[{index}].ssh"),
                                reason: format!("cannot place the forward's socket: {e}"),
                            }
                        })?;
                    let tunnel = ssh::Tunnel::new(
                        destination,
                        &config_peer.ssh_args,
                        host,
                        port,
                        socket.clone(),
                    );
                    (Route::Socket(socket), Some(tunnel))
                }
            };
            let client = transport::client(&route).map_err(|e| ConfigError::Invalid {
                key: format!("fleet.peers[{index}]"),
                reason: format!("cannot make an HTTP client: {e}"),
            })?;
            let attach_to = config_peer.ssh.clone().unwrap_or_else(|| {
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned()
            });
            let peer = Arc::new(Peer {
                name: name.clone(),
                url: config_peer.url.clone(),
                attach_to,
                base: format!("http://{host}:{port}"),
                authority: format!("{host}:{port}"),
                route,
                ssh: tunnel,
                client,
                token: Token(token),
                state: Mutex::new(PeerState {
                    status: HostStatus::Connecting,
                    since: Utc::now(),
                    last_error: None,
                    rtt_ms: None,
                    version: None,
                    ssh_error: None,
                    sessions: BTreeMap::new(),
                    cursor: cursors.get(name.as_str()),
                    refused: 0,
                    connection: None,
                    dropped_for: None,
                }),
            });
            peers.insert(name, peer);
        }
        let fleet = Fleet {
            peers: Arc::new(peers),
            request_timeout: Duration::from_millis(config.request_timeout_ms),
        };
        let heartbeat = Duration::from_millis(config.heartbeat_ms);
        let cursors = Arc::new(cursors);
        for peer in fleet.peers.values() {
            if let Some(tunnel) = &peer.ssh {
                tasks.spawn(ssh::supervise(tunnel.clone(), peer.clone(), cancel.clone()));
            }
            let follower = follow::Follower {
                peer: peer.clone(),
                supervisor: supervisor.clone(),
                metrics: metrics.clone(),
                cursors: cursors.clone(),
                heartbeat,
                cancel: cancel.clone(),
            };
            tasks.spawn(follower.run());
        }
        Ok(fleet)
    }

    pub fn is_empty(&self) -> bool {
        self.peers.is_empty()
    }

    pub fn peer(&self, host: &HostName) -> Result<&Arc<Peer>, FleetError> {
        self.peers
            .get(host)
            .ok_or_else(|| FleetError::UnknownHost(host.to_string()))
    }

    pub fn hosts(&self) -> Vec<HostView> {
        self.peers.values().map(|peer| peer.view()).collect()
    }

    /// The peers' sessions as last known, by host then id; a down peer's
    /// are marked `stale` with the time it went down.
    pub fn sessions(&self, host: Option<&HostName>) -> Vec<SessionSummary> {
        let mut out = Vec::new();
        for peer in self.peers.values() {
            if host.is_some_and(|h| h != &peer.name) {
                continue;
            }
            let state = peer.state();
            let stale_since = (state.status == HostStatus::Down).then_some(state.since);
            out.extend(state.sessions.values().map(|summary| SessionSummary {
                stale: stale_since.is_some(),
                stale_since,
                ..summary.clone()
            }));
        }
        out
    }
}
