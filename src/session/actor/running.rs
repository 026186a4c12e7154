//! What runs in the active pane's foreground (its command, arguments and
//! directory) and which coding agent it is, read from /proc and reused for
//! a moment: the summary and each probe ask, often close together.

use std::time::{Duration, Instant};

use crate::session::Agent;
use crate::session::foreground::Running;

/// How long the foreground facts read from /proc are reused.
const FRESH: Duration = Duration::from_millis(250);

#[derive(Default)]
pub(super) struct Foreground {
    running: Option<(Instant, Running)>,
    /// The coding agent in the foreground, when it was last looked for.
    agent: Option<(Instant, Option<Agent>)>,
}

impl Foreground {
    /// What runs, at `now`: the last look while fresh, else `look`'s. A
    /// pane whose program is gone (it exited, the pane waits to be read)
    /// keeps what it ran last and where, for the ended summary.
    pub(super) fn running(
        &mut self,
        now: Instant,
        look: impl FnOnce() -> Option<Running>,
    ) -> Running {
        if let Some((at, running)) = &self.running
            && now.duration_since(*at) < FRESH
        {
            return running.clone();
        }
        let last = self.running.take().map(|(_, last)| last);
        let running = look().or(last).unwrap_or_default();
        self.running = Some((now, running.clone()));
        running
    }

    /// What ran and which agent at the last looks, without looking (nothing
    /// before the first).
    pub(super) fn last(&self) -> (Running, Option<Agent>) {
        let running = self.running.as_ref().map(|(_, running)| running.clone());
        let agent = self.agent.and_then(|(_, agent)| agent);
        (running.unwrap_or_default(), agent)
    }

    /// The agent in the foreground, at `now`: the last look while fresh,
    /// else `look`'s.
    pub(super) fn agent(
        &mut self,
        now: Instant,
        look: impl FnOnce() -> Option<Agent>,
    ) -> Option<Agent> {
        if let Some((at, agent)) = self.agent
            && now.duration_since(at) < FRESH
        {
            return agent;
        }
        let agent = look();
        self.agent = Some((now, agent));
        agent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(command: &str) -> Option<Running> {
        Some(Running {
            command: command.to_owned(),
            cwd: "/tmp".to_owned(),
            argv: vec![command.to_owned()],
        })
    }

    #[test]
    fn a_look_is_reused_while_fresh_and_the_last_kept_once_the_program_is_gone() {
        let t0 = Instant::now();
        let mut fg = Foreground::default();
        assert_eq!(fg.running(t0, || runs("vim")).command, "vim");
        let reused = fg.running(t0 + FRESH / 2, || unreachable!("fresh"));
        assert_eq!(reused.command, "vim");
        // Gone: what ran last stays.
        assert_eq!(fg.running(t0 + FRESH, || None).command, "vim");
        assert_eq!(fg.running(t0 + FRESH * 3, || runs("sh")).command, "sh");
        assert_eq!(Foreground::default().running(t0, || None).command, "");
    }

    #[test]
    fn the_agent_is_looked_for_again_once_stale() {
        let t0 = Instant::now();
        let mut fg = Foreground::default();
        assert_eq!(fg.agent(t0, || None), None);
        assert_eq!(fg.agent(t0 + FRESH / 2, || unreachable!("fresh")), None);
        let again = fg.agent(t0 + FRESH, || Some(Agent::Claude));
        assert_eq!(again, Some(Agent::Claude));
    }

    #[test]
    fn the_last_looks_are_given_without_looking_however_old() {
        let t0 = Instant::now();
        let mut fg = Foreground::default();
        assert_eq!(fg.last(), (Running::default(), None));
        fg.running(t0, || runs("claude"));
        fg.agent(t0, || Some(Agent::Claude));
        let (running, agent) = fg.last();
        assert_eq!(
            (running.command.as_str(), agent),
            ("claude", Some(Agent::Claude))
        );
    }
}
