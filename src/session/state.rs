//! What a session is doing: a pure state machine over (output, foreground
//! process, input, time). The actor feeds it and asks when to wake it next,
//! so no timer or fork runs per session.
//!
//! Signals, strongest first:
//! - OSC 133 prompt markers (`A`/`D` prompt is back, `C` command runs), once
//!   a session has shown any. tmux 3.3 does not forward them to clients, so
//!   live sessions mostly use the next two.
//! - The pane's foreground process: a shell at its prompt means idle once
//!   output settles; anything else means busy.
//! - Output that changed the window, and a quiet period when the foreground
//!   is unknown.
//!
//! `attention` is raised by BEL, or when a busy non-shell program has been
//! quiet for `attention_after` (an agent waiting for a human); input clears it.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Starting,
    Idle,
    Busy,
    Attention,
    Exited,
}

/// Why the session is in its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StateReason {
    /// Attached, no output seen yet.
    Attaching,
    /// An OSC 133 prompt marker.
    PromptMarker,
    /// The window changed recently.
    OutputActivity,
    /// The foreground process: a shell (idle) or another program (busy).
    ForegroundProcess,
    /// No output for the quiet period, foreground unknown.
    Quiet,
    /// The terminal bell rang.
    Bell,
    /// Busy and then silent for `attention_after`.
    IdleTimeout,
    /// Input arrived (clears attention).
    Input,
    /// The tmux client ended: the session or its server is gone.
    ProcessExit,
}

/// Who holds the pane's terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreground {
    Shell,
    Other,
    Unknown,
}

/// Thresholds, from the config.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Quiet period before idle when the foreground is unknown.
    pub idle_after: Duration,
    /// Quiet period before idle when a shell holds the terminal (the prompt is drawn).
    pub prompt_settle: Duration,
    /// Quiet period of a busy program before attention.
    pub attention_after: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateView {
    pub state: SessionState,
    pub reason: StateReason,
    pub since: DateTime<Utc>,
}

/// One thing the detector is told.
#[derive(Clone, Copy, Debug)]
pub enum Signal<'a> {
    /// Bytes from the client; `changed` when the window's contents changed.
    Output {
        bytes: &'a [u8],
        changed: bool,
    },
    Foreground(Foreground),
    Input,
    Tick,
    Exit,
}

/// Where the OSC scanner is, across chunk boundaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Scan {
    #[default]
    Ground,
    Escape,
    /// Inside an OSC string; `prefix` holds its first bytes to recognise 133.
    Osc {
        len: u8,
        prefix: [u8; 6],
    },
    OscEscape {
        len: u8,
        prefix: [u8; 6],
    },
}

#[derive(Debug)]
pub struct Detector {
    timing: Timing,
    view: StateView,
    last_change: Option<DateTime<Utc>>,
    foreground: Foreground,
    /// Set once any OSC 133 marker is seen: markers then decide idle/busy.
    markers: bool,
    /// Output changed the window since the foreground was last looked at.
    probe_due: bool,
    scan: Scan,
}

/// What a chunk of output carried besides text.
#[derive(Default, PartialEq, Eq, Debug)]
struct Marks {
    bell: bool,
    /// The last OSC 133 marker kind in the chunk (`A`, `B`, `C`, `D`).
    prompt: Option<u8>,
}

impl Detector {
    pub fn new(now: DateTime<Utc>, timing: Timing) -> Self {
        Detector {
            timing,
            view: StateView {
                state: SessionState::Starting,
                reason: StateReason::Attaching,
                since: now,
            },
            last_change: None,
            foreground: Foreground::Unknown,
            markers: false,
            probe_due: false,
            scan: Scan::Ground,
        }
    }

    pub fn view(&self) -> StateView {
        self.view
    }

    pub fn last_activity(&self) -> Option<DateTime<Utc>> {
        self.last_change
    }

    /// Applies a signal at `now`; returns the new view if the state or reason changed.
    pub fn step(&mut self, now: DateTime<Utc>, signal: Signal<'_>) -> Option<StateView> {
        if self.view.state == SessionState::Exited {
            return None;
        }
        let next = match signal {
            Signal::Exit => Some((SessionState::Exited, StateReason::ProcessExit)),
            Signal::Input => {
                // The user acted: the quiet period starts again.
                self.last_change = Some(now);
                (self.view.state == SessionState::Attention)
                    .then_some((SessionState::Busy, StateReason::Input))
            }
            Signal::Foreground(foreground) => {
                self.foreground = foreground;
                self.probe_due = false;
                self.evaluate(now)
            }
            Signal::Output { bytes, changed } => {
                let marks = self.scan_marks(bytes);
                self.on_output(now, changed, &marks)
            }
            Signal::Tick => self.evaluate(now),
        };
        let (state, reason) = next?;
        if (state, reason) == (self.view.state, self.view.reason) {
            return None;
        }
        self.view = StateView {
            state,
            reason,
            since: now,
        };
        Some(self.view)
    }

    fn on_output(
        &mut self,
        now: DateTime<Utc>,
        changed: bool,
        marks: &Marks,
    ) -> Option<(SessionState, StateReason)> {
        if changed {
            self.last_change = Some(now);
            // What runs in the foreground may have changed: look again once output settles.
            self.probe_due = true;
        }
        if marks.bell {
            return Some((SessionState::Attention, StateReason::Bell));
        }
        if let Some(kind) = marks.prompt {
            self.markers = true;
            let state = if kind == b'C' {
                SessionState::Busy
            } else {
                SessionState::Idle
            };
            return Some((state, StateReason::PromptMarker));
        }
        if !changed || self.markers || self.view.state == SessionState::Attention {
            return None;
        }
        match (self.view.state, self.foreground) {
            (SessionState::Busy, _) => None,
            (_, Foreground::Other) => Some((SessionState::Busy, StateReason::ForegroundProcess)),
            _ => Some((SessionState::Busy, StateReason::OutputActivity)),
        }
    }

    /// Decisions that depend on time and the foreground, not on new output.
    fn evaluate(&self, now: DateTime<Utc>) -> Option<(SessionState, StateReason)> {
        if self.markers
            || matches!(
                self.view.state,
                SessionState::Attention | SessionState::Starting
            )
        {
            return None;
        }
        let quiet = now - self.last_change?;
        match self.foreground {
            Foreground::Other
                if self.view.state == SessionState::Busy
                    && quiet >= self.timing.attention_after =>
            {
                Some((SessionState::Attention, StateReason::IdleTimeout))
            }
            Foreground::Other if self.view.reason == StateReason::Input => None,
            Foreground::Other => Some((SessionState::Busy, StateReason::ForegroundProcess)),
            Foreground::Shell if quiet >= self.timing.prompt_settle => {
                Some((SessionState::Idle, StateReason::ForegroundProcess))
            }
            Foreground::Unknown if quiet >= self.timing.idle_after => {
                Some((SessionState::Idle, StateReason::Quiet))
            }
            _ => None,
        }
    }

    /// When the actor should next look (probe the foreground, then `Tick`).
    pub fn next_deadline(&self) -> Option<DateTime<Utc>> {
        if self.markers
            || matches!(
                self.view.state,
                SessionState::Attention | SessionState::Exited
            )
        {
            return None;
        }
        let last = self.last_change?;
        if self.probe_due {
            return Some(last + self.timing.prompt_settle);
        }
        match (self.foreground, self.view.state) {
            (Foreground::Other, SessionState::Busy) => Some(last + self.timing.attention_after),
            (Foreground::Shell, SessionState::Busy) => Some(last + self.timing.prompt_settle),
            (Foreground::Unknown, SessionState::Busy) => Some(last + self.timing.idle_after),
            _ => None,
        }
    }

    /// Finds BEL outside escape strings and OSC 133 markers, keeping state
    /// across chunks. A BEL that ends an OSC string is not a bell.
    fn scan_marks(&mut self, bytes: &[u8]) -> Marks {
        let mut marks = Marks::default();
        for &b in bytes {
            self.scan = match (self.scan, b) {
                (Scan::Ground, 0x07) => {
                    marks.bell = true;
                    Scan::Ground
                }
                (Scan::Ground, 0x1b) => Scan::Escape,
                (Scan::Ground, _) => Scan::Ground,
                (Scan::Escape, b']') => Scan::Osc {
                    len: 0,
                    prefix: [0; 6],
                },
                (Scan::Escape, 0x1b) => Scan::Escape,
                (Scan::Escape, _) => Scan::Ground,
                (Scan::Osc { len, prefix }, 0x07) => {
                    marks.prompt = osc_prompt_kind(len, prefix).or(marks.prompt);
                    Scan::Ground
                }
                (Scan::Osc { len, prefix }, 0x1b) => Scan::OscEscape { len, prefix },
                (Scan::Osc { len, mut prefix }, b) => {
                    if usize::from(len) < prefix.len() {
                        prefix[usize::from(len)] = b;
                    }
                    Scan::Osc {
                        len: len.saturating_add(1),
                        prefix,
                    }
                }
                (Scan::OscEscape { len, prefix }, b'\\') => {
                    marks.prompt = osc_prompt_kind(len, prefix).or(marks.prompt);
                    Scan::Ground
                }
                (Scan::OscEscape { .. }, b']') => Scan::Osc {
                    len: 0,
                    prefix: [0; 6],
                },
                (Scan::OscEscape { .. }, _) => Scan::Ground,
            };
        }
        marks
    }
}

/// `133;X...` → `X`.
fn osc_prompt_kind(len: u8, prefix: [u8; 6]) -> Option<u8> {
    (len >= 5 && prefix.starts_with(b"133;"))
        .then_some(prefix[4])
        .filter(|k| b"ABCD".contains(k))
}

#[cfg(test)]
mod tests;
