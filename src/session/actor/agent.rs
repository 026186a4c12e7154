//! The actor's side of agent detection: which coding agent holds the
//! active pane's terminal, read from /proc and reused for a moment (the
//! summary and each probe ask).

use super::{RUNNING_FRESH, SessionActor};
use crate::session::Agent;
use crate::session::agents;

impl SessionActor {
    /// The agent in the active pane's foreground, if one is.
    pub(super) fn agent(&mut self) -> Option<Agent> {
        let now = std::time::Instant::now();
        if let Some((at, agent)) = self.agent
            && now.duration_since(at) < RUNNING_FRESH
        {
            return agent;
        }
        let agent = match self.panes.active_pid() {
            Some(pid) if !self.exits.has_exited(self.panes.active()) => agents::detect(pid),
            _ => None,
        };
        self.agent = Some((now, agent));
        agent
    }
}
