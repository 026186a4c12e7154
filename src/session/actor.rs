//! The actor loop: control-client events in, commands in, answers out. It
//! owns the session's control client and routes what comes in to the
//! owners of the session's parts: the window's panes and screens
//! (`panes`), the output log and its subscribers (`streams`), the panes'
//! exits (`exits`), input being typed (`typing`), settled-screen checks
//! (`settle`), and the state detector; nothing here is shared or locked.

mod cold;
mod exits;
mod flood;
mod judge;
mod panes;
mod report;
mod running;
mod settle;
mod streams;
mod typing;

pub use exits::KEEP_EXIT_OPTION;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, mpsc, oneshot, watch};

use self::exits::{Exited, Exits};
use self::panes::Panes;
use self::running::Foreground;
use self::streams::Streams;
use self::typing::Jobs;
use super::state::{Acknowledger, Detector, Signal, StateView};
use super::{
    ActorConfig, ActorEvent, ActorSpec, ClientExited, CommandError, Input, SessionCmd, Subscription,
};
use crate::id::SessionId;
use crate::tmux::Refusal;
use crate::tmux::command::{
    CapturePane, CaptureSeed, PaneRow, RefreshClient, ResizeWindow, Target, TmuxCommand,
    WindowPanes,
};
use crate::tmux::control::{
    Batch, ClientEvent, ControlClient, ControlError, Notification, PaneId, Ticket, TmuxSessionId,
};

/// Bytes of literal text or raw input per `send-keys` over the control
/// client: small commands keep tmux responsive to everyone else while a
/// long paste is typed.
const TEXT_CHUNK_BYTES: usize = 8 * 1024;
const HEX_CHUNK_BYTES: usize = 2 * 1024;

/// What a command sent over the control client was for.
enum Purpose {
    /// The current window's panes, to lay it out and seed them.
    Window,
    /// Every pane of the session with its process, to watch them exit.
    Pids,
    /// A pane's rows (`alternate`: the normal screen behind the alternate one).
    Capture { pane: PaneId, alternate: bool },
    /// A pane's rows with wrapped ones joined, to tell which rows wrapped.
    Joined { pane: PaneId },
    /// The window's panes again after their captures: each seed's cursor
    /// and modes as of its captures.
    SeedStates,
    /// One piece of an input request.
    Input { job: u64 },
    /// A command whose reply someone waits for.
    Reply(oneshot::Sender<Result<(), CommandError>>),
    /// A command asked on someone else's behalf: the reply's lines.
    Lines(oneshot::Sender<Result<Vec<Vec<u8>>, CommandError>>),
    /// How a pane ended (`looks`: how many times it was asked).
    Exit { pane: PaneId, looks: u8 },
    /// One reply of a settled-screen check (see `settle`).
    Check {
        pane: PaneId,
        part: settle::CheckPart,
    },
    /// Which mode a pane entered or left (see `settle`).
    Mode { pane: PaneId },
    /// Nothing waits; a failure is only logged.
    Quiet,
}

struct SessionActor {
    session_id: SessionId,
    actor_id: u64,
    /// For what must be forked (see `exits`).
    tmux: crate::tmux::Tmux,
    /// The session's current name, which every command targets; follows
    /// renames of `tmux_id`.
    tmux_name: String,
    /// tmux's id of the session (`$N`), learnt at attach; never changes.
    tmux_id: TmuxSessionId,
    /// The window's panes and their screens (see `panes`).
    panes: Panes,
    purposes: BTreeMap<Ticket, Purpose>,
    /// Input requests being typed (see `typing`).
    jobs: Jobs,
    /// The output log and its subscribers (see `streams`).
    streams: Streams,
    detector: Detector,
    state_tx: watch::Sender<StateView>,
    /// Where the summary is published after everything handled
    /// (`SessionHandle::summary_now`).
    summary_tx: watch::Sender<Option<super::ActorSummary>>,
    config: ActorConfig,
    events: mpsc::UnboundedSender<ActorEvent>,
    sessions_changed: Arc<Notify>,
    client_gone: bool,
    /// What runs in the active pane, reused for a moment (see `running`).
    foreground: Foreground,
    /// The panes' processes and how they ended (see `exits`).
    exits: Exits,
    /// Settled-screen checks against tmux (see `settle`).
    checks: settle::Checks,
    /// How the client attaches, for attaching again after a cold stretch.
    control: crate::tmux::control::ControlOptions,
    /// The actor's side of the heat policy (see `cold`).
    heat: cold::HeatSide,
}

/// Attaches, takes the first look, and starts the actor's task; answers
/// with tmux's id of the session attached. A cold start takes the first
/// look without a client of the session's own (see `cold`).
pub(super) async fn start(
    spec: ActorSpec,
    inbox: mpsc::Receiver<SessionCmd>,
    summary_tx: watch::Sender<Option<super::ActorSummary>>,
) -> Result<TmuxSessionId, ControlError> {
    if spec.cold_start
        && let Some(lender) = spec.tmux.server_client().cloned()
    {
        return cold::start_cold(spec, inbox, summary_tx, lender).await;
    }
    let mut client =
        ControlClient::attach(&spec.tmux, &spec.tmux_name, spec.control.clone()).await?;
    let tmux_id = client.attached().session;
    let (mut actor, exits_rx) = SessionActor::new(spec, tmux_id, summary_tx);
    // The first look is awaited, so the session's summary has its size
    // from the start; the captures it asks for are answered in the loop.
    let rows = client
        .run(&WindowPanes {
            session: actor.tmux_name.clone(),
        })
        .await;
    match rows {
        Ok(rows) if !rows.is_empty() => actor.lay_out(rows, &mut client).await,
        Ok(_) => {}
        Err(e) => {
            client.close().await;
            return Err(e);
        }
    }
    let keeps_exit = exits::keeps_exit(&actor.tmux_name, &mut client).await;
    actor.first_look_done(keeps_exit);
    actor.ask_pids(&mut client).await;
    tokio::spawn(actor.run(Some(client), inbox, exits_rx));
    Ok(tmux_id)
}

impl SessionActor {
    fn new(
        spec: ActorSpec,
        tmux_id: TmuxSessionId,
        summary_tx: watch::Sender<Option<super::ActorSummary>>,
    ) -> (SessionActor, mpsc::UnboundedReceiver<Exited>) {
        let detector = Detector::new(Utc::now(), spec.config.timing, spec.attention)
            .with_previous(spec.previous_state);
        let (exits, exits_rx) = Exits::new();
        let actor = SessionActor {
            session_id: spec.session_id,
            actor_id: spec.actor_id,
            tmux: spec.tmux.clone(),
            tmux_name: spec.tmux_name,
            tmux_id,
            panes: Panes::new(),
            purposes: BTreeMap::new(),
            jobs: Jobs::default(),
            streams: Streams::new(spec.config.replay_bytes, spec.config.subscriber_queue_bytes),
            state_tx: watch::channel(detector.view()).0,
            summary_tx,
            detector,
            config: spec.config,
            events: spec.events,
            sessions_changed: spec.sessions_changed,
            client_gone: false,
            checks: settle::Checks::default(),
            control: spec.control,
            heat: cold::HeatSide::new(spec.previous_state.is_some()),
            foreground: Foreground::default(),
            exits,
        };
        (actor, exits_rx)
    }

    /// The first look is in: whether tmux keeps the session's exits says
    /// whether tmuxd started its program, and the screen tmux shows now
    /// counts as the first output (a session that prints nothing more is
    /// judged from it: quiet, its foreground).
    fn first_look_done(&mut self, keeps_exit: bool) {
        self.exits.set_keeps_exit(keeps_exit);
        // Only sessions tmuxd created keep their exits: their program was
        // started by tmuxd, not typed by someone (see `Detector::started_by_tmuxd`).
        self.detector.started_by_tmuxd(keeps_exit);
        self.signal(Signal::Output {
            bytes: &[],
            changed: true,
        });
        self.heat.first_look(self.detector.last_activity());
    }
}

/// How a stretch with a client ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hot {
    /// The actor stopped.
    Stopped,
    /// The client was let go (see `cold`).
    Cooled,
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

/// Sleeps until `at`, or forever when there is none.
async fn until_instant(at: Option<std::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

impl SessionActor {
    /// Hot with `client` (cold first without one) until the heat policy
    /// lets it go, then cold until something needs the session live again
    /// (see `cold`), and so on, until the actor stops.
    async fn run(
        mut self,
        client: Option<ControlClient>,
        mut inbox: mpsc::Receiver<SessionCmd>,
        mut exits: mpsc::UnboundedReceiver<Exited>,
    ) {
        let mut hot = client.map(|client| (client, None));
        loop {
            let (client, first) = match hot.take() {
                Some(hot) => hot,
                None => match self.run_cold(&mut inbox, &mut exits).await {
                    Some(heated) => heated,
                    None => return,
                },
            };
            if self.run_hot(client, first, &mut inbox, &mut exits).await == Hot::Stopped {
                return;
            }
        }
    }

    /// The loop while the actor holds `client`; `first` is served before
    /// anything else (a command that made a cold actor attach).
    async fn run_hot(
        &mut self,
        mut client: ControlClient,
        first: Option<SessionCmd>,
        inbox: &mut mpsc::Receiver<SessionCmd>,
        exits: &mut mpsc::UnboundedReceiver<Exited>,
    ) -> Hot {
        let mut first = first;
        loop {
            self.publish_summary();
            let cmd = match first.take() {
                Some(cmd) => Some(cmd),
                None => match self.next_hot(&mut client, inbox, exits).await {
                    Some(cmd) => cmd,
                    None => continue,
                },
            };
            match cmd {
                Some(SessionCmd::Shutdown { reply }) => {
                    client.hang_up().await;
                    let _ = reply.send(());
                    return Hot::Stopped;
                }
                Some(SessionCmd::Release { reply }) => {
                    exits::release(&self.tmux_name, &mut client).await;
                    client.close().await;
                    let _ = reply.send(());
                    return Hot::Stopped;
                }
                Some(SessionCmd::Finish { reason, reply }) => {
                    let history = self.take_last_look().await;
                    let last = self.finish(reason, history);
                    client.close().await;
                    let _ = reply.send(last);
                    return Hot::Stopped;
                }
                Some(SessionCmd::SetLive { live: false, reply }) if self.can_cool() => {
                    self.cool(client).await;
                    let _ = reply.send(false);
                    return Hot::Cooled;
                }
                Some(SessionCmd::SetLive { reply, .. }) => {
                    let _ = reply.send(!self.client_gone);
                }
                Some(cmd) => self.serve(cmd, &mut client).await,
                None => break,
            }
        }
        client.close().await;
        Hot::Stopped
    }

    /// Waits for the next command, handling client events, timers and
    /// exits meanwhile: Some(None) once the inbox closed, None when
    /// something other than a command was handled.
    async fn next_hot(
        &mut self,
        client: &mut ControlClient,
        inbox: &mut mpsc::Receiver<SessionCmd>,
        exits: &mut mpsc::UnboundedReceiver<Exited>,
    ) -> Option<Option<SessionCmd>> {
        let deadline = self.detector.next_deadline();
        let reseed_at = self.panes.next_reseed_at();
        let check_at = self.next_check_at();
        tokio::select! {
            cmd = inbox.recv() => return Some(cmd),
            event = client.next_event(), if !self.client_gone => match event {
                Some(event) => self.on_event(event, client).await,
                None => self.on_client_gone(),
            },
            _ = until(deadline) => self.probe(),
            _ = until_instant(reseed_at), if !self.client_gone => self.reseed_floods(client).await,
            _ = until_instant(check_at), if !self.client_gone => self.check_settled(client).await,
            _ = until_instant(self.exits.panes_again_at()), if !self.client_gone => {
                self.exits.panes_asked_again();
                self.ask_pids(client).await;
            }
            Some((pane, looks)) = exits.recv(), if !self.client_gone => {
                self.look_at_exit(pane, looks, client).await
            }
        }
        None
    }

    async fn serve(&mut self, cmd: SessionCmd, client: &mut ControlClient) {
        let cmd = match self.serve_local(cmd) {
            Ok(()) => return,
            Err(cmd) => cmd,
        };
        match cmd {
            SessionCmd::Type { input, reply } => self.type_input(input, reply, client).await,
            SessionCmd::Answer {
                since,
                input,
                reply,
            } => {
                if self.detector.view().attention.map(|a| a.since) != Some(since) {
                    let _ = reply.send(None);
                    return;
                }
                self.signal(Signal::Acknowledge(Acknowledger::PushAction));
                let (typed, typing) = oneshot::channel();
                let _ = reply.send(Some(typing));
                self.type_input(input, typed, client).await;
            }
            SessionCmd::Resize { cols, rows, reply } => {
                let resize = ResizeWindow {
                    target: Target::Session(self.tmux_name.clone()),
                    cols,
                    rows,
                };
                self.send(client, &resize, Purpose::Reply(reply)).await;
            }
            SessionCmd::Ask { command, reply, .. } => {
                self.send(client, &command, Purpose::Lines(reply)).await;
            }
            SessionCmd::Subscribe { since, pane, reply } => {
                let _ = reply.send(self.subscribe(since, pane));
            }
            SessionCmd::WatchOutput { reply } => {
                let _ = reply.send(self.streams.watch_output());
            }
            SessionCmd::Snapshot { .. }
            | SessionCmd::Summary { .. }
            | SessionCmd::WatchState { .. }
            | SessionCmd::Hook { .. }
            | SessionCmd::Acknowledge { .. }
            | SessionCmd::Heat { .. }
            | SessionCmd::Noted { .. } => unreachable!("served by serve_local"),
            SessionCmd::Shutdown { .. }
            | SessionCmd::Release { .. }
            | SessionCmd::Finish { .. }
            | SessionCmd::SetLive { .. } => {
                unreachable!("handled in run_hot")
            }
        }
    }

    /// Serves what needs no client, hot or cold; gives back the rest.
    fn serve_local(&mut self, cmd: SessionCmd) -> Result<(), SessionCmd> {
        match cmd {
            SessionCmd::Snapshot {
                format,
                region,
                reply,
            } => {
                let _ = reply.send(self.snapshot(format, region));
            }
            SessionCmd::Summary { reply } => {
                let _ = reply.send(self.summary(true));
            }
            SessionCmd::WatchState { reply } => {
                let _ = reply.send(self.state_tx.subscribe());
            }
            SessionCmd::Hook { hook, reply } => {
                self.signal(Signal::Hook(hook));
                let _ = reply.send(self.detector.view());
            }
            SessionCmd::Acknowledge { by } => self.signal(Signal::Acknowledge(by)),
            SessionCmd::Heat { reply } => {
                let _ = reply.send(self.heat_facts());
            }
            SessionCmd::Noted { change } => self.noted(change),
            other => return Err(other),
        }
        Ok(())
    }

    /// Sends a command; its reply comes back as an event with this purpose.
    async fn send<C: TmuxCommand>(
        &mut self,
        client: &mut ControlClient,
        command: &C,
        purpose: Purpose,
    ) {
        match client.send(command).await {
            Ok(ticket) => {
                self.purposes.insert(ticket, purpose);
            }
            Err(e) => self.settle(purpose, Err(e.into())),
        }
    }

    /// Asks tmux for the current window's panes (once at a time; a change
    /// seen meanwhile asks again when the answer is in).
    async fn look(&mut self, client: &mut ControlClient) {
        if !self.panes.start_look() {
            return;
        }
        let command = WindowPanes {
            session: self.tmux_name.clone(),
        };
        self.send(client, &command, Purpose::Window).await;
        self.ask_pids(client).await;
    }

    async fn on_event(&mut self, event: ClientEvent, client: &mut ControlClient) {
        match event {
            ClientEvent::Notification(notification) => {
                self.on_notification(notification, client).await
            }
            ClientEvent::Reply { ticket, result } => {
                let Some(purpose) = self.purposes.remove(&ticket) else {
                    return;
                };
                match purpose {
                    Purpose::Window => self.on_window(result, client).await,
                    Purpose::Lines(reply) => {
                        let _ = reply.send(result.map_err(CommandError::from));
                    }
                    Purpose::Pids => match result {
                        Ok(rows) => self.pids_in(&rows),
                        Err(e) => {
                            tracing::debug!(session_id = %self.session_id, "listing the panes' processes failed: {e}")
                        }
                    },
                    Purpose::Check { pane, part } => {
                        self.on_check_reply(pane, part, result, client).await
                    }
                    Purpose::Mode { pane } => self.on_mode(pane, result),
                    Purpose::Capture { pane, alternate } => {
                        if self.panes.captured(pane, alternate, result) {
                            self.seed_raced(pane, client).await;
                        }
                    }
                    Purpose::Joined { pane } => {
                        if self.panes.joined(pane, result) {
                            self.seed_raced(pane, client).await;
                        }
                    }
                    Purpose::SeedStates => {
                        let rows = result.and_then(|body| Ok(WindowPanes::rows(&body)?));
                        if let Some(pane) = self.panes.states(rows).first() {
                            self.seed_raced(*pane, client).await;
                        }
                    }
                    Purpose::Exit { pane, looks } => match result {
                        Ok(lines) => self.on_exit_facts(pane, &lines.concat(), looks),
                        // A pane already closed has nothing more to tell.
                        Err(e) if e.refusal() == Some(Refusal::NoTarget) => {}
                        Err(e) => {
                            tracing::debug!(session_id = %self.session_id, %pane, "asking how a pane ended failed: {e}");
                            self.exits.look_later(pane, looks, exits::EXIT_LOOK_LATER);
                        }
                    },
                    other => self.settle(other, result.map(drop).map_err(CommandError::from)),
                }
            }
        }
    }

    async fn on_notification(&mut self, notification: Notification, client: &mut ControlClient) {
        match notification {
            Notification::Output { pane, data }
            | Notification::ExtendedOutput { pane, data, .. } => self.ingest(pane, data),
            Notification::Pause { pane } => {
                // What the pane writes while paused never comes: tell
                // subscribers, re-seed its screen, then resume it.
                self.gap(pane);
                self.look(client).await;
                self.send(client, &RefreshClient::continue_pane(pane), Purpose::Quiet)
                    .await;
            }
            Notification::LayoutChange { .. }
            | Notification::WindowAdd { .. }
            | Notification::WindowClose { .. }
            | Notification::SessionWindowChanged { .. }
            | Notification::WindowPaneChanged { .. } => self.look(client).await,
            Notification::PaneModeChanged { pane } if self.panes.contains(pane) => {
                self.mode_changed(pane, client).await
            }
            Notification::SessionsChanged => self.sessions_changed.notify_one(),
            // A person's tmux client (a terminal, not a control client)
            // attached to this session: someone is looking.
            Notification::ClientSessionChanged {
                client, session, ..
            } if session == self.tmux_id && client.starts_with("/dev/") => {
                self.signal(Signal::Acknowledge(Acknowledger::TmuxClient))
            }
            // Every control client hears every session's renames.
            Notification::SessionRenamed {
                session: Some(session),
                name,
            } if session == self.tmux_id => self.renamed(name),
            // Whose rename it was is not said: discovery, which matches
            // sessions by id, finds out.
            Notification::SessionRenamed { session: None, .. } => {
                self.sessions_changed.notify_one()
            }
            _ => {}
        }
    }

    /// Follows a rename of the session: commands target the new name, and
    /// the supervisor renames the tracked session.
    fn renamed(&mut self, name: String) {
        if name == self.tmux_name {
            return;
        }
        self.tmux_name = name.clone();
        let _ = self.events.send(ActorEvent::Renamed {
            session_id: self.session_id,
            actor_id: self.actor_id,
            name,
        });
    }

    /// The pane wrote between two of its seed's commands: the captures and
    /// the cursor are not of one moment, so the window is looked at again.
    async fn seed_raced(&mut self, pane: PaneId, client: &mut ControlClient) {
        tracing::debug!(session_id = %self.session_id, %pane, "output raced the seed: seeding again");
        self.look(client).await;
    }

    /// A pane's output: logged for streams whatever the screen's state, and
    /// fed to the pane's screen once it is seeded, unless it floods.
    fn ingest(&mut self, pane: PaneId, data: Vec<u8>) {
        let now = std::time::Instant::now();
        if self.panes.contains(pane) {
            self.checks.output(pane, now);
        }
        // A pane of another window is logged for streams only; bytes a
        // seed in flight already holds still reach the detector (a prompt
        // mark or a bell must not be lost).
        let changed = self.panes.feed(pane, &data, now);
        self.publish(pane, data, changed);
    }

    /// Output to the detector (`changed`: for a pane of the window), the
    /// replay ring and the pane's stream subscribers.
    fn publish(&mut self, pane: PaneId, data: Vec<u8>, changed: Option<bool>) {
        if let Some(changed) = changed {
            self.signal(Signal::Output {
                bytes: &data,
                changed,
            });
        }
        self.streams.publish(pane, data);
    }

    /// Re-seeds the panes whose skipped output is due to be drawn (see `flood`).
    async fn reseed_floods(&mut self, client: &mut ControlClient) {
        if self.panes.floods_due(std::time::Instant::now()) {
            self.look(client).await;
        }
    }

    /// Output of `pane` was skipped (tmux paused it): its subscribers are
    /// closed as overflowed, so they reconnect and learn of the gap.
    fn gap(&mut self, pane: PaneId) {
        tracing::warn!(session_id = %self.session_id, %pane, "tmux paused the pane's output: re-seeding its screen");
        self.streams.gap(pane);
    }

    async fn on_window(
        &mut self,
        result: Result<Vec<Vec<u8>>, ControlError>,
        client: &mut ControlClient,
    ) {
        let again = self.panes.look_done();
        let rows = result.and_then(|body| Ok(WindowPanes::rows(&body)?));
        match rows {
            Ok(rows) if !rows.is_empty() => self.lay_out(rows, client).await,
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(session_id = %self.session_id, "looking at the window failed: {e}")
            }
        }
        if again {
            self.look(client).await;
        }
    }

    /// Takes tmux's view of the window and re-seeds every pane in it: the
    /// captures, then the panes' cursors and modes, in one write, so tmux
    /// answers them all of one moment (see `panes`).
    async fn lay_out(&mut self, rows: Vec<PaneRow>, client: &mut ControlClient) {
        let mut batch = Batch::default();
        let mut purposes = Vec::new();
        for (pane, alternate_on) in self.arrange(rows) {
            // With the alternate screen on, `-a` captures the normal screen
            // behind it as well.
            let captures: &[bool] = if alternate_on {
                &[false, true]
            } else {
                &[false]
            };
            for &alternate in captures {
                batch.push(&CaptureSeed { pane, alternate });
                purposes.push(Purpose::Capture { pane, alternate });
            }
            let joined = CapturePane {
                escapes: true,
                join: true,
                ..CapturePane::screen(Target::Pane(pane))
            };
            batch.push(&joined);
            purposes.push(Purpose::Joined { pane });
        }
        let states = WindowPanes {
            session: self.tmux_name.clone(),
        };
        batch.push(&states);
        purposes.push(Purpose::SeedStates);
        match client.send_batch(batch).await {
            Ok(tickets) => self.purposes.extend(tickets.into_iter().zip(purposes)),
            Err(e) => {
                tracing::debug!(session_id = %self.session_id, "seeding the window's panes failed: {e}")
            }
        }
    }

    /// Takes tmux's view of the window (`rows`, not empty); the panes to
    /// capture, and whether each shows its alternate screen.
    fn arrange(&mut self, rows: Vec<PaneRow>) -> Vec<(PaneId, bool)> {
        let captures = self.panes.arrange(rows);
        let panes = &self.panes;
        self.checks.keep_only(|id| panes.contains(id));
        captures
    }

    /// A command's reply reached the one who waits for it.
    fn settle(&mut self, purpose: Purpose, result: Result<(), CommandError>) {
        match purpose {
            Purpose::Reply(reply) => {
                let _ = reply.send(result);
            }
            Purpose::Lines(reply) => {
                let _ = reply.send(result.map(|()| Vec::new()));
            }
            Purpose::Input { job } => self.jobs.piece_done(job, result),
            Purpose::Quiet
            | Purpose::Joined { .. }
            | Purpose::SeedStates
            | Purpose::Check { .. }
            | Purpose::Mode { .. }
            | Purpose::Window
            | Purpose::Pids
            | Purpose::Capture { .. }
            | Purpose::Exit { .. } => {
                if let Err(e) = result {
                    tracing::debug!(session_id = %self.session_id, "tmux command failed: {e}");
                }
            }
        }
    }

    fn subscribe(&mut self, since: Option<u64>, pane: Option<PaneId>) -> Subscription {
        let pane = pane.unwrap_or(self.panes.active());
        let streams::Subscribed {
            replay,
            live,
            overflowed,
            latest_seq,
        } = self.streams.subscribe(since, pane);
        Subscription {
            replay,
            live,
            overflowed,
            latest_seq,
            pane,
            cols: self.panes.window().cols,
            rows: self.panes.window().rows,
        }
    }

    fn on_client_gone(&mut self) {
        self.client_gone = true;
        self.streams.close();
        for (_, purpose) in std::mem::take(&mut self.purposes) {
            self.settle(purpose, Err(CommandError::ClientGone));
        }
        let _ = self.events.send(ActorEvent::Exited(ClientExited {
            session_id: self.session_id,
            actor_id: self.actor_id,
            program_exited: self.exits.exit().is_some(),
        }));
    }
}

impl SessionActor {
    /// Types `input` into the active pane; `reply` hears once tmux took it all.
    async fn type_input(
        &mut self,
        input: Input,
        reply: oneshot::Sender<Result<(), CommandError>>,
        client: &mut ControlClient,
    ) {
        // Raw bytes come from someone at a keyboard (a stream client); text
        // and keys from a request that gives the session something to do.
        let typed = input.text.is_some() || !input.keys.is_empty();
        self.signal(if typed {
            Signal::Input
        } else {
            Signal::Keystrokes
        });
        let pieces = typing::pieces(input, &Target::Pane(self.panes.active()));
        if pieces.is_empty() {
            let _ = reply.send(Ok(()));
            return;
        }
        let job = self.jobs.start(pieces.len(), reply);
        // In one write: a daemon killed part way must not leave a line
        // typed without its Enter for the next input to run into.
        match client.send_all(&pieces).await {
            Ok(tickets) => {
                for ticket in tickets {
                    self.purposes.insert(ticket, Purpose::Input { job });
                }
            }
            // Nothing was written: the request fails as a whole.
            Err(e) => self.jobs.failed(job, e.into()),
        }
    }

    /// Asks tmux for every pane of the session and its process.
    async fn ask_pids(&mut self, client: &mut ControlClient) {
        let pids = exits::pids_query(&self.tmux_name);
        self.send(client, &pids, Purpose::Pids).await;
    }

    /// The session's panes and their processes are in: their exits are
    /// watched, and the supervisor keeps what it takes to restore them.
    fn pids_in(&mut self, rows: &[Vec<u8>]) {
        self.exits.watch_pids(rows);
        if let Some(rows) = exits::plan_rows(rows) {
            let _ = self.events.send(ActorEvent::Panes {
                session_id: self.session_id,
                actor_id: self.actor_id,
                rows,
            });
        }
    }

    /// A pane's process has exited (or its pane is dead at attach): ask
    /// tmux how, unless that is known already.
    async fn look_at_exit(&mut self, pane: PaneId, looks: u8, client: &mut ControlClient) {
        if self.exits.process_exited(pane) {
            let ask = exits::exit_query(pane);
            self.send(client, &ask, Purpose::Exit { pane, looks }).await;
        }
    }

    /// What tmux said of a pane's end: a dead pane on a session tmuxd keeps
    /// the exit of is killed. The session's last pane dying is its end: it
    /// is reported exited at once (freeing its capacity slot), before the
    /// kill and the reap that follow.
    fn on_exit_facts(&mut self, pane: PaneId, value: &[u8], looks: u8) {
        let Some(exits::Reaped { exit, last }) = self.exits.judge(pane, value, looks) else {
            return;
        };
        tracing::debug!(session_id = %self.session_id, %pane, ?exit, last, "pane exited");
        if last {
            self.signal(Signal::End(super::EndReason::ProcessExit));
        }
        // What the last pane shows goes with it: read it first, for the
        // ended session's record.
        let look = last.then(|| {
            let ask = exits::LastAsk {
                pane,
                history_lines: self.config.ended_scrollback_lines,
                session: self.tmux_name.clone(),
            };
            (self.exits.read_last_look(), ask)
        });
        // Forked under the handshake turn, not sent on the client: the
        // last pane's end closes the session, a notification that must not
        // meet another client's handshake (tmux < 3.7).
        let tmux = self.tmux.clone();
        tokio::spawn(async move {
            if let Some((tx, ask)) = look {
                let _ = tx.send(ask.read(&tmux).await);
            }
            if let Err(e) = tmux.kill_pane(pane, last).await {
                tracing::debug!(%pane, "killing a dead pane: {e}");
            }
        });
    }

    /// Once the last pane has been read: seeds the screens with what tmux
    /// showed last, and gives the history (at once if nothing is being
    /// read).
    async fn take_last_look(&mut self) -> Option<super::EndHistory> {
        let look = self.exits.take_last_look().await?;
        for (pane, state, captured) in &look.screens {
            self.panes.seed(*pane, state, captured);
        }
        look.history
    }
}
