//! Evidence from a coding agent's own hooks (Claude Code's `Notification`,
//! `Stop`, `UserPromptSubmit`, `PreToolUse`; Codex's `notify`): the agent
//! says what it is doing, which /proc cannot tell of a program blocked on
//! its model. The claim holds until the screen or the process says
//! otherwise, because hooks miss things (a denied permission or an Escape
//! fire none): a still screen ends a claim of work, sustained output or CPU
//! after it ends a claim of waiting or of being done, a shell back at the
//! terminal ends any.

use chrono::{DateTime, Duration, Utc};

use super::{Activity, SessionState};

/// What one hook event says, decided by the API from the agent's JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hook {
    pub state: SessionState,
    /// Reported as the state's reason (`hook_notification`, `hook_stop`...).
    pub reason: &'static str,
    /// The agent asks for someone (a permission, a question).
    pub attention: bool,
}

/// A hook's state, in force since `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub state: SessionState,
    pub reason: &'static str,
    pub at: DateTime<Utc>,
}

/// What a probe saw, as far as a claim cares.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    pub activity: Activity,
    /// How long the screen has not changed.
    pub quiet: Duration,
    /// How long the screen has kept changing since the claim (0 if not).
    pub busy_output: Duration,
    /// The foreground group used CPU over a reading taken wholly after the claim.
    pub cpu_busy: bool,
    /// `Timing::idle_after`: how long output (or its absence) must last to count.
    pub idle_after: Duration,
}

impl Claim {
    pub fn new(hook: Hook, at: DateTime<Utc>) -> Self {
        Claim {
            state: hook.state,
            reason: hook.reason,
            at,
        }
    }

    /// Whether the screen and the process still agree with the claim.
    pub fn holds(&self, seen: Seen) -> bool {
        if matches!(seen.activity, Activity::ShellPrompt | Activity::Exited) {
            return false;
        }
        match self.state {
            // Agents animate while they work (a spinner, a timer): a still
            // screen and an idle CPU mean the work ended without a hook.
            SessionState::Working => {
                seen.quiet < seen.idle_after || seen.cpu_busy || seen.activity == Activity::Running
            }
            // Typing echoes in short bursts; an agent at work redraws on
            // and on, or computes.
            _ => !seen.cpu_busy && seen.busy_output < seen.idle_after,
        }
    }
}

/// The screen's run of changes counted from `since`: from the later of
/// the run's start and `since` to the last change.
pub fn output_since(
    burst_since: Option<DateTime<Utc>>,
    last_output: Option<DateTime<Utc>>,
    since: DateTime<Utc>,
) -> Duration {
    match (burst_since, last_output) {
        (Some(start), Some(last)) if last > since => last - start.max(since),
        _ => Duration::zero(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_700_000_000_000 + ms).unwrap()
    }

    fn ms(n: i64) -> Duration {
        Duration::milliseconds(n)
    }

    #[test]
    fn a_claim_holds_until_the_screen_or_process_disagrees() {
        use Activity::*;
        use SessionState::{Idle, Waiting, Working};
        let seen = |activity, quiet, busy_output, cpu_busy| Seen {
            activity,
            quiet: ms(quiet),
            busy_output: ms(busy_output),
            cpu_busy,
            idle_after: ms(1500),
        };
        #[rustfmt::skip]
        let cases = [
            // Working: a spinner keeps the screen changing; the model's
            // answer keeps the CPU busy; a still, idle agent is done.
            (Working, seen(EventWait, 100, 5000, false), true),
            (Working, seen(EventWait, 3000, 0, true), true),
            (Working, seen(Running, 3000, 0, false), true),
            (Working, seen(EventWait, 3000, 0, false), false),
            (Working, seen(Blocked, 1500, 0, false), false),
            // Waiting or done: still, or typing echoed in short bursts.
            (Waiting, seen(TerminalRead, 10_000, 0, false), true),
            (Waiting, seen(EventWait, 50, 300, false), true),
            (Idle, seen(Blocked, 10_000, 0, false), true),
            // ...until it redraws on and on, or computes: it went back to work.
            (Waiting, seen(EventWait, 50, 1500, false), false),
            (Idle, seen(EventWait, 3000, 0, true), false),
            // A shell at the terminal again: the agent is gone.
            (Waiting, seen(ShellPrompt, 10_000, 0, false), false),
            (Idle, seen(ShellPrompt, 10_000, 0, false), false),
            (Working, seen(ShellPrompt, 10, 0, true), false),
            (Working, seen(Exited, 10, 0, true), false),
        ];
        for (state, seen, holds) in cases {
            let claim = Claim {
                state,
                reason: "hook_test",
                at: at(0),
            };
            assert_eq!(claim.holds(seen), holds, "{state:?} {seen:?}");
        }
    }

    #[test]
    fn output_counts_from_the_claim() {
        // A run of changes that began before the claim counts from it.
        assert_eq!(
            output_since(Some(at(0)), Some(at(3000)), at(2000)),
            ms(1000)
        );
        assert_eq!(
            output_since(Some(at(2500)), Some(at(3000)), at(2000)),
            ms(500)
        );
        // Output that ended before the claim does not count.
        assert_eq!(output_since(Some(at(0)), Some(at(1000)), at(2000)), ms(0));
        assert_eq!(output_since(None, None, at(0)), ms(0));
    }
}

/// The detector told by hooks, as transcripts: (time, signal, expected
/// state, reason and attention after it).
#[cfg(test)]
mod detector_tests {
    use chrono::{DateTime, Duration, Utc};

    use super::Hook;
    use crate::session::state::{
        Activity, AttentionReason, Detector, Evidence, SessionState, Signal, StateReason, Timing,
    };

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_700_000_000_000 + ms).unwrap()
    }

    fn detector() -> Detector {
        let timing = Timing {
            idle_after: Duration::milliseconds(1500),
            prompt_settle: Duration::milliseconds(250),
            attention_after: Duration::milliseconds(60_000),
            probe_interval: Duration::milliseconds(1000),
        };
        Detector::new(at(0), timing, None)
    }

    fn probe(activity: Activity) -> Signal<'static> {
        Signal::Probe(Evidence {
            activity,
            cpu: None,
            rule: None,
            question: false,
        })
    }

    const SPINNER: Signal<'static> = Signal::Output {
        bytes: b"\r- Thinking",
        changed: true,
    };
    const PROMPT_SUBMIT: Signal<'static> = Signal::Hook(Hook {
        state: SessionState::Working,
        reason: "hook_prompt_submit",
        attention: false,
    });
    const NOTIFICATION: Signal<'static> = Signal::Hook(Hook {
        state: SessionState::Waiting,
        reason: "hook_notification",
        attention: true,
    });
    const STOP: Signal<'static> = Signal::Hook(Hook {
        state: SessionState::Idle,
        reason: "hook_stop",
        attention: false,
    });

    type Want = (SessionState, &'static str, Option<AttentionReason>);

    fn run(detector: &mut Detector, rows: &[(i64, Signal<'_>, Want)]) {
        for (i, (ms, signal, want)) in rows.iter().enumerate() {
            detector.step(at(*ms), *signal);
            let view = detector.view();
            let got = (
                view.state,
                view.reason.as_str(),
                view.attention.map(|a| a.reason),
            );
            assert_eq!(got, *want, "row {i} at {ms} ms: {signal:?}");
        }
    }

    /// An agent blocked on its model, then on its user, then done: the
    /// screen is still and the process asleep each time, so only the
    /// hooks tell the three apart.
    #[test]
    fn hooks_say_what_a_still_agent_is_doing() {
        use AttentionReason::NeedsInput;
        use SessionState::{Idle, Waiting, Working};
        let mut d = detector();
        run(
            &mut d,
            &[
                (
                    0,
                    probe(Activity::EventWait),
                    (Working, "output_activity", None),
                ),
                (100, PROMPT_SUBMIT, (Working, "hook_prompt_submit", None)),
                (200, SPINNER, (Working, "hook_prompt_submit", None)),
                (1200, SPINNER, (Working, "hook_prompt_submit", None)),
                (
                    1300,
                    probe(Activity::EventWait),
                    (Working, "hook_prompt_submit", None),
                ),
                (
                    1400,
                    NOTIFICATION,
                    (Waiting, "hook_notification", Some(NeedsInput)),
                ),
                // Asleep (not reading the terminal), quiet: would be working.
                (
                    9000,
                    probe(Activity::Blocked),
                    (Waiting, "hook_notification", Some(NeedsInput)),
                ),
                (9100, STOP, (Idle, "hook_stop", None)),
                (20_000, probe(Activity::Blocked), (Idle, "hook_stop", None)),
            ],
        );
    }

    /// CPU the agent used finishing its turn, measured over a reading that
    /// began before the `Stop` hook, does not end it; CPU over a reading
    /// wholly after it does (the agent went back to work unannounced).
    #[test]
    fn only_cpu_used_after_a_hook_counts_against_it() {
        use SessionState::{Idle, Working};
        let cpu = |ticks| {
            Signal::Probe(Evidence {
                activity: Activity::EventWait,
                cpu: Some((42, ticks)),
                rule: None,
                question: false,
            })
        };
        let mut d = detector();
        run(
            &mut d,
            &[
                (500, cpu(0), (Working, "output_activity", None)),
                (1000, STOP, (Idle, "hook_stop", None)),
                // 100 ticks over 1.5 s, begun before the hook: its last work.
                (2000, cpu(100), (Idle, "hook_stop", None)),
                (3000, cpu(100), (Idle, "hook_stop", None)),
                // 50 ticks in the next second, all after it.
                (4000, cpu(150), (Working, "cpu", None)),
            ],
        );
    }

    /// Hooks miss an Escape and a denied permission: the screen and the
    /// process end a claim that no longer holds.
    #[test]
    fn screen_and_process_evidence_end_a_claim() {
        use SessionState::{Idle, Working};
        // Escape: the spinner stops, the agent sits still; no Stop came.
        let mut d = detector();
        run(
            &mut d,
            &[
                (0, PROMPT_SUBMIT, (Working, "hook_prompt_submit", None)),
                (500, SPINNER, (Working, "hook_prompt_submit", None)),
                (
                    1000,
                    probe(Activity::EventWait),
                    (Working, "hook_prompt_submit", None),
                ),
            ],
        );
        d.step(at(5000), probe(Activity::Blocked));
        assert_ne!(d.view().reason.as_str(), "hook_prompt_submit");
        // The agent went back to work without a hook: its redraws go on.
        let mut d = detector();
        run(&mut d, &[(0, STOP, (Idle, "hook_stop", None))]);
        for ms in (100..=2000).step_by(100) {
            d.step(at(ms), SPINNER);
        }
        d.step(at(2300), probe(Activity::EventWait));
        assert_eq!(d.view().state, Working, "{:?}", d.view());
        // A shell at its prompt again: the agent has exited.
        let mut d = detector();
        run(
            &mut d,
            &[
                (
                    0,
                    NOTIFICATION,
                    (
                        SessionState::Waiting,
                        "hook_notification",
                        Some(AttentionReason::NeedsInput),
                    ),
                ),
                (
                    3000,
                    probe(Activity::ShellPrompt),
                    (Idle, "shell_prompt", None),
                ),
            ],
        );
        // A screen rule wins over the claim, and ends it.
        let mut d = detector();
        d.step(at(0), STOP);
        let asking = Evidence {
            activity: Activity::TerminalRead,
            cpu: None,
            rule: Some((SessionState::Waiting, "claude_permission")),
            question: false,
        };
        d.step(at(500), Signal::Probe(asking));
        assert_eq!(d.view().reason, StateReason::Rule("claude_permission"));
        d.step(at(3000), probe(Activity::Blocked));
        assert_ne!(d.view().reason.as_str(), "hook_stop");
    }
}
