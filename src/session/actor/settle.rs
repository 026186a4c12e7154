//! The settled-screen check: once a pane of the window has been quiet for
//! `QUIET` after output, its screen is compared with tmux's own (the
//! pane's state and `capture-pane -e`, sent in one write over the
//! session's control client) and, when they differ, tmux's is taken and
//! the drift counted in `/metrics` by cause. A check is off the hot path:
//! it runs only after a pause, once per pause, at most every
//! `SESSION_EVERY` per session and within the tmux server's budget
//! (`tmux.screen_checks_per_s`, all sessions together). It types nothing,
//! and skips a pane a person has in copy mode, one being seeded or one
//! whose flood is being skipped; output while a check is in flight voids it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Purpose, SessionActor};
use crate::metrics::CheckOutcome;
use crate::screen::TmuxCursor;
use crate::session::pane::{Captured, PaneScreen};
use crate::tmux::command::{CheckStep, PaneFacts, PaneMode, ParseError, TmuxCommand};
use crate::tmux::control::{ControlClient, ControlError, PaneId};

/// A pause this long after output settles a pane.
pub(super) const QUIET: Duration = Duration::from_millis(500);

/// At most one check per session this often.
pub(super) const SESSION_EVERY: Duration = Duration::from_secs(2);

/// When the server's budget is spent, a settled pane asks again this late.
const BUDGET_RETRY: Duration = Duration::from_millis(250);

/// While a person has a pane in copy mode, where they are is asked this
/// often (tmux tells when a mode starts and ends, not when it scrolls).
pub(super) const MODE_EVERY: Duration = Duration::from_secs(1);

/// Which reply of a check a ticket is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CheckPart {
    /// The pane's state (`PaneLook`).
    Facts,
    /// What shows (`capture-pane -e -N`).
    Rows,
    /// The normal screen behind the alternate one (`-a`).
    Behind,
}

/// A check in flight: what came back so far.
#[derive(Debug)]
struct InFlight {
    parts_left: u8,
    facts: Option<Result<PaneFacts, ParseError>>,
    /// What shows, one capture line per row.
    rows: Option<Vec<Vec<u8>>>,
    behind: Option<Vec<u8>>,
    /// Output seen for the pane when the check was sent.
    writes: u64,
    failed: bool,
}

/// One pane's side of checks.
#[derive(Debug, Default)]
struct PaneChecks {
    /// Output since the last check (or since tmuxd attached).
    unchecked: bool,
    last_output: Option<Instant>,
    /// Output chunks seen, to tell that a check raced output.
    writes: u64,
    /// The server's budget was spent: not before then.
    not_before: Option<Instant>,
    in_flight: Option<InFlight>,
    /// The mode a person has the pane in (copy mode), as last asked.
    mode: Option<PaneMode>,
    /// When the mode was last asked.
    mode_asked: Option<Instant>,
}

/// When to ask again where a person is in `pane`'s mode.
fn mode_due_at(pane: &PaneChecks) -> Option<Instant> {
    pane.mode.as_ref()?;
    Some(pane.mode_asked? + MODE_EVERY)
}

/// The session's checks: per pane, and when the last one was sent.
#[derive(Debug, Default)]
pub(super) struct Checks {
    panes: BTreeMap<PaneId, PaneChecks>,
    last_sent: Option<Instant>,
}

/// When `pane` may be checked, given the session's last check: after a
/// pause of `QUIET` following unchecked output, once the session's last
/// check is `SESSION_EVERY` old and the budget's wait is over; never with
/// a check in flight or while a person has the pane in a mode.
fn due_at(pane: &PaneChecks, last_sent: Option<Instant>) -> Option<Instant> {
    if !pane.unchecked || pane.in_flight.is_some() || pane.mode.is_some() {
        return None;
    }
    let settled = pane.last_output? + QUIET;
    let session = last_sent.map_or(settled, |at| at + SESSION_EVERY);
    Some(
        [Some(settled), Some(session), pane.not_before]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(settled),
    )
}

impl Checks {
    /// The pane wrote at `now`.
    pub(super) fn output(&mut self, pane: PaneId, now: Instant) {
        let checks = self.panes.entry(pane).or_default();
        checks.unchecked = true;
        checks.last_output = Some(now);
        checks.writes += 1;
    }

    /// The mode a person has `pane` in, as last heard.
    pub(super) fn mode(&self, pane: PaneId) -> Option<&PaneMode> {
        self.panes.get(&pane)?.mode.as_ref()
    }

    /// Forgets panes no longer in the window.
    pub(super) fn keep_only(&mut self, panes: impl Fn(PaneId) -> bool) {
        self.panes.retain(|id, _| panes(*id));
    }

    /// The next moment a pane is due a mode look or (`checking`: the
    /// server's budget is on) a check; only `steady` panes are checked.
    pub(super) fn next_at(
        &self,
        checking: bool,
        steady: impl Fn(PaneId) -> bool,
    ) -> Option<Instant> {
        let modes = self.panes.values().filter_map(mode_due_at).min();
        if !checking {
            return modes;
        }
        let checks = self
            .panes
            .iter()
            .filter(|(id, _)| steady(**id))
            .filter_map(|(_, checks)| due_at(checks, self.last_sent))
            .min();
        [modes, checks].into_iter().flatten().min()
    }

    /// The panes whose mode is due to be asked again at `now`.
    pub(super) fn modes_due(&self, now: Instant) -> Vec<PaneId> {
        self.panes
            .iter()
            .filter(|(_, checks)| mode_due_at(checks).is_some_and(|at| at <= now))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The `steady` pane most overdue a check at `now`.
    pub(super) fn due(&self, now: Instant, steady: impl Fn(PaneId) -> bool) -> Option<PaneId> {
        self.panes
            .iter()
            .filter(|(id, _)| steady(**id))
            .filter_map(|(id, checks)| Some((due_at(checks, self.last_sent)?, *id)))
            .filter(|(at, _)| *at <= now)
            .min()
            .map(|(_, id)| id)
    }

    /// The server's budget was spent when `pane` was due: it asks again later.
    pub(super) fn budget_spent(&mut self, pane: PaneId, now: Instant) {
        if let Some(checks) = self.panes.get_mut(&pane) {
            checks.not_before = Some(now + BUDGET_RETRY);
        }
    }

    /// A check of `pane` in `parts` replies is sent at `now`.
    pub(super) fn sent(&mut self, pane: PaneId, parts: u8, now: Instant) {
        let Some(checks) = self.panes.get_mut(&pane) else {
            return;
        };
        checks.not_before = None;
        checks.unchecked = false;
        self.last_sent = Some(now);
        checks.in_flight = Some(InFlight {
            parts_left: parts,
            facts: None,
            rows: None,
            behind: None,
            writes: checks.writes,
            failed: false,
        });
    }

    /// Sending `pane`'s check failed: nothing is in flight.
    pub(super) fn not_sent(&mut self, pane: PaneId) {
        if let Some(checks) = self.panes.get_mut(&pane) {
            checks.in_flight = None;
        }
    }

    /// Whether a check of `pane` awaits replies.
    pub(super) fn in_flight(&self, pane: PaneId) -> bool {
        self.panes.get(&pane).is_some_and(|c| c.in_flight.is_some())
    }

    /// One reply of `pane`'s check at `now`; what to make of the check
    /// once all are in.
    pub(super) fn reply(
        &mut self,
        pane: PaneId,
        part: CheckPart,
        result: Result<Vec<Vec<u8>>, ControlError>,
        now: Instant,
    ) -> Option<Checked> {
        let checks = self.panes.get_mut(&pane)?;
        let flight = checks.in_flight.as_mut()?;
        match (part, result) {
            (CheckPart::Facts, Ok(lines)) => {
                let look = crate::tmux::command::PaneLook { pane };
                flight.facts = Some(look.parse(&lines));
            }
            (CheckPart::Rows, Ok(lines)) => flight.rows = Some(lines),
            (CheckPart::Behind, Ok(lines)) => flight.behind = Some(lines.join(&b'\n')),
            (_, Err(_)) => flight.failed = true,
        }
        flight.parts_left = flight.parts_left.saturating_sub(1);
        if flight.parts_left > 0 {
            return None;
        }
        let flight = checks.in_flight.take()?;
        let raced = flight.writes != checks.writes;
        if let Some(Ok(facts)) = &flight.facts {
            checks.mode = facts.mode.clone();
            checks.mode_asked = Some(now);
        }
        Some(match flight.facts {
            _ if flight.failed => Checked::Failed(None),
            Some(Ok(facts)) if raced || facts.mode.is_some() => Checked::Skipped,
            Some(Ok(facts)) => Checked::Complete {
                facts,
                rows: flight.rows,
                behind: flight.behind,
            },
            Some(Err(e)) => Checked::Failed(Some(e)),
            None => Checked::Failed(None),
        })
    }

    /// `pane`'s mode is being asked at `now`.
    pub(super) fn mode_asked(&mut self, pane: PaneId, now: Instant) {
        self.panes.entry(pane).or_default().mode_asked = Some(now);
    }

    /// tmux said which mode `pane` is in.
    pub(super) fn mode_heard(&mut self, pane: PaneId, mode: Option<PaneMode>) {
        self.panes.entry(pane).or_default().mode = mode;
    }
}

/// What a check came to once all its replies are in.
pub(super) enum Checked {
    /// Output raced it, or a person has the pane in a mode.
    Skipped,
    /// A reply failed (said when it was heard), or did not parse.
    Failed(Option<ParseError>),
    /// Everything is in: tmux's facts, rows and the screen behind.
    Complete {
        facts: PaneFacts,
        rows: Option<Vec<Vec<u8>>>,
        behind: Option<Vec<u8>>,
    },
}

impl SessionActor {
    /// The next moment a pane of the window is due a check (panes being
    /// seeded or whose flood is skipped wait; they are re-seeded anyway).
    pub(super) fn next_check_at(&self) -> Option<Instant> {
        let checking = self.tmux.check_budget().enabled();
        self.checks
            .next_at(checking, |pane| self.panes.steady(pane))
    }

    /// Sends the check of the pane most overdue, if the budget allows.
    pub(super) async fn check_settled(&mut self, client: &mut ControlClient) {
        let now = Instant::now();
        for pane in self.checks.modes_due(now) {
            self.mode_changed(pane, client).await;
        }
        if !self.tmux.check_budget().enabled() {
            return;
        }
        let panes = &self.panes;
        let Some(pane) = self.checks.due(now, |pane| panes.steady(pane)) else {
            return;
        };
        if !self.tmux.check_budget().try_take(now) {
            self.checks.budget_spent(pane, now);
            return;
        }
        let alternate = self
            .panes
            .screen(pane)
            .is_some_and(|screen| screen.screen().alternate_screen());
        let steps = CheckStep::of_pane(pane, alternate);
        self.checks.sent(pane, steps.len() as u8, now);
        match client.send_all(&steps).await {
            Ok(tickets) => {
                for (ticket, step) in tickets.into_iter().zip(&steps) {
                    let part = match step {
                        CheckStep::Look(_) => CheckPart::Facts,
                        CheckStep::Rows(c) if c.alternate => CheckPart::Behind,
                        CheckStep::Rows(_) => CheckPart::Rows,
                    };
                    self.purposes.insert(ticket, Purpose::Check { pane, part });
                }
            }
            Err(e) => {
                tracing::debug!(session_id = %self.session_id, %pane, "sending a screen check failed: {e}");
                self.checks.not_sent(pane);
                self.count_check(CheckOutcome::Failed);
            }
        }
    }

    /// One reply of a check; once all are in, compares and repairs.
    pub(super) async fn on_check_reply(
        &mut self,
        pane: PaneId,
        part: CheckPart,
        result: Result<Vec<Vec<u8>>, ControlError>,
        client: &mut ControlClient,
    ) {
        if let Err(e) = &result
            && self.checks.in_flight(pane)
        {
            tracing::debug!(session_id = %self.session_id, %pane, "a screen check failed: {e}");
        }
        let outcome = match self.checks.reply(pane, part, result, Instant::now()) {
            None => return,
            Some(Checked::Skipped) => CheckOutcome::Skipped,
            Some(Checked::Failed(None)) => CheckOutcome::Failed,
            Some(Checked::Failed(Some(e))) => {
                tracing::debug!(session_id = %self.session_id, %pane, "a screen check's reply: {e}");
                CheckOutcome::Failed
            }
            Some(Checked::Complete {
                facts,
                rows,
                behind,
            }) => {
                self.compare_with_tmux(pane, facts, rows, behind, client)
                    .await
            }
        };
        self.count_check(outcome);
    }

    /// Compares the pane's screen with tmux's; on a difference takes
    /// tmux's, or, when the check did not bring all a seed needs (tmux is
    /// on the alternate screen and tmuxd was not), re-seeds the window.
    async fn compare_with_tmux(
        &mut self,
        pane: PaneId,
        facts: PaneFacts,
        rows: Option<Vec<Vec<u8>>>,
        behind: Option<Vec<u8>>,
        client: &mut ControlClient,
    ) -> CheckOutcome {
        // A layout change is being taken: its seed is tmux's anyway.
        let Some(ours) = self
            .panes
            .seeded_screen(pane)
            .filter(|ours| ours.size() == (facts.state.cols, facts.state.rows))
        else {
            return CheckOutcome::Skipped;
        };
        let rows = rows.unwrap_or_default();
        let cursor = TmuxCursor {
            position: (facts.state.cursor_y, facts.state.cursor_x),
            visible: facts.state.cursor_visible,
            alternate: facts.state.alternate_on,
        };
        let Some(cause) = crate::screen::compare(ours.screen(), &rows, cursor) else {
            return CheckOutcome::Equal;
        };
        let complete = facts.state.alternate_on == behind.is_some();
        let rows = rows.join(&b'\n');
        let captured = match (facts.state.alternate_on, behind) {
            (true, behind) => Captured {
                normal: behind.unwrap_or_default(),
                alternate: Some(rows),
            },
            (false, _) => Captured {
                normal: rows,
                alternate: None,
            },
        };
        let mut theirs = PaneScreen::new(facts.state.cols, facts.state.rows);
        theirs.seed(&facts.state, &captured);
        if let Some(metrics) = self.tmux.metrics() {
            metrics.screen_drift(cause.as_str());
        }
        tracing::debug!(session_id = %self.session_id, %pane, cause = cause.as_str(), "the screen had drifted from tmux's: taking tmux's");
        if complete {
            self.panes.replace_screen(pane, theirs);
        } else {
            self.look(client).await;
        }
        CheckOutcome::Drift
    }

    /// tmux told that a pane entered or left a mode: ask which, so the
    /// summary can say a person is scrolling it and checks wait.
    pub(super) async fn mode_changed(&mut self, pane: PaneId, client: &mut ControlClient) {
        self.checks.mode_asked(pane, Instant::now());
        let look = crate::tmux::command::PaneLook { pane };
        self.send(client, &look, Purpose::Mode { pane }).await;
    }

    /// The answer to `mode_changed`.
    pub(super) fn on_mode(&mut self, pane: PaneId, result: Result<Vec<Vec<u8>>, ControlError>) {
        let look = crate::tmux::command::PaneLook { pane };
        match result
            .map_err(|e| e.to_string())
            .and_then(|lines| look.parse(&lines).map_err(|e| e.to_string()))
        {
            Ok(facts) => self.checks.mode_heard(pane, facts.mode),
            Err(e) => {
                tracing::debug!(session_id = %self.session_id, %pane, "asking a pane's mode failed: {e}")
            }
        }
    }

    fn count_check(&self, outcome: CheckOutcome) {
        if let Some(metrics) = self.tmux.metrics() {
            metrics.screen_checked(outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_pane_is_due_once_settled_and_within_the_session_rate() {
        let t0 = Instant::now();
        let mut checks = Checks::default();
        assert_eq!(due_at(&PaneChecks::default(), None), None, "no output");
        checks.output(PaneId(1), t0);
        checks.output(PaneId(1), t0 + ms(100));
        let pane = &checks.panes[&PaneId(1)];
        assert_eq!(due_at(pane, None), Some(t0 + ms(100) + QUIET));
        // The session checked a moment ago: after SESSION_EVERY.
        assert_eq!(due_at(pane, Some(t0)), Some(t0 + SESSION_EVERY));
        assert_eq!(
            due_at(pane, Some(t0 - SESSION_EVERY)),
            Some(t0 + ms(100) + QUIET)
        );
        let mut waiting = PaneChecks {
            not_before: Some(t0 + ms(900)),
            ..PaneChecks::default()
        };
        waiting.unchecked = true;
        waiting.last_output = Some(t0);
        assert_eq!(due_at(&waiting, None), Some(t0 + ms(900)), "budget spent");
        waiting.mode = Some(PaneMode {
            name: "copy-mode".into(),
            scroll_position: 3,
            history_size: 10,
        });
        assert_eq!(due_at(&waiting, None), None, "a person scrolls it");
        let mut checked = PaneChecks {
            last_output: Some(t0),
            ..PaneChecks::default()
        };
        assert_eq!(due_at(&checked, None), None, "checked since its output");
        checked.unchecked = true;
        checked.in_flight = Some(InFlight {
            parts_left: 2,
            facts: None,
            rows: None,
            behind: None,
            writes: 0,
            failed: false,
        });
        assert_eq!(due_at(&checked, None), None, "one check at a time");
    }

    #[test]
    fn a_pane_in_a_mode_is_asked_again_each_second() {
        let t0 = Instant::now();
        let mut pane = PaneChecks::default();
        assert_eq!(mode_due_at(&pane), None);
        pane.mode_asked = Some(t0);
        assert_eq!(mode_due_at(&pane), None, "not in a mode");
        pane.mode = Some(PaneMode {
            name: "copy-mode".into(),
            scroll_position: 0,
            history_size: 300,
        });
        assert_eq!(mode_due_at(&pane), Some(t0 + MODE_EVERY));
    }

    /// A check of pane 1 sent, in two replies (state, rows), after output.
    fn sent_check() -> (Checks, Instant) {
        let t0 = Instant::now();
        let mut checks = Checks::default();
        checks.output(PaneId(1), t0);
        let due = t0 + QUIET;
        assert_eq!(checks.due(due, |_| true), Some(PaneId(1)));
        assert_eq!(checks.due(due, |_| false), None, "not steady");
        checks.sent(PaneId(1), 2, due);
        assert!(checks.in_flight(PaneId(1)));
        assert_eq!(checks.due(due + SESSION_EVERY, |_| true), None, "in flight");
        (checks, due)
    }

    fn ok(line: &str) -> Result<Vec<Vec<u8>>, ControlError> {
        Ok(vec![line.as_bytes().to_vec()])
    }

    const LIVE: &str = "0\t\t\t120\t80\t24\t5\t9\t1\t0\t0\t23\t0\tt";
    const COPY: &str = "1\tcopy-mode\t7\t277\t80\t24\t80\t0\t0\t1\t0\t23\t1\tt";

    #[test]
    fn a_check_comes_to_a_comparison_once_all_its_replies_are_in() {
        let (mut checks, now) = sent_check();
        let facts = checks.reply(PaneId(1), CheckPart::Facts, ok(LIVE), now);
        assert!(facts.is_none(), "the rows are still out");
        let done = checks.reply(PaneId(1), CheckPart::Rows, ok("$ "), now);
        let Some(Checked::Complete { rows, behind, .. }) = done else {
            panic!("not complete");
        };
        assert_eq!((rows, behind), (Some(vec![b"$ ".to_vec()]), None));
        assert!(!checks.in_flight(PaneId(1)));
        // A late or stray reply is nobody's.
        assert!(
            checks
                .reply(PaneId(1), CheckPart::Rows, ok(""), now)
                .is_none()
        );
        assert!(
            checks
                .reply(PaneId(9), CheckPart::Rows, ok(""), now)
                .is_none()
        );
    }

    #[test]
    fn a_check_raced_by_output_or_a_mode_is_skipped_and_a_failed_one_fails() {
        let (mut checks, now) = sent_check();
        checks.output(PaneId(1), now);
        checks.reply(PaneId(1), CheckPart::Facts, ok(LIVE), now);
        let raced = checks.reply(PaneId(1), CheckPart::Rows, ok(""), now);
        assert!(matches!(raced, Some(Checked::Skipped)));

        let (mut checks, now) = sent_check();
        checks.reply(PaneId(1), CheckPart::Facts, ok(COPY), now);
        let scrolled = checks.reply(PaneId(1), CheckPart::Rows, ok(""), now);
        assert!(matches!(scrolled, Some(Checked::Skipped)));
        assert_eq!(checks.mode(PaneId(1)).map(|m| m.scroll_position), Some(7));
        assert_eq!(checks.modes_due(now + MODE_EVERY), [PaneId(1)]);

        let (mut checks, now) = sent_check();
        let gone = Err(ControlError::Attach {
            session: "s".into(),
            message: "gone".into(),
        });
        checks.reply(PaneId(1), CheckPart::Facts, gone, now);
        let failed = checks.reply(PaneId(1), CheckPart::Rows, ok(""), now);
        assert!(matches!(failed, Some(Checked::Failed(None))));

        let (mut checks, now) = sent_check();
        checks.reply(PaneId(1), CheckPart::Facts, ok("junk"), now);
        let unread = checks.reply(PaneId(1), CheckPart::Rows, ok(""), now);
        assert!(matches!(unread, Some(Checked::Failed(Some(_)))));
    }

    #[test]
    fn panes_gone_from_the_window_are_forgotten() {
        let mut checks = Checks::default();
        checks.output(PaneId(1), Instant::now());
        checks.output(PaneId(2), Instant::now());
        checks.keep_only(|id| id == PaneId(2));
        assert!(checks.panes.contains_key(&PaneId(2)) && !checks.panes.contains_key(&PaneId(1)));
    }
}
