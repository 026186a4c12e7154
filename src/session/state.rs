//! What a session is doing, from evidence: a pure state machine over the
//! pane's output (screen changes, BEL, OSC 133 marks), what /proc says the
//! terminal's foreground process group is doing, screen rules, input and
//! time. The actor feeds it and asks when to look next, so no timer or fork
//! runs per session.
//!
//! States: `starting` (attached, not judged yet), `idle` (a shell at its
//! prompt), `working` (output changing, the foreground group using CPU, or a
//! program running that is not reading the terminal), `waiting` (a program
//! blocked reading the terminal, quiet: a REPL, a `[y/N]` question, an
//! editor), `exited`.
//!
//! Attention is a flag beside the state that means "this needs you": a
//! bell, a program's own notification (OSC 9/777/99), a long silence, or a
//! wait for input that follows work the session did on its own (`Drive`).
//! A program that has only opened (an editor, a pager, a REPL's banner)
//! waits without it, whether someone typed it at a shell or tmuxd started
//! it; one tmuxd started that asks a question needs someone at once. Someone looking acknowledges it (input, the dashboard, a
//! tmux client attaching): the flag is lowered and the same wait does not
//! raise it again. It never changes the state. docs/guide.md has the table of
//! states, reasons and their evidence.

mod hook;
mod marks;
pub mod question;
mod words;

use chrono::{DateTime, Duration, Utc};

pub use hook::Hook;
use marks::{PromptMark, Scan};
pub use words::{
    Acknowledger, Attention, AttentionReason, EndReason, Note, SessionState, StateReason,
};

/// Thresholds, from the config.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Quiet time needed when the only evidence is weak: no process facts,
    /// or a program blocked on several descriptors at once.
    pub idle_after: Duration,
    /// Quiet time after output before looking at the foreground (the
    /// prompt or question has finished drawing).
    pub prompt_settle: Duration,
    /// Silence of a working program before attention (`long_silence`).
    pub attention_after: Duration,
    /// How often a working session is looked at while nothing else happens.
    pub probe_interval: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateView {
    pub state: SessionState,
    pub reason: StateReason,
    pub since: DateTime<Utc>,
    pub attention: Option<Attention>,
    /// Set on the view of the step that lowered the flag because someone
    /// looked: who. The next step clears it.
    pub acknowledged_by: Option<Acknowledger>,
}

/// What the foreground process group of the active pane is doing, as the
/// actor read it from /proc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// No process facts (no pid, another pid namespace, no /proc).
    Unknown,
    /// A process of the group is on a CPU, or in uninterruptible sleep.
    Running,
    /// An interactive shell is blocked reading its terminal: at its prompt.
    ShellPrompt,
    /// An interactive bash blocked in `read(2)` of its terminal: readline
    /// waits in select at the prompt, so this is its `read` builtin.
    ShellRead,
    /// A program is blocked reading the terminal (read, or select on it alone).
    TerminalRead,
    /// A program waits for the terminal alone with a timeout: it wakes by
    /// itself (`top` redraws; vim for `updatetime` after a key).
    TerminalTimed,
    /// A program is blocked in poll/epoll/select on several descriptors.
    EventWait,
    /// Asleep on something else: a timer, a child, a lock, a socket.
    Blocked,
    /// The active pane's program has exited and tmux is asked how: its end
    /// comes next, so the state stands (neither idle for the quiet nor a
    /// long silence) until it does.
    Exited,
}

/// One look at the session, taken by the actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub activity: Activity,
    /// The foreground group's id and the CPU ticks its processes used so far.
    pub cpu: Option<(u32, u64)>,
    /// A screen rule that matched the active pane: its state and reason.
    pub rule: Option<(SessionState, &'static str)>,
    /// The screen asks a question where the cursor is (`question::asks`).
    pub question: bool,
}

/// One thing the detector is told.
#[derive(Clone, Copy, Debug)]
pub enum Signal<'a> {
    /// Bytes from a pane; `changed` when the screen's text changed.
    Output { bytes: &'a [u8], changed: bool },
    /// The actor looked at the foreground process group and the screen.
    Probe(Evidence),
    /// Input typed through the API: the session has something to do.
    Input,
    /// Keys from a stream client: someone is at the keyboard.
    Keystrokes,
    /// Someone looked at the session: its attention is acknowledged.
    Acknowledge(Acknowledger),
    /// tmuxd decided the session has ended.
    End(EndReason),
    /// A coding agent's hook said what it is doing (see `hook`).
    Hook(Hook),
    /// tmux flagged a bell the actor did not read itself (it rang while
    /// the session had no client of tmuxd's: `tmux::activity`).
    Bell,
}

/// CPU use of the foreground group that counts as working, in clock ticks
/// (1/100 s on Linux) per second: 10% of one core.
const BUSY_TICKS_PER_SECOND: u64 = 10;

/// A program in a timed wait on its terminal whose screen changed this
/// recently is a live display (`top -d 10` at most), not a wait.
const REDRAW_WINDOW: Duration = Duration::seconds(10);

/// Where the last OSC 133 mark left the shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marked {
    Nothing,
    Prompt,
    Command,
}

/// Whom a wait that begins now is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Drive {
    /// Someone typed, looked, or saw a prompt since the session last
    /// worked on its own: they are there.
    Attended,
    /// tmuxd started the program and nobody has been seen since. A program
    /// that has only opened (a REPL's banner, an editor or a pager on a
    /// file) waits for whoever opens it; a question on its screen, or a
    /// rule that says it waits, needs someone.
    Launched,
    /// It worked on its own for `work_alone`: any wait needs someone.
    OnItsOwn,
}

/// Input typed through tmuxd, until the pane answers it with output.
#[derive(Clone, Copy, Debug)]
struct PendingInput {
    at: DateTime<Utc>,
    answered: bool,
}

#[derive(Debug)]
pub struct Detector {
    timing: Timing,
    view: StateView,
    /// The last output that changed the screen.
    last_output: Option<DateTime<Utc>>,
    /// When the current run of screen changes began (after a settled quiet).
    burst_since: Option<DateTime<Utc>>,
    /// Output (or input) not looked at yet: look once it has settled.
    unjudged_since: Option<DateTime<Utc>>,
    last_probe: Option<DateTime<Utc>>,
    input: Option<PendingInput>,
    marked: Marked,
    /// The status of the last command an OSC 133 `D;N` mark reported.
    last_status: Option<i32>,
    /// The last CPU reading: group, ticks, when.
    cpu: Option<(u32, u64, DateTime<Utc>)>,
    scan: Scan,
    /// The state a previous actor (or run of tmuxd) last reported, and
    /// since when: the first judgement keeps that `since` when it finds the
    /// same state, so a restart does not make every session "for 0s".
    previous: Option<(SessionState, DateTime<Utc>)>,
    /// Whom a wait that begins now is for. Every program, typed at a
    /// shell or started by tmuxd's create, is on its own only after
    /// working (`work_alone`) without reading its terminal: starting up
    /// (an editor loading, a REPL printing its banner) is not that.
    drive: Drive,
    /// The last look found a question where the cursor is, or a rule
    /// saying the program waits.
    screen_asks: bool,
    /// When the current run of work on its own began (CPU, output, asleep
    /// on something else than the terminal).
    own_work_since: Option<DateTime<Utc>>,
    /// The last hook's state, while the screen and process agree with it.
    hook: Option<hook::Claim>,
}

impl Detector {
    /// A detector for a freshly attached session; `attention` is the flag
    /// a previous run of tmuxd left raised (restarts keep it).
    pub fn new(now: DateTime<Utc>, timing: Timing, attention: Option<Attention>) -> Self {
        Detector {
            timing,
            view: StateView {
                state: SessionState::Starting,
                reason: StateReason::Attaching,
                since: now,
                attention,
                acknowledged_by: None,
            },
            last_output: None,
            burst_since: None,
            unjudged_since: None,
            last_probe: None,
            input: None,
            marked: Marked::Nothing,
            last_status: None,
            cpu: None,
            scan: Scan::default(),
            previous: None,
            drive: Drive::Attended,
            screen_asks: false,
            own_work_since: None,
            hook: None,
        }
    }

    /// Whether tmuxd started the session's program: a fresh one (no state
    /// from before) is `Launched`, nobody typed it; after a restart, one
    /// that was working is still on its own, and a wait that was already
    /// up is the same wait.
    pub fn started_by_tmuxd(&mut self, started: bool) {
        self.drive = match self.previous {
            Some((SessionState::Working, _)) => Drive::OnItsOwn,
            Some(_) => Drive::Attended,
            None if started => Drive::Launched,
            None => Drive::Attended,
        };
    }

    /// Carries the state a previous actor last reported (see `previous`).
    pub fn with_previous(mut self, previous: Option<(SessionState, DateTime<Utc>)>) -> Self {
        self.previous = previous;
        self
    }

    pub fn view(&self) -> StateView {
        self.view
    }

    pub fn last_activity(&self) -> Option<DateTime<Utc>> {
        self.last_output
    }

    /// The status an OSC 133 `D;N` mark last reported.
    pub fn last_command_status(&self) -> Option<i32> {
        self.last_status
    }

    /// Applies a signal at `now`; returns the new view when the state, the
    /// attention flag, or (outside `working`) the reason changed. Reasons
    /// inside `working` change without an event: a program that prints,
    /// pauses and computes is working all along.
    pub fn step(&mut self, now: DateTime<Utc>, signal: Signal<'_>) -> Option<StateView> {
        if self.view.state == SessionState::Exited {
            return None;
        }
        self.view.acknowledged_by = None;
        let before = self.view;
        match signal {
            Signal::End(reason) => self.enter(now, SessionState::Exited, StateReason::End(reason)),
            Signal::Input => {
                self.hook = None;
                self.acknowledge(Acknowledger::Input);
                self.input = Some(PendingInput {
                    at: now,
                    answered: false,
                });
                self.unjudged_since.get_or_insert(now);
                self.enter(now, SessionState::Working, StateReason::Input);
            }
            Signal::Keystrokes => {
                self.hook = None;
                self.acknowledge(Acknowledger::Input);
                self.unjudged_since.get_or_insert(now);
            }
            Signal::Acknowledge(by) => self.acknowledge(by),
            Signal::Output { bytes, changed } => self.on_output(now, bytes, changed),
            Signal::Probe(evidence) => self.on_probe(now, evidence),
            Signal::Bell => self.on_bell(now),
            Signal::Hook(hook) => {
                self.hook = Some(hook::Claim::new(hook, now));
                self.input = None;
                self.enter(now, hook.state, StateReason::Hook(hook.reason));
                if hook.attention && self.view.attention.is_none() {
                    self.raise(now, AttentionReason::NeedsInput);
                }
            }
        }
        let after = self.view;
        let notable = after.state != before.state
            || after.attention != before.attention
            || (after.reason != before.reason && after.state != SessionState::Working);
        notable.then_some(after)
    }

    /// A bell raises attention, unless a bell already has it raised.
    fn on_bell(&mut self, now: DateTime<Utc>) {
        if self
            .view
            .attention
            .is_none_or(|a| a.reason != AttentionReason::Bell)
        {
            self.raise(now, AttentionReason::Bell);
        }
    }

    fn on_output(&mut self, now: DateTime<Utc>, bytes: &[u8], changed: bool) {
        let marks = self.scan.scan(bytes);
        // Keys typed at a tmux client reach a program reading its terminal
        // as their echo: someone is there.
        if changed
            && self.view.state == SessionState::Waiting
            && matches!(
                self.view.reason,
                StateReason::TerminalRead | StateReason::ShellRead
            )
            && self.input.is_none()
        {
            self.acknowledge(Acknowledger::Input);
        }
        if let Some(text) = &marks.notification {
            self.raise(now, AttentionReason::Notification);
            if let Some(attention) = &mut self.view.attention
                && !text.trim().is_empty()
            {
                attention.text = Some(Note::new(text));
            }
        }
        if marks.bell {
            self.on_bell(now);
        }
        if marks.status.is_some() {
            self.last_status = marks.status;
        }
        if changed {
            let settled = self
                .last_output
                .is_none_or(|last| now - last > self.timing.prompt_settle);
            if settled {
                self.burst_since = Some(now);
            }
            self.last_output = Some(now);
            self.unjudged_since.get_or_insert(now);
            if let Some(input) = &mut self.input {
                input.answered = true;
            }
            self.clear(AttentionReason::LongSilence);
        }
        match marks.prompt {
            Some(PromptMark::Prompt | PromptMark::Done(_)) => {
                self.marked = Marked::Prompt;
                self.enter(now, SessionState::Idle, StateReason::PromptMarker);
            }
            Some(PromptMark::Command) => {
                self.marked = Marked::Command;
                self.enter(now, SessionState::Working, StateReason::PromptMarker);
            }
            None => {}
        }
    }

    fn on_probe(&mut self, now: DateTime<Utc>, evidence: Evidence) {
        self.unjudged_since = None;
        self.last_probe = Some(now);
        if evidence.activity == Activity::Exited {
            return;
        }
        let cpu_since = self.cpu.map(|(_, _, at)| at);
        let cpu_busy = self.cpu_busy(now, evidence.cpu);
        self.check_hook(now, evidence, cpu_since.filter(|_| cpu_busy));
        if let Some(input) = self.input {
            let waited = now - input.at;
            if !input.answered && waited < self.timing.idle_after && evidence.rule.is_none() {
                // The pane has not reacted to what was typed: look again soon
                // rather than judge it by how it looked before.
                self.unjudged_since = Some(now);
                return;
            }
            self.input = None;
        }
        let (state, reason) = self.judge(now, evidence, cpu_busy);
        self.count_own_work(now, state, reason);
        self.screen_asks =
            evidence.question || matches!(evidence.rule, Some((SessionState::Waiting, _)));
        self.enter(now, state, reason);
        let quiet = self.quiet_for(now);
        if state == SessionState::Working
            && matches!(
                reason,
                StateReason::ForegroundProcess | StateReason::EventWait
            )
            && self.drive == Drive::OnItsOwn
            && quiet >= self.timing.attention_after
            && self.view.attention.is_none()
        {
            self.raise(now, AttentionReason::LongSilence);
        }
    }

    /// Work on its own for `work_alone` puts the session `OnItsOwn`. A
    /// program that reads its terminal, redraws on a timer or sits in
    /// poll does not count: a viewer, an editor, a REPL someone opened.
    fn count_own_work(&mut self, now: DateTime<Utc>, state: SessionState, reason: StateReason) {
        use StateReason as R;
        if state != SessionState::Working {
            self.own_work_since = None;
            return;
        }
        let own = matches!(
            reason,
            R::Cpu | R::ForegroundProcess | R::OutputActivity | R::PromptMarker
        );
        if !own {
            return;
        }
        let since = *self.own_work_since.get_or_insert(now);
        if now - since >= self.work_alone() {
            self.drive = Drive::OnItsOwn;
        }
    }

    /// How long a program works on its own before its next wait needs
    /// someone: longer than an editor, a pager, `man` or a REPL takes to
    /// start on a loaded machine (`man bash`: 0.8 s unloaded), however it
    /// was started.
    fn work_alone(&self) -> Duration {
        self.timing.idle_after * 4
    }

    /// Someone is there: the flag is lowered (saying who, when it was up),
    /// and the wait under way no longer needs anyone.
    fn acknowledge(&mut self, by: Acknowledger) {
        if self.view.attention.take().is_some() {
            self.view.acknowledged_by = Some(by);
        }
        self.drive = Drive::Attended;
        self.own_work_since = None;
    }

    /// The state the evidence shows, strongest evidence first.
    fn judge(
        &self,
        now: DateTime<Utc>,
        evidence: Evidence,
        cpu_busy: bool,
    ) -> (SessionState, StateReason) {
        use SessionState::{Idle, Waiting, Working};
        if let Some((state, reason)) = evidence.rule {
            return (state, StateReason::Rule(reason));
        }
        if let Some(claim) = self.hook {
            return (claim.state, StateReason::Hook(claim.reason));
        }
        let quiet = self.quiet_for(now);
        let settled = quiet >= self.timing.prompt_settle;
        let at_prompt = self.marked == Marked::Prompt;
        // A redraw while it waits (a clock, a counter) is not work; changes
        // that go on for `idle_after` (a spinner) are.
        let still_waiting =
            self.view.state == Waiting && self.burst_length() < self.timing.idle_after;
        match evidence.activity {
            // After an OSC 133 `C`, a shell reading its terminal is a command's `read`.
            Activity::ShellPrompt if self.marked == Marked::Command => {
                (Waiting, StateReason::ShellRead)
            }
            Activity::ShellPrompt if at_prompt => (Idle, StateReason::PromptMarker),
            Activity::ShellPrompt => (Idle, StateReason::ShellPrompt),
            Activity::ShellRead => (Waiting, StateReason::ShellRead),
            Activity::TerminalRead => (Waiting, StateReason::TerminalRead),
            Activity::TerminalTimed
                if self
                    .last_output
                    .is_some_and(|last| now - last < REDRAW_WINDOW)
                    && self.view.state != Waiting =>
            {
                (Working, StateReason::Redraw)
            }
            Activity::TerminalTimed => (Waiting, StateReason::TerminalRead),
            Activity::Unknown if at_prompt => (Idle, StateReason::PromptMarker),
            Activity::Unknown if quiet >= self.timing.idle_after => (Idle, StateReason::Quiet),
            Activity::Unknown => (Working, StateReason::OutputActivity),
            // In poll/epoll a program may wait for anything (its model, the
            // network): only a question on its screen says it waits for an answer.
            Activity::EventWait if !cpu_busy && evidence.question && (settled || still_waiting) => {
                (Waiting, StateReason::ScreenQuestion)
            }
            _ if !settled => (Working, StateReason::OutputActivity),
            _ if cpu_busy || evidence.activity == Activity::Running => (Working, StateReason::Cpu),
            Activity::EventWait if quiet >= self.timing.idle_after => {
                (Working, StateReason::EventWait)
            }
            // Blocked in poll, quiet, not yet for long: still at work.
            Activity::EventWait => (Working, StateReason::OutputActivity),
            _ => (Working, StateReason::ForegroundProcess),
        }
    }

    /// Drops the hook's claim when the screen (a rule) or the process
    /// disagrees with it. `busy_since`: when the CPU reading that found the
    /// group busy began; work from before the hook does not count against it.
    fn check_hook(
        &mut self,
        now: DateTime<Utc>,
        evidence: Evidence,
        busy_since: Option<DateTime<Utc>>,
    ) {
        let Some(claim) = self.hook else { return };
        let seen = hook::Seen {
            activity: evidence.activity,
            quiet: self.quiet_for(now),
            busy_output: hook::output_since(self.burst_since, self.last_output, claim.at),
            cpu_busy: busy_since.is_some_and(|since| since >= claim.at),
            idle_after: self.timing.idle_after,
        };
        if evidence.rule.is_some() || !claim.holds(seen) {
            self.hook = None;
        }
    }

    /// Whether the group used CPU since the last reading of the same group.
    fn cpu_busy(&mut self, now: DateTime<Utc>, reading: Option<(u32, u64)>) -> bool {
        let Some((group, ticks)) = reading else {
            self.cpu = None;
            return false;
        };
        let busy = match self.cpu {
            Some((last_group, last_ticks, at)) if last_group == group && now > at => {
                let elapsed_ms = (now - at).num_milliseconds().max(1) as u64;
                ticks.saturating_sub(last_ticks) * 1000 >= BUSY_TICKS_PER_SECOND * elapsed_ms
            }
            _ => false,
        };
        self.cpu = Some((group, ticks, now));
        busy
    }

    /// How long the current run of screen changes has lasted.
    fn burst_length(&self) -> Duration {
        match (self.burst_since, self.last_output) {
            (Some(since), Some(last)) => last - since,
            _ => Duration::zero(),
        }
    }

    /// How long the screen has not changed (since attach if it never did).
    fn quiet_for(&self, now: DateTime<Utc>) -> Duration {
        now - self.last_output.unwrap_or(self.view.since)
    }

    /// Moves to `state` for `reason`, and updates attention as the activity
    /// changes: a session active again no longer needs anyone, a program
    /// newly waiting for input does.
    fn enter(&mut self, now: DateTime<Utc>, state: SessionState, reason: StateReason) {
        let from = self.view.state;
        self.view.reason = reason;
        if state == from {
            return;
        }
        self.view.state = state;
        self.view.since = match self.previous.take() {
            Some((before, since)) if from == SessionState::Starting && before == state => since,
            _ => now,
        };
        match from {
            SessionState::Waiting => self.clear(AttentionReason::NeedsInput),
            SessionState::Working => self.clear(AttentionReason::LongSilence),
            _ => {}
        }
        let resumed = matches!(from, SessionState::Idle | SessionState::Waiting);
        if resumed && state == SessionState::Working {
            self.view.attention = None;
        }
        if state == SessionState::Idle {
            // At a prompt: what runs next is what someone types.
            self.drive = Drive::Attended;
        }
        if state == SessionState::Waiting
            && self.wait_needs_someone()
            && self.view.attention.is_none()
        {
            self.raise(now, AttentionReason::NeedsInput);
        }
    }

    /// Whether a wait beginning now needs someone: after work on its own,
    /// or, from a program tmuxd started that nobody has seen yet, when its
    /// screen asks (a question, a rule that says it waits). A program that
    /// has only opened waits for whoever opens it.
    fn wait_needs_someone(&self) -> bool {
        match self.drive {
            Drive::OnItsOwn => true,
            Drive::Launched => self.screen_asks,
            Drive::Attended => false,
        }
    }

    fn raise(&mut self, now: DateTime<Utc>, reason: AttentionReason) {
        self.view.attention = Some(Attention {
            reason,
            since: now,
            text: None,
        });
    }

    fn clear(&mut self, reason: AttentionReason) {
        if self.view.attention.is_some_and(|a| a.reason == reason) {
            self.view.attention = None;
        }
    }

    /// When the actor should next look (probe, then `Probe`).
    pub fn next_deadline(&self) -> Option<DateTime<Utc>> {
        if self.view.state == SessionState::Exited {
            return None;
        }
        let settle = self
            .unjudged_since
            .map(|since| since + self.timing.prompt_settle);
        let periodic = (self.view.state == SessionState::Working)
            .then(|| self.last_probe.unwrap_or(self.view.since) + self.timing.probe_interval);
        match (settle, periodic) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests;
