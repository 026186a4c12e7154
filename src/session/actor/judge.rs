//! The actor's side of state detection: when the detector asks, look at
//! the foreground process group (/proc) and the active pane's last rows
//! (screen rules), and feed it what was seen.

use chrono::Utc;

use super::SessionActor;
use crate::session::foreground::{self, Running};
use crate::session::rules;
use crate::session::state::{Activity, Evidence, Signal, question};
use crate::session::{ActorEvent, Agent, agents};

impl SessionActor {
    /// A deadline passed: look at the foreground group and the screen.
    pub(super) fn probe(&mut self) {
        let (activity, cpu) = match self.panes.active_pid() {
            _ if self.exits.has_exited(self.panes.active()) => (Activity::Exited, None),
            Some(pid) => foreground::look(pid),
            None => (Activity::Unknown, None),
        };
        let rule = self.rule_match();
        let question = self.asks_question();
        self.signal(Signal::Probe(Evidence {
            activity,
            cpu,
            rule,
            question,
        }));
        // What runs, with its arguments, and where (reused for a moment):
        // an end nobody asked about still knows what ran last.
        self.running();
    }

    /// Whether the active pane asks something where its cursor is
    /// (`question::asks_at_cursor`).
    fn asks_question(&self) -> bool {
        let Some(pane) = self.panes.screen(self.panes.active()) else {
            return false;
        };
        let screen = pane.screen();
        let (row, col) = screen.cursor_position();
        let (cols, _) = pane.size();
        let rows: Vec<String> = screen.rows(0, cols).take(usize::from(row) + 1).collect();
        question::asks_at_cursor(&rows, usize::from(col))
    }

    fn rule_match(&mut self) -> Option<(crate::session::SessionState, &'static str)> {
        if self.config.rules.is_empty() {
            return None;
        }
        let agent = self.agent();
        let pane = self.panes.screen(self.panes.active())?;
        let (cols, _) = pane.size();
        let rows: Vec<String> = pane.screen().rows(0, cols).collect();
        rules::evaluate(&self.config.rules, agent, &rows)
    }

    /// What the active pane runs, from /proc, reused for a moment.
    pub(super) fn running(&mut self) -> Running {
        let pid = self.panes.active_pid();
        let now = std::time::Instant::now();
        self.foreground
            .running(now, || pid.and_then(foreground::running))
    }

    /// The agent in the active pane's foreground, if one is.
    pub(super) fn agent(&mut self) -> Option<Agent> {
        let exited = self.exits.has_exited(self.panes.active());
        let pid = self.panes.active_pid().filter(|_| !exited);
        let now = std::time::Instant::now();
        self.foreground.agent(now, || agents::detect(pid?))
    }

    /// Feeds the detector; a notable change goes to waiters and the supervisor.
    pub(super) fn signal(&mut self, signal: Signal<'_>) {
        if let Some(view) = self.detector.step(Utc::now(), signal) {
            if matches!(
                view.state,
                crate::session::SessionState::Idle | crate::session::SessionState::Waiting
            ) {
                self.heat.settled();
            }
            self.state_tx.send_replace(view);
            let _ = self.events.send(ActorEvent::State {
                session_id: self.session_id,
                actor_id: self.actor_id,
                view,
            });
        }
    }
}
