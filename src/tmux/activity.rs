//! What every session's panes did lately, for all sessions in one query:
//! how tmuxd watches the sessions without a control client of their own
//! (cold ones, see the heat owner). Everything read here is something tmux
//! keeps anyway; reading it sets nothing (no option, hook or `monitor-*`):
//!
//! - `window_activity`: tmux stamps a window whenever it reads output from
//!   one of its panes (whole seconds), `monitor-activity` or not;
//! - `window_bell_flag`: set when a pane rings the bell while its window is
//!   not the one a client of the session looks at (with `monitor-bell`, on
//!   by default); it stays set until someone selects the window;
//! - `pane_dead`: the pane's program has gone and tmux keeps the pane
//!   (`remain-on-exit`), waiting for someone to read how it ended.

use std::collections::{BTreeMap, BTreeSet};

use super::command::{ParseError, TmuxCommand};
use super::control::{PaneId, TmuxSessionId, WindowId};

/// One session's panes as the last look found them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionLook {
    /// The latest activity of its windows, in seconds since the epoch.
    pub activity: u64,
    /// Its windows whose bell flag is set.
    pub bells: BTreeSet<WindowId>,
    /// The latest activity of those windows.
    pub bell_activity: u64,
    /// Its panes that tmux keeps dead.
    pub dead: BTreeSet<PaneId>,
}

/// What changed in a session between two looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// A window has a later activity stamp: it printed.
    pub printed: bool,
    /// A window's bell flag was raised since (a flag still set from before
    /// is not a new bell).
    pub bell: bool,
    /// A pane died since.
    pub died: bool,
}

impl Change {
    pub fn any(self) -> bool {
        self.printed || self.bell || self.died
    }
}

impl SessionLook {
    /// What this look shows that `before` did not; `seen_out` is the
    /// second of the last output the session's actor saw itself (a later
    /// stamp is output it did not see). Without a look before, only what
    /// happened from `seen_out` on counts: a bell flag on a window that has
    /// not printed since is older (a bell is output too).
    pub fn change_since(&self, before: Option<&SessionLook>, seen_out: Option<u64>) -> Change {
        let stamp_before = before.map(|b| b.activity).max(seen_out);
        let Some(before) = before else {
            return Change {
                printed: stamp_before.is_some_and(|at| self.activity > at),
                // In the second of the look itself too: a flag up then is
                // a bell no one has seen (stamps have whole seconds).
                bell: !self.bells.is_empty()
                    && stamp_before.is_some_and(|at| self.bell_activity >= at),
                died: false,
            };
        };
        Change {
            printed: stamp_before.is_some_and(|at| self.activity > at),
            bell: !self.bells.is_subset(&before.bells),
            died: !self.dead.is_subset(&before.dead),
        }
    }
}

/// `list-panes -a` with each pane's session, window, its window's
/// activity and bell flag, and whether it is dead. No field is chosen by a
/// user, so a space separates them safely.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerLook;

impl TmuxCommand for ServerLook {
    type Output = BTreeMap<TmuxSessionId, SessionLook>;

    fn args(&self) -> Vec<String> {
        [
            "list-panes",
            "-a",
            "-F",
            "#{session_id} #{window_id} #{pane_id} #{window_activity} #{window_bell_flag} #{pane_dead}",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Self::Output, ParseError> {
        let mut looks: BTreeMap<TmuxSessionId, SessionLook> = BTreeMap::new();
        for line in lines {
            let text = String::from_utf8_lossy(line);
            let Some((session, window, pane, at, bell, dead)) = parse_row(&text) else {
                return Err(ParseError {
                    command: "list-panes".to_owned(),
                    reason: format!("not a session, window, pane, time and two flags: {text:?}"),
                });
            };
            let look = looks.entry(session).or_default();
            look.activity = look.activity.max(at);
            if bell {
                look.bells.insert(window);
                look.bell_activity = look.bell_activity.max(at);
            }
            if dead {
                look.dead.insert(pane);
            }
        }
        Ok(looks)
    }
}

fn parse_row(text: &str) -> Option<(TmuxSessionId, WindowId, PaneId, u64, bool, bool)> {
    let flag = |word: &str| match word {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    };
    let mut words = text.split(' ');
    let row = (
        words.next()?.parse().ok()?,
        words.next()?.parse().ok()?,
        words.next()?.parse().ok()?,
        words.next()?.parse().ok()?,
        flag(words.next()?)?,
        flag(words.next()?)?,
    );
    words.next().is_none().then_some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(rows: &[&str]) -> Result<BTreeMap<TmuxSessionId, SessionLook>, ParseError> {
        let lines: Vec<Vec<u8>> = rows.iter().map(|l| l.as_bytes().to_vec()).collect();
        ServerLook.parse(&lines)
    }

    #[test]
    fn each_session_gets_its_latest_window_its_bells_and_its_dead_panes() {
        let looks = parse(&[
            "$1 @1 %1 100 0 0",
            "$1 @2 %2 250 1 0",
            "$7 @9 %9 90 0 1",
            "$1 @3 %3 200 0 0",
        ])
        .unwrap();
        let one = SessionLook {
            activity: 250,
            bells: BTreeSet::from([WindowId(2)]),
            bell_activity: 250,
            dead: BTreeSet::new(),
        };
        let seven = SessionLook {
            activity: 90,
            bells: BTreeSet::new(),
            bell_activity: 0,
            dead: BTreeSet::from([PaneId(9)]),
        };
        assert_eq!(
            looks,
            BTreeMap::from([(TmuxSessionId(1), one), (TmuxSessionId(7), seven)])
        );
        assert!(parse(&[]).unwrap().is_empty());
    }

    #[test]
    fn anything_but_the_six_fields_is_refused() {
        for bad in [
            "junk",
            "$1 @1 %1 100 0",
            "$1 @1 %1 100 0 0 0",
            "$1 @1 %1 100 2 0",
            "$1 @1 %1 -5 0 0",
            "1 @1 %1 100 0 0",
            "$1 %1 @1 100 0 0",
        ] {
            assert!(parse(&[bad]).is_err(), "{bad:?}");
        }
    }

    fn look(activity: u64, bells: &[u32], dead: &[u32]) -> SessionLook {
        SessionLook {
            activity,
            bells: bells.iter().map(|w| WindowId(*w)).collect(),
            bell_activity: if bells.is_empty() { 0 } else { activity },
            dead: dead.iter().map(|p| PaneId(*p)).collect(),
        }
    }

    #[test]
    fn a_change_is_what_rose_since_the_last_look() {
        let change = |now: &SessionLook, before: Option<&SessionLook>, seen: Option<u64>| {
            let c = now.change_since(before, seen);
            (c.printed, c.bell, c.died)
        };
        let before = look(100, &[1], &[]);
        // Nothing new.
        assert_eq!(change(&before, Some(&before), None), (false, false, false));
        // A later stamp, a second window's bell, a dead pane.
        let now = look(101, &[1, 2], &[5]);
        assert_eq!(change(&now, Some(&before), None), (true, true, true));
        // A bell flag cleared (someone selected the window) is no bell.
        assert_eq!(
            change(&look(100, &[], &[]), Some(&before), None),
            (false, false, false)
        );
        // Output the actor saw itself in that second is not news.
        assert_eq!(
            change(&look(101, &[1], &[]), Some(&before), Some(101)),
            (false, false, false)
        );
        // The first look: only what came after the output the actor saw
        // counts: a bell flag on a window that printed since is new, one
        // on a window quiet since is old; a dead pane is for the attach.
        assert_eq!(change(&now, None, Some(100)), (true, true, false));
        assert_eq!(change(&now, None, Some(101)), (false, true, false));
        assert_eq!(change(&now, None, Some(102)), (false, false, false));
        let old_bell = SessionLook {
            bell_activity: 90,
            ..now.clone()
        };
        assert_eq!(change(&old_bell, None, Some(100)), (true, false, false));
        assert_eq!(change(&now, None, None), (false, false, false));
    }
}
