//! One tmux control client (`tmux -C attach-session -t =NAME`) as a struct
//! its owner polls: commands go in as lines, replies are matched to them in
//! order, notifications and pane output come out of `next_event` in the
//! order tmux sent them. No task or thread of its own: the owner's
//! `select!` drives the reads, so tmuxd never buffers more than one read.
//! The owner must keep polling: tmux 3.3a answers a client that stops
//! reading by no longer reading the pane (its program blocks, and a human
//! watching sees it freeze) until the client reads again; `pause-after`
//! turns that into a `%pause` for this client only when tmux notices the
//! age of what it holds, which it may not do until the client reads again.
//!
//! Transport (`transport`): tmuxd's own client on the server's socket
//! (`native`), or a `tmux -C` child where tmuxd does not know the server's
//! protocol (`path`). Either way the control stream is a socket or pipes,
//! not a PTY: the server reads and writes those fds itself, byte for byte:
//! no echo to turn off, no ONLCR turning `\n` into `\r\n`, no `-CC` DCS
//! wrapper, no terminal size that could ever be mistaken for a client size.
//! Ending the input is a clean detach (`%exit`, then EOF). If tmuxd dies
//! its native clients' connections close, and a child client dies with it
//! (see `spawn`); tmux drops them. Nothing written here ever reaches a pane
//! except through `send-keys`.
//!
//! Ordering: tmux queues a pane's `%output` when it reads (and parses) the
//! pane's bytes, and a reply behind everything already queued. So output
//! before a `capture-pane` reply is already in the capture, and output
//! after it is not: to seed a screen, `send` the capture, skip that pane's
//! output until `ClientEvent::Reply`, apply the capture, then apply what
//! follows. `run` keeps the notifications it reads while waiting for
//! `next_event`, in order, but cannot say which came after its reply.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::time::{Instant, timeout, timeout_at};

use super::error::ControlError;
use super::ids::{PaneId, TmuxSessionId};
use super::native::{self, ConnectError};
use super::path::ClientPath;
use super::protocol::{Event, Notification, Parser, Reply, parse_notification};
use super::quote::{argv_arg, command_line};
use super::spawn::spawn_client;
use super::transport::{Departure, Transport};
use crate::metrics::{AttachVia, Metrics, Outcome, Via};
use crate::tmux::Tmux;
use crate::tmux::command::{ClientFlag, PaneAction, RefreshClient, TmuxCommand};

const READ_CHUNK: usize = 64 * 1024;

/// How a control client behaves.
#[derive(Clone, Debug)]
pub struct ControlOptions {
    /// How long a command (and the attach itself) may wait for its reply.
    pub timeout: Duration,
    /// Client flags set by `attach-session -f`, so they hold from the first
    /// byte: `pause-after` for flow control, `no-output` for a client that
    /// only wants notifications.
    pub flags: Vec<ClientFlag>,
    /// How long `close` waits for tmux to let the client go before killing it.
    pub exit_grace: Duration,
    /// Attach a child client only once the server has been quiet (see
    /// `handshake`). A session tmuxd just made with `remain-on-exit` cannot
    /// close during the handshake, so its client goes at once. A native
    /// client has no handshake to protect and never waits.
    pub wait_for_quiet: bool,
}

impl Default for ControlOptions {
    fn default() -> Self {
        ControlOptions {
            timeout: Duration::from_secs(10),
            flags: vec![ClientFlag::PauseAfter(DEFAULT_PAUSE_AFTER_SECS)],
            exit_grace: Duration::from_secs(2),
            wait_for_quiet: true,
        }
    }
}

/// With `pause-after=N`, once tmux notices that output it holds for this
/// client is N seconds old it stops sending that pane (`%pause`) instead of
/// holding the pane back; the owner re-seeds and continues it. Without the
/// flag a client that stops reading freezes the pane for everyone. A prompt
/// reader sees ages of 0-2 ms (measured with a 300,000-line flood).
pub const DEFAULT_PAUSE_AFTER_SECS: u32 = 5;

/// The session tmux attached the client to (from `%session-changed`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attached {
    pub session: TmuxSessionId,
    pub name: String,
}

/// Names a command sent with `send`; its reply comes back as `ClientEvent::Reply`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(u64);

#[derive(Debug)]
pub enum ClientEvent {
    Notification(Notification),
    /// The reply to a command sent with `send`: its body lines, or the error.
    Reply {
        ticket: Ticket,
        result: Result<Vec<Vec<u8>>, ControlError>,
    },
}

/// Where a reply goes once it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Delivery {
    /// Into the event stream (`send`).
    Event,
    /// Into `held` for a waiting `run`.
    Hold,
    /// Nowhere: its `run` timed out.
    Drop,
}

#[derive(Debug)]
struct Pending {
    ticket: Ticket,
    command: String,
    delivery: Delivery,
    notifications_in_reply: bool,
    /// When it was written, for its latency.
    sent_at: Instant,
}

/// A command line to write: its words, and how to read its reply.
struct Line {
    args: Vec<String>,
    notifications_in_reply: bool,
}

impl Line {
    fn of<C: TmuxCommand>(command: &C) -> Line {
        Line {
            args: command.args(),
            notifications_in_reply: command.notifications_in_reply(),
        }
    }
}

/// Commands to write together (`ControlClient::send_batch`).
#[derive(Default)]
pub struct Batch {
    lines: Vec<Line>,
}

impl Batch {
    pub fn push<C: TmuxCommand>(&mut self, command: &C) {
        self.lines.push(Line::of(command));
    }
}

type ReplyResult = Result<Vec<Vec<u8>>, ControlError>;

pub struct ControlClient {
    transport: Transport,
    parser: Parser,
    /// Parsed, not yet handed to the owner, in tmux's order.
    events: VecDeque<ClientEvent>,
    /// Commands written and not yet answered, oldest first.
    pending: VecDeque<Pending>,
    held: HashMap<Ticket, ReplyResult>,
    /// The attach's own reply block, until `attach` has read it.
    attach_reply: Option<Reply>,
    next_ticket: u64,
    read_buf: Vec<u8>,
    /// A line is being written; still set at the next write means that
    /// write was cancelled part way.
    writing: bool,
    eof: bool,
    exit_reason: Option<String>,
    options: ControlOptions,
    attached: Attached,
    metrics: Option<Metrics>,
    /// The server's handshake turn, told what this client hears.
    handshake: std::sync::Arc<super::handshake::Handshake>,
}

impl ControlClient {
    /// Starts a control client attached to the session named exactly
    /// `name`, and waits until tmux has attached it: natively where tmuxd
    /// knows the server's protocol, else as a `tmux -C` child.
    pub async fn attach(
        tmux: &Tmux,
        name: &str,
        options: ControlOptions,
    ) -> Result<ControlClient, ControlError> {
        if let ClientPath::Native { framing } = tmux.client_path().await {
            if let Some(attached) = Self::attach_native(tmux, name, framing, &options).await {
                if let (Ok(_), Some(metrics)) = (&attached, tmux.metrics()) {
                    metrics.control_attached(AttachVia::Native);
                }
                return attached;
            }
            if let Some(metrics) = tmux.metrics() {
                metrics.control_attach_fell_back();
            }
        }
        // Until the attach is confirmed, a notification to every control
        // client could crash tmux (see `handshake`): wait for a quiet moment.
        let _turn = match options.wait_for_quiet {
            true => tmux.handshake().quiet_turn().await,
            false => tmux.handshake().turn().await,
        };
        let child = spawn_client(tmux, name, &options.flags)?;
        let attached = Self::start(Transport::child(child), tmux, name, options).await;
        if let (Ok(_), Some(metrics)) = (&attached, tmux.metrics()) {
            metrics.control_attached(AttachVia::Child);
        }
        attached
    }

    /// tmuxd's own client, one of the few in flight on this server (see
    /// `pace`): attached, or failed for a reason a child client would meet
    /// too; None when the server does not speak tmuxd's protocol,
    /// or its socket or the identify failed in a way a `tmux -C` child may
    /// not. A busy server (a full listen backlog) is waited for, never a
    /// reason to fork.
    async fn attach_native(
        tmux: &Tmux,
        name: &str,
        framing: native::Framing,
        options: &ControlOptions,
    ) -> Option<Result<ControlClient, ControlError>> {
        let _turn = tmux.attach_pace().turn().await;
        let socket = tmux.socket_path(
            std::env::var_os("TMUX_TMPDIR").as_deref(),
            // SAFETY: getuid(2) cannot fail and touches no memory.
            unsafe { libc::getuid() },
        );
        let argv = attach_argv(name, &options.flags);
        let failed = |message: String| {
            Some(Err(ControlError::Attach {
                session: name.to_owned(),
                message,
            }))
        };
        match native::connect(&socket, framing, argv).await {
            Ok(client) => {
                match Self::start(Transport::Native(client), tmux, name, options.clone()).await {
                    Err(ControlError::ProtocolRefused { message, .. }) => {
                        tracing::warn!(
                            "the tmux server refused tmuxd's own client ({message}); \
                             control clients are `tmux -C` children from now on"
                        );
                        tmux.demote_client_path(message);
                        None
                    }
                    attached => Some(attached),
                }
            }
            Err(ConnectError::NoServer { path, .. }) => {
                failed(format!("no server running on {}", path.display()))
            }
            Err(e @ ConnectError::Busy { .. }) => failed(e.to_string()),
            Err(e @ (ConnectError::Unreachable { .. } | ConnectError::Dialogue(_))) => {
                tracing::warn!("{e}; attaching to {name} with a `tmux -C` child");
                None
            }
        }
    }

    /// Waits for the attach on a started transport; closes it on failure.
    async fn start(
        transport: Transport,
        tmux: &Tmux,
        name: &str,
        options: ControlOptions,
    ) -> Result<ControlClient, ControlError> {
        let mut client = ControlClient {
            transport,
            parser: Parser::new(),
            events: VecDeque::new(),
            pending: VecDeque::new(),
            held: HashMap::new(),
            attach_reply: None,
            next_ticket: 0,
            read_buf: vec![0; READ_CHUNK],
            writing: false,
            eof: false,
            exit_reason: None,
            attached: Attached {
                session: TmuxSessionId(0),
                name: String::new(),
            },
            options,
            metrics: tmux.metrics().cloned(),
            handshake: tmux.handshake().clone(),
        };
        let wait = client.options.timeout;
        let error = match timeout(wait, client.await_attach(name)).await {
            Ok(Ok(attached)) => {
                client.attached = attached;
                return Ok(client);
            }
            Ok(Err(e)) if client.transport.version_refused() => ControlError::ProtocolRefused {
                session: name.to_owned(),
                message: e.to_string(),
            },
            Ok(Err(e)) => e,
            Err(_) => ControlError::Attach {
                session: name.to_owned(),
                message: format!("no answer within {} ms", wait.as_millis()),
            },
        };
        client.close_in_turn().await;
        Err(error)
    }

    /// Reads the attach's own reply block, then the `%session-changed` that
    /// names the session. Other notifications stay queued for the owner.
    async fn await_attach(&mut self, name: &str) -> Result<Attached, ControlError> {
        let failed = |message: String| ControlError::Attach {
            session: name.to_owned(),
            message,
        };
        loop {
            if let Some(reply) = &self.attach_reply {
                if reply.failed {
                    return Err(failed(reply.message()));
                }
                if let Some(attached) = self.take_session_changed() {
                    return Ok(attached);
                }
            }
            if self.eof {
                let reason = self.exit_reason.clone();
                return Err(failed(reason.unwrap_or_else(|| "tmux exited".to_owned())));
            }
            self.fill().await;
        }
    }

    fn take_session_changed(&mut self) -> Option<Attached> {
        let at = self.events.iter().position(|e| {
            matches!(
                e,
                ClientEvent::Notification(Notification::SessionChanged { .. })
            )
        })?;
        match self.events.remove(at) {
            Some(ClientEvent::Notification(Notification::SessionChanged { session, name })) => {
                Some(Attached { session, name })
            }
            _ => None,
        }
    }

    /// The session tmux attached this client to.
    pub fn attached(&self) -> &Attached {
        &self.attached
    }

    /// The `tmux -C` child's pid, while it runs (None for a native client,
    /// which is tmuxd itself).
    pub fn pid(&self) -> Option<u32> {
        self.transport.child_pid()
    }

    /// The pid tmux knows this client by (`#{client_pid}`): the child's,
    /// or tmuxd's own for a native client.
    pub fn client_pid(&self) -> u32 {
        self.pid().unwrap_or_else(std::process::id)
    }

    /// Whether this is tmuxd's own client rather than a `tmux -C` child.
    pub fn is_native(&self) -> bool {
        self.transport.is_native()
    }

    /// Why tmux said the client exited (`%exit REASON`), once it has.
    pub fn exit_reason(&self) -> Option<&str> {
        self.exit_reason.as_deref()
    }

    /// Whether tmux has closed the client's output (no more events after
    /// the queued ones).
    pub fn is_closed(&self) -> bool {
        self.eof
    }

    /// The next notification or `send` reply, in tmux's order; `None` once
    /// the client has exited and everything has been handed out.
    /// Cancel-safe: use it in `select!`.
    pub async fn next_event(&mut self) -> Option<ClientEvent> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Some(event);
            }
            if self.eof {
                return None;
            }
            self.fill().await;
        }
    }

    /// Runs one command and waits for its reply (`options.timeout`).
    /// Notifications read meanwhile are kept for `next_event`. Meant to be
    /// awaited to the end, not raced in `select!`: a call dropped while
    /// waiting only loses its reply, but one dropped mid-write leaves a
    /// partial line, so the client's input is closed (tmux never runs half
    /// a command) and every later command fails with `Closed`.
    pub async fn run<C: TmuxCommand>(&mut self, command: &C) -> Result<C::Output, ControlError> {
        self.forget_cancelled_runs();
        let deadline = Instant::now() + self.options.timeout;
        let ticket = self
            .write_command(command, Delivery::Hold, deadline)
            .await?;
        let body = match timeout_at(deadline, self.wait_held(ticket)).await {
            Ok(result) => result?,
            Err(_) => {
                self.abandon(ticket);
                return Err(ControlError::Timeout {
                    command: describe(&command.args()),
                    timeout: self.options.timeout,
                });
            }
        };
        Ok(command.parse(&body)?)
    }

    /// Writes a command without waiting; its reply arrives as
    /// `ClientEvent::Reply` with this ticket, in order among the events.
    pub async fn send<C: TmuxCommand>(&mut self, command: &C) -> Result<Ticket, ControlError> {
        let deadline = Instant::now() + self.options.timeout;
        self.write_command(command, Delivery::Event, deadline).await
    }

    /// Resumes a pane's output after `%pause` (re-seed its screen first:
    /// what it wrote while paused is not sent).
    pub async fn continue_pane(&mut self, pane: PaneId) -> Result<(), ControlError> {
        self.run(&RefreshClient::Pane {
            pane,
            action: PaneAction::Continue,
        })
        .await
    }

    async fn write_command<C: TmuxCommand>(
        &mut self,
        command: &C,
        delivery: Delivery,
        deadline: Instant,
    ) -> Result<Ticket, ControlError> {
        let tickets = self
            .write_lines(vec![Line::of(command)], delivery, deadline)
            .await?;
        Ok(tickets[0])
    }

    /// Sends several commands, answered as events, in one write: tmux gets
    /// all of them or, if tmuxd dies while writing, almost surely none
    /// (a line typed without its Enter would stay on the program's line).
    pub async fn send_all<C: TmuxCommand>(
        &mut self,
        commands: &[C],
    ) -> Result<Vec<Ticket>, ControlError> {
        let mut batch = Batch::default();
        for command in commands {
            batch.push(command);
        }
        self.send_batch(batch).await
    }

    /// Sends a batch of commands of any kinds in one write, answered as
    /// events in order. tmux reads the lines of one write together and
    /// runs them one after another without reading any pane's output in
    /// between, so their answers are of one moment.
    pub async fn send_batch(&mut self, batch: Batch) -> Result<Vec<Ticket>, ControlError> {
        let deadline = Instant::now() + self.options.timeout;
        self.write_lines(batch.lines, Delivery::Event, deadline)
            .await
    }

    async fn write_lines(
        &mut self,
        lines: Vec<Line>,
        delivery: Delivery,
        deadline: Instant,
    ) -> Result<Vec<Ticket>, ControlError> {
        let mut bytes = Vec::new();
        for line in &lines {
            bytes.extend(command_line(&line.args)?);
        }
        let what = || {
            lines
                .iter()
                .map(|l| describe(&l.args))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if self.writing {
            self.transport.end_input();
        }
        let eof = self.eof;
        let stdin = self
            .transport
            .writer()
            .filter(|_| !eof)
            .ok_or_else(|| ControlError::Closed { command: what() })?;
        self.writing = true;
        match timeout_at(deadline, stdin.write_all(&bytes)).await {
            Ok(Ok(())) => self.writing = false,
            Ok(Err(e)) => {
                self.transport.end_input();
                return Err(ControlError::Write(e));
            }
            Err(_) => {
                // Part of a line may be out: tmux would read the next
                // command as its tail. End the input instead.
                self.transport.end_input();
                return Err(ControlError::Timeout {
                    command: what(),
                    timeout: self.options.timeout,
                });
            }
        }
        let mut tickets = Vec::with_capacity(lines.len());
        for line in lines {
            let ticket = Ticket(self.next_ticket);
            self.next_ticket += 1;
            self.pending.push_back(Pending {
                ticket,
                command: describe(&line.args),
                delivery,
                notifications_in_reply: line.notifications_in_reply,
                sent_at: Instant::now(),
            });
            tickets.push(ticket);
        }
        Ok(tickets)
    }

    async fn wait_held(&mut self, ticket: Ticket) -> ReplyResult {
        loop {
            if let Some(result) = self.held.remove(&ticket) {
                return result;
            }
            if self.eof {
                return Err(ControlError::Closed {
                    command: String::from("(reply lost)"),
                });
            }
            self.fill().await;
        }
    }

    /// `&mut self` means no other `run` is waiting: a reply held for one
    /// belongs to a call that was dropped.
    fn forget_cancelled_runs(&mut self) {
        self.held.clear();
        for pending in &mut self.pending {
            if pending.delivery == Delivery::Hold {
                pending.delivery = Delivery::Drop;
            }
        }
    }

    fn abandon(&mut self, ticket: Ticket) {
        self.held.remove(&ticket);
        if let Some(pending) = self.pending.iter_mut().find(|p| p.ticket == ticket) {
            pending.delivery = Delivery::Drop;
        }
    }

    /// Reads what tmux has written (one read; cancel-safe) and sorts it.
    async fn fill(&mut self) {
        if self.eof {
            return;
        }
        let read = self.transport.read(&mut self.read_buf).await;
        let mut parsed = Vec::new();
        match read {
            Ok(n) if n > 0 => self.parser.feed(&self.read_buf[..n], &mut parsed),
            Ok(_) | Err(_) => {
                if let Err(e) = read {
                    tracing::warn!("reading tmux control client: {e}");
                }
                self.eof = true;
                parsed.extend(self.parser.finish());
                // A native client says its own `%exit`, as `tmux -C` would.
                if let Some(reason) = self.transport.exit_at_end() {
                    parsed.push(Event::Notification(Notification::Exit { reason }));
                }
            }
        }
        for event in parsed {
            self.route(event);
        }
        if self.eof {
            while let Some(pending) = self.pending.pop_front() {
                let error = ControlError::Closed {
                    command: pending.command.clone(),
                };
                self.count(&pending, Outcome::Unavailable);
                self.deliver(pending, Err(error));
            }
        }
    }

    fn route(&mut self, event: Event) {
        match event {
            Event::Notification(note) => {
                if let Notification::Exit { reason } = &note {
                    self.exit_reason = reason.clone();
                }
                self.handshake.heard(&note);
                self.events.push_back(ClientEvent::Notification(note));
            }
            Event::Reply(reply) if !reply.from_client() => {
                // The attach's own block, or output of a hook tmux ran.
                if self.attach_reply.is_none() {
                    self.attach_reply = Some(reply);
                } else {
                    tracing::debug!("tmux block not sent by tmuxd: {:?}", reply.message());
                }
            }
            Event::Reply(reply) => match self.pending.pop_front() {
                Some(pending) => self.deliver_reply(pending, reply),
                None => tracing::warn!("tmux replied to a command tmuxd did not send"),
            },
        }
    }

    fn deliver_reply(&mut self, pending: Pending, mut reply: Reply) {
        if pending.notifications_in_reply {
            let (notes, body): (Vec<_>, Vec<_>) = std::mem::take(&mut reply.body)
                .into_iter()
                .partition(|line| line.first() == Some(&b'%'));
            for line in notes {
                let note = parse_notification(line);
                self.events.push_back(ClientEvent::Notification(note));
            }
            reply.body = body;
        }
        self.count(
            &pending,
            if reply.failed {
                Outcome::Failed
            } else {
                Outcome::Ok
            },
        );
        let result = if reply.failed {
            let message = reply.message();
            Err(ControlError::Command {
                command: pending.command.clone(),
                refusal: crate::tmux::Refusal::of(&message),
                message,
            })
        } else {
            Ok(reply.body)
        };
        self.deliver(pending, result);
    }

    /// Every command written is counted once: at its reply (even one whose
    /// `run` gave up waiting) or when the client closes without one.
    fn count(&self, pending: &Pending, outcome: Outcome) {
        if let Some(metrics) = &self.metrics {
            let name = pending.command.split(' ').next().unwrap_or("");
            metrics.tmux_command(name, Via::Control, outcome, pending.sent_at.elapsed());
        }
    }

    fn deliver(&mut self, pending: Pending, result: ReplyResult) {
        match pending.delivery {
            Delivery::Event => self.events.push_back(ClientEvent::Reply {
                ticket: pending.ticket,
                result,
            }),
            Delivery::Hold => {
                self.held.insert(pending.ticket, result);
            }
            Delivery::Drop => {}
        }
    }

    /// Detaches cleanly: ends the client's input (tmux answers `%exit` and
    /// lets the client go; the session and its panes are untouched) and
    /// reads to EOF. After `exit_grace` the child is killed (and still
    /// waited for), or the native client hangs up; either way tmux drops it.
    pub async fn close(self) -> Departure {
        // A child client's `%client-detached` goes to every control client
        // (see `handshake`); a native client has no handshake to protect.
        let _turn = match self.transport.is_native() {
            true => None,
            false => Some(self.handshake.turn().await),
        };
        self.close_in_turn().await
    }

    /// Lets the session go at once, for a daemon that is stopping: a native
    /// client hangs up, which tmux answers by dropping it whatever output
    /// it held, with no drain to wait for (a clean detach of a thousand
    /// clients costs tmux a loop turn over every pane and client for each);
    /// a child client closes as `close` does (see `spawn` for why it must
    /// exit).
    pub async fn hang_up(mut self) -> Departure {
        match self.transport.is_native() {
            true => {
                self.transport.end_input();
                self.transport.finish(false, Instant::now()).await
            }
            false => self.close().await,
        }
    }

    /// `close` for a caller that already holds the handshake turn.
    async fn close_in_turn(mut self) -> Departure {
        self.transport.end_input();
        let deadline = Instant::now() + self.options.exit_grace;
        let drained = timeout_at(deadline, async {
            while !self.eof {
                self.fill().await;
                self.events.clear();
            }
        })
        .await;
        if drained.is_err() {
            tracing::warn!("tmux control client did not exit after its input closed");
        }
        self.transport.finish(drained.is_ok(), deadline).await
    }
}

/// `attach-session -E [-f FLAGS] -t =NAME` for the native client, each word
/// escaped as for a child's argv (the server splits at a trailing `;`).
/// `-E`: tmux would copy `update-environment` variables from the client
/// into the session, and clear those the client lacks; a native client
/// passes almost no environment, and tmuxd changes nothing in a session.
fn attach_argv(name: &str, flags: &[ClientFlag]) -> Vec<Vec<u8>> {
    let mut argv = vec!["attach-session".to_owned(), "-E".to_owned()];
    if !flags.is_empty() {
        argv.extend(["-f".to_owned(), ClientFlag::list(flags)]);
    }
    argv.extend(["-t".to_owned(), crate::tmux::session_target(name)]);
    argv.iter().map(|word| argv_arg(word.as_bytes())).collect()
}

/// A command for error messages: its words, cut short if huge.
fn describe(args: &[String]) -> String {
    const MAX: usize = 200;
    let text = args.join(" ");
    if text.len() <= MAX {
        return text;
    }
    let mut cut = MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &text[..cut], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::command::DisplayMessage;

    fn assert_send<T: Send>(_: &T) {}

    /// The actor runs in `tokio::spawn`: the client and its futures must be Send.
    #[allow(dead_code)]
    fn client_and_its_futures_are_send(client: &mut ControlClient) {
        assert_send(client);
        assert_send(&client.next_event());
        let command = DisplayMessage {
            target: None,
            format: String::new(),
        };
        assert_send(&client.run(&command));
        assert_send(&client.send(&command));
    }

    #[test]
    fn long_commands_are_cut_short_in_messages() {
        let args = vec!["send-keys".to_owned(), "é".repeat(300)];
        let text = describe(&args);
        assert!(text.len() < 260 && text.ends_with("(610 bytes)"), "{text}");
        assert_eq!(describe(&["a".into(), "b".into()]), "a b");
    }
}
