//! The current window's panes and their screens: the window's geometry,
//! each pane's screen and process, the seeds in flight, and the active
//! pane's screen hash that tells real changes from cursor moves.
//!
//! Screens are fed with the bytes each pane's program wrote (`%output`).
//! When tmuxd attaches, the window's layout changes, or tmux paused a pane,
//! the window's panes are re-seeded: one `list-panes` for the geometry,
//! then, in one write, a `capture-pane` per pane and a second `list-panes`
//! for each pane's cursor and modes as of those captures (tmux runs the
//! lines of one write together, reading no output between them). tmux
//! answers commands in order with the output it read before them, so a
//! pane's output that arrives before its seed's first reply is in the
//! captures and the state and is not fed again; output after the last
//! reply is. Output between the replies would mean the captures and the
//! state are of different moments: the seed is taken again. A pane
//! flooding output is re-seeded rather than fed (see `flood`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::flood::Flood;
use crate::session::pane::{Captured, PaneScreen, PaneState};
use crate::session::window::WindowGeometry;
use crate::tmux::command::PaneRow;
use crate::tmux::control::{ControlError, PaneId};

/// Within this long of the last screen hash, output counts as a change
/// without hashing again.
const HASH_EVERY: Duration = Duration::from_millis(50);

/// Seeds taken again at most this many times in a row when output keeps
/// racing them; after that the last one stands (a busy pane redraws soon).
const SEED_RETRIES: u8 = 3;

/// One pane of the current window.
struct Pane {
    screen: PaneScreen,
    pid: Option<u32>,
    /// Captures asked for and not yet answered; output is not fed meanwhile.
    seeding: Option<Seed>,
    /// The current burst of output, and whether it is skipped.
    flood: Flood,
}

/// A re-seed in flight: tmux's state of the pane and what came back so far.
struct Seed {
    /// From the look that began the seed, until the state asked after the
    /// captures replaces it.
    state: PaneState,
    captured: Captured,
    /// The captures' replies and the state's still to come.
    replies_left: u8,
    /// A reply of this seed is in: output from now on was read by tmux
    /// between two of its commands.
    answering: bool,
    /// `capture-pane -J` of the same moment (see `PaneScreen::seed_wraps`).
    joined: Vec<Vec<u8>>,
    /// The pane wrote between two of the seed's commands, or changed
    /// screens since the look: the captures and the state are not of one
    /// moment, so the seed is taken again.
    raced: bool,
}

pub(super) struct Panes {
    window: WindowGeometry,
    panes: BTreeMap<PaneId, Pane>,
    /// A window look is in flight; `look_again` asks for another after it.
    looking: bool,
    look_again: bool,
    /// Seeds taken again in a row because output raced them.
    seed_retries: u8,
    /// Hash of the active pane's text, and when it was taken.
    screen_hash: u64,
    hashed_at: Instant,
}

impl Panes {
    pub(super) fn new() -> Panes {
        Panes {
            window: WindowGeometry::default(),
            panes: BTreeMap::new(),
            looking: false,
            look_again: false,
            seed_retries: 0,
            screen_hash: 0,
            hashed_at: Instant::now(),
        }
    }

    pub(super) fn window(&self) -> &WindowGeometry {
        &self.window
    }

    pub(super) fn active(&self) -> PaneId {
        self.window.active
    }

    pub(super) fn contains(&self, pane: PaneId) -> bool {
        self.panes.contains_key(&pane)
    }

    pub(super) fn ids(&self) -> impl Iterator<Item = PaneId> + '_ {
        self.panes.keys().copied()
    }

    pub(super) fn screen(&self, pane: PaneId) -> Option<&PaneScreen> {
        self.panes.get(&pane).map(|p| &p.screen)
    }

    /// The screen of a pane not being seeded.
    pub(super) fn seeded_screen(&self, pane: PaneId) -> Option<&PaneScreen> {
        self.panes
            .get(&pane)
            .filter(|p| p.seeding.is_none())
            .map(|p| &p.screen)
    }

    /// Neither a seed nor a skipped flood is about to replace `pane`'s
    /// screen.
    pub(super) fn steady(&self, pane: PaneId) -> bool {
        self.panes
            .get(&pane)
            .is_some_and(|p| p.seeding.is_none() && p.flood.reseed_at().is_none())
    }

    /// The screens by pane id, for composing a snapshot.
    pub(super) fn screens(&self) -> BTreeMap<PaneId, &PaneScreen> {
        self.panes.iter().map(|(id, p)| (*id, &p.screen)).collect()
    }

    pub(super) fn active_pid(&self) -> Option<u32> {
        self.panes.get(&self.active()).and_then(|p| p.pid)
    }

    /// A look at the window may be sent now; false when one is in flight
    /// (another is asked for once it is answered).
    pub(super) fn start_look(&mut self) -> bool {
        if self.looking {
            self.look_again = true;
            return false;
        }
        self.looking = true;
        true
    }

    /// The window look is answered; true when another is wanted.
    pub(super) fn look_done(&mut self) -> bool {
        self.looking = false;
        std::mem::take(&mut self.look_again)
    }

    /// Something waits on tmux: a look or a seed.
    pub(super) fn busy(&self) -> bool {
        self.looking || self.panes.values().any(|p| p.seeding.is_some())
    }

    /// Feeds `pane`'s output to its screen at `now`: whether the screen
    /// changed (a burst counts as a change until hashed again), None for a
    /// pane of another window.
    pub(super) fn feed(&mut self, pane: PaneId, data: &[u8], now: Instant) -> Option<bool> {
        let slot = self.panes.get_mut(&pane)?;
        // Bytes a seed in flight already holds. A skipping pane is seeded
        // again anyway.
        if let Some(seed) = slot.seeding.as_mut() {
            let counted = slot.flood.feed(now, data.len());
            seed.raced |= counted && seed.answering;
            return Some(true);
        }
        // A flood is re-seeded from tmux instead (`reseed_floods`).
        if !slot.flood.feed(now, data.len()) {
            return Some(true);
        }
        let bells = slot.screen.process(data);
        // Hashing the whole screen per chunk would cost a flood dearly:
        // output in a burst counts as a change, and the hash tells only
        // after a pause whether anything changed.
        let active = pane == self.window.active;
        if !active || now.duration_since(self.hashed_at) < HASH_EVERY {
            return Some(true);
        }
        let hash = slot.screen.content_hash();
        let changed = hash != self.screen_hash || bells > 0;
        self.screen_hash = hash;
        self.hashed_at = now;
        Some(changed)
    }

    /// When the first skipped flood is due to be drawn (see `flood`).
    pub(super) fn next_reseed_at(&self) -> Option<Instant> {
        self.panes
            .values()
            .filter_map(|p| p.flood.reseed_at())
            .min()
    }

    /// Whether a skipped flood is due to be drawn at `now` (the window is
    /// then looked at again).
    pub(super) fn floods_due(&mut self, now: Instant) -> bool {
        let mut due = false;
        for pane in self.panes.values_mut() {
            if pane.flood.reseed_at().is_some_and(|at| at <= now) {
                pane.flood.reseeded(now);
                due = true;
            }
        }
        due
    }

    /// Takes tmux's view of the window (`rows`, not empty): its geometry,
    /// and a seed awaited for each pane; the panes to capture, and whether
    /// each shows its alternate screen.
    pub(super) fn arrange(&mut self, rows: Vec<PaneRow>) -> Vec<(PaneId, bool)> {
        let first = &rows[0];
        self.window = WindowGeometry {
            cols: first.window_cols,
            rows: first.window_rows,
            panes: rows.iter().map(|r| (r.pane, r.rect)).collect(),
            active: rows.iter().find(|r| r.active).unwrap_or(first).pane,
        };
        self.panes
            .retain(|id, _| rows.iter().any(|r| r.pane == *id));
        let mut captures = Vec::new();
        for row in rows {
            let state = row.state.clone();
            let pane = self.panes.entry(row.pane).or_insert_with(|| Pane {
                screen: PaneScreen::new(state.cols, state.rows),
                pid: None,
                seeding: None,
                flood: Flood::default(),
            });
            pane.pid = row.pid;
            pane.seeding = Some(Seed {
                replies_left: 3 + u8::from(state.alternate_on),
                answering: false,
                joined: Vec::new(),
                state,
                captured: Captured::default(),
                raced: false,
            });
            captures.push((row.pane, row.state.alternate_on));
        }
        captures
    }

    /// Takes one capture's reply; once a pane's are all in, seeds its
    /// screen. Returns true when output raced the seed and the window
    /// should be looked at again.
    pub(super) fn captured(
        &mut self,
        pane: PaneId,
        alternate: bool,
        result: Result<Vec<Vec<u8>>, ControlError>,
    ) -> bool {
        let Some(seed) = self.panes.get_mut(&pane).and_then(|p| p.seeding.as_mut()) else {
            return false;
        };
        let text = result.map(|lines| lines.join(&b'\n')).unwrap_or_default();
        match (seed.state.alternate_on, alternate) {
            // On the alternate screen, the plain capture is what shows.
            (true, false) => seed.captured.alternate = Some(text),
            _ => seed.captured.normal = text,
        }
        self.seed_reply_in(pane)
    }

    /// Takes the joined capture of a seed (see `captured`).
    pub(super) fn joined(
        &mut self,
        pane: PaneId,
        result: Result<Vec<Vec<u8>>, ControlError>,
    ) -> bool {
        let Some(seed) = self.panes.get_mut(&pane).and_then(|p| p.seeding.as_mut()) else {
            return false;
        };
        seed.joined = result.unwrap_or_default();
        self.seed_reply_in(pane)
    }

    /// Takes the panes' state asked after their captures (see the module's
    /// doc): each seed in flight gets its pane's cursor and modes as of its
    /// captures. Returns the panes whose seed raced (see `captured`).
    pub(super) fn states(&mut self, result: Result<Vec<PaneRow>, ControlError>) -> Vec<PaneId> {
        let rows = result.ok();
        let seeding: Vec<PaneId> = self
            .panes
            .iter()
            .filter(|(_, p)| p.seeding.is_some())
            .map(|(id, _)| *id)
            .collect();
        let mut raced = Vec::new();
        for pane in seeding {
            let row = rows
                .as_ref()
                .and_then(|r| r.iter().find(|r| r.pane == pane));
            if let Some(seed) = self.panes.get_mut(&pane).and_then(|p| p.seeding.as_mut()) {
                match row {
                    // Captured as planned (the same screen, the same size).
                    Some(row)
                        if (row.state.alternate_on, row.state.cols, row.state.rows)
                            == (seed.state.alternate_on, seed.state.cols, seed.state.rows) =>
                    {
                        seed.state = row.state.clone();
                    }
                    // The pane left the window: a layout change follows.
                    None if rows.is_some() => {}
                    _ => seed.raced = true,
                }
            }
            if self.seed_reply_in(pane) {
                raced.push(pane);
            }
        }
        raced
    }

    /// One more reply of a pane's seed is in; once all are, seeds its
    /// screen. Returns true when output raced the seed.
    fn seed_reply_in(&mut self, pane: PaneId) -> bool {
        let Some(slot) = self.panes.get_mut(&pane) else {
            return false;
        };
        let Some(seed) = slot.seeding.as_mut() else {
            return false;
        };
        seed.answering = true;
        seed.replies_left = seed.replies_left.saturating_sub(1);
        if seed.replies_left > 0 {
            return false;
        }
        let raced = seed.raced && self.seed_retries < SEED_RETRIES;
        if let Some(seed) = slot.seeding.take() {
            slot.screen.seed(&seed.state, &seed.captured);
            slot.screen.seed_wraps(&seed.joined);
        }
        if pane == self.window.active {
            self.screen_hash = slot.screen.content_hash();
        }
        if raced {
            self.seed_retries += 1;
        } else {
            self.seed_retries = 0;
        }
        raced
    }

    /// Seeds `pane`'s screen with what tmux showed last (the session is closing).
    pub(super) fn seed(&mut self, pane: PaneId, state: &PaneState, captured: &Captured) {
        if let Some(slot) = self.panes.get_mut(&pane) {
            slot.screen.seed(state, captured);
        }
    }

    /// Takes tmux's screen of `pane` in place of tmuxd's (a check found
    /// them apart).
    pub(super) fn replace_screen(&mut self, pane: PaneId, screen: PaneScreen) {
        let Some(slot) = self.panes.get_mut(&pane) else {
            return;
        };
        slot.screen = screen;
        if pane == self.window.active {
            self.screen_hash = slot.screen.content_hash();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::PaneRect;
    use crate::tmux::control::WindowId;

    fn row(pane: u32, active: bool, alternate_on: bool) -> PaneRow {
        PaneRow {
            window: WindowId(1),
            window_cols: 20,
            window_rows: 4,
            pane: PaneId(pane),
            active,
            rect: PaneRect {
                left: 0,
                top: 0,
                cols: 20,
                rows: 4,
            },
            pid: Some(100 + pane),
            dead: false,
            state: PaneState {
                cols: 20,
                rows: 4,
                alternate_on,
                ..PaneState::default()
            },
        }
    }

    fn first_row(screen: &PaneScreen) -> String {
        let row = screen.screen().rows(0, 20).next().unwrap_or_default();
        row.trim_end().to_owned()
    }

    fn lines(text: &str) -> Result<Vec<Vec<u8>>, ControlError> {
        Ok(text.lines().map(|l| l.as_bytes().to_vec()).collect())
    }

    #[test]
    fn one_look_at_a_time_and_one_more_for_changes_meanwhile() {
        let mut panes = Panes::new();
        assert!(panes.start_look());
        assert!(!panes.start_look(), "one in flight");
        assert!(!panes.start_look());
        assert!(panes.busy());
        assert!(panes.look_done(), "asked again once");
        assert!(panes.start_look());
        assert!(!panes.look_done(), "nothing changed meanwhile");
        assert!(!panes.busy());
    }

    #[test]
    fn a_pane_is_seeded_once_its_captures_and_state_are_in_and_fed_after() {
        let mut panes = Panes::new();
        let captures = panes.arrange(vec![row(1, false, false), row(2, true, true)]);
        assert_eq!(captures, [(PaneId(1), false), (PaneId(2), true)]);
        assert_eq!(panes.active(), PaneId(2));
        assert_eq!(panes.active_pid(), Some(102));
        assert!(panes.busy() && !panes.steady(PaneId(1)));
        let now = Instant::now();
        // Output before the seed's first reply is in its captures and its
        // state: not fed, and no race.
        assert_eq!(panes.feed(PaneId(1), b"late", now), Some(true));
        assert!(!panes.captured(PaneId(1), false, lines("hello")));
        assert!(!panes.joined(PaneId(1), lines("hello")));
        assert!(
            panes.seeded_screen(PaneId(1)).is_none(),
            "the state is still out"
        );
        // Pane 2 shows its alternate screen: a capture more.
        assert!(!panes.captured(PaneId(2), false, lines("shown")));
        assert!(!panes.joined(PaneId(2), lines("shown")));
        assert!(!panes.captured(PaneId(2), true, lines("behind")));
        assert!(!panes.steady(PaneId(2)));
        // The state asked after the captures: pane 1's cursor is after
        // "hello" (the look that began the seed had it at the start).
        let mut after = row(1, false, false);
        after.state.cursor_x = 5;
        assert_eq!(panes.states(Ok(vec![after, row(2, true, true)])), []);
        let screen = panes.seeded_screen(PaneId(1)).expect("seeded");
        assert_eq!(first_row(screen), "hello");
        assert!(panes.steady(PaneId(2)) && !panes.busy());
        // Seeded: output is fed at the state's cursor; another window's is not.
        assert_eq!(panes.feed(PaneId(1), b"!", now), Some(true));
        assert_eq!(first_row(panes.screen(PaneId(1)).unwrap()), "hello!");
        assert_eq!(panes.feed(PaneId(9), b"elsewhere", now), None);
        // A pane gone from the window is forgotten.
        panes.arrange(vec![row(2, true, false)]);
        assert_eq!(panes.ids().collect::<Vec<_>>(), [PaneId(2)]);
        assert_eq!(
            panes.screens().keys().copied().collect::<Vec<_>>(),
            [PaneId(2)]
        );
    }

    /// The steps of one pane's seed, as the actor hears them.
    #[derive(Clone, Copy, Debug)]
    enum Step {
        Output,
        Capture,
        Joined,
        /// The state after the captures: whether the alternate screen is on.
        State {
            alternate_on: bool,
        },
        StateRefused,
    }

    /// Runs `steps` on a fresh seed of a one-pane window; whether it raced.
    fn seed_raced(panes: &mut Panes, steps: &[Step]) -> bool {
        panes.arrange(vec![row(1, true, false)]);
        let mut raced = false;
        for step in steps {
            raced |= match *step {
                Step::Output => panes.feed(PaneId(1), b"x", Instant::now()) == Some(false),
                Step::Capture => panes.captured(PaneId(1), false, lines("")),
                Step::Joined => panes.joined(PaneId(1), lines("")),
                Step::State { alternate_on } => {
                    let rows = vec![row(1, true, alternate_on)];
                    !panes.states(Ok(rows)).is_empty()
                }
                Step::StateRefused => {
                    let refused = Err(ControlError::Closed {
                        command: "list-panes".into(),
                    });
                    !panes.states(refused).is_empty()
                }
            };
        }
        raced
    }

    #[test]
    fn a_seed_is_taken_again_only_when_its_answers_are_not_of_one_moment() {
        use Step::*;
        let same = State {
            alternate_on: false,
        };
        let cases: [(&str, &[Step], bool); 6] = [
            ("quiet", &[Capture, Joined, same], false),
            (
                "output before the first reply",
                &[Output, Capture, Joined, same],
                false,
            ),
            (
                "output between the captures",
                &[Capture, Output, Joined, same],
                true,
            ),
            (
                "output before the state",
                &[Capture, Joined, Output, same],
                true,
            ),
            (
                "the screen changed since the look",
                &[Capture, Joined, State { alternate_on: true }],
                true,
            ),
            ("the state refused", &[Capture, Joined, StateRefused], true),
        ];
        for (what, steps, want) in cases {
            let mut panes = Panes::new();
            assert_eq!(seed_raced(&mut panes, steps), want, "{what}");
            assert!(!panes.busy(), "{what}: the seed is done");
        }
    }

    #[test]
    fn output_racing_a_seed_takes_it_again_a_bounded_number_of_times() {
        use Step::*;
        let raced = [
            Capture,
            Output,
            Joined,
            State {
                alternate_on: false,
            },
        ];
        let mut panes = Panes::new();
        let retries = (0..=SEED_RETRIES)
            .filter(|_| seed_raced(&mut panes, &raced))
            .count();
        assert_eq!(retries, usize::from(SEED_RETRIES));
    }
}
