//! What the actor tells about its session: the summary, a snapshot, and
//! what is kept once the session has ended.

use super::SessionActor;
use crate::session::state::Signal;
use crate::session::window::{self, Region, SnapshotFormat};
use crate::session::{
    ActorSummary, EndHistory, EndReason, Final, FinalScreens, Snapshot, Transport,
};

impl SessionActor {
    /// The summary; with `look`, what runs in the foreground is read from
    /// /proc again if the last look is older than a moment, else it is the
    /// last look's (the probes look while the session is active).
    pub(super) fn summary(&mut self, look: bool) -> ActorSummary {
        let state = self.detector.view();
        let (running, agent) = match look {
            true => (self.running(), self.agent()),
            false => self.foreground.last(),
        };
        let title = self
            .panes
            .screen(self.panes.active())
            .map(|screen| screen.title().to_owned())
            .unwrap_or_default();
        ActorSummary {
            state: state.state,
            state_reason: state.reason,
            state_since: state.since,
            current_command: running.command,
            agent,
            command_line: running.argv,
            cwd: running.cwd,
            title,
            cols: self.panes.window().cols,
            rows: self.panes.window().rows,
            last_activity_at: self.detector.last_activity(),
            transport: if self.client_gone {
                Transport::Disconnected
            } else {
                Transport::Attached
            },
            subscribers: self.streams.subscribers(),
            latest_seq: self.streams.latest_seq(),
            attention: state.attention,
            exit_status: self.exits.exit().and_then(|(status, _)| status),
            exit_signal: self.exits.exit().and_then(|(_, signal)| signal),
            exit_unknown: crate::session::ExitUnknown::judge(
                match state.reason {
                    crate::session::StateReason::End(end) => Some(end),
                    _ => None,
                },
                self.exits.exit(),
                self.exits.keeps_exit(),
            ),
            keeps_exit: self.exits.keeps_exit(),
            last_command_status: self.detector.last_command_status(),
            live: self.heat.is_live() && !self.client_gone,
        }
    }

    /// Publishes the summary for `SessionHandle::summary_now`, without
    /// reading /proc: after every message, event and timer the actor
    /// handles, so nothing it knows is missing from it.
    pub(super) fn publish_summary(&mut self) {
        let summary = self.summary(false);
        self.summary_tx.send_replace(Some(summary));
    }

    /// The snapshot of `region` in `format`, from memory.
    pub(super) fn snapshot(&self, format: SnapshotFormat, region: Region) -> Snapshot {
        let mut screen =
            window::snapshot(self.panes.window(), &self.panes.screens(), format, region);
        screen.copy_mode = self.copy_mode(region);
        Snapshot {
            session_id: self.session_id,
            seq: self.streams.latest_seq(),
            screen,
        }
    }

    /// The mode a person has a pane of `region` in: the active pane's,
    /// else (the whole window) the first pane's that is in one.
    fn copy_mode(&self, region: Region) -> Option<crate::session::CopyMode> {
        let active = self.panes.active();
        let pane = match region {
            Region::ActivePane => Some(active),
            Region::Window => std::iter::once(active)
                .chain(self.panes.ids())
                .find(|id| self.checks.mode(*id).is_some()),
        }?;
        let mode = self.checks.mode(pane)?;
        Some(crate::session::CopyMode {
            pane: pane.0,
            mode: mode.name.clone(),
            position: mode.scroll_position,
            history: mode.history_size,
        })
    }

    /// Reports the end, then keeps what the session last showed.
    pub(super) fn finish(&mut self, reason: EndReason, history: Option<EndHistory>) -> Final {
        self.signal(Signal::End(reason));
        let screen = |format, region| self.snapshot(format, region);
        let screens = FinalScreens {
            window_text: screen(SnapshotFormat::Text, Region::Window),
            window_ansi: screen(SnapshotFormat::Ansi, Region::Window),
            pane_text: screen(SnapshotFormat::Text, Region::ActivePane),
            pane_ansi: screen(SnapshotFormat::Ansi, Region::ActivePane),
        };
        Final {
            summary: self.summary(true),
            screens,
            history,
        }
    }
}
