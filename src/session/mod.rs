//! One actor per tmux session: it owns the PTY of tmuxd's tmux client, the
//! parsed screen, the replay ring and the state tracker. Everyone else talks
//! to it through a cloneable `SessionHandle`.

mod actor;
mod foreground;
mod pty;
mod redraw;
mod replay;
mod screen;
mod state;

use std::ffi::OsString;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::{Notify, mpsc, oneshot, watch};

pub use pty::PtyError;
pub use replay::{Chunk, Replay};
pub use screen::{Cursor, Layout, PaneFacts, Region, Screen, ScreenSnapshot, SnapshotFormat};
pub use state::{SessionState, StateReason, StateView, Timing};

use crate::tmux::SessionView;

/// Requests an actor serves; each carries its own reply channel.
pub enum SessionCmd {
    /// The parsed screen, from memory.
    Snapshot {
        format: SnapshotFormat,
        region: Region,
        reply: oneshot::Sender<Snapshot>,
    },
    /// What the actor knows for the session summary.
    Summary {
        reply: oneshot::Sender<ActorSummary>,
    },
    /// Fresh facts from the discovery tick (size, status line, command, cwd).
    UpdateView { view: SessionView },
    /// A stream of output chunks after `since`, with replay from the ring.
    Subscribe {
        since: Option<u64>,
        reply: oneshot::Sender<Subscription>,
    },
    /// Someone typed into the session through tmux (clears attention).
    NoteInput,
    /// The state as it changes, for waiters.
    WatchState {
        reply: oneshot::Sender<watch::Receiver<StateView>>,
    },
    /// The latest output sequence number as it changes, for screen viewers.
    WatchOutput {
        reply: oneshot::Sender<watch::Receiver<u64>>,
    },
    /// End the tmux client cleanly (the session lives on) and stop.
    Shutdown { reply: oneshot::Sender<()> },
}

/// The snapshot endpoint's body.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    pub session_id: String,
    /// Latest output chunk folded into this screen.
    pub seq: u64,
    #[serde(flatten)]
    pub screen: ScreenSnapshot,
}

/// How tmuxd's client is connected to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Attached,
    Reconnecting,
    Disconnected,
}

/// The session summary's fields only the actor knows.
#[derive(Clone, Debug, Serialize)]
pub struct ActorSummary {
    pub state: SessionState,
    pub state_reason: StateReason,
    pub state_since: DateTime<Utc>,
    pub current_command: String,
    pub cwd: String,
    pub title: String,
    pub cols: u16,
    pub rows: u16,
    pub last_activity_at: Option<DateTime<Utc>>,
    pub transport: Transport,
    pub subscribers: usize,
    pub latest_seq: u64,
}

/// A live output stream: replayed chunks first, then `live` until the
/// session ends or the subscriber falls behind (then `live` closes and
/// `overflowed` is set).
pub struct Subscription {
    pub replay: Replay,
    pub live: LiveOutput,
    pub overflowed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    pub latest_seq: u64,
    pub cols: u16,
    pub rows: u16,
}

/// Output chunks as they arrive, bounded by bytes queued: the actor drops a
/// subscriber whose queue would pass the limit rather than wait for it.
pub struct LiveOutput {
    rx: mpsc::UnboundedReceiver<Chunk>,
    queued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl LiveOutput {
    fn new(
        rx: mpsc::UnboundedReceiver<Chunk>,
        queued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) -> Self {
        LiveOutput { rx, queued }
    }

    pub async fn recv(&mut self) -> Option<Chunk> {
        let chunk = self.rx.recv().await?;
        self.taken(&chunk);
        Some(chunk)
    }

    /// A chunk already queued, without waiting.
    pub fn try_recv(&mut self) -> Option<Chunk> {
        let chunk = self.rx.try_recv().ok()?;
        self.taken(&chunk);
        Some(chunk)
    }

    fn taken(&self, chunk: &Chunk) {
        self.queued
            .fetch_sub(chunk.bytes.len(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// What actors tell the supervisor.
#[derive(Debug)]
pub enum ActorEvent {
    /// The actor's tmux client has gone away.
    Exited(ClientExited),
    /// The session's state changed.
    State {
        session_id: String,
        actor_id: u64,
        view: StateView,
    },
}

/// Sent to the supervisor when an actor's client has gone away.
#[derive(Debug)]
pub struct ClientExited {
    pub session_id: String,
    /// Which actor of this session ended (a session is re-attached with a new one).
    pub actor_id: u64,
    pub why: ClientExit,
}

/// Why the tmux client left, from the message it prints as it exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientExit {
    /// `[exited]`: the session ended.
    SessionEnded,
    /// `[server exited]`: the whole tmux server went away.
    ServerExited,
    /// `[detached ...]`: someone detached tmuxd's client; the session lives.
    Detached,
    /// Anything else (killed client, lost terminal, failed attach).
    Unknown,
}

impl ClientExit {
    /// Reads the exit message from the last bytes the client printed.
    pub fn from_output_tail(tail: &[u8]) -> ClientExit {
        let has = |needle: &[u8]| tail.windows(needle.len()).any(|w| w == needle);
        if has(b"[server exited") {
            ClientExit::ServerExited
        } else if has(b"[exited]") {
            ClientExit::SessionEnded
        } else if has(b"[detached") {
            ClientExit::Detached
        } else {
            ClientExit::Unknown
        }
    }
}

/// Settings every actor shares.
#[derive(Clone, Debug)]
pub struct ActorConfig {
    pub replay_bytes: usize,
    pub subscriber_queue_bytes: usize,
    pub timing: Timing,
}

/// Everything needed to start an actor for one session.
pub struct ActorSpec {
    pub session_id: String,
    pub actor_id: u64,
    pub view: SessionView,
    pub attach_argv: Vec<OsString>,
    pub env_remove: Vec<OsString>,
    pub config: ActorConfig,
    pub events: mpsc::UnboundedSender<ActorEvent>,
    /// Woken when tmux redraws the client: the window's geometry may have
    /// changed, so discovery should look now rather than at its next tick.
    pub layout_hint: Arc<Notify>,
}

#[derive(Debug, thiserror::Error)]
#[error("session actor has stopped")]
pub struct ActorGone;

/// Inbox depth per actor; senders wait when it is full.
const INBOX: usize = 64;

#[derive(Clone, Debug)]
pub struct SessionHandle {
    tx: mpsc::Sender<SessionCmd>,
}

impl SessionHandle {
    /// Starts the tmux client on a PTY and the actor task that owns it.
    pub fn spawn(spec: ActorSpec) -> Result<SessionHandle, PtyError> {
        let (tx, rx) = mpsc::channel(INBOX);
        actor::start(spec, rx)?;
        Ok(SessionHandle { tx })
    }

    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> SessionCmd,
    ) -> Result<T, ActorGone> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| ActorGone)?;
        answer.await.map_err(|_| ActorGone)
    }

    pub async fn snapshot(
        &self,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<Snapshot, ActorGone> {
        self.ask(|reply| SessionCmd::Snapshot {
            format,
            region,
            reply,
        })
        .await
    }

    pub async fn summary(&self) -> Result<ActorSummary, ActorGone> {
        self.ask(|reply| SessionCmd::Summary { reply }).await
    }

    pub async fn subscribe(&self, since: Option<u64>) -> Result<Subscription, ActorGone> {
        self.ask(|reply| SessionCmd::Subscribe { since, reply })
            .await
    }

    /// Never waits: a busy actor skips this tick's update and gets the next.
    pub fn update_view(&self, view: SessionView) {
        let _ = self.tx.try_send(SessionCmd::UpdateView { view });
    }

    pub fn note_input(&self) {
        let _ = self.tx.try_send(SessionCmd::NoteInput);
    }

    pub async fn watch_state(&self) -> Result<watch::Receiver<StateView>, ActorGone> {
        self.ask(|reply| SessionCmd::WatchState { reply }).await
    }

    pub async fn watch_output(&self) -> Result<watch::Receiver<u64>, ActorGone> {
        self.ask(|reply| SessionCmd::WatchOutput { reply }).await
    }

    /// Ends the client cleanly and waits for the actor to finish.
    pub async fn shutdown(&self) {
        let _ = self.ask(|reply| SessionCmd::Shutdown { reply }).await;
    }
}
