//! One actor per tmux session: it owns tmuxd's control client for the
//! session, each pane's parsed screen, the output log and the state
//! tracker. Everyone else talks to it through a cloneable `SessionHandle`.

mod actor;
mod agents;
mod ansi;
mod error;
mod foreground;
mod pane;
mod replay;
mod rules;
mod state;
mod window;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::{Notify, mpsc, oneshot, watch};

pub use actor::KEEP_EXIT_OPTION;
pub use agents::{Agent, HookError, HookEvent, interpret as interpret_hook};
pub use error::CommandError;
pub use pane::{Captured, PaneScreen, PaneState};
pub use replay::{Chunk, Replay};
pub use rules::{ScreenRule, check_disabled_preset, presets};
pub use state::{
    Acknowledger, Attention, AttentionReason, EndReason, Hook, Note, SessionState, StateReason,
    StateView, Timing,
};
pub use window::{
    CopyMode, Cursor, Region, ScreenSnapshot, SnapshotFormat, WindowGeometry,
    snapshot as compose_snapshot,
};

use crate::id::SessionId;
use crate::tmux::Tmux;
use crate::tmux::command::{Carried, TmuxCommand};
use crate::tmux::control::{ControlError, ControlOptions, PaneId, TmuxSessionId};
use crate::tmux::route::{Lender, LentAnswer};

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
    /// Types into the active pane (text, raw bytes, then keys), in order
    /// with every other input; answers once tmux took all of it.
    Type {
        input: Input,
        reply: oneshot::Sender<Result<(), CommandError>>,
    },
    /// Types `input` only if the attention flag up is the one raised at
    /// `since` (acknowledging it as `PushAction` first); `None` when the
    /// session has moved on and nothing was typed, else how typing went.
    Answer {
        since: chrono::DateTime<chrono::Utc>,
        input: Input,
        reply: oneshot::Sender<Option<oneshot::Receiver<Result<(), CommandError>>>>,
    },
    /// Resizes the session's current window.
    Resize {
        cols: u16,
        rows: u16,
        reply: oneshot::Sender<Result<(), CommandError>>,
    },
    /// Runs a command over this session's client for someone else, so
    /// they need not fork: the reply's lines, or tmux's error.
    Ask {
        command: Carried,
        /// Lent to someone who can fork instead (`Lender`): a cold actor
        /// declines rather than attach for it.
        lent: bool,
        reply: oneshot::Sender<Result<Vec<Vec<u8>>, CommandError>>,
    },
    /// Hold a control client (`live`) or let it go, as the heat policy
    /// decided (the heat owner); answers whether the actor holds one now
    /// (a busy or watched actor keeps it).
    SetLive {
        live: bool,
        reply: oneshot::Sender<bool>,
    },
    /// What the heat policy needs to know of the session.
    Heat { reply: oneshot::Sender<HeatFacts> },
    /// What the heat owner's look across the server found tmux noted of
    /// the session: output while it had no client, a bell (see
    /// `tmux::activity`).
    Noted {
        change: crate::tmux::activity::Change,
    },
    /// A stream of one pane's output chunks after `since` (the active pane
    /// unless given), with replay from the log.
    Subscribe {
        since: Option<u64>,
        pane: Option<PaneId>,
        reply: oneshot::Sender<Subscription>,
    },
    /// The state as it changes, for waiters.
    WatchState {
        reply: oneshot::Sender<watch::Receiver<StateView>>,
    },
    /// A coding agent's hook event, as evidence; answers with the state
    /// it leads to.
    Hook {
        hook: Hook,
        reply: oneshot::Sender<StateView>,
    },
    /// The latest output sequence number as it changes, for screen viewers.
    WatchOutput {
        reply: oneshot::Sender<watch::Receiver<u64>>,
    },
    /// Someone looked at the session (see `Acknowledger`): its attention
    /// flag is lowered. Nothing waits for it.
    Acknowledge { by: Acknowledger },
    /// Let the tmux client go at once (`ControlClient::hang_up`; the
    /// session lives on) and stop.
    Shutdown { reply: oneshot::Sender<()> },
    /// End the tmux client cleanly and stop, after handing the session back
    /// to tmux's own ways: a session tmuxd kept the exits of no longer
    /// keeps dead panes.
    Release { reply: oneshot::Sender<()> },
    /// The session has ended for `reason`: report it as exited (waiters
    /// learn the reason), answer with the last summary and screens, stop.
    Finish {
        reason: EndReason,
        reply: oneshot::Sender<Final>,
    },
}

/// What is kept of a session once it has ended.
#[derive(Clone, Debug)]
pub struct Final {
    pub summary: ActorSummary,
    /// The last screen: the window and the active pane, text and with SGR.
    pub screens: FinalScreens,
    /// The lines above the last screen, when the actor read them before
    /// the pane went (a program's exit); None when it had nothing to read.
    pub history: Option<EndHistory>,
}

/// What became of the history above a session's last screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndHistory {
    /// Read from tmux before the pane was closed, oldest first.
    Captured(Vec<String>),
    /// tmux refused to give it (its error).
    Refused(String),
}

/// A snapshot per region and format, as they were when the session ended.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct FinalScreens {
    pub window_text: Snapshot,
    pub window_ansi: Snapshot,
    pub pane_text: Snapshot,
    pub pane_ansi: Snapshot,
}

impl FinalScreens {
    pub fn get(&self, format: SnapshotFormat, region: Region) -> &Snapshot {
        match (region, format) {
            (Region::Window, SnapshotFormat::Text) => &self.window_text,
            (Region::Window, SnapshotFormat::Ansi) => &self.window_ansi,
            (Region::ActivePane, SnapshotFormat::Text) => &self.pane_text,
            (Region::ActivePane, SnapshotFormat::Ansi) => &self.pane_ansi,
        }
    }
}

/// The snapshot endpoint's body.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Snapshot {
    pub session_id: SessionId,
    /// Latest output chunk folded into this screen.
    pub seq: u64,
    #[serde(flatten)]
    pub screen: ScreenSnapshot,
}

/// How tmuxd's client is connected to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Attached,
    Reconnecting,
    Disconnected,
}

/// What the heat policy (the heat owner) needs to know of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeatFacts {
    /// tmux's id of the session, to match it in server-wide queries.
    pub tmux_id: TmuxSessionId,
    /// The actor holds a control client now.
    pub live: bool,
    /// Output streams, screen feeds or `match` waits are open on it.
    pub watched: bool,
    /// tmuxd created it and it has not been idle or waiting since.
    pub settling: bool,
    /// Input is being typed or commands wait for tmux.
    pub busy: bool,
    /// How long ago it last printed (its first look is not printing).
    pub quiet_for: Option<std::time::Duration>,
    /// How long ago the actor last saw the session's screen change, its
    /// first look included: what tmux noted before then is not news.
    pub seen_for: Option<std::time::Duration>,
}

/// The session summary's fields only the actor knows.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ActorSummary {
    pub state: SessionState,
    pub state_reason: StateReason,
    pub state_since: DateTime<Utc>,
    pub current_command: String,
    /// The coding agent in the active pane's foreground, if one is.
    #[serde(default)]
    pub agent: Option<Agent>,
    /// The foreground program's whole command line (argv), as last seen.
    #[serde(default)]
    pub command_line: Vec<String>,
    pub cwd: String,
    pub title: String,
    pub cols: u16,
    pub rows: u16,
    pub last_activity_at: Option<DateTime<Utc>>,
    pub transport: Transport,
    pub subscribers: usize,
    pub latest_seq: u64,
    /// The attention flag: why the session needs someone, since when.
    pub attention: Option<Attention>,
    /// How the session's program exited, when tmux could tell (sessions
    /// tmuxd created keep their dead pane until it is read).
    pub exit_status: Option<i32>,
    pub exit_signal: Option<i32>,
    /// Why an ended session has neither exit status nor signal.
    #[serde(default)]
    pub exit_unknown: Option<ExitUnknown>,
    /// Whether tmux keeps the session's dead panes for tmuxd (it created
    /// the session); None until the actor asked. Decides `exit_unknown`
    /// when the session's end is settled without its actor.
    #[serde(skip)]
    pub keeps_exit: Option<bool>,
    /// The status of the last command an OSC 133 `D;N` mark reported.
    pub last_command_status: Option<i32>,
    /// Whether the actor holds a control client now ("hot"; see `heat`).
    #[serde(default)]
    pub live: bool,
}

/// Why an ended session's exit is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitUnknown {
    /// tmuxd did not create the session (adopted): tmux closes such a pane
    /// as its program ends, without keeping how.
    Adopted,
    /// The session ended otherwise (deleted, killed, tmux gone), not by its
    /// program's exit.
    NotExited,
    /// tmux marked the pane dead but never said how (see `actor::exits`).
    NotReported,
}

impl ExitUnknown {
    pub fn as_str(self) -> &'static str {
        match self {
            ExitUnknown::Adopted => "adopted",
            ExitUnknown::NotExited => "not_exited",
            ExitUnknown::NotReported => "not_reported",
        }
    }

    /// Why the exit of a session that ended with `end` is unknown, if it
    /// is; `keeps_exit` is whether tmux was keeping its dead panes.
    pub fn judge(
        end: Option<EndReason>,
        exit: Option<(Option<i32>, Option<i32>)>,
        keeps_exit: Option<bool>,
    ) -> Option<ExitUnknown> {
        let end = end?;
        if matches!(exit, Some((Some(_), _) | (_, Some(_)))) {
            return None;
        }
        Some(match (end, keeps_exit) {
            (_, Some(false)) => ExitUnknown::Adopted,
            (EndReason::ProcessExit, _) => ExitUnknown::NotReported,
            _ => ExitUnknown::NotExited,
        })
    }
}

impl ActorSummary {
    /// A session with no client attached (being attached, or ended before
    /// one could be): only its state and size are known.
    pub fn without_client(
        state: SessionState,
        reason: StateReason,
        since: DateTime<Utc>,
        (cols, rows): (u16, u16),
    ) -> ActorSummary {
        ActorSummary {
            state,
            state_reason: reason,
            state_since: since,
            current_command: String::new(),
            agent: None,
            command_line: Vec::new(),
            cwd: String::new(),
            title: String::new(),
            cols,
            rows,
            last_activity_at: None,
            transport: Transport::Disconnected,
            subscribers: 0,
            latest_seq: 0,
            attention: None,
            exit_status: None,
            exit_signal: None,
            exit_unknown: None,
            keeps_exit: None,
            last_command_status: None,
            live: false,
        }
    }
}

/// What to type: literal text, raw bytes for the program, tmux key names.
#[derive(Clone, Debug, Default)]
pub struct Input {
    pub text: Option<String>,
    pub bytes: Option<Vec<u8>>,
    pub keys: Vec<String>,
}

/// A live output stream of one pane: replayed chunks first, then `live`
/// until the session ends or the subscriber falls behind or tmux skipped
/// some of the pane's output (then `live` closes and `overflowed` is set).
pub struct Subscription {
    pub replay: Replay,
    pub live: LiveOutput,
    pub overflowed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    pub latest_seq: u64,
    /// The pane streamed.
    pub pane: PaneId,
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
        session_id: SessionId,
        actor_id: u64,
        view: StateView,
    },
    /// tmux renamed the session (`%session-renamed` for the actor's own
    /// `$N`): the actor already targets the new name.
    Renamed {
        session_id: SessionId,
        actor_id: u64,
        name: String,
    },
    /// The session's windows and panes, as tmux listed them (on attach
    /// and on layout and window changes), for restoring it if tmux is lost.
    Panes {
        session_id: SessionId,
        actor_id: u64,
        rows: Vec<crate::tmux::command::restore::PanePlanRow>,
    },
}

/// Sent to the supervisor when an actor's client has gone away: the
/// session ended, the server went away, or someone detached the client
/// (tmux 3.3 gives no reason); the supervisor asks tmux which.
#[derive(Debug)]
pub struct ClientExited {
    pub session_id: SessionId,
    /// Which actor of this session ended (a session is re-attached with a new one).
    pub actor_id: u64,
    /// The actor saw its last pane's program exit (and ended the pane): a
    /// server that went away then did so because that was its last session.
    pub program_exited: bool,
}

/// Settings every actor shares.
#[derive(Clone, Debug)]
pub struct ActorConfig {
    pub replay_bytes: usize,
    pub subscriber_queue_bytes: usize,
    pub timing: Timing,
    /// Screen rules: the config's, then the agent presets, in order.
    pub rules: Arc<[ScreenRule]>,
    /// History lines read from a pane whose program ended, before tmuxd
    /// closes it (`session.ended_scrollback_lines`; 0 reads none).
    pub ended_scrollback_lines: usize,
}

/// Everything needed to start an actor for one session.
pub struct ActorSpec {
    pub session_id: SessionId,
    pub actor_id: u64,
    pub tmux: Tmux,
    pub tmux_name: String,
    pub control: ControlOptions,
    pub config: ActorConfig,
    pub events: mpsc::UnboundedSender<ActorEvent>,
    /// Woken when tmux says sessions were created or destroyed, so
    /// discovery looks now rather than at its next sweep.
    pub sessions_changed: Arc<Notify>,
    /// Attention a previous actor (or run of tmuxd) left raised.
    pub attention: Option<Attention>,
    /// The state a previous run of tmuxd last recorded, and since when.
    pub previous_state: Option<(SessionState, DateTime<Utc>)>,
    /// Take the first look without a client of the session's own, over
    /// the server-wide client when there is one, and start cold
    /// (`actor::cold`): adopting a thousand sessions then attaches none.
    pub cold_start: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("session actor has stopped")]
pub struct ActorGone;

/// Inbox depth per actor; senders wait when it is full.
const INBOX: usize = 64;

#[derive(Clone, Debug)]
pub struct SessionHandle {
    tx: mpsc::Sender<SessionCmd>,
    /// The summary the actor last published (see `summary_now`).
    summary: watch::Receiver<Option<ActorSummary>>,
}

/// A started actor: its handle, and tmux's id of the session its client
/// attached to, which follows the session through renames.
pub struct Spawned {
    pub handle: SessionHandle,
    pub tmux_id: TmuxSessionId,
}

impl SessionHandle {
    /// Attaches a control client to the session and starts the actor
    /// task that owns it.
    pub async fn spawn(spec: ActorSpec) -> Result<Spawned, ControlError> {
        let (tx, rx) = mpsc::channel(INBOX);
        let (summary_tx, summary) = watch::channel(None);
        let tmux_id = actor::start(spec, rx, summary_tx).await?;
        Ok(Spawned {
            handle: SessionHandle { tx, summary },
            tmux_id,
        })
    }

    /// A handle whose actor is gone: every request answers `ActorGone`.
    /// For tests of what holds handles without running an actor.
    #[cfg(test)]
    pub fn unattached() -> SessionHandle {
        SessionHandle {
            tx: mpsc::channel(1).0,
            summary: watch::channel(None).1,
        }
    }

    /// Whether both handles reach the same actor (a session re-attached
    /// gets a new one).
    pub fn same_actor(&self, other: &SessionHandle) -> bool {
        self.tx.same_channel(&other.tx)
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

    /// The session's summary, asked of the actor: what runs in its
    /// foreground is looked at again if the last look is older than a
    /// moment.
    pub async fn summary(&self) -> Result<ActorSummary, ActorGone> {
        self.ask(|reply| SessionCmd::Summary { reply }).await
    }

    /// The summary the actor published last, without asking it: it
    /// publishes after everything it handles, so this is as current as an
    /// answer would be, but for the foreground program, which is as of the
    /// actor's last look (it looks while the session is active). A list of
    /// a thousand sessions reads these instead of waking a thousand actors.
    /// None before the actor's first look, and the last one once it stopped.
    pub fn summary_now(&self) -> Option<ActorSummary> {
        self.summary.borrow().clone()
    }

    pub async fn subscribe(
        &self,
        since: Option<u64>,
        pane: Option<PaneId>,
    ) -> Result<Subscription, ActorGone> {
        self.ask(|reply| SessionCmd::Subscribe { since, pane, reply })
            .await
    }

    /// Types `input` into the active pane; `Err` carries tmux's refusal.
    pub async fn type_input(&self, input: Input) -> Result<Result<(), CommandError>, ActorGone> {
        self.ask(|reply| SessionCmd::Type { input, reply }).await
    }

    /// Types `input` if the attention raised at `since` is still up, in one
    /// step of the actor so nothing can come between the check and the
    /// typing; `Ok(None)` when it is not (nothing typed).
    pub async fn answer(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        input: Input,
    ) -> Result<Option<Result<(), CommandError>>, ActorGone> {
        let typed = self
            .ask(|reply| SessionCmd::Answer {
                since,
                input,
                reply,
            })
            .await?;
        match typed {
            None => Ok(None),
            Some(typed) => Ok(Some(typed.await.map_err(|_| ActorGone)?)),
        }
    }

    pub async fn resize(
        &self,
        cols: u16,
        rows: u16,
    ) -> Result<Result<(), CommandError>, ActorGone> {
        self.ask(|reply| SessionCmd::Resize { cols, rows, reply })
            .await
    }

    /// Runs `command` over this session's control client (no fork);
    /// `Err` carries tmux's refusal or a reply that did not parse.
    pub async fn ask_tmux<C: TmuxCommand>(
        &self,
        command: &C,
    ) -> Result<Result<C::Output, CommandError>, ActorGone> {
        let carried = Carried::of(command);
        let lines = self.ask(|reply| SessionCmd::Ask {
            command: carried,
            lent: false,
            reply,
        });
        Ok(lines
            .await?
            .and_then(|lines| Ok(command.parse(&lines).map_err(ControlError::from)?)))
    }

    /// Tells the actor someone looked at the session (a gone actor has
    /// nothing to lower).
    pub async fn acknowledge(&self, by: Acknowledger) {
        let _ = self.tx.send(SessionCmd::Acknowledge { by }).await;
    }

    /// Tells the actor what tmux noted of it that it could not read itself
    /// (a gone actor has nothing to judge).
    pub async fn noted(&self, change: crate::tmux::activity::Change) {
        let _ = self.tx.send(SessionCmd::Noted { change }).await;
    }

    pub async fn watch_state(&self) -> Result<watch::Receiver<StateView>, ActorGone> {
        self.ask(|reply| SessionCmd::WatchState { reply }).await
    }

    /// Feeds a hook event to the detector; the state it leads to.
    pub async fn hook(&self, hook: Hook) -> Result<StateView, ActorGone> {
        self.ask(|reply| SessionCmd::Hook { hook, reply }).await
    }

    pub async fn watch_output(&self) -> Result<watch::Receiver<u64>, ActorGone> {
        self.ask(|reply| SessionCmd::WatchOutput { reply }).await
    }

    /// What the heat policy needs to know of the session.
    pub async fn heat_facts(&self) -> Result<HeatFacts, ActorGone> {
        self.ask(|reply| SessionCmd::Heat { reply }).await
    }

    /// Holds a control client (`live`) or lets it go; whether the actor
    /// holds one now (a busy or watched actor keeps it).
    pub async fn set_live(&self, live: bool) -> Result<bool, ActorGone> {
        self.ask(|reply| SessionCmd::SetLive { live, reply }).await
    }

    /// Lets the client go at once and waits for the actor to finish.
    pub async fn shutdown(&self) {
        let _ = self.ask(|reply| SessionCmd::Shutdown { reply }).await;
    }

    /// Ends the client after undoing what tmuxd set to keep exits (a
    /// session detached from tmuxd behaves as if tmuxd never made it).
    pub async fn release(&self) {
        let _ = self.ask(|reply| SessionCmd::Release { reply }).await;
    }

    /// Reports the session exited for `reason` and stops the actor; the
    /// answer is what it last showed.
    pub async fn finish(&self, reason: EndReason) -> Result<Final, ActorGone> {
        self.ask(|reply| SessionCmd::Finish { reason, reply }).await
    }
}

/// A session's client runs other askers' commands in order with its
/// own; a client that has gone lends nothing.
impl Lender for SessionHandle {
    async fn run_lent(&self, command: Carried) -> LentAnswer {
        let asked = self.ask(|reply| SessionCmd::Ask {
            command,
            lent: true,
            reply,
        });
        match asked.await.ok()? {
            Ok(lines) => Some(Ok(lines)),
            Err(CommandError::ClientGone) => None,
            Err(CommandError::Tmux(e)) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod exit_unknown_tests {
    use super::{EndReason, ExitUnknown};

    /// Finding 1: `null` exit only with a reason, `adopted` for sessions
    /// tmuxd did not create.
    #[test]
    fn why_an_exit_is_unknown() {
        use EndReason::{ApiKill, ProcessExit};
        let cases = [
            (None, None, Some(true), None),
            (Some(ProcessExit), Some((Some(3), None)), Some(true), None),
            (Some(ProcessExit), Some((None, Some(9))), Some(true), None),
            (
                Some(ProcessExit),
                None,
                Some(false),
                Some(ExitUnknown::Adopted),
            ),
            (Some(ApiKill), None, Some(false), Some(ExitUnknown::Adopted)),
            (
                Some(ProcessExit),
                Some((None, None)),
                Some(true),
                Some(ExitUnknown::NotReported),
            ),
            (
                Some(ApiKill),
                None,
                Some(true),
                Some(ExitUnknown::NotExited),
            ),
            (Some(ApiKill), None, None, Some(ExitUnknown::NotExited)),
        ];
        for (end, exit, keeps, want) in cases {
            assert_eq!(
                ExitUnknown::judge(end, exit, keeps),
                want,
                "{end:?} {exit:?} {keeps:?}"
            );
        }
    }
}
