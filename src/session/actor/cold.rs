//! A session without a control client of its own ("cold", see
//! the heat owner): the actor keeps its screens, log and state and answers
//! from them, and attaches again ("heats") the moment something needs the
//! session live: a stream or screen feed, input, a resize, a command for
//! someone who cannot fork instead, a pane's process exiting, or the heat
//! policy. The screens are re-seeded from `capture-pane` at the attach, so
//! a stream of a cold session starts at its current screen; output written
//! while cold was never seen, and a replay across it is marked truncated.
//!
//! Letting the client go is a clean detach; only an actor with nothing in
//! flight (no reply awaited, no input being typed, no stream or screen
//! feed) cools.

use tokio::sync::{mpsc, watch};

use super::{SessionActor, exits, until};
use crate::session::state::Signal;
use crate::session::{ActorSpec, CommandError, HeatFacts, SessionCmd};
use crate::tmux::TmuxError;
use crate::tmux::activity::Change;
use crate::tmux::command::{
    CapturePane, CaptureSeed, Carried, DisplayMessage, Target, TmuxCommand, WindowPanes,
};
use crate::tmux::control::{ControlClient, ControlError, TmuxSessionId};
use crate::tmux::server_client::ServerClient;

/// Takes the first look at a session without a client of its own, over
/// `lender` (the server-wide client), and starts its actor cold: what an
/// attach would have seen (tmux's id of the session, the window, each
/// pane's screen, the panes' processes), with nothing attached; a turn at
/// a time (`ServerClient::turn`).
pub(super) async fn start_cold(
    spec: ActorSpec,
    inbox: mpsc::Receiver<SessionCmd>,
    summary_tx: watch::Sender<Option<crate::session::ActorSummary>>,
    lender: ServerClient,
) -> Result<TmuxSessionId, ControlError> {
    let tmux = spec.tmux.clone();
    let name = spec.tmux_name.clone();
    let _turn = lender.turn().await;
    let ask = async |command: Carried| {
        tmux.run_routed(&command, Some(&lender))
            .await
            .map_err(|e| cannot_look(&name, e))
    };
    let marks = DisplayMessage {
        target: Some(Target::Session(name.clone())),
        format: format!("#{{session_id}} #{{{}}}", exits::KEEP_EXIT_OPTION),
    };
    let marks = ask(Carried::of(&marks)).await?;
    let marks = String::from_utf8_lossy(&marks.concat()).into_owned();
    let (tmux_id, keeps_exit) = marks
        .split_once(' ')
        .and_then(|(id, keep)| Some((id.parse::<TmuxSessionId>().ok()?, keep == "1")))
        .ok_or_else(|| ControlError::Attach {
            session: name.clone(),
            message: format!("not a session id and a mark: {marks:?}"),
        })?;
    let (mut actor, exits_rx) = SessionActor::new(spec, tmux_id, summary_tx);
    let window = WindowPanes {
        session: name.clone(),
    };
    let rows = ask(Carried::of(&window)).await?;
    let rows = window
        .parse(&rows)
        .map_err(|e| cannot_look(&name, e.into()))?;
    if !rows.is_empty() {
        // No output reaches a session without a client: the look's state
        // stands for the seeds' (`Panes::states`), as it did before them.
        let states = rows.clone();
        for (pane, alternate) in actor.arrange(rows) {
            let normal = CaptureSeed {
                pane,
                alternate: false,
            };
            actor
                .panes
                .captured(pane, false, ask(Carried::of(&normal)).await);
            if alternate {
                let behind = CaptureSeed {
                    pane,
                    alternate: true,
                };
                actor
                    .panes
                    .captured(pane, true, ask(Carried::of(&behind)).await);
            }
            let joined = CapturePane {
                escapes: true,
                join: true,
                ..CapturePane::screen(Target::Pane(pane))
            };
            actor.panes.joined(pane, ask(Carried::of(&joined)).await);
        }
        actor.panes.states(Ok(states));
    }
    let pids = exits::pids_query(&name);
    if let Ok(rows) = ask(Carried::of(&pids)).await {
        actor.pids_in(&rows);
    }
    actor.first_look_done(keeps_exit);
    actor.heat.set_live(false);
    actor.streams.went_cold();
    tokio::spawn(actor.run(None, inbox, exits_rx));
    Ok(tmux_id)
}

/// A first look tmux refused (the session has gone, most likely), said as
/// the attach's failure the supervisor looks into.
fn cannot_look(name: &str, e: TmuxError) -> ControlError {
    ControlError::Attach {
        session: name.to_owned(),
        message: e.to_string(),
    }
}

fn since(at: chrono::DateTime<chrono::Utc>) -> std::time::Duration {
    (chrono::Utc::now() - at).to_std().unwrap_or_default()
}

/// A session tmuxd created holds its client until it first settles, or
/// this long (a program that works on and on is hot while it prints anyway,
/// as the most recently active).
const SETTLING_AT_MOST: std::time::Duration = std::time::Duration::from_secs(60);

/// The actor's side of the heat policy (the policy itself is the heat
/// owner's): whether it holds a client, whether a session tmuxd created
/// is still settling, and which output was only the first look.
pub(super) struct HeatSide {
    /// The actor holds a client (hot); false while cold.
    live: bool,
    /// The session has been idle or waiting since the actor started.
    settled: bool,
    /// When the actor started: a new session settles first.
    started_at: std::time::Instant,
    /// When the first look counted as output: not output the heat policy
    /// counts as recent.
    first_look_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl HeatSide {
    /// `known`: a previous run of tmuxd already tracked the session, so
    /// its first moments are past (a restart of tmuxd must not hold every
    /// session it once created hot for a minute).
    pub(super) fn new(known: bool) -> HeatSide {
        HeatSide {
            live: true,
            settled: known,
            started_at: std::time::Instant::now(),
            first_look_at: None,
        }
    }

    pub(super) fn is_live(&self) -> bool {
        self.live
    }

    pub(super) fn set_live(&mut self, live: bool) {
        self.live = live;
    }

    /// The session was seen idle or waiting.
    pub(super) fn settled(&mut self) {
        self.settled = true;
    }

    /// The first look counted as output at `at`.
    pub(super) fn first_look(&mut self, at: Option<chrono::DateTime<chrono::Utc>>) {
        self.first_look_at = at;
    }

    /// A session tmuxd created (it keeps its exits) holds its client until
    /// it first settles, or `SETTLING_AT_MOST` (at `now`).
    pub(super) fn settling(&self, keeps_exit: Option<bool>, now: std::time::Instant) -> bool {
        keeps_exit == Some(true)
            && !self.settled
            && now.saturating_duration_since(self.started_at) < SETTLING_AT_MOST
    }

    /// How long since the session's last output (`last_activity`). The
    /// first look is not output: a thousand sessions adopted at once are
    /// not a thousand printing.
    pub(super) fn quiet_for(
        &self,
        last_activity: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Option<std::time::Duration> {
        last_activity
            .filter(|at| Some(*at) != self.first_look_at)
            .map(since)
    }
}

impl SessionActor {
    /// Nothing waits on the client and nobody wants live output.
    pub(super) fn can_cool(&self) -> bool {
        let facts = self.heat_facts();
        facts.live && !facts.busy && !facts.watched && !self.exits.reading_last_look()
    }

    /// What the heat policy needs to know (see `HeatFacts`).
    pub(super) fn heat_facts(&self) -> HeatFacts {
        HeatFacts {
            tmux_id: self.tmux_id,
            live: self.heat.is_live() && !self.client_gone,
            watched: self.streams.watched(),
            settling: self
                .heat
                .settling(self.exits.keeps_exit(), std::time::Instant::now()),
            busy: !self.purposes.is_empty() || !self.jobs.is_empty() || self.panes.busy(),
            quiet_for: self.heat.quiet_for(self.detector.last_activity()),
            seen_for: self.detector.last_activity().map(since),
        }
    }

    /// What the heat owner saw tmux note of the session: output while it
    /// had no client (the session works; the policy attaches it, which
    /// brings its screen), a bell (rung while cold, or in a window other
    /// than the one the actor reads: its byte was not read here). A dead
    /// pane needs nothing here: the attach the policy makes for it looks
    /// at the session's panes, as a pidfd would have.
    pub(super) fn noted(&mut self, change: Change) {
        if change.printed {
            self.signal(Signal::Output {
                bytes: &[],
                changed: true,
            });
        }
        if change.bell {
            self.signal(Signal::Bell);
        }
    }

    /// Lets the client go (a clean detach); the session lives on.
    pub(super) async fn cool(&mut self, client: ControlClient) {
        client.close().await;
        self.heat.set_live(false);
        self.streams.went_cold();
        tracing::debug!(session_id = %self.session_id, "cold: control client let go");
    }

    /// The loop while cold: answers from memory, and returns a new client
    /// (with the command that asked for it, to serve first) once something
    /// needs the session live; None when the actor stops.
    pub(super) async fn run_cold(
        &mut self,
        inbox: &mut mpsc::Receiver<SessionCmd>,
        exits: &mut mpsc::UnboundedReceiver<exits::Exited>,
    ) -> Option<(ControlClient, Option<SessionCmd>)> {
        loop {
            self.publish_summary();
            let deadline = self.detector.next_deadline();
            tokio::select! {
                cmd = inbox.recv() => {
                    let Err(cmd) = self.serve_local(cmd?) else {
                        continue;
                    };
                    let cmd = match cmd {
                        SessionCmd::Shutdown { reply } => {
                            let _ = reply.send(());
                            return None;
                        }
                        SessionCmd::Finish { reason, reply } => {
                            let _ = reply.send(self.finish(reason, None));
                            return None;
                        }
                        SessionCmd::SetLive { live: false, reply } => {
                            let _ = reply.send(false);
                            continue;
                        }
                        SessionCmd::Ask { lent: true, reply, .. } => {
                            // The lender forks instead.
                            let _ = reply.send(Err(CommandError::ClientGone));
                            continue;
                        }
                        cmd => cmd,
                    };
                    match self.heat().await {
                        Some(client) => return Some((client, Some(cmd))),
                        None => self.refuse_cold(cmd),
                    }
                }
                _ = until(deadline) => self.probe(),
                Some((pane, looks)) = exits.recv(), if !self.client_gone => {
                    self.exits.process_exited(pane);
                    if let Some(mut client) = self.heat().await {
                        self.look_at_exit(pane, looks, &mut client).await;
                        return Some((client, None));
                    }
                }
            }
        }
    }

    /// Attaches again and re-seeds the window; None when it cannot (the
    /// session has gone, or tmux refuses): reported as the client's exit,
    /// which the supervisor looks into as for a hot session.
    async fn heat(&mut self) -> Option<ControlClient> {
        if self.client_gone {
            return None;
        }
        match self.attach_again().await {
            Ok(client) => {
                self.heat.set_live(true);
                tracing::debug!(session_id = %self.session_id, "hot: control client attached again");
                Some(client)
            }
            Err(e) => {
                tracing::info!(session_id = %self.session_id, "attaching a cold session again failed: {e}");
                self.on_client_gone();
                None
            }
        }
    }

    async fn attach_again(&mut self) -> Result<ControlClient, ControlError> {
        let mut client =
            ControlClient::attach(&self.tmux, &self.tmux_name, self.control.clone()).await?;
        if client.attached().session != self.tmux_id {
            let message = format!(
                "{} is another session now ({})",
                self.tmux_name,
                client.attached().session
            );
            client.close().await;
            return Err(ControlError::Attach {
                session: self.tmux_name.clone(),
                message,
            });
        }
        let rows = client
            .run(&WindowPanes {
                session: self.tmux_name.clone(),
            })
            .await;
        match rows {
            Ok(rows) if !rows.is_empty() => self.lay_out(rows, &mut client).await,
            Ok(_) => {}
            Err(e) => {
                client.close().await;
                return Err(e);
            }
        }
        self.ask_pids(&mut client).await;
        Ok(client)
    }

    /// Answers a command that needed a client none could be had for.
    fn refuse_cold(&mut self, cmd: SessionCmd) {
        match cmd {
            SessionCmd::Type { reply, .. } | SessionCmd::Resize { reply, .. } => {
                let _ = reply.send(Err(CommandError::ClientGone));
            }
            SessionCmd::Ask { reply, .. } => {
                let _ = reply.send(Err(CommandError::ClientGone));
            }
            SessionCmd::Answer { reply, .. } => {
                let (typed, typing) = tokio::sync::oneshot::channel();
                let _ = typed.send(Err(CommandError::ClientGone));
                let _ = reply.send(Some(typing));
            }
            SessionCmd::Subscribe { since, pane, reply } => {
                let _ = reply.send(self.subscribe(since, pane));
            }
            SessionCmd::WatchOutput { reply } => {
                let _ = reply.send(self.streams.watch_output());
            }
            SessionCmd::Release { reply } => {
                let _ = reply.send(());
            }
            SessionCmd::SetLive { reply, .. } => {
                let _ = reply.send(false);
            }
            other => {
                if let Err(other) = self.serve_local(other) {
                    tracing::debug!(session_id = %self.session_id, "cold: dropped {:?}", std::mem::discriminant(&other));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_session_is_settling_until_it_settles_or_an_adopted_one_never() {
        // (keeps its exits, a previous run tracked it, settled, started
        // this long ago, settling)
        let cases = [
            (Some(true), false, false, 0, true),
            (Some(true), false, true, 0, false),
            (
                Some(true),
                false,
                false,
                SETTLING_AT_MOST.as_secs() + 1,
                false,
            ),
            (Some(true), true, false, 0, false),
            (Some(false), false, false, 0, false),
            (None, false, false, 0, false),
        ];
        for (keeps_exit, known, settled, ago, want) in cases {
            let mut heat = HeatSide::new(known);
            if settled {
                heat.settled();
            }
            assert_eq!(
                heat.settling(
                    keeps_exit,
                    heat.started_at + std::time::Duration::from_secs(ago)
                ),
                want,
                "{keeps_exit:?} {known} {settled} {ago}"
            );
        }
    }

    #[test]
    fn the_first_look_is_not_recent_output() {
        let mut heat = HeatSide::new(false);
        let first = chrono::Utc::now() - chrono::Duration::seconds(5);
        heat.first_look(Some(first));
        assert_eq!(heat.quiet_for(Some(first)), None);
        assert_eq!(heat.quiet_for(None), None);
        let later = heat.quiet_for(Some(first + chrono::Duration::seconds(1)));
        assert!(later.is_some_and(|quiet| quiet >= std::time::Duration::from_secs(3)));
    }
}
