//! One task per peer: check it, copy its session list, then follow its
//! event stream from the hub's cursor, recording each event in the hub's
//! log and refreshing the summary it concerns; a failed check or a broken
//! stream marks the peer down, and the task reconnects with backoff.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, AUTHORIZATION};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::cursors::Cursors;
use super::fanin::{FanIn, fan_in, qualify};
use super::sse::{SseMessage, SseParser};
use super::{HostStatus, Peer};
use crate::id::SessionId;
use crate::supervisor::Supervisor;

const MIN_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

pub struct Follower {
    pub peer: Arc<Peer>,
    pub client: reqwest::Client,
    pub supervisor: Supervisor,
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

/// The delay before the next attempt: doubling from `MIN_BACKOFF`, at most
/// `MAX_BACKOFF`, back to the start after a connection that got up.
fn next_backoff(current: Duration, reached_up: bool) -> Duration {
    match reached_up {
        true => MIN_BACKOFF,
        false => (current * 2).min(MAX_BACKOFF),
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
            if let Err(error) = outcome {
                self.peer
                    .set_status(HostStatus::Down, Some(error.to_string()));
            }
            backoff = next_backoff(backoff, reached_up);
            tokio::select! {
                _ = self.cancel.cancelled() => break,
                _ = tokio::time::sleep(backoff) => {}
            }
        }
        self.cursors.flush();
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .get(self.peer.url_for(path))
            .header(AUTHORIZATION, self.peer.authorization())
    }

    /// `GET /version`: the round trip and the version.
    async fn check(&self) -> Result<(f64, Option<String>), PeerError> {
        check(&self.client, &self.peer, self.check_timeout()).await
    }

    async fn connect_and_follow(&self, reached_up: &mut bool) -> Result<(), PeerError> {
        let (rtt, version) = self.check().await?;
        let sessions = list(self.get("/v1/sessions"), &self.peer, self.check_timeout()).await?;
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
        self.peer.set_status(HostStatus::Up, None);
        *reached_up = true;
        // The connection ends when a check fails: a cut link never errors
        // the stream itself until TCP gives up, minutes later.
        let connection = self.cancel.child_token();
        let (failed_tx, mut failed_rx) = mpsc::unbounded_channel();
        let _heartbeat = AbortOnDrop(tokio::spawn(heartbeat(
            self.client.clone(),
            self.peer.clone(),
            self.heartbeat,
            self.check_timeout(),
            failed_tx,
        )));
        let (dirty_tx, dirty_rx) = mpsc::unbounded_channel();
        let _refresher = AbortOnDrop(tokio::spawn(refresh(
            self.client.clone(),
            self.peer.clone(),
            self.check_timeout(),
            dirty_rx,
        )));
        let mut response = response;
        let mut parser = SseParser::default();
        loop {
            tokio::select! {
                _ = connection.cancelled() => return Ok(()),
                failed = failed_rx.recv() => {
                    return Err(failed.unwrap_or(PeerError::HeartbeatStopped));
                }
                chunk = response.chunk() => match chunk {
                    Ok(Some(bytes)) => {
                        for message in parser.push(&bytes) {
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
            FanIn::Record { seq, event } => (seq, Some(event)),
            FanIn::Skip { seq } => (seq, None),
        };
        if seq <= self.peer.state().cursor {
            return;
        }
        if let Some(event) = event {
            let local = event
                .session_id
                .as_deref()
                .and_then(|id| id.rsplit_once('/'))
                .and_then(|(_, id)| id.parse::<SessionId>().ok());
            self.supervisor.record_event(event);
            if let Some(local) = local {
                let _ = dirty.send(local);
            }
        }
        self.peer.state().cursor = seq;
        self.cursors.advance(self.peer.name.as_str(), seq);
    }
}

/// `GET /version` with a deadline: its round trip in ms and the version.
async fn check(
    client: &reqwest::Client,
    peer: &Peer,
    timeout: Duration,
) -> Result<(f64, Option<String>), PeerError> {
    let started = Instant::now();
    let request = client.get(peer.url_for("/version")).timeout(timeout).send();
    let response = request
        .await
        .map_err(|e| PeerError::Request(Step::Check, e))?;
    if !response.status().is_success() {
        return Err(PeerError::Status(Step::Check, response.status()));
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| PeerError::Request(Step::Check, e))?;
    let rtt = started.elapsed().as_secs_f64() * 1000.0;
    let version = body
        .get("version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((rtt, version))
}

/// Checks every `every`; the first failure is sent and ends the task.
async fn heartbeat(
    client: reqwest::Client,
    peer: Arc<Peer>,
    every: Duration,
    timeout: Duration,
    failed: mpsc::UnboundedSender<PeerError>,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match check(&client, &peer, timeout).await {
            Ok((rtt, _)) => peer.state().rtt_ms = Some(rtt),
            Err(error) => {
                let _ = failed.send(error);
                return;
            }
        }
    }
}

/// The peer's live sessions, keyed by their id there.
async fn list(
    request: reqwest::RequestBuilder,
    peer: &Peer,
    timeout: Duration,
) -> Result<BTreeMap<SessionId, Value>, PeerError> {
    let response = request
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| PeerError::Request(Step::List, e))?;
    if !response.status().is_success() {
        return Err(PeerError::Status(Step::List, response.status()));
    }
    let body: Value = response
        .json()
        .await
        .map_err(|e| PeerError::Request(Step::List, e))?;
    let items = body
        .get("sessions")
        .and_then(Value::as_array)
        .ok_or(PeerError::NoSessions)?;
    let mut sessions = BTreeMap::new();
    for item in items {
        let id = item.get("session_id").and_then(Value::as_str);
        let Some(id) = id.and_then(|id| id.parse::<SessionId>().ok()) else {
            continue;
        };
        let mut item = item.clone();
        qualify(&peer.name, &mut item);
        sessions.insert(id, item);
    }
    Ok(sessions)
}

/// Refetches the summaries events touched, each once however many events
/// named it meanwhile; an ended or unknown session leaves the list.
async fn refresh(
    client: reqwest::Client,
    peer: Arc<Peer>,
    timeout: Duration,
    mut dirty: mpsc::UnboundedReceiver<SessionId>,
) {
    while let Some(first) = dirty.recv().await {
        let mut ids = BTreeSet::from([first]);
        while let Ok(id) = dirty.try_recv() {
            ids.insert(id);
        }
        for id in ids {
            let request = client
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
            let Ok(mut body) = response.json::<Value>().await else {
                continue;
            };
            let Some(mut summary) = body.get_mut("session").map(Value::take) else {
                continue;
            };
            let ended = summary.get("ended_at").is_some_and(|at| !at.is_null());
            qualify(&peer.name, &mut summary);
            let mut state = peer.state();
            match ended {
                true => state.sessions.remove(&id),
                false => state.sessions.insert(id, summary),
            };
        }
    }
}

/// What following a peer was doing when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Check,
    List,
    EventStream,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Check => "check",
            Step::List => "list",
            Step::EventStream => "event stream",
        })
    }
}

/// Why following a peer stopped; shown as the host's `last_error`.
#[derive(Debug, thiserror::Error)]
enum PeerError {
    #[error("{0}: {text}", text = error_text(.1))]
    Request(Step, reqwest::Error),
    #[error("{0}: HTTP {1}")]
    Status(Step, reqwest::StatusCode),
    #[error("{0}: no answer")]
    NoAnswer(Step),
    #[error("list: no sessions array")]
    NoSessions,
    #[error("event stream ended")]
    StreamEnded,
    #[error("heartbeat stopped")]
    HeartbeatStopped,
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
            delay = next_backoff(delay, false);
            seen.push(delay.as_millis());
        }
        assert_eq!(seen, [400, 800, 1600, 3200, 5000, 5000, 5000, 5000]);
        assert_eq!(next_backoff(MAX_BACKOFF, true), MIN_BACKOFF);
    }
}
