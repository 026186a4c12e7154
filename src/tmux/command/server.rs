//! Typed commands about sessions, windows, options and the control client
//! itself (as opposed to a pane's input and contents).

use super::{ParseError, Target, TmuxCommand, expect_empty, owned, text_lines};
use crate::tmux::control::{PaneId, TmuxSessionId};

/// `resize-window -t T -x COLS -y ROWS`: sets the window's size (and
/// makes its `window-size` manual), for an API request that asks for it.
#[derive(Clone, Debug)]
pub struct ResizeWindow {
    pub target: Target,
    pub cols: u16,
    pub rows: u16,
}

impl ResizeWindow {
    fn argv(&self) -> Vec<String> {
        owned(&[
            "resize-window",
            "-t",
            &self.target.to_arg(),
            "-x",
            &self.cols.to_string(),
            "-y",
            &self.rows.to_string(),
        ])
    }
}
silent_command!(ResizeWindow, "resize-window");

/// `kill-session -t T`.
#[derive(Clone, Debug)]
pub struct KillSession {
    pub target: Target,
}

impl KillSession {
    fn argv(&self) -> Vec<String> {
        owned(&["kill-session", "-t", &self.target.to_arg()])
    }
}
silent_command!(KillSession, "kill-session");

/// `has-session -t T`: fails with "can't find session" when it is gone.
#[derive(Clone, Debug)]
pub struct HasSession {
    pub target: Target,
}

impl HasSession {
    fn argv(&self) -> Vec<String> {
        owned(&["has-session", "-t", &self.target.to_arg()])
    }
}
silent_command!(HasSession, "has-session");

/// `kill-pane -t %N`: ends a pane tmux keeps after its program exited
/// (`remain-on-exit`), once tmuxd has read its exit status.
#[derive(Clone, Debug)]
pub struct KillPane {
    pub pane: PaneId,
}

impl KillPane {
    fn argv(&self) -> Vec<String> {
        owned(&["kill-pane", "-t", &self.pane.to_string()])
    }
}
silent_command!(KillPane, "kill-pane");

/// Which options table `set-option`/`show-options` use.
#[derive(Clone, Debug)]
pub enum OptionScope {
    /// `-s`: server options.
    Server,
    /// `-g`: global session options.
    GlobalSession,
    /// `-t T`: one session's options.
    Session(Target),
    /// `-w -t T`: one window's options.
    Window(Target),
    /// `-p -t T`: one pane's options.
    Pane(Target),
}

impl OptionScope {
    fn args(&self) -> Vec<String> {
        match self {
            OptionScope::Server => owned(&["-s"]),
            OptionScope::GlobalSession => owned(&["-g"]),
            OptionScope::Session(t) => owned(&["-t", &t.to_arg()]),
            OptionScope::Window(t) => owned(&["-w", "-t", &t.to_arg()]),
            OptionScope::Pane(t) => owned(&["-p", "-t", &t.to_arg()]),
        }
    }
}

/// `set-option [SCOPE] NAME VALUE`, or `-u` (unset) when `value` is None.
/// The value is literal (no `-F`): `#{...}` in it is stored as written.
#[derive(Clone, Debug)]
pub struct SetOption {
    pub scope: OptionScope,
    /// tmux expands the name as a format: only tmuxd's own names.
    pub name: &'static str,
    pub value: Option<String>,
}

impl SetOption {
    fn argv(&self) -> Vec<String> {
        let mut args = owned(&["set-option"]);
        args.extend(self.scope.args());
        match &self.value {
            Some(value) => args.extend(["--".to_owned(), self.name.to_owned(), value.clone()]),
            None => args.extend(["-u".to_owned(), "--".to_owned(), self.name.to_owned()]),
        }
        args
    }
}
silent_command!(SetOption, "set-option");

/// `set-option -o -F -t T status-interval '#{status-interval}'`: gives
/// session T a value of its own equal to the one it inherits, and fails
/// ("already set") when T already has one. Unsetting it again right after
/// changes nothing but restarts every client's status timer in the same
/// instant (see `supervisor::status_timers`).
#[derive(Clone, Debug)]
pub struct PinStatusInterval {
    pub target: Target,
}

impl PinStatusInterval {
    fn argv(&self) -> Vec<String> {
        owned(&[
            "set-option",
            "-o",
            "-F",
            "-t",
            &self.target.to_arg(),
            "status-interval",
            "#{status-interval}",
        ])
    }
}
silent_command!(PinStatusInterval, "set-option");

/// `show-options -v -q [SCOPE] NAME`: one option's value; `None` when it
/// is not set (`-q` makes an unknown user option quiet instead of an error).
#[derive(Clone, Debug)]
pub struct ShowOptions {
    pub scope: OptionScope,
    /// tmux expands the name as a format: only tmuxd's own names.
    pub name: &'static str,
}

impl TmuxCommand for ShowOptions {
    type Output = Option<String>;

    fn args(&self) -> Vec<String> {
        let mut args = owned(&["show-options", "-v", "-q"]);
        args.extend(self.scope.args());
        args.extend(["--".to_owned(), self.name.to_owned()]);
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Option<String>, ParseError> {
        Ok((!lines.is_empty()).then(|| text_lines(lines).join("\n")))
    }
}

/// A control client flag for `refresh-client -f` (or `attach-session -f`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientFlag {
    /// `pause-after=N`: pause a pane once its output is N seconds behind
    /// (`%extended-output` replaces `%output`), rather than disconnect.
    PauseAfter(u32),
    /// `!pause-after`.
    NoPauseAfter,
    /// `no-output`: no pane output at all (a discovery-only client).
    NoOutput,
    /// `!no-output`.
    Output,
}

impl ClientFlag {
    pub fn to_arg(self) -> String {
        match self {
            ClientFlag::PauseAfter(seconds) => format!("pause-after={seconds}"),
            ClientFlag::NoPauseAfter => "!pause-after".to_owned(),
            ClientFlag::NoOutput => "no-output".to_owned(),
            ClientFlag::Output => "!no-output".to_owned(),
        }
    }

    /// The comma-separated list `-f` takes.
    pub fn list(flags: &[ClientFlag]) -> String {
        let words: Vec<String> = flags.iter().map(|f| f.to_arg()).collect();
        words.join(",")
    }
}

/// What `refresh-client -A` does to a pane's output for this client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneAction {
    On,
    Off,
    /// Resume after `%pause` (the owner re-seeds the pane's screen first).
    Continue,
    Pause,
}

/// `refresh-client` for a control client. There is deliberately no way to
/// send `-C`: a control client that sets a size takes part in sizing the
/// window, which tmuxd must never do.
#[derive(Clone, Debug)]
pub enum RefreshClient {
    /// `-f FLAGS`.
    Flags(Vec<ClientFlag>),
    /// `-A '%N:ACTION'`.
    Pane { pane: PaneId, action: PaneAction },
    // No `-B` subscriptions: tmux before 3.7 crashes when a client with
    // one loses its session (tmux GitHub issue 4916).
}

impl RefreshClient {
    pub fn continue_pane(pane: PaneId) -> Self {
        RefreshClient::Pane {
            pane,
            action: PaneAction::Continue,
        }
    }

    fn argv(&self) -> Vec<String> {
        let (flag, value) = match self {
            RefreshClient::Flags(flags) => ("-f", ClientFlag::list(flags)),
            RefreshClient::Pane { pane, action } => {
                let action = match action {
                    PaneAction::On => "on",
                    PaneAction::Off => "off",
                    PaneAction::Continue => "continue",
                    PaneAction::Pause => "pause",
                };
                ("-A", format!("{pane}:{action}"))
            }
        };
        owned(&["refresh-client", flag, &value])
    }
}

impl TmuxCommand for RefreshClient {
    type Output = ();

    fn args(&self) -> Vec<String> {
        self.argv()
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<(), ParseError> {
        expect_empty("refresh-client", lines)
    }

    fn notifications_in_reply(&self) -> bool {
        true
    }
}

/// One session as `ListSessions` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSummary {
    pub id: TmuxSessionId,
    pub name: String,
    /// Clients attached (tmuxd's own control clients count).
    pub attached: u32,
    pub windows: u32,
    /// Seconds since the epoch.
    pub created: u64,
}

/// `list-sessions`: every session on the server. The name comes last so a
/// tab inside it cannot shift the other fields.
#[derive(Clone, Debug, Default)]
pub struct ListSessions;

const LIST_SESSIONS_FORMAT: &str =
    "#{session_id}\t#{session_attached}\t#{session_windows}\t#{session_created}\t#{session_name}";

impl TmuxCommand for ListSessions {
    type Output = Vec<SessionSummary>;

    fn args(&self) -> Vec<String> {
        owned(&["list-sessions", "-F", LIST_SESSIONS_FORMAT])
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Vec<SessionSummary>, ParseError> {
        text_lines(lines)
            .iter()
            .map(|line| {
                parse_session_line(line).ok_or_else(|| {
                    ParseError::new("list-sessions", format!("cannot read line {line:?}"))
                })
            })
            .collect()
    }
}

fn parse_session_line(line: &str) -> Option<SessionSummary> {
    let mut fields = line.splitn(5, '\t');
    Some(SessionSummary {
        id: fields.next()?.parse().ok()?,
        attached: fields.next()?.parse().ok()?,
        windows: fields.next()?.parse().ok()?,
        created: fields.next()?.parse().ok()?,
        name: fields.next()?.to_owned(),
    })
}
