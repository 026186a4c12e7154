//! The actor loop: PTY output in, commands in, answers out. It owns all of
//! a session's terminal state; nothing here is shared or locked.

use std::sync::Arc;

use bytes::Bytes;
use chrono::Utc;
use tokio::sync::{Notify, mpsc};

use super::pty::{ClientPty, PtyError};
use super::redraw::RedrawWatch;
use super::replay::{Replay, ReplayRing};
use super::screen::{Layout, PaneFacts, Screen};
use super::state::StateTracker;
use super::{
    ActorConfig, ActorSpec, ActorSummary, Chunk, ClientExit, ClientExited, SessionCmd, Snapshot,
    Subscription, Transport,
};
use crate::tmux::SessionView;

/// Bytes read from the PTY at a time.
const READ_BUFFER: usize = 64 * 1024;

/// Output kept to read the client's exit message from.
const TAIL_BYTES: usize = 256;

struct SessionActor {
    session_id: String,
    actor_id: u64,
    view: SessionView,
    screen: Screen,
    ring: ReplayRing,
    state: StateTracker,
    subscribers: Vec<mpsc::Sender<Chunk>>,
    config: ActorConfig,
    exits: mpsc::UnboundedSender<ClientExited>,
    client_gone: bool,
    /// The last bytes of output, where the client's exit message lands.
    tail: Vec<u8>,
    redraws: RedrawWatch,
    layout_hint: Arc<Notify>,
}

pub(super) fn start(spec: ActorSpec, inbox: mpsc::Receiver<SessionCmd>) -> Result<(), PtyError> {
    let layout = layout_of(&spec.view);
    let pty = ClientPty::spawn(
        &spec.attach_argv,
        spec.env_remove,
        layout.cols,
        layout.client_rows(),
    )?;
    let actor = SessionActor {
        session_id: spec.session_id,
        actor_id: spec.actor_id,
        view: spec.view,
        screen: Screen::new(layout),
        ring: ReplayRing::new(spec.config.replay_bytes),
        state: StateTracker::new(Utc::now(), spec.config.idle_after),
        subscribers: Vec::new(),
        config: spec.config,
        exits: spec.exits,
        client_gone: false,
        tail: Vec::with_capacity(TAIL_BYTES * 2),
        redraws: RedrawWatch::default(),
        layout_hint: spec.layout_hint,
    };
    tokio::spawn(actor.run(pty, inbox));
    Ok(())
}

fn layout_of(view: &SessionView) -> Layout {
    Layout {
        cols: view.cols,
        rows: view.rows,
        status_lines: view.status_lines,
        status_top: view.status_top,
    }
}

impl SessionActor {
    async fn run(mut self, pty: ClientPty, mut inbox: mpsc::Receiver<SessionCmd>) {
        let mut buf = vec![0u8; READ_BUFFER];
        loop {
            tokio::select! {
                cmd = inbox.recv() => match cmd {
                    Some(SessionCmd::Shutdown { reply }) => {
                        pty.close().await;
                        let _ = reply.send(());
                        return;
                    }
                    Some(cmd) => self.serve(cmd, &pty).await,
                    None => break,
                },
                read = pty.read(&mut buf), if !self.client_gone => match read {
                    Ok(0) | Err(_) => self.on_client_gone(),
                    Ok(n) => self.ingest(&buf[..n]),
                },
            }
        }
        pty.close().await;
    }

    async fn serve(&mut self, cmd: SessionCmd, pty: &ClientPty) {
        match cmd {
            SessionCmd::Snapshot {
                format,
                region,
                reply,
            } => {
                let snapshot = Snapshot {
                    session_id: self.session_id.clone(),
                    seq: self.ring.latest_seq(),
                    screen: self.screen.snapshot(format, region, &self.pane_facts()),
                };
                let _ = reply.send(snapshot);
            }
            SessionCmd::Summary { reply } => {
                let _ = reply.send(self.summary());
            }
            SessionCmd::Write { bytes, reply } => {
                let _ = reply.send(pty.write_all(&bytes).await);
            }
            SessionCmd::UpdateView { view } => self.update_view(view, pty),
            SessionCmd::Subscribe { since, reply } => {
                let (tx, live) = mpsc::channel(self.config.subscriber_queue);
                let replay = match since {
                    Some(since) => self.ring.since(since),
                    None => Replay::Complete(Vec::new()),
                };
                if !self.client_gone {
                    self.subscribers.push(tx);
                }
                let _ = reply.send(Subscription { replay, live });
            }
            SessionCmd::Shutdown { .. } => unreachable!("handled in run"),
        }
    }

    fn ingest(&mut self, bytes: &[u8]) {
        self.screen.process(bytes);
        // A third of the client's rows or more redrawn at once: maybe a new
        // size, window or layout (see `redraw`).
        let min_rows = usize::from(self.screen.layout().client_rows() / 3).max(2);
        if self
            .redraws
            .feed(bytes, min_rows, std::time::Instant::now())
        {
            self.layout_hint.notify_one();
        }
        self.state.on_output(Utc::now());
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(TAIL_BYTES)..]);
        if self.tail.len() > TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
        let chunk = self.ring.push(Bytes::copy_from_slice(bytes));
        // A subscriber whose queue is full is dropped, never waited on.
        self.subscribers
            .retain(|s| s.try_send(chunk.clone()).is_ok());
    }

    fn on_client_gone(&mut self) {
        self.client_gone = true;
        self.state.on_exit(Utc::now());
        self.subscribers.clear();
        let _ = self.exits.send(ClientExited {
            session_id: self.session_id.clone(),
            actor_id: self.actor_id,
            why: ClientExit::from_output_tail(&self.tail),
        });
    }

    fn update_view(&mut self, view: SessionView, pty: &ClientPty) {
        let layout = layout_of(&view);
        if layout != self.screen.layout() {
            if let Err(e) = pty.resize(layout.cols, layout.client_rows()) {
                tracing::warn!(session_id = %self.session_id, "resizing the client PTY failed: {e}");
            }
            self.screen.set_layout(layout);
        }
        self.view = view;
    }

    fn pane_facts(&self) -> PaneFacts {
        PaneFacts {
            title: self.view.title.clone(),
            alternate_on: self.view.alternate_on,
            active_pane: self.view.active_pane,
        }
    }

    fn summary(&self) -> ActorSummary {
        let now = Utc::now();
        let state = self.state.view(now);
        let layout = self.screen.layout();
        ActorSummary {
            state: state.state,
            state_reason: state.reason,
            state_since: state.since,
            current_command: self.view.current_command.clone(),
            cwd: self.view.cwd.clone(),
            title: self.view.title.clone(),
            cols: layout.cols,
            rows: layout.rows,
            last_activity_at: self.state.last_output(),
            transport: if self.client_gone {
                Transport::Disconnected
            } else {
                Transport::Attached
            },
            subscribers: self.subscribers.iter().filter(|s| !s.is_closed()).count(),
            latest_seq: self.ring.latest_seq(),
        }
    }
}
