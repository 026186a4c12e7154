//! Which sessions hold a control client of their own ("hot") and which do
//! without ("cold"): a pure decision over what each session's actor and
//! the waits say, tested on tables below.
//!
//! tmux walks every pane and, for each, every control client on every turn
//! of its loop, so each client costs every human at that tmux a little on
//! every keystroke (see the design's "Many sessions"). A session is hot
//! when live output is wanted from it:
//!
//! - someone watches it: an output stream, a screen feed, a wait with
//!   `match` (they want every byte, or a look at every change);
//! - tmuxd created it and it has not settled yet (its first seconds are
//!   when a program prints a question or fails);
//! - it is busy with tmuxd: input being typed, commands in flight;
//! - it is printing: output within the last `Budget::printing` (tmux
//!   stamps a window's activity in whole seconds, so a session let go in
//!   the second it printed could print again unnoticed in that second);
//! - it is among the `live_clients` most recently active.
//!
//! The first four are always hot, budget or not (the budget is what
//! recent activity may fill up to; many sessions printing at once can hold
//! more); everything else is cold. So up to `live_clients` sessions every
//! session is hot (that many clients is what tmux is asked to carry), and
//! with any session tracked at least one is, whose client carries what
//! tmuxd asks of the whole server (the heat owner's look, discovery) and
//! hears `%sessions-changed`. Without a budget every session is hot, as
//! before there was one.

use std::time::Duration;

use crate::id::SessionId;

/// What the decision needs to know of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    pub id: SessionId,
    /// Its actor holds a client now.
    pub live: bool,
    /// Output streams, screen feeds or `match` waits are open on it.
    pub watched: bool,
    /// tmuxd created it and it has not settled since.
    pub settling: bool,
    /// Input is being typed, or commands wait for tmux's answer: its
    /// client cannot be let go now.
    pub busy: bool,
    /// How long ago it last printed; None when never seen to.
    pub quiet_for: Option<Duration>,
}

/// How many clients recent activity may hold, and what counts as printing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// `tmux.live_clients`; None: every session keeps its client.
    pub live_clients: Option<usize>,
    /// Printed within this long counts as printing: always hot.
    pub printing: Duration,
}

/// Why a session is hot (for the log and tests), or that it is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heat {
    /// No budget: every session keeps its client.
    Unlimited,
    Watched,
    Settling,
    Busy,
    /// Output within `Budget::printing`.
    Printing,
    /// Among the most recently active, within the budget.
    Recent,
    Cold,
}

impl Heat {
    pub fn is_hot(self) -> bool {
        self != Heat::Cold
    }
}

/// Each session's heat, in the order given.
pub fn decide(sessions: &[Facts], budget: Budget) -> Vec<(SessionId, Heat)> {
    let Some(live_clients) = budget.live_clients else {
        return sessions.iter().map(|s| (s.id, Heat::Unlimited)).collect();
    };
    let required = |s: &Facts| {
        if s.watched {
            Some(Heat::Watched)
        } else if s.busy {
            Some(Heat::Busy)
        } else if s.settling {
            Some(Heat::Settling)
        } else if s.quiet_for.is_some_and(|q| q < budget.printing) {
            Some(Heat::Printing)
        } else {
            None
        }
    };
    let held = sessions.iter().filter(|s| required(s).is_some()).count();
    let room = live_clients.saturating_sub(held);
    // The most recently active first (one never seen to print last);
    // among equals a session that holds its client keeps it (no churn
    // between two equally quiet ones), then the lower id.
    let mut recent: Vec<&Facts> = sessions.iter().filter(|s| required(s).is_none()).collect();
    recent.sort_by_key(|s| (s.quiet_for.is_none(), s.quiet_for, !s.live, s.id));
    let recent: std::collections::BTreeSet<SessionId> =
        recent.iter().take(room).map(|s| s.id).collect();
    sessions
        .iter()
        .map(|s| {
            let heat = match required(s) {
                Some(heat) => heat,
                None if recent.contains(&s.id) => Heat::Recent,
                None => Heat::Cold,
            };
            (s.id, heat)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(id: u64, secs: u64) -> Facts {
        Facts {
            id: SessionId(id),
            live: true,
            watched: false,
            settling: false,
            busy: false,
            quiet_for: Some(Duration::from_secs(secs)),
        }
    }

    const PRINTING: Duration = Duration::from_secs(2);

    fn budget(live_clients: usize) -> Budget {
        Budget {
            live_clients: Some(live_clients),
            printing: PRINTING,
        }
    }

    fn heats(sessions: &[Facts], budget: Budget) -> Vec<(u64, Heat)> {
        decide(sessions, budget)
            .into_iter()
            .map(|(id, heat)| (id.0, heat))
            .collect()
    }

    #[test]
    fn without_a_budget_every_session_is_hot() {
        let sessions = [quiet(1, 3600), quiet(2, 1)];
        let unlimited = Budget {
            live_clients: None,
            printing: PRINTING,
        };
        assert_eq!(
            heats(&sessions, unlimited),
            [(1, Heat::Unlimited), (2, Heat::Unlimited)]
        );
    }

    #[test]
    fn the_most_recently_active_fill_the_budget_and_the_quiet_go_cold() {
        let sessions = [quiet(1, 30), quiet(2, 5), quiet(3, 50), quiet(4, 3600)];
        assert_eq!(
            heats(&sessions, budget(2)),
            [
                (1, Heat::Recent),
                (2, Heat::Recent),
                (3, Heat::Cold),
                (4, Heat::Cold),
            ]
        );
    }

    #[test]
    fn up_to_the_budget_every_session_is_hot_however_quiet() {
        let never = Facts {
            quiet_for: None,
            ..quiet(3, 0)
        };
        let sessions = [quiet(1, 86_400), quiet(2, 59), never];
        assert_eq!(
            heats(&sessions, budget(3)),
            [(1, Heat::Recent), (2, Heat::Recent), (3, Heat::Recent)]
        );
        // One never seen to print comes after every one that was.
        assert_eq!(
            heats(&sessions, budget(2)),
            [(1, Heat::Recent), (2, Heat::Recent), (3, Heat::Cold)]
        );
    }

    #[test]
    fn with_a_budget_one_session_is_hot_while_every_one_is_quiet() {
        let sessions = [quiet(1, 7200), quiet(2, 3600), quiet(3, 86_400)];
        assert_eq!(
            heats(&sessions, budget(1)),
            [(1, Heat::Cold), (2, Heat::Recent), (3, Heat::Cold)]
        );
    }

    #[test]
    fn watched_busy_and_settling_sessions_are_hot_whatever_the_budget() {
        let sessions = [
            Facts {
                watched: true,
                ..quiet(1, 3600)
            },
            Facts {
                busy: true,
                ..quiet(2, 3600)
            },
            Facts {
                settling: true,
                ..quiet(3, 3600)
            },
            quiet(4, 5),
        ];
        assert_eq!(
            heats(&sessions, budget(0)),
            [
                (1, Heat::Watched),
                (2, Heat::Busy),
                (3, Heat::Settling),
                (4, Heat::Cold),
            ]
        );
    }

    #[test]
    fn sessions_that_must_be_hot_take_room_from_recent_activity() {
        let sessions = [
            Facts {
                watched: true,
                ..quiet(1, 3600)
            },
            quiet(2, 10),
            quiet(3, 5),
        ];
        assert_eq!(
            heats(&sessions, budget(2)),
            [(1, Heat::Watched), (2, Heat::Cold), (3, Heat::Recent)]
        );
    }

    #[test]
    fn a_session_printing_now_is_hot_beyond_the_budget() {
        let sessions = [quiet(1, 0), quiet(2, 1), quiet(3, 2), quiet(4, 3)];
        assert_eq!(
            heats(&sessions, budget(1)),
            [
                (1, Heat::Printing),
                (2, Heat::Printing),
                (3, Heat::Cold),
                (4, Heat::Cold),
            ]
        );
    }

    #[test]
    fn between_equally_quiet_sessions_the_one_holding_a_client_keeps_it() {
        let cold = Facts {
            live: false,
            ..quiet(1, 10)
        };
        let sessions = [cold, quiet(2, 10)];
        assert_eq!(
            heats(&sessions, budget(1)),
            [(1, Heat::Cold), (2, Heat::Recent)]
        );
    }
}
