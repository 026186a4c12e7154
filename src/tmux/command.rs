//! Typed tmux commands: each a small value that builds its argv and parses
//! its reply lines, so a forked `tmux` (`Tmux::run_cmd`), a control client
//! (`ControlClient::run`) and the fake tmux all speak the same commands.

use super::control::{PaneId, TmuxSessionId, WindowId};
use super::{LIST_PANES_FORMAT, PaneInfo, parse_list_panes};

/// A tmux command and how to read what it prints.
pub trait TmuxCommand {
    type Output;

    /// The argv after tmux's global options, command name first.
    fn args(&self) -> Vec<String>;

    /// Reads the reply: stdout lines of a forked tmux, or the body of a
    /// control-mode `%begin`/`%end` block (both without line endings).
    fn parse(&self, lines: &[Vec<u8>]) -> Result<Self::Output, ParseError>;

    /// tmux 3.3 writes some notifications (`%pause`, `%continue`) inside
    /// the reply block of the command that caused them; a control client
    /// re-reads `%` lines of such a reply as notifications.
    fn notifications_in_reply(&self) -> bool {
        false
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected reply to `tmux {command}`: {reason}")]
pub struct ParseError {
    pub command: String,
    pub reason: String,
}

impl ParseError {
    fn new(command: &str, reason: impl Into<String>) -> Self {
        ParseError {
            command: command.to_owned(),
            reason: reason.into(),
        }
    }
}

/// What a command acts on. Names are matched exactly, never as a prefix or
/// pattern; ids are the surest (they survive renames).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `=NAME:`: the session of exactly this name, and where tmux wants a
    /// window or pane, its current window and active pane. (Plain `=NAME`
    /// only works where tmux expects a session: `send-keys -t =NAME` says
    /// "can't find pane", `set-option -t =NAME` "no such session".)
    Session(String),
    TmuxSessionId(TmuxSessionId),
    Window(WindowId),
    Pane(PaneId),
}

impl Target {
    pub fn to_arg(&self) -> String {
        match self {
            Target::Session(name) => format!("={name}:"),
            Target::TmuxSessionId(id) => id.to_string(),
            Target::Window(id) => id.to_string(),
            Target::Pane(id) => id.to_string(),
        }
    }
}

fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn expect_empty(command: &str, lines: &[Vec<u8>]) -> Result<(), ParseError> {
    match lines {
        [] => Ok(()),
        [first, ..] => Err(ParseError::new(
            command,
            format!(
                "expected no output, got {:?}",
                String::from_utf8_lossy(first)
            ),
        )),
    }
}

fn text_lines(lines: &[Vec<u8>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

/// A typed command's argv, carried to a control client someone else owns
/// (a session's actor: `route::Lender`) and run there as given; the reply's
/// lines go back to the asker, who parses them with the command it has.
/// Made only from a `TmuxCommand`, so no raw argv travels this way.
#[derive(Clone, Debug)]
pub struct Carried {
    args: Vec<String>,
}

impl Carried {
    pub fn of<C: TmuxCommand>(command: &C) -> Self {
        Carried {
            args: command.args(),
        }
    }
}

impl TmuxCommand for Carried {
    type Output = Vec<Vec<u8>>;

    fn args(&self) -> Vec<String> {
        self.args.clone()
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, ParseError> {
        Ok(lines.to_vec())
    }
}

/// Implements `TmuxCommand` for a command that prints nothing.
macro_rules! silent_command {
    ($type:ty, $name:literal) => {
        impl TmuxCommand for $type {
            type Output = ();
            fn args(&self) -> Vec<String> {
                self.argv()
            }
            fn parse(&self, lines: &[Vec<u8>]) -> Result<(), ParseError> {
                expect_empty($name, lines)
            }
        }
    };
}

/// `send-keys -t T -- KEY...`: tmux key names (`Enter`, `C-c`), validated
/// by the caller (`validate_key`). Keys go to the pane, not the key table.
#[derive(Clone, Debug)]
pub struct SendKeys {
    pub target: Target,
    pub keys: Vec<String>,
}

impl SendKeys {
    fn argv(&self) -> Vec<String> {
        let mut args = owned(&["send-keys", "-t", &self.target.to_arg(), "--"]);
        args.extend(self.keys.iter().cloned());
        args
    }
}
silent_command!(SendKeys, "send-keys");

/// `send-keys -l -- TEXT`: text typed literally (UTF-8; a `\n` arrives as
/// C-j, i.e. the byte 0x0a).
#[derive(Clone, Debug)]
pub struct SendLiteral {
    pub target: Target,
    pub text: String,
}

impl SendLiteral {
    /// The text as commands of at most `max_bytes` of text each (cut at
    /// character boundaries), to keep each command, and the time tmux
    /// spends on it, small.
    pub fn chunked(target: &Target, text: &str, max_bytes: usize) -> Vec<SendLiteral> {
        let max_bytes = max_bytes.max(4);
        let mut chunks = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = rest.len().min(max_bytes);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (chunk, tail) = rest.split_at(cut);
            chunks.push(SendLiteral {
                target: target.clone(),
                text: chunk.to_owned(),
            });
            rest = tail;
        }
        chunks
    }

    fn argv(&self) -> Vec<String> {
        owned(&[
            "send-keys",
            "-t",
            &self.target.to_arg(),
            "-l",
            "--",
            &self.text,
        ])
    }
}
silent_command!(SendLiteral, "send-keys");

/// `send-keys -H 1b 5b ...`: raw bytes for the pane, any value (NUL too).
#[derive(Clone, Debug)]
pub struct SendHex {
    pub target: Target,
    pub bytes: Vec<u8>,
}

impl SendHex {
    /// At most `max_bytes` bytes per command (each costs 3 bytes of line).
    pub fn chunked(target: &Target, bytes: &[u8], max_bytes: usize) -> Vec<SendHex> {
        bytes
            .chunks(max_bytes.max(1))
            .map(|chunk| SendHex {
                target: target.clone(),
                bytes: chunk.to_vec(),
            })
            .collect()
    }

    fn argv(&self) -> Vec<String> {
        let mut args = owned(&["send-keys", "-t", &self.target.to_arg(), "-H"]);
        args.extend(self.bytes.iter().map(|b| format!("{b:02x}")));
        args
    }
}
silent_command!(SendHex, "send-keys");

/// A line number for `capture-pane -S`/`-E`: 0 is the first visible line,
/// negative numbers reach into history; `Edge` is the start of history
/// (`-S -`) or the end of the screen (`-E -`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineBound {
    Line(i64),
    Edge,
}

impl LineBound {
    fn to_arg(self) -> String {
        match self {
            LineBound::Line(n) => n.to_string(),
            LineBound::Edge => "-".to_owned(),
        }
    }
}

/// `capture-pane -p`: the pane's lines, raw bytes (with `escapes`, SGR
/// sequences for colours and attributes, as a re-seed needs).
#[derive(Clone, Debug)]
pub struct CapturePane {
    pub target: Target,
    /// `-e`: include escape sequences for text and background attributes.
    pub escapes: bool,
    /// `-J`: join wrapped lines and keep trailing spaces.
    pub join: bool,
    pub start: Option<LineBound>,
    pub end: Option<LineBound>,
}

impl CapturePane {
    /// The visible screen, plain text.
    pub fn screen(target: Target) -> Self {
        CapturePane {
            target,
            escapes: false,
            join: false,
            start: None,
            end: None,
        }
    }
}

impl TmuxCommand for CapturePane {
    type Output = Vec<Vec<u8>>;

    fn args(&self) -> Vec<String> {
        let mut args = owned(&["capture-pane", "-p", "-t", &self.target.to_arg()]);
        if self.escapes {
            args.push("-e".into());
        }
        if self.join {
            args.push("-J".into());
        }
        for (flag, bound) in [("-S", self.start), ("-E", self.end)] {
            if let Some(bound) = bound {
                args.extend([flag.to_owned(), bound.to_arg()]);
            }
        }
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Self::Output, ParseError> {
        Ok(lines.to_vec())
    }
}

/// `capture-pane -p -e -N [-a -q] -t PANE`: a pane's visible rows as a
/// re-seed needs them: colours and attributes (carried from row to row),
/// trailing blanks kept (a coloured blank is visible); with `alternate`,
/// the normal screen saved behind a program on the alternate one.
#[derive(Clone, Debug)]
pub struct CaptureSeed {
    pub pane: PaneId,
    pub alternate: bool,
}

impl TmuxCommand for CaptureSeed {
    type Output = Vec<Vec<u8>>;

    fn args(&self) -> Vec<String> {
        let mut args = owned(&["capture-pane", "-p", "-e", "-N"]);
        if self.alternate {
            args.extend(["-a".to_owned(), "-q".to_owned()]);
        }
        args.extend(["-t".to_owned(), self.pane.to_string()]);
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Self::Output, ParseError> {
        Ok(lines.to_vec())
    }
}

/// `display-message -p -t T -- FORMAT`: one format expanded by tmux. The
/// format is a format: `#` sequences in it are expanded, by design.
/// tmux 3.3 does not fail on a missing target: it expands the format with
/// no session, so this cannot tell whether a target exists.
#[derive(Clone, Debug)]
pub struct DisplayMessage {
    pub target: Option<Target>,
    pub format: String,
}

impl TmuxCommand for DisplayMessage {
    /// The expansion; lines joined with `\n` if the format makes several.
    type Output = String;

    fn args(&self) -> Vec<String> {
        let mut args = owned(&["display-message", "-p"]);
        if let Some(target) = &self.target {
            args.extend(["-t".to_owned(), target.to_arg()]);
        }
        args.extend(["--".to_owned(), self.format.clone()]);
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<String, ParseError> {
        Ok(text_lines(lines).join("\n"))
    }
}

/// Which panes `list-panes` covers.
#[derive(Clone, Debug)]
pub enum PaneScope {
    /// `-a`: every pane on the server.
    All,
    /// `-s -t SESSION`: every pane of the session.
    Session(Target),
    /// `-t WINDOW`: the panes of one window.
    Window(Target),
}

impl PaneScope {
    fn args(&self) -> Vec<String> {
        match self {
            PaneScope::All => owned(&["-a"]),
            PaneScope::Session(t) => owned(&["-s", "-t", &t.to_arg()]),
            PaneScope::Window(t) => owned(&["-t", &t.to_arg()]),
        }
    }
}

/// `list-panes -F FORMAT`: one line per pane.
#[derive(Clone, Debug)]
pub struct ListPanes {
    pub scope: PaneScope,
    pub format: String,
}

impl TmuxCommand for ListPanes {
    type Output = Vec<String>;

    fn args(&self) -> Vec<String> {
        let mut args = owned(&["list-panes"]);
        args.extend(self.scope.args());
        args.extend(["-F".to_owned(), self.format.clone()]);
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Vec<String>, ParseError> {
        Ok(text_lines(lines))
    }
}

/// `list-panes` with the discovery format, parsed into `PaneInfo`s.
#[derive(Clone, Debug)]
pub struct ListPaneInfo {
    pub scope: PaneScope,
}

impl TmuxCommand for ListPaneInfo {
    type Output = Vec<PaneInfo>;

    fn args(&self) -> Vec<String> {
        ListPanes {
            scope: self.scope.clone(),
            format: LIST_PANES_FORMAT.to_owned(),
        }
        .args()
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Vec<PaneInfo>, ParseError> {
        Ok(parse_list_panes(&text_lines(lines).join("\n")))
    }
}

mod create;
pub mod restore;
mod server;
mod settle;
mod terminal;
mod window;
pub use create::NewSession;
pub use server::{
    ClientFlag, HasSession, KillPane, KillSession, ListSessions, OptionScope, PaneAction,
    PinStatusInterval, RefreshClient, ResizeWindow, SessionSummary, SetOption, ShowOptions,
};
pub use settle::{CheckStep, PaneFacts, PaneLook, PaneMode};
pub use terminal::PaneState;
pub use window::{PaneRow, WindowPanes};

#[cfg(test)]
mod tests;
