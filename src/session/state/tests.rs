use super::*;

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_700_000_000_000 + ms).unwrap()
}

fn timing() -> Timing {
    Timing {
        idle_after: Duration::milliseconds(1500),
        prompt_settle: Duration::milliseconds(250),
        attention_after: Duration::milliseconds(10_000),
    }
}

use SessionState::*;
use StateReason::*;

fn out(bytes: &[u8]) -> Signal<'_> {
    Signal::Output {
        bytes,
        changed: true,
    }
}

/// Runs (time, signal, expected (state, reason) after it) rows in order.
fn run(rows: &[(i64, Signal<'_>, (SessionState, StateReason))]) {
    let mut detector = Detector::new(at(0), timing());
    for (i, (ms, signal, want)) in rows.iter().enumerate() {
        detector.step(at(*ms), *signal);
        let view = detector.view();
        assert_eq!(
            (view.state, view.reason),
            *want,
            "row {i} at {ms} ms: {signal:?}"
        );
    }
}

#[test]
fn shell_command_runs_and_prompt_returns() {
    run(&[
        (0, Signal::Tick, (Starting, Attaching)),
        (10, out(b"$ "), (Busy, OutputActivity)),
        (100, Signal::Tick, (Busy, OutputActivity)),
        (
            260,
            Signal::Foreground(Foreground::Shell),
            (Idle, ForegroundProcess),
        ),
        // `sleep 3` typed and started: echo, then the probe finds sleep.
        (1000, out(b"sleep 3\r\n"), (Busy, OutputActivity)),
        (
            1250,
            Signal::Foreground(Foreground::Other),
            (Busy, ForegroundProcess),
        ),
        (3000, Signal::Tick, (Busy, ForegroundProcess)),
        // The prompt comes back: output, then the probe sees the shell.
        (4000, out(b"$ "), (Busy, ForegroundProcess)),
        (
            4250,
            Signal::Foreground(Foreground::Shell),
            (Idle, ForegroundProcess),
        ),
    ]);
}

#[test]
fn unknown_foreground_uses_the_quiet_period() {
    run(&[
        (0, out(b"hello"), (Busy, OutputActivity)),
        (
            250,
            Signal::Foreground(Foreground::Unknown),
            (Busy, OutputActivity),
        ),
        (1400, Signal::Tick, (Busy, OutputActivity)),
        (1500, Signal::Tick, (Idle, Quiet)),
        (
            1600,
            Signal::Output {
                bytes: b"\x1b[H",
                changed: false,
            },
            (Idle, Quiet),
        ),
    ]);
}

#[test]
fn bell_raises_attention_until_input() {
    run(&[
        (0, out(b"$ "), (Busy, OutputActivity)),
        (
            300,
            Signal::Foreground(Foreground::Shell),
            (Idle, ForegroundProcess),
        ),
        (500, out(b"x\x07"), (Attention, Bell)),
        (
            900,
            Signal::Foreground(Foreground::Shell),
            (Attention, Bell),
        ),
        (5000, out(b"more"), (Attention, Bell)),
        (6000, Signal::Input, (Busy, Input)),
        (
            6300,
            Signal::Foreground(Foreground::Shell),
            (Idle, ForegroundProcess),
        ),
    ]);
}

#[test]
fn title_terminators_are_not_bells() {
    run(&[
        (0, out(b"\x1b]0;my title\x07"), (Busy, OutputActivity)),
        (10, out(b"\x1b]2;split"), (Busy, OutputActivity)),
        (20, out(b" title\x07 ok"), (Busy, OutputActivity)),
        (30, out(b"\x1b]0;st\x1b\\"), (Busy, OutputActivity)),
    ]);
}

#[test]
fn a_silent_program_needs_attention_after_the_timeout() {
    run(&[
        (0, out(b"agent> thinking"), (Busy, OutputActivity)),
        (
            250,
            Signal::Foreground(Foreground::Other),
            (Busy, ForegroundProcess),
        ),
        (9000, Signal::Tick, (Busy, ForegroundProcess)),
        (10_000, Signal::Tick, (Attention, IdleTimeout)),
        (11_000, Signal::Input, (Busy, Input)),
        (11_500, Signal::Tick, (Busy, Input)),
        (21_000, Signal::Tick, (Attention, IdleTimeout)),
    ]);
}

#[test]
fn prompt_markers_take_over() {
    run(&[
        (0, out(b"\x1b]133;A\x07$ "), (Idle, PromptMarker)),
        (10, out(b"\x1b]133;C\x1b\\"), (Busy, PromptMarker)),
        // Markers decide from now on: quiet output and foreground do not.
        (
            5000,
            Signal::Foreground(Foreground::Shell),
            (Busy, PromptMarker),
        ),
        (5010, out(b"\x1b]133;D;0\x07"), (Idle, PromptMarker)),
        // Split across chunks.
        (6000, out(b"\x1b]13"), (Idle, PromptMarker)),
        (6001, out(b"3;C\x07"), (Busy, PromptMarker)),
    ]);
}

#[test]
fn exit_is_final() {
    run(&[
        (0, out(b"$ "), (Busy, OutputActivity)),
        (10, Signal::Exit, (Exited, ProcessExit)),
        (20, out(b"\x07"), (Exited, ProcessExit)),
        (30, Signal::Input, (Exited, ProcessExit)),
    ]);
}

#[test]
fn deadlines_say_when_to_look_again() {
    let mut d = Detector::new(at(0), timing());
    assert_eq!(d.next_deadline(), None, "nothing to wait for before output");
    d.step(at(100), out(b"$ "));
    assert_eq!(
        d.next_deadline(),
        Some(at(350)),
        "probe once output settles"
    );
    d.step(at(350), Signal::Foreground(Foreground::Other));
    assert_eq!(d.next_deadline(), Some(at(10_100)), "attention timeout");
    d.step(at(400), Signal::Foreground(Foreground::Shell));
    assert_eq!(d.view().state, Idle);
    assert_eq!(d.next_deadline(), None);
    d.step(at(500), out(b"\x07"));
    assert_eq!(d.next_deadline(), None, "attention waits for input");
}
