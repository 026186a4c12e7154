use super::*;

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_700_000_000_000 + ms).unwrap()
}

fn timing() -> Timing {
    Timing {
        idle_after: Duration::milliseconds(1500),
        prompt_settle: Duration::milliseconds(250),
        attention_after: Duration::milliseconds(10_000),
        probe_interval: Duration::milliseconds(1000),
    }
}

use Activity as A;
use AttentionReason::*;
use SessionState::*;
use StateReason::*;

fn out(bytes: &[u8]) -> Signal<'_> {
    Signal::Output {
        bytes,
        changed: true,
    }
}

fn probe(activity: Activity) -> Signal<'static> {
    Signal::Probe(Evidence {
        activity,
        cpu: None,
        rule: None,
        question: false,
    })
}

/// A probe with the foreground group's CPU ticks so far.
fn probe_cpu(activity: Activity, ticks: u64) -> Signal<'static> {
    Signal::Probe(Evidence {
        activity,
        cpu: Some((42, ticks)),
        rule: None,
        question: false,
    })
}

fn rule(state: SessionState, reason: &'static str) -> Signal<'static> {
    Signal::Probe(Evidence {
        activity: A::TerminalRead,
        cpu: None,
        rule: Some((state, reason)),
        question: false,
    })
}

type Row<'a> = (
    i64,
    Signal<'a>,
    (SessionState, StateReason, Option<AttentionReason>),
);

/// Runs (time, signal, expected (state, reason, attention) after it) rows
/// in order, from a detector started at 0.
fn run(rows: &[Row<'_>]) -> Detector {
    run_from(Detector::new(at(0), timing(), None), rows)
}

/// As `run`, for a session whose program tmuxd started (`create`).
fn run_started(rows: &[Row<'_>]) -> Detector {
    let mut detector = Detector::new(at(0), timing(), None);
    detector.started_by_tmuxd(true);
    run_from(detector, rows)
}

/// A probe of a program in poll/epoll whose screen asks a question.
fn probe_question(activity: Activity) -> Signal<'static> {
    Signal::Probe(Evidence {
        activity,
        cpu: None,
        rule: None,
        question: true,
    })
}

fn run_from(mut detector: Detector, rows: &[Row<'_>]) -> Detector {
    for (i, (ms, signal, want)) in rows.iter().enumerate() {
        detector.step(at(*ms), *signal);
        let view = detector.view();
        let got = (view.state, view.reason, view.attention.map(|a| a.reason));
        assert_eq!(got, *want, "row {i} at {ms} ms: {signal:?}");
    }
    detector
}

#[test]
fn shell_command_runs_and_prompt_returns() {
    run(&[
        (0, out(b"$ "), (Starting, Attaching, None)),
        (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
        // `sleep 3` typed through the API: working at once.
        (1000, Signal::Input, (Working, Input, None)),
        (1010, out(b"sleep 3\r\n"), (Working, Input, None)),
        (1260, probe(A::Blocked), (Working, ForegroundProcess, None)),
        (2260, probe(A::Blocked), (Working, ForegroundProcess, None)),
        // The prompt comes back; once it has settled, the shell reads.
        (4000, out(b"$ "), (Working, ForegroundProcess, None)),
        (4250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
    ]);
}

/// Finding 2: `bash -c 'echo start; sleep 8; echo done'` is a shell, but
/// not one at its prompt: it waits for its child. A loop printing every
/// second stays working without a state event per line.
#[test]
fn a_shell_script_is_working_until_it_ends() {
    let mut d = run(&[
        (0, out(b"start\r\n"), (Starting, Attaching, None)),
        (250, probe(A::Blocked), (Working, ForegroundProcess, None)),
    ]);
    let mut events = 0;
    for second in 1..60 {
        let t = at(second * 1000);
        events += usize::from(d.step(t, out(b"tick\r\n")).is_some());
        events += usize::from(
            d.step(t + Duration::milliseconds(250), probe(A::Blocked))
                .is_some(),
        );
        assert_eq!(d.view().state, Working);
    }
    assert_eq!(events, 0, "no event while the script keeps working");
    d.step(at(60_000), Signal::End(EndReason::ProcessExit));
    assert_eq!(
        (d.view().state, d.view().reason),
        (Exited, End(EndReason::ProcessExit))
    );
}

/// Finding 3: `sleep 900` prints nothing and uses no CPU: working, and after
/// `attention_after` of that, attention for the long silence.
#[test]
fn a_silent_program_is_working_then_needs_attention() {
    run(&[
        (0, out(b""), (Starting, Attaching, None)),
        (
            250,
            probe_cpu(A::Blocked, 1),
            (Working, ForegroundProcess, None),
        ),
        (
            1250,
            probe_cpu(A::Blocked, 1),
            (Working, ForegroundProcess, None),
        ),
        (
            10_250,
            probe_cpu(A::Blocked, 1),
            (Working, ForegroundProcess, Some(LongSilence)),
        ),
        // It prints again: the silence is over.
        (
            11_000,
            out(b"still here"),
            (Working, ForegroundProcess, None),
        ),
    ]);
}

#[test]
fn cpu_use_is_working_and_stopping_is_noticed() {
    run(&[
        (0, out(b"x"), (Starting, Attaching, None)),
        (250, probe_cpu(A::Running, 20), (Working, Cpu, None)),
        (1250, probe_cpu(A::Blocked, 120), (Working, Cpu, None)),
        // Five ticks in a second: 5%, not busy.
        (
            2250,
            probe_cpu(A::Blocked, 125),
            (Working, ForegroundProcess, None),
        ),
        (
            6250,
            probe_cpu(A::Blocked, 125),
            (Working, ForegroundProcess, None),
        ),
        // Six seconds of work on its own (4 x idle_after), then it reads
        // the terminal without printing anything: it needs someone.
        (
            7250,
            probe_cpu(A::TerminalRead, 125),
            (Waiting, TerminalRead, Some(NeedsInput)),
        ),
    ]);
}

/// Finding 4: a REPL and a `[y/N]` question tmuxd started are waiting as
/// soon as their prompt has settled; the question needs attention. Keys
/// typed at a tmux client (their echo) acknowledge it; the wait stays.
#[test]
fn a_program_reading_the_terminal_is_waiting() {
    let d = run_started(&[
        (0, out(b"Proceed? [y/N] "), (Starting, Attaching, None)),
        (
            250,
            probe_question(A::TerminalRead),
            (Waiting, TerminalRead, Some(NeedsInput)),
        ),
        (900, out(b"y"), (Waiting, TerminalRead, None)),
        (1150, probe(A::TerminalRead), (Waiting, TerminalRead, None)),
    ]);
    let mut d = run_from(d, &[]);
    d.step(at(2000), out(b"x"));
    assert_eq!(d.view().acknowledged_by, None, "nothing was up");
    let mut d = run_started(&[
        (0, out(b"Delete? [y/N] "), (Starting, Attaching, None)),
        (
            250,
            probe_question(A::TerminalRead),
            (Waiting, TerminalRead, Some(NeedsInput)),
        ),
    ]);
    let view = d.step(at(1000), Signal::Input).expect("a change");
    assert_eq!(view.acknowledged_by, Some(Acknowledger::Input));
    // A REPL answering what was typed did not work on its own.
    run_from(
        d,
        &[
            (1010, out(b"1+1\r\n2\r\n>>> "), (Working, Input, None)),
            (1260, probe(A::TerminalRead), (Waiting, TerminalRead, None)),
        ],
    );
}

/// Finding 2: an agent in epoll with a still screen may be waiting on its
/// model: working, however long the quiet. A question where its cursor is
/// says it waits for an answer; a live counter beside the question is a
/// redraw, not work; a spinner that goes on is work.
#[test]
fn a_program_polling_waits_only_when_its_screen_asks() {
    run_started(&[
        (0, out(b"thinking |"), (Starting, Attaching, None)),
        (250, probe(A::EventWait), (Working, OutputActivity, None)),
        (300, out(b"thinking /"), (Working, OutputActivity, None)),
        (550, probe(A::EventWait), (Working, OutputActivity, None)),
        (1300, probe(A::EventWait), (Working, OutputActivity, None)),
        (1800, probe(A::EventWait), (Working, EventWait, None)),
        (9_000, probe(A::EventWait), (Working, EventWait, None)),
        (10_000, out(b"Proceed? [y/N] "), (Working, EventWait, None)),
        (
            10_250,
            probe_question(A::EventWait),
            (Waiting, ScreenQuestion, Some(NeedsInput)),
        ),
        // "(waiting 1s)", "(waiting 2s)": redraws while it waits.
        (
            11_000,
            out(b"(waiting 1s)"),
            (Waiting, ScreenQuestion, Some(NeedsInput)),
        ),
        (
            11_250,
            probe_question(A::EventWait),
            (Waiting, ScreenQuestion, Some(NeedsInput)),
        ),
        (
            12_000,
            out(b"(waiting 2s)"),
            (Waiting, ScreenQuestion, Some(NeedsInput)),
        ),
        (
            12_250,
            probe_question(A::EventWait),
            (Waiting, ScreenQuestion, Some(NeedsInput)),
        ),
    ]);
    // Without process facts beyond "in poll", a question is still the only
    // way to waiting: a program that has not worked since it was opened
    // asks without attention.
    run(&[
        (0, out(b"Overwrite? (y/n)"), (Starting, Attaching, None)),
        (
            250,
            probe_question(A::EventWait),
            (Waiting, ScreenQuestion, None),
        ),
    ]);
}

/// Finding 1: a bell at a prompt is a flag; the state is idle all along,
/// and input clears the flag.
#[test]
fn a_bell_is_a_flag_beside_the_state() {
    run(&[
        (0, out(b"$ "), (Starting, Attaching, None)),
        (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
        (1000, Signal::Input, (Working, Input, None)),
        (
            1010,
            out(b"sleep 2; printf '\\a'\r\n"),
            (Working, Input, None),
        ),
        (1260, probe(A::Blocked), (Working, ForegroundProcess, None)),
        (
            3000,
            out(b"\x07$ "),
            (Working, ForegroundProcess, Some(Bell)),
        ),
        (3250, probe(A::ShellPrompt), (Idle, ShellPrompt, Some(Bell))),
        (9000, probe(A::ShellPrompt), (Idle, ShellPrompt, Some(Bell))),
        (9500, Signal::Input, (Working, Input, None)),
    ]);
}

#[test]
fn activity_after_a_bell_clears_it_and_keystrokes_do_too() {
    let d = run(&[
        (0, out(b"$ \x07"), (Starting, Attaching, Some(Bell))),
        (250, probe(A::ShellPrompt), (Idle, ShellPrompt, Some(Bell))),
        // Someone typed a command in tmux itself; it runs.
        (1000, out(b"make\r\n"), (Idle, ShellPrompt, Some(Bell))),
        (1100, out(b"compiling"), (Idle, ShellPrompt, Some(Bell))),
        (1250, probe(A::Running), (Working, OutputActivity, None)),
        (2000, out(b"\x07"), (Working, OutputActivity, Some(Bell))),
    ]);
    run_from(
        d,
        &[(2100, Signal::Keystrokes, (Working, OutputActivity, None))],
    );
}

#[test]
fn title_terminators_are_not_bells() {
    run(&[
        (0, out(b"\x1b]0;my title\x07"), (Starting, Attaching, None)),
        (10, out(b"\x1b]2;split"), (Starting, Attaching, None)),
        (20, out(b" title\x07 ok"), (Starting, Attaching, None)),
        (30, out(b"\x1b]0;st\x1b\\"), (Starting, Attaching, None)),
    ]);
}

#[test]
fn prompt_marks_answer_at_once_and_evidence_refines() {
    let d = run(&[
        (0, out(b"\x1b]133;A\x07$ "), (Idle, PromptMarker, None)),
        (10, out(b"\x1b]133;C\x1b\\"), (Working, PromptMarker, None)),
        (260, probe(A::Blocked), (Working, ForegroundProcess, None)),
        (5010, out(b"\x1b]133;D;3\x07"), (Idle, PromptMarker, None)),
        (5260, probe(A::ShellPrompt), (Idle, PromptMarker, None)),
        // Split across chunks; the command asks a question.
        (6000, out(b"\x1b]13"), (Idle, PromptMarker, None)),
        (6001, out(b"3;C\x07"), (Working, PromptMarker, None)),
        // Typed at the prompt and asking at once: someone is there.
        (6300, probe(A::TerminalRead), (Waiting, TerminalRead, None)),
        // The shell itself reads after `C`: bash's `read`, not its prompt.
        (
            7000,
            out(b"\x1b]133;D;3\x07$ \x1b]133;C\x07"),
            (Working, PromptMarker, None),
        ),
        (7300, probe(A::ShellPrompt), (Waiting, ShellRead, None)),
        (8000, out(b"\x1b]133;A\x07$ "), (Idle, PromptMarker, None)),
        (8300, probe(A::ShellPrompt), (Idle, PromptMarker, None)),
    ]);
    assert_eq!(d.last_command_status(), Some(3));
}

#[test]
fn without_process_facts_quiet_means_idle() {
    run(&[
        (0, out(b"hello"), (Starting, Attaching, None)),
        (250, probe(A::Unknown), (Working, OutputActivity, None)),
        (1250, probe(A::Unknown), (Working, OutputActivity, None)),
        (1500, probe(A::Unknown), (Idle, Quiet, None)),
        (
            1600,
            Signal::Output {
                bytes: b"\x1b[H",
                changed: false,
            },
            (Idle, Quiet, None),
        ),
    ]);
}

#[test]
fn screen_rules_win_and_name_the_reason() {
    run_started(&[
        (
            0,
            out(b"Do you want to proceed? 1. Yes"),
            (Starting, Attaching, None),
        ),
        (
            250,
            rule(Waiting, "permission_prompt"),
            (Waiting, Rule("permission_prompt"), Some(NeedsInput)),
        ),
        (1000, Signal::Input, (Working, Input, None)),
        (1010, out(b"ok"), (Working, Input, None)),
        (1260, probe(A::EventWait), (Working, OutputActivity, None)),
    ]);
}

#[test]
fn input_the_pane_has_not_answered_is_not_judged_by_the_old_screen() {
    run(&[
        (0, out(b"$ "), (Starting, Attaching, None)),
        (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
        (1000, Signal::Input, (Working, Input, None)),
        // A loaded machine: the shell has not even echoed yet.
        (1250, probe(A::ShellPrompt), (Working, Input, None)),
        (1500, out(b"ls\r\nfile\r\n$ "), (Working, Input, None)),
        (1750, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
        // Input a program never echoes (a password): judged after idle_after.
        (3000, Signal::Input, (Working, Input, None)),
        (3250, probe(A::TerminalRead), (Working, Input, None)),
        (4500, probe(A::TerminalRead), (Waiting, TerminalRead, None)),
    ]);
}

#[test]
fn attention_survives_a_restart_and_exit_is_final() {
    let kept = Attention {
        reason: Bell,
        since: at(-5000),
        text: None,
    };
    let d = Detector::new(at(0), timing(), Some(kept));
    let d = run_from(
        d,
        &[
            (0, out(b"$ "), (Starting, Attaching, Some(Bell))),
            (250, probe(A::ShellPrompt), (Idle, ShellPrompt, Some(Bell))),
        ],
    );
    assert_eq!(d.view().attention, Some(kept), "its first time is kept");
    run_from(
        d,
        &[
            (
                300,
                Signal::End(EndReason::TmuxServerGone),
                (Exited, End(EndReason::TmuxServerGone), Some(Bell)),
            ),
            (
                400,
                out(b"\x07"),
                (Exited, End(EndReason::TmuxServerGone), Some(Bell)),
            ),
            (
                500,
                Signal::Input,
                (Exited, End(EndReason::TmuxServerGone), Some(Bell)),
            ),
        ],
    );
}

#[test]
fn deadlines_say_when_to_look_again() {
    let mut d = Detector::new(at(0), timing(), None);
    assert_eq!(d.next_deadline(), None, "nothing to look at before output");
    d.step(at(100), out(b"$ "));
    assert_eq!(d.next_deadline(), Some(at(350)), "once output settles");
    d.step(at(350), probe(A::Blocked));
    assert_eq!(d.next_deadline(), Some(at(1350)), "working: look again");
    d.step(at(1350), probe(A::ShellPrompt));
    assert_eq!(d.view().state, Idle);
    assert_eq!(d.next_deadline(), None, "idle: output will say");
    d.step(at(2000), out(b"\x07"));
    assert_eq!(d.next_deadline(), Some(at(2250)));
}

#[test]
fn only_notable_changes_are_reported() {
    let mut d = Detector::new(at(0), timing(), None);
    assert!(d.step(at(0), out(b"x")).is_none(), "still starting");
    assert!(d.step(at(250), probe(A::Running)).is_some(), "working");
    assert!(d.step(at(1250), probe(A::Blocked)).is_none(), "reason only");
    assert!(d.step(at(1300), out(b"\x07")).is_some(), "attention");
    assert!(d.step(at(2300), probe(A::ShellPrompt)).is_some(), "idle");
}

/// Issue 20, item 9: after a restart (or a re-attach) the first judgement
/// keeps the previous actor's `since` when it finds the same state, and
/// starts a new one when the state differs; only that first judgement.
#[test]
fn the_previous_state_keeps_its_since_across_a_restart() {
    let before = at(-60_000);
    let table = [
        (Some((Idle, before)), before),
        (Some((Working, before)), at(250)),
        (None, at(250)),
    ];
    for (previous, since) in table {
        let detector = Detector::new(at(0), timing(), None).with_previous(previous);
        let d = run_from(
            detector,
            &[
                (0, out(b"$ "), (Starting, Attaching, None)),
                (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
            ],
        );
        assert_eq!(d.view().since, since, "{previous:?}");
        let d = run_from(
            d,
            &[
                (1000, Signal::Input, (Working, Input, None)),
                (1010, out(b"x\r\n"), (Working, Input, None)),
                (1300, out(b"$ "), (Working, Input, None)),
                (1550, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
            ],
        );
        assert_eq!(
            d.view().since,
            at(1550),
            "a later idle is new: {previous:?}"
        );
    }
}

/// Issue 19: while tmux is asked how a program ended (a dead pane tmux has
/// not reaped may take seconds on a loaded machine), the state stands: a
/// working script is not idle for the quiet nor silent for long before its
/// end comes.
#[test]
fn an_exited_program_keeps_its_state_until_its_end() {
    run(&[
        (0, out(b"start"), (Starting, Attaching, None)),
        (
            250,
            probe_cpu(A::Blocked, 1),
            (Working, ForegroundProcess, None),
        ),
        (3_000, probe(A::Exited), (Working, ForegroundProcess, None)),
        (12_000, probe(A::Exited), (Working, ForegroundProcess, None)),
    ]);
    let mut d = Detector::new(at(0), timing(), Default::default());
    d.step(at(0), out(b"$ "));
    d.step(at(250), probe(A::ShellPrompt));
    assert_eq!(d.view().state, Idle);
    d.step(at(5_000), probe(A::Exited));
    assert_eq!((d.view().state, d.view().reason), (Idle, ShellPrompt));
}

/// Issue 19, finding 2: programs someone opens by typing at a shell (an
/// editor, a pager, `man`, a REPL) wait without attention; `top`, in a
/// timed wait on its terminal and redrawing, is working.
#[test]
fn programs_typed_at_a_shell_wait_without_attention() {
    // (the program's activity once drawn, its state and reason)
    let table = [
        (A::TerminalRead, Waiting, TerminalRead),
        (A::TerminalTimed, Working, Redraw),
        (A::ShellRead, Waiting, ShellRead),
    ];
    for (activity, state, reason) in table {
        let d = run_started(&[
            (0, out(b"$ "), (Starting, Attaching, None)),
            (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
            // Typed at a tmux client: only its echo and the program's screen show.
            (1000, out(b"prog\r\n"), (Idle, ShellPrompt, None)),
            (
                1100,
                probe_cpu(A::Running, 5),
                (Working, OutputActivity, None),
            ),
            (1200, out(b"drawn"), (Working, OutputActivity, None)),
            (1450, probe_cpu(activity, 6), (state, reason, None)),
            (2450, probe_cpu(activity, 6), (state, reason, None)),
        ]);
        let d = run_from(
            d,
            &[
                (4200, out(b"redrawn"), (state, reason, None)),
                (4450, probe_cpu(activity, 7), (state, reason, None)),
                (7200, out(b"redrawn again"), (state, reason, None)),
                (7450, probe_cpu(activity, 7), (state, reason, None)),
            ],
        );
        assert_eq!(d.view().attention, None, "{activity:?}");
    }
}

/// A timed wait whose screen stays still is a wait (vim once `updatetime`
/// passed); one already waiting stays so while keys are echoed.
#[test]
fn a_timed_wait_without_redraws_is_a_wait() {
    run(&[
        (0, out(b"~"), (Starting, Attaching, None)),
        (250, probe(A::TerminalTimed), (Working, Redraw, None)),
        (4250, probe(A::TerminalRead), (Waiting, TerminalRead, None)),
        (5000, out(b"i"), (Waiting, TerminalRead, None)),
        (5250, probe(A::TerminalTimed), (Waiting, TerminalRead, None)),
    ]);
    run(&[
        (0, out(b""), (Starting, Attaching, None)),
        (
            10_250,
            probe(A::TerminalTimed),
            (Waiting, TerminalRead, None),
        ),
    ]);
}

/// A program typed at a shell that then works on its own (a build) and
/// asks: the question needs someone. A quick one does not.
#[test]
fn work_on_its_own_before_a_wait_raises_attention() {
    for (worked_ms, attention) in [(6_000, Some(NeedsInput)), (4_000, None)] {
        let mut d = run(&[
            (0, out(b"$ "), (Starting, Attaching, None)),
            (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
            (1000, out(b"make\r\n"), (Idle, ShellPrompt, None)),
            (1250, probe(A::Blocked), (Working, ForegroundProcess, None)),
        ]);
        let mut t = 1250;
        while t < 1250 + worked_ms {
            t += 500;
            d.step(at(t), out(format!("cc {t}\r\n").as_bytes()));
            d.step(at(t + 250), probe(A::Blocked));
        }
        d.step(at(t + 300), out(b"Deploy? [y/N] "));
        d.step(at(t + 550), probe(A::ShellRead));
        let view = d.view();
        assert_eq!((view.state, view.reason), (Waiting, ShellRead));
        assert_eq!(view.attention.map(|a| a.reason), attention, "{worked_ms}");
    }
}

/// A program's own notification (OSC 9, 777, 99) raises attention with
/// its text, whatever the state; input lowers it.
#[test]
fn notifications_raise_attention_with_their_text() {
    let mut d = run(&[
        (0, out(b"$ "), (Starting, Attaching, None)),
        (250, probe(A::ShellPrompt), (Idle, ShellPrompt, None)),
        (
            1000,
            out(b"\x1b]777;notify;Claude;Needs your permission\x07"),
            (Idle, ShellPrompt, Some(Notification)),
        ),
    ]);
    let text = d.view().attention.and_then(|a| a.text);
    assert_eq!(text.unwrap().as_str(), "Claude: Needs your permission");
    d.step(at(2000), out(b"\x1b]9;done\x07"));
    let attention = d.view().attention.unwrap();
    assert_eq!(attention.since, at(2000), "a new notification is new");
    assert_eq!(attention.text.unwrap().as_str(), "done");
    run_from(d, &[(3000, Signal::Input, (Working, Input, None))]);
}

/// Someone looking acknowledges: the flag is lowered, the event says who,
/// and the same wait does not raise it again (a blip of output or a
/// rule flicker); a new wait after work on its own does.
#[test]
fn looking_acknowledges_and_the_same_wait_stays_acknowledged() {
    for by in [Acknowledger::Dashboard, Acknowledger::TmuxClient] {
        let mut d = run_started(&[
            (0, out(b"Proceed? [y/N] "), (Starting, Attaching, None)),
            (
                250,
                probe_question(A::EventWait),
                (Waiting, ScreenQuestion, Some(NeedsInput)),
            ),
        ]);
        let view = d.step(at(1000), Signal::Acknowledge(by)).expect("lowered");
        assert_eq!(view.attention, None);
        assert_eq!(view.acknowledged_by, Some(by));
        assert!(
            d.step(at(1100), Signal::Acknowledge(by)).is_none(),
            "nothing up"
        );
        let d = run_from(
            d,
            &[
                (
                    2000,
                    out(b"Proceed? [y/N] _"),
                    (Waiting, ScreenQuestion, None),
                ),
                (2010, probe(A::EventWait), (Working, OutputActivity, None)),
                (
                    2250,
                    probe_question(A::EventWait),
                    (Waiting, ScreenQuestion, None),
                ),
            ],
        );
        assert_eq!(
            d.view().acknowledged_by,
            None,
            "only on the step that lowered it"
        );
        // Answered from elsewhere; it works on its own, then asks again.
        let mut d = run_from(
            d,
            &[(3000, out(b"ok\r\n"), (Waiting, ScreenQuestion, None))],
        );
        for t in (3250..=9250).step_by(1000) {
            d.step(at(t - 100), out(b"."));
            d.step(at(t), probe_cpu(A::Running, t as u64));
        }
        run_from(
            d,
            &[
                (
                    10_000,
                    out(b"Again? [y/N] "),
                    (Working, OutputActivity, None),
                ),
                (
                    10_250,
                    probe_question(A::EventWait),
                    (Waiting, ScreenQuestion, Some(NeedsInput)),
                ),
            ],
        );
    }
}

/// After a restart the wait already up is the same wait: no new flag for
/// it; a session that was working is still on its own.
#[test]
fn a_restart_does_not_raise_the_same_wait_again() {
    let table = [(Waiting, None), (Working, Some(NeedsInput))];
    for (before, attention) in table {
        let mut d = Detector::new(at(0), timing(), None).with_previous(Some((before, at(-9000))));
        d.started_by_tmuxd(true);
        let d = run_from(
            d,
            &[(0, out(b"Proceed? [y/N] "), (Starting, Attaching, None))],
        );
        run_from(
            d,
            &[(
                250,
                probe(A::TerminalRead),
                (Waiting, TerminalRead, attention),
            )],
        );
    }
}

/// A long silence needs someone only from a session on its own: a program
/// only opened (an idle Node REPL in epoll), typed or started by tmuxd, is
/// not "silent"; one that slept on something else for `work_alone` is.
#[test]
fn a_long_silence_needs_a_session_on_its_own() {
    for started in [true, false] {
        let mut d = Detector::new(at(0), timing(), None);
        d.started_by_tmuxd(started);
        run_from(
            d,
            &[
                (0, out(b"> "), (Starting, Attaching, None)),
                (1500, probe(A::EventWait), (Working, EventWait, None)),
                (10_000, probe(A::EventWait), (Working, EventWait, None)),
                (20_000, probe(A::EventWait), (Working, EventWait, None)),
            ],
        );
        let mut d = Detector::new(at(0), timing(), None);
        d.started_by_tmuxd(started);
        let mut d = run_from(d, &[(0, out(b"building"), (Starting, Attaching, None))]);
        for t in (250..=10_250).step_by(1000) {
            d.step(at(t), probe_cpu(A::Blocked, 1));
        }
        let view = d.view();
        assert_eq!(
            (view.state, view.reason, view.attention.map(|a| a.reason)),
            (Working, ForegroundProcess, Some(LongSilence)),
            "started: {started}"
        );
    }
}

/// Issue 32, item 1: a program that has only started (a REPL's banner,
/// vim or less opening a file) waits without attention whether tmuxd's
/// create started it or someone typed it at a shell; a question on the
/// screen of one tmuxd started needs someone (nobody typed it); after
/// work on its own any wait does, however it was started.
#[test]
fn a_program_only_opened_waits_without_attention_however_started() {
    // (what it is, how it looks once drawn, whether its screen asks,
    // attention when started by tmuxd, when typed at a shell)
    let table = [
        ("python3 banner", A::TerminalRead, false, None, None),
        ("vim notes.txt", A::TerminalTimed, false, None, None),
        ("less /etc/services", A::TerminalRead, false, None, None),
        (
            "read -p 'Proceed? [y/N]'",
            A::TerminalRead,
            true,
            Some(NeedsInput),
            None,
        ),
    ];
    for (program, activity, asks, when_started, when_typed) in table {
        let look = |activity| {
            Signal::Probe(Evidence {
                activity,
                cpu: Some((42, 3)),
                rule: None,
                question: asks,
            })
        };
        // Started by tmuxd: it loads (CPU), draws, then waits; vim waits
        // with a timeout and redraws for a while before its wait is still.
        let mut d = Detector::new(at(0), timing(), None);
        d.started_by_tmuxd(true);
        d.step(at(0), out(b""));
        d.step(at(250), probe_cpu(A::Running, 1));
        d.step(at(900), out(b"drawn"));
        d.step(at(1150), look(activity));
        d.step(at(11_500), look(activity));
        let view = d.view();
        assert_eq!(
            (view.state, view.reason, view.attention.map(|a| a.reason)),
            (Waiting, TerminalRead, when_started),
            "{program}, started by tmuxd"
        );
        // Typed at the shell of a session tmuxd started.
        let mut d = Detector::new(at(0), timing(), None);
        d.started_by_tmuxd(true);
        d.step(at(0), out(b"$ "));
        d.step(at(250), probe(A::ShellPrompt));
        d.step(at(1000), out(b"prog\r\n"));
        d.step(at(1250), probe_cpu(A::Running, 1));
        d.step(at(1900), out(b"drawn"));
        d.step(at(2150), look(activity));
        d.step(at(12_500), look(activity));
        let view = d.view();
        assert_eq!(
            (view.state, view.reason, view.attention.map(|a| a.reason)),
            (Waiting, TerminalRead, when_typed),
            "{program}, typed at a shell"
        );
    }
    // Started by tmuxd, it works on its own (a build), then reads its
    // terminal without a question: that wait needs someone.
    let mut d = run_started(&[(0, out(b"compiling"), (Starting, Attaching, None))]);
    for t in (250..=6_250).step_by(1000) {
        d.step(at(t - 100), out(b"."));
        d.step(at(t), probe_cpu(A::Running, t as u64));
    }
    run_from(
        d,
        &[
            (7_000, out(b"press Enter"), (Working, OutputActivity, None)),
            (
                7_250,
                probe_cpu(A::TerminalRead, 6_250),
                (Waiting, TerminalRead, Some(NeedsInput)),
            ),
        ],
    );
}
