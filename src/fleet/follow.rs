//! One task per peer: check it, copy its session list, then follow its
//! event stream from the hub's cursor, recording each event in the hub's
//! log and refreshing the summary it concerns; a failed check or a broken
//! stream marks the peer down, and the task reconnects with backoff.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, AUTHORIZATION};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::bounded::{MAX_ANSWER_BYTES, MAX_CHECK_BYTES, MAX_EVENT_BYTES, ReadError, read_capped};
use super::cursors::Cursors;
use super::fanin::{FanIn, fan_in};
use super::sse::{SseMessage, SseParser, SseTooLarge};
use super::{HostStatus, Peer};
use crate::id::{FleetId, SessionId};
use crate::metrics::Metrics;
use crate::secret::{PROOF_PATH, Proofs, new_nonce};
use crate::supervisor::Supervisor;
use crate::wire::{SessionSummary, VersionInfo};

const MIN_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

pub struct Follower {
    pub peer: Arc<Peer>,
    pub supervisor: Supervisor,
    pub metrics: Metrics,
    pub cursors: Arc<Cursors>,
    pub heartbeat: Duration,
    pub cancel: CancellationToken,
}

/// Aborts a helper task when the connection it served ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How the last connection to a peer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// It never got up.
    BeforeUp,
    /// It got up, then failed or ended.
    AfterUp,
    /// The peer sent what no real peer sends (too much, a redirect, no
    /// proof): whatever it reached, it is retried at the slowest pace.
    Hostile,
}

/// The delay before the next attempt: doubling from `MIN_BACKOFF`, at most
/// `MAX_BACKOFF`, back to the start after a connection that got up.
fn next_backoff(current: Duration, ended: Ended) -> Duration {
    match ended {
        Ended::AfterUp => MIN_BACKOFF,
        Ended::BeforeUp => (current * 2).min(MAX_BACKOFF),
        Ended::Hostile => MAX_BACKOFF,
    }
}

impl Follower {
    /// How long one check may take before the peer counts as down.
    fn check_timeout(&self) -> Duration {
        (self.heartbeat * 2).max(Duration::from_secs(1))
    }

    pub async fn run(self) {
        let mut backoff = MIN_BACKOFF;
        loop {
            let mut reached_up = false;
            let outcome = tokio::select! {
                _ = self.cancel.cancelled() => break,
                outcome = self.connect_and_follow(&mut reached_up) => outcome,
            };
            self.peer.state().connection = None;
            let mut ended = match reached_up {
                true => Ended::AfterUp,
                false => Ended::BeforeUp,
            };
            if let Err(error) = &outcome {
                if error.is_hostile() {
                    ended = Ended::Hostile;
                }
                self.peer
                    .set_status(HostStatus::Down, Some(error.to_string()));
            }
            backoff = next_backoff(backoff, ended);
            tokio::select! {
                _ = self.cancel.cancelled() => break,
                _ = tokio::time::sleep(backoff) => {}
            }
        }
        self.cursors.flush();
    }

    /// A request carrying the token: only ever sent after [`prove`]
    /// succeeded on this connection.
    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.peer
            .client()
            .get(self.peer.url_for(path))
            .header(AUTHORIZATION, self.peer.authorization())
    }

    async fn connect_and_follow(&self, reached_up: &mut bool) -> Result<(), PeerError> {
        let stream = self.connect().await?;
        self.follow(stream, reached_up).await
    }

    /// The peer proved, its version and list copied, its event stream
    /// opened from the cursor.
    async fn connect(&self) -> Result<reqwest::Response, PeerError> {
        let rtt = prove(&self.peer, self.check_timeout()).await?;
        let version = version(&self.peer, self.check_timeout()).await?;
        let sessions = list(self, self.check_timeout()).await?;
        {
            let mut state = self.peer.state();
            state.rtt_ms = Some(rtt);
            state.version = version;
            state.sessions = sessions;
        }
        let since = self.peer.state().cursor;
        let response = self
            .get(&format!("/v1/events?since={since}"))
            .header(ACCEPT, "text/event-stream")
            .timeout(Duration::from_secs(365 * 86_400))
            .send();
        let response = tokio::time::timeout(self.check_timeout(), response)
            .await
            .map_err(|_| PeerError::NoAnswer(Step::EventStream))?
            .map_err(|e| PeerError::Request(Step::EventStream, e))?;
        if !response.status().is_success() {
            return Err(PeerError::Status(Step::EventStream, response.status()));
        }
        Ok(response)
    }

    /// The peer up while its stream flows and its heartbeats prove it.
    async fn follow(
        &self,
        mut response: reqwest::Response,
        reached_up: &mut bool,
    ) -> Result<(), PeerError> {
        // The connection ends when a check fails (a cut link never errors
        // the stream itself until TCP gives up, minutes later), or when a
        // forwarded request finds the peer misbehaving.
        let connection = self.cancel.child_token();
        {
            let mut state = self.peer.state();
            state.connection = Some(connection.clone());
            state.dropped_for = None;
        }
        self.peer.set_status(HostStatus::Up, None);
        *reached_up = true;
        let (failed_tx, mut failed_rx) = mpsc::unbounded_channel();
        let _heartbeat = AbortOnDrop(tokio::spawn(heartbeat(
            self.peer.clone(),
            self.heartbeat,
            self.check_timeout(),
            failed_tx,
        )));
        let (dirty_tx, dirty_rx) = mpsc::unbounded_channel();
        let _refresher = AbortOnDrop(tokio::spawn(refresh(
            self.peer.clone(),
            self.metrics.clone(),
            self.check_timeout(),
            dirty_rx,
        )));
        let mut parser = SseParser::new(MAX_EVENT_BYTES);
        loop {
            tokio::select! {
                _ = connection.cancelled() => {
                    if self.cancel.is_cancelled() {
                        return Ok(());
                    }
                    let why = self.peer.state().dropped_for.take();
                    return Err(PeerError::Misbehaved(why.unwrap_or_default()));
                }
                failed = failed_rx.recv() => {
                    return Err(failed.unwrap_or(PeerError::HeartbeatStopped));
                }
                chunk = response.chunk() => match chunk {
                    Ok(Some(bytes)) => {
                        for message in parser.push(&bytes).map_err(PeerError::Sse)? {
                            self.take(message, &dirty_tx);
                        }
                    }
                    Ok(None) => return Err(PeerError::StreamEnded),
                    Err(e) => return Err(PeerError::Request(Step::EventStream, e)),
                },
            }
        }
    }

    /// One message of the peer's stream: recorded once (a seq at or below
    /// the cursor was recorded already), the cursor moved past it.
    fn take(&self, message: SseMessage, dirty: &mpsc::UnboundedSender<SessionId>) {
        if message.event.as_deref() == Some("replay_truncated") {
            if self.peer.state().cursor == 0 {
                // First contact: the peer's older events are simply before
                // the hub's time, not lost to it.
                return;
            }
            let error = format!(
                "the peer no longer kept every event after seq {}: some were not fanned in",
                self.peer.state().cursor
            );
            tracing::warn!(host = %self.peer.name, "{error}");
            self.peer.note_error(error);
            return;
        }
        if message.event.is_some() {
            return;
        }
        let taken = match fan_in(&self.peer.name, &message.data) {
            Ok(taken) => taken,
            Err(e) => {
                tracing::warn!(host = %self.peer.name, "{e}");
                return;
            }
        };
        let (seq, event) = match taken {
            FanIn::Record { seq, event } => (seq, Some(*event)),
            FanIn::Skip { seq } => (seq, None),
            FanIn::Foreign { seq } => {
                if seq > self.peer.state().cursor {
                    self.peer.refuse(&self.metrics);
                }
                (seq, None)
            }
        };
        if seq <= self.peer.state().cursor {
            return;
        }
        if let Some(event) = event {
            let local = event
                .session_id
                .as_deref()
                .and_then(|id| id.parse::<FleetId>().ok())
                .map(|id| id.session);
            self.supervisor.record_event(event);
            if let Some(local) = local {
                let _ = dirty.send(local);
            }
        }
        self.peer.state().cursor = seq;
        self.cursors.advance(self.peer.name.as_str(), seq);
    }
}

/// `GET /v1/auth/proof` with a fresh nonce, no token sent: the peer must
/// show it holds the token the hub is about to send it. Asked on every
/// (re)connection and at every heartbeat, so whatever answers at the
/// peer's address (another user's listener on a port the peer left, on
/// either host) never sees the token. Returns the round trip in ms.
async fn prove(peer: &Peer, timeout: Duration) -> Result<f64, PeerError> {
    let nonce = new_nonce();
    let started = Instant::now();
    let request = peer
        .client()
        .get(peer.url_for(&format!("{PROOF_PATH}?nonce={nonce}")))
        .timeout(timeout)
        .send();
    let response = request
        .await
        .map_err(|e| PeerError::Request(Step::Proof, e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(PeerError::NoProof(format!("HTTP {}", status_text(status))));
    }
    let body = read_capped(response, MAX_CHECK_BYTES)
        .await
        .map_err(|e| PeerError::read(Step::Proof, e))?;
    let proofs: Proofs = serde_json::from_slice(&body)
        .map_err(|_| PeerError::NoProof("its answer is not a proof".to_owned()))?;
    if !proofs.shows(&peer.token.0, &nonce) {
        return Err(PeerError::NoProof("a wrong proof".to_owned()));
    }
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// `GET /version` (no token): the peer's version.
async fn version(peer: &Peer, timeout: Duration) -> Result<Option<String>, PeerError> {
    let request = peer
        .client()
        .get(peer.url_for("/version"))
        .timeout(timeout)
        .send();
    let response = request
        .await
        .map_err(|e| PeerError::Request(Step::Check, e))?;
    if !response.status().is_success() {
        return Err(PeerError::Status(Step::Check, response.status()));
    }
    let body = read_capped(response, MAX_CHECK_BYTES)
        .await
        .map_err(|e| PeerError::read(Step::Check, e))?;
    let body: VersionInfo =
        serde_json::from_slice(&body).map_err(|_| PeerError::NotJson(Step::Check))?;
    Ok(Some(body.version))
}

/// Proves the peer every `every`; the first failure is sent and ends the task.
async fn heartbeat(
    peer: Arc<Peer>,
    every: Duration,
    timeout: Duration,
    failed: mpsc::UnboundedSender<PeerError>,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match prove(&peer, timeout).await {
            Ok(rtt) => peer.state().rtt_ms = Some(rtt),
            Err(error) => {
                let _ = failed.send(error);
                return;
            }
        }
    }
}

/// The peer's live sessions, keyed by their id there; an item whose id is
/// not a bare `sess_N` is dropped and counted, one that is no summary
/// dropped.
async fn list(
    follower: &Follower,
    timeout: Duration,
) -> Result<BTreeMap<SessionId, SessionSummary>, PeerError> {
    let response = follower
        .get("/v1/sessions")
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| PeerError::Request(Step::List, e))?;
    if !response.status().is_success() {
        return Err(PeerError::Status(Step::List, response.status()));
    }
    let body = read_capped(response, MAX_ANSWER_BYTES)
        .await
        .map_err(|e| PeerError::read(Step::List, e))?;
    /// Items read one by one: one that is not a summary costs only itself.
    #[derive(serde::Deserialize)]
    struct Listed {
        sessions: Vec<serde_json::Value>,
    }
    let listed: Listed = serde_json::from_slice(&body).map_err(|e| match e.is_data() {
        true => PeerError::NoSessions,
        false => PeerError::NotJson(Step::List),
    })?;
    let peer = &follower.peer;
    let mut sessions = BTreeMap::new();
    for item in &listed.sessions {
        if let Some(summary) = peer.take_summary(item, None, &follower.metrics) {
            sessions.insert(summary.session_id.session, summary);
        }
    }
    Ok(sessions)
}

/// Refetches the summaries events touched, each once however many events
/// named it meanwhile; an ended or unknown session leaves the list. A
/// summary naming another session is dropped and counted; an answer past
/// the limit ends the connection.
async fn refresh(
    peer: Arc<Peer>,
    metrics: Metrics,
    timeout: Duration,
    mut dirty: mpsc::UnboundedReceiver<SessionId>,
) {
    while let Some(first) = dirty.recv().await {
        let mut ids = BTreeSet::from([first]);
        while let Ok(id) = dirty.try_recv() {
            ids.insert(id);
        }
        for id in ids {
            let request = peer
                .client()
                .get(peer.url_for(&format!("/v1/sessions/{id}")))
                .header(AUTHORIZATION, peer.authorization())
                .timeout(timeout)
                .send();
            let Ok(response) = request.await else {
                continue;
            };
            if response.status() == reqwest::StatusCode::NOT_FOUND {
                peer.state().sessions.remove(&id);
                continue;
            }
            let body = match read_capped(response, MAX_ANSWER_BYTES).await {
                Ok(body) => body,
                Err(e @ ReadError::TooLarge(_)) => {
                    peer.misbehaved(PeerError::read(Step::Refresh, e).to_string());
                    return;
                }
                Err(ReadError::Request(_)) => continue,
            };
            /// The summary read on its own, as in a list.
            #[derive(serde::Deserialize)]
            struct Envelope {
                session: serde_json::Value,
            }
            let Ok(body) = serde_json::from_slice::<Envelope>(&body) else {
                continue;
            };
            let Some(summary) = peer.take_summary(&body.session, Some(id), &metrics) else {
                continue;
            };
            let mut state = peer.state();
            match summary.ended_at {
                Some(_) => state.sessions.remove(&id),
                None => state.sessions.insert(id, summary),
            };
        }
    }
}

/// What following a peer was doing when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Proof,
    Check,
    List,
    EventStream,
    Refresh,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Proof => "proof",
            Step::Check => "check",
            Step::List => "list",
            Step::EventStream => "event stream",
            Step::Refresh => "summary",
        })
    }
}

/// Why following a peer stopped; shown as the host's `last_error`.
#[derive(Debug, thiserror::Error)]
enum PeerError {
    #[error("{0}: {text}", text = error_text(.1))]
    Request(Step, reqwest::Error),
    #[error("{0}: HTTP {text}", text = status_text(*.1))]
    Status(Step, reqwest::StatusCode),
    #[error("{0}: no answer")]
    NoAnswer(Step),
    #[error("did not prove it holds the token ({0}); the token was not sent")]
    NoProof(String),
    #[error("{0}: answered more than {1} bytes")]
    TooLarge(Step, usize),
    #[error("{0}: not JSON")]
    NotJson(Step),
    #[error("event stream: {0}")]
    Sse(SseTooLarge),
    #[error("list: no sessions array")]
    NoSessions,
    #[error("event stream ended")]
    StreamEnded,
    #[error("heartbeat stopped")]
    HeartbeatStopped,
    /// Found by a forwarded request ([`Peer::misbehaved`]).
    #[error("{0}")]
    Misbehaved(String),
}

impl PeerError {
    fn read(step: Step, error: ReadError) -> PeerError {
        match error {
            ReadError::TooLarge(limit) => PeerError::TooLarge(step, limit),
            ReadError::Request(e) => PeerError::Request(step, e),
        }
    }

    /// Sent what no real peer sends: retried at the slowest pace.
    fn is_hostile(&self) -> bool {
        match self {
            PeerError::NoProof(_)
            | PeerError::TooLarge(..)
            | PeerError::Sse(_)
            | PeerError::Misbehaved(_) => true,
            PeerError::Status(_, status) => status.is_redirection(),
            _ => false,
        }
    }
}

/// A status, and for a redirect that it was not followed.
pub fn status_text(status: reqwest::StatusCode) -> String {
    match status.is_redirection() {
        true => format!("{status} (redirects are not followed)"),
        false => status.to_string(),
    }
}

/// reqwest's error with its causes, but never the URL's query (none of
/// ours carries a secret, but a log line should not depend on that).
fn error_text(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_a_ceiling_and_resets_after_up() {
        let mut delay = MIN_BACKOFF;
        let mut seen = Vec::new();
        for _ in 0..8 {
            delay = next_backoff(delay, Ended::BeforeUp);
            seen.push(delay.as_millis());
        }
        assert_eq!(seen, [400, 800, 1600, 3200, 5000, 5000, 5000, 5000]);
        assert_eq!(next_backoff(MAX_BACKOFF, Ended::AfterUp), MIN_BACKOFF);
        assert_eq!(next_backoff(MIN_BACKOFF, Ended::Hostile), MAX_BACKOFF);
    }
}
