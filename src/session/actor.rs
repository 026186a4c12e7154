//! The actor loop: PTY output in, commands in, answers out. It owns all of
//! a session's terminal state; nothing here is shared or locked.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use tokio::sync::{Notify, mpsc, watch};

use super::foreground;
use super::pty::{ClientPty, PtyError};
use super::redraw::RedrawWatch;
use super::replay::{Replay, ReplayRing};
use super::screen::{Layout, PaneFacts, Screen};
use super::state::{Detector, Signal, StateView};
use super::{
    ActorConfig, ActorEvent, ActorSpec, ActorSummary, Chunk, ClientExit, ClientExited, LiveOutput,
    SessionCmd, Snapshot, Subscription, Transport,
};
use crate::tmux::SessionView;

/// Bytes read from the PTY at a time.
const READ_BUFFER: usize = 64 * 1024;

/// Output kept to read the client's exit message from.
const TAIL_BYTES: usize = 256;

/// A stream subscriber: its queue, the bytes in it, and the flag set when
/// it overflowed.
struct Subscriber {
    tx: mpsc::UnboundedSender<Chunk>,
    queued: Arc<AtomicUsize>,
    overflowed: Arc<AtomicBool>,
}

struct SessionActor {
    session_id: String,
    actor_id: u64,
    view: SessionView,
    screen: Screen,
    /// Hash of the window's text, to tell real changes from redraw noise.
    screen_hash: u64,
    ring: ReplayRing,
    detector: Detector,
    state_tx: watch::Sender<StateView>,
    output_tx: watch::Sender<u64>,
    subscribers: Vec<Subscriber>,
    config: ActorConfig,
    events: mpsc::UnboundedSender<ActorEvent>,
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
        &spec.env_remove,
        layout.cols,
        layout.client_rows(),
    )?;
    let detector = Detector::new(Utc::now(), spec.config.timing);
    let screen = Screen::new(layout);
    let actor = SessionActor {
        session_id: spec.session_id,
        actor_id: spec.actor_id,
        view: spec.view,
        screen_hash: screen.content_hash(),
        screen,
        ring: ReplayRing::new(spec.config.replay_bytes),
        state_tx: watch::channel(detector.view()).0,
        output_tx: watch::channel(0).0,
        detector,
        subscribers: Vec::new(),
        config: spec.config,
        events: spec.events,
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

/// Sleeps until `deadline`, or forever when there is none.
async fn until(deadline: Option<DateTime<Utc>>) {
    match deadline {
        Some(deadline) => {
            let wait = (deadline - Utc::now()).to_std().unwrap_or_default();
            tokio::time::sleep(wait).await;
        }
        None => std::future::pending().await,
    }
}

impl SessionActor {
    async fn run(mut self, pty: ClientPty, mut inbox: mpsc::Receiver<SessionCmd>) {
        let mut buf = vec![0u8; READ_BUFFER];
        loop {
            let deadline = self.detector.next_deadline();
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
                    Ok(n) => {
                        // Under a flood, take everything readable now: fewer,
                        // larger chunks and one screen check for all of it.
                        let n = n + pty.read_ready(&mut buf[n..]);
                        self.ingest(&buf[..n]);
                    }
                },
                _ = until(deadline) => self.look_again(),
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
            SessionCmd::NoteInput => self.signal(Signal::Input),
            SessionCmd::UpdateView { view } => self.update_view(view, pty),
            SessionCmd::Subscribe { since, reply } => {
                let (tx, rx) = mpsc::unbounded_channel();
                let queued = Arc::new(AtomicUsize::new(0));
                let overflowed = Arc::new(AtomicBool::new(false));
                let live = LiveOutput::new(rx, queued.clone());
                let replay = match since {
                    Some(since) => self.ring.since(since),
                    None => Replay::Complete(Vec::new()),
                };
                if !self.client_gone {
                    self.subscribers.push(Subscriber {
                        tx,
                        queued,
                        overflowed: overflowed.clone(),
                    });
                }
                let layout = self.screen.layout();
                let _ = reply.send(Subscription {
                    replay,
                    live,
                    overflowed,
                    latest_seq: self.ring.latest_seq(),
                    cols: layout.cols,
                    rows: layout.rows,
                });
            }
            SessionCmd::WatchState { reply } => {
                let _ = reply.send(self.state_tx.subscribe());
            }
            SessionCmd::WatchOutput { reply } => {
                let _ = reply.send(self.output_tx.subscribe());
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
        let hash = self.screen.content_hash();
        let changed = hash != self.screen_hash;
        self.screen_hash = hash;
        self.signal(Signal::Output { bytes, changed });
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(TAIL_BYTES)..]);
        if self.tail.len() > TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
        let chunk = self.ring.push(Bytes::copy_from_slice(bytes));
        self.output_tx.send_replace(chunk.seq);
        // A subscriber whose queue is full is dropped, never waited on.
        let limit = self.config.subscriber_queue_bytes;
        let size = chunk.bytes.len();
        self.subscribers.retain(|s| {
            if s.queued.fetch_add(size, Ordering::Relaxed) + size > limit {
                s.overflowed.store(true, Ordering::Relaxed);
                return false;
            }
            s.tx.send(chunk.clone()).is_ok()
        });
    }

    /// A deadline passed: see who holds the terminal now, then let time tell.
    fn look_again(&mut self) {
        let foreground = foreground::probe(self.view.pid, &self.view.current_command);
        self.signal(Signal::Foreground(foreground));
        self.signal(Signal::Tick);
    }

    /// Feeds the detector; a changed state goes to waiters and the supervisor.
    fn signal(&mut self, signal: Signal<'_>) {
        if let Some(view) = self.detector.step(Utc::now(), signal) {
            self.state_tx.send_replace(view);
            let _ = self.events.send(ActorEvent::State {
                session_id: self.session_id.clone(),
                actor_id: self.actor_id,
                view,
            });
        }
    }

    fn on_client_gone(&mut self) {
        self.client_gone = true;
        self.subscribers.clear();
        self.signal(Signal::Exit);
        let _ = self.events.send(ActorEvent::Exited(ClientExited {
            session_id: self.session_id.clone(),
            actor_id: self.actor_id,
            why: ClientExit::from_output_tail(&self.tail),
        }));
    }

    fn update_view(&mut self, view: SessionView, pty: &ClientPty) {
        let layout = layout_of(&view);
        if layout != self.screen.layout() {
            if let Err(e) = pty.resize(layout.cols, layout.client_rows()) {
                tracing::warn!(session_id = %self.session_id, "resizing the client PTY failed: {e}");
            }
            self.screen.set_layout(layout);
            self.screen_hash = self.screen.content_hash();
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
        let state = self.detector.view();
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
            last_activity_at: self.detector.last_activity(),
            transport: if self.client_gone {
                Transport::Disconnected
            } else {
                Transport::Attached
            },
            subscribers: self
                .subscribers
                .iter()
                .filter(|s| !s.tx.is_closed())
                .count(),
            latest_seq: self.ring.latest_seq(),
        }
    }
}
