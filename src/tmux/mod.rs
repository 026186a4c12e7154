//! The one place tmuxd runs tmux: argv building (binary, socket, `-u`,
//! exact targets), a clean child environment, timeouts, and typed commands
//! that parse their own output.

pub mod activity;
mod blueprint;
mod budget;
pub mod command;
pub mod control;
mod format;
mod keys;
mod names;
mod panes;
mod probe;
mod refusal;
pub mod route;
pub mod server_client;
mod socket;
mod tag;

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::metrics::{Metrics, Outcome, Via};
pub use blueprint::{Blueprint, PaneBlueprint, WindowBlueprint};
pub use command::NewSession;
pub use keys::{KeyError, validate_key};
pub use names::{NameError, validate_session_name};
pub use panes::{
    LIST_PANES_FORMAT, PaneInfo, PaneRect, SessionView, parse_list_panes, session_views,
};
pub use probe::{ProbeAttach, ProbeError};
pub use refusal::Refusal;

/// Variables tmux sets inside its panes; a child that inherits them would
/// talk to (or nest inside) the wrong server.
const TMUX_PANE_ENV: [&str; 2] = ["TMUX", "TMUX_PANE"];

/// tmuxd's own settings (`TMUXD_TOKEN`, `TMUXD_READ_TOKEN`, ...) start with this.
const OWN_ENV_PREFIX: &str = "TMUXD_";

/// What every tmux child must not inherit: tmux's pane variables and every
/// `TMUXD_*` variable. The first tmux command starts the server, the server
/// hands its environment to every pane, and a token there would let anyone
/// who can read a screen print it (`printenv TMUXD_TOKEN`).
pub fn child_env_removals() -> Vec<OsString> {
    let own = std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| name.to_str().is_some_and(|n| n.starts_with(OWN_ENV_PREFIX)));
    TMUX_PANE_ENV
        .iter()
        .map(OsString::from)
        .chain(own)
        .collect()
}

/// Which tmux server to talk to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Socket {
    /// tmux's own default socket.
    Default,
    /// `-L NAME`: a named socket in tmux's socket directory.
    Name(String),
    /// `-S PATH`: an explicit socket path.
    Path(PathBuf),
}

/// The session option marking a session whose dead panes tmuxd reads and
/// kills (set on the sessions it creates; see `session::actor::exits`).
pub const KEEP_EXIT_OPTION: &str = "@tmuxd-keep-exit";

/// How to reach tmux: shared by every invocation, cheap to clone.
#[derive(Clone, Debug)]
pub struct Tmux {
    bin: PathBuf,
    socket: Socket,
    config_file: Option<PathBuf>,
    timeout: Duration,
    /// Where each command's outcome and latency are counted, if anywhere.
    metrics: Option<Metrics>,
    /// How control clients attach to this server (`control::ClientPath`),
    /// chosen from `tmux -V` once.
    client_path: std::sync::Arc<control::PathCell>,
    /// Control clients are `tmux -C` children whatever the version.
    child_clients_only: bool,
    /// The handshake turn and what this server's clients heard.
    handshake: std::sync::Arc<control::handshake::Handshake>,
    /// Settled-screen checks this server's session actors may still ask.
    checks: std::sync::Arc<budget::CheckBudget>,
    /// Native control clients connecting at once (`control::pace`).
    attach_pace: std::sync::Arc<control::pace::AttachPace>,
    /// The client for what concerns the whole server, once the heat owner
    /// started one (`server_client`).
    server_client: std::sync::Arc<std::sync::OnceLock<server_client::ServerClient>>,
}

#[derive(Debug, thiserror::Error)]
pub enum TmuxError {
    #[error("cannot run {bin}: {source}")]
    Spawn {
        bin: PathBuf,
        source: std::io::Error,
    },
    #[error("`tmux {command}` timed out after {} ms", timeout.as_millis())]
    Timeout { command: String, timeout: Duration },
    #[error("no tmux server is running ({stderr})")]
    NoServer { stderr: String },
    /// tmux refused the command: `refusal` is what its `stderr` means.
    #[error("`tmux {command}` failed: {stderr}")]
    Failed {
        command: String,
        stderr: String,
        refusal: Refusal,
    },
    #[error(transparent)]
    UnexpectedOutput(#[from] command::ParseError),
}

impl TmuxError {
    /// What tmux's refusal meant; None when tmux did not refuse (it did
    /// not run, or did not answer).
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            TmuxError::Failed { refusal, .. } => Some(*refusal),
            _ => None,
        }
    }

    /// tmux refused a target that does not exist (or no server runs any).
    pub fn is_missing_session(&self) -> bool {
        matches!(self, TmuxError::NoServer { .. }) || self.refusal() == Some(Refusal::NoTarget)
    }

    /// tmux refused `new-session` because the name is in use.
    pub fn is_duplicate_session(&self) -> bool {
        self.refusal() == Some(Refusal::DuplicateSession)
    }
}

/// What became of a session, as tmux answers `has-session`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionStatus {
    Alive,
    Gone,
    /// No tmux server runs any more.
    NoServer,
}

/// What `new_session` did besides making the session.
#[derive(Debug)]
pub struct Made {
    /// tmux keeps its dead panes (`keep_exit` asked, and a tmux that runs
    /// command sequences).
    pub kept_exit: bool,
    /// Marked with the `tag` asked for; its panes, as `list_panes` gives them.
    pub tagged_panes: Option<Vec<PaneInfo>>,
}

/// Which lines `capture-pane` prints.
#[derive(Clone, Copy, Debug)]
pub enum CaptureRange {
    /// The `lines` history lines just above the visible screen.
    History { lines: usize },
}

impl Tmux {
    /// The tmux `[tmux]` names: its binary, socket, config file, command
    /// timeout and settled-screen check rate.
    pub fn from_config(config: &crate::config::TmuxConfig) -> Tmux {
        let socket = match (&config.socket_name, &config.socket_path) {
            (Some(name), _) => Socket::Name(name.clone()),
            (None, Some(path)) => Socket::Path(path.clone()),
            (None, None) => Socket::Default,
        };
        Tmux::new(
            config.bin.clone(),
            socket,
            config.config_file.clone(),
            Duration::from_millis(config.command_timeout_ms),
        )
        .with_screen_checks(config.screen_checks_per_s)
    }

    pub fn new(
        bin: PathBuf,
        socket: Socket,
        config_file: Option<PathBuf>,
        timeout: Duration,
    ) -> Self {
        Tmux {
            bin,
            socket,
            config_file,
            timeout,
            metrics: None,
            client_path: Default::default(),
            child_clients_only: false,
            handshake: Default::default(),
            checks: Default::default(),
            attach_pace: Default::default(),
            server_client: Default::default(),
        }
    }

    /// At most `per_second` settled-screen checks a second on this server,
    /// all sessions together; 0 turns them off.
    pub fn with_screen_checks(mut self, per_second: u32) -> Self {
        self.checks = std::sync::Arc::new(budget::CheckBudget::new(per_second));
        self
    }

    pub(crate) fn check_budget(&self) -> &budget::CheckBudget {
        &self.checks
    }

    /// Control clients as `tmux -C` children, never tmuxd's own (for
    /// comparisons, and tests of the child path on real tmux).
    pub fn with_child_clients(mut self) -> Self {
        self.child_clients_only = true;
        self
    }

    /// How control clients attach to this server.
    pub async fn client_path(&self) -> control::ClientPath {
        if self.child_clients_only {
            return control::ClientPath::Child {
                why: "asked for".to_owned(),
            };
        }
        self.client_path.get(self.version()).await
    }

    /// The server refused tmuxd's own client: children from now on.
    pub(crate) fn demote_client_path(&self, why: String) {
        self.client_path.demote(why);
    }

    /// Counts every command run through this `Tmux` (and its control clients).
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    pub(crate) fn metrics(&self) -> Option<&Metrics> {
        self.metrics.as_ref()
    }

    /// This server's attaches in flight (`control::pace`).
    pub(crate) fn attach_pace(&self) -> &control::pace::AttachPace {
        &self.attach_pace
    }

    /// The client for what concerns the whole server, if one was started.
    pub fn server_client(&self) -> Option<&server_client::ServerClient> {
        self.server_client.get()
    }

    /// Lends `client` to every clone of this `Tmux` (the first one stays).
    pub fn set_server_client(&self, client: server_client::ServerClient) {
        let _ = self.server_client.set(client);
    }

    /// This server's handshake turn (`control::handshake`).
    pub(crate) fn handshake(&self) -> &std::sync::Arc<control::handshake::Handshake> {
        &self.handshake
    }

    /// Global options every invocation carries, before the command name.
    fn global_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-u".into()];
        match &self.socket {
            Socket::Default => {}
            Socket::Name(name) => args.extend(["-L".into(), name.into()]),
            Socket::Path(path) => args.extend(["-S".into(), path.into()]),
        }
        if let Some(file) = &self.config_file {
            args.extend(["-f".into(), file.into()]);
        }
        args
    }

    /// `tmux` with the global options and a clean environment, for the
    /// caller to add a command to. Killed if dropped before it is waited.
    pub(in crate::tmux) fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.bin);
        command.args(self.global_args()).kill_on_drop(true);
        for var in child_env_removals() {
            command.env_remove(var);
        }
        command
    }

    /// Runs one typed command in a child `tmux` and parses its output (the
    /// same value a control client can run: `ControlClient::run`).
    pub async fn run_cmd<C: command::TmuxCommand>(&self, cmd: &C) -> Result<C::Output, TmuxError> {
        let stdout = self.run_bytes(cmd.args()).await?;
        let mut lines: Vec<Vec<u8>> = stdout.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        if lines.last().is_some_and(Vec::is_empty) {
            lines.pop();
        }
        Ok(cmd.parse(&lines)?)
    }

    /// Runs one tmux command given as raw argv and returns its stdout; for
    /// `tmux/` itself only: everyone else runs typed commands (`run_cmd`).
    pub(in crate::tmux) async fn run<I, S>(&self, args: I) -> Result<String, TmuxError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let stdout = self.run_bytes(args).await?;
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    }

    /// Runs typed commands in one tmux call (one fork); tmux stops at the
    /// first that fails. What they print is not read.
    pub async fn run_in_one<C: command::TmuxCommand>(
        &self,
        commands: &[C],
    ) -> Result<(), TmuxError> {
        let argvs: Vec<Vec<String>> = commands.iter().map(|c| c.args()).collect();
        self.run_sequence(&argvs).await.map(drop)
    }

    /// Runs several commands in one tmux call (one fork), each argument
    /// escaped as `run` does, with real `;` separators between them. tmux
    /// stops at the first command that fails. For `tmux/` itself only.
    pub(in crate::tmux) async fn run_sequence<S: AsRef<OsStr>>(
        &self,
        commands: &[Vec<S>],
    ) -> Result<String, TmuxError> {
        let mut args: Vec<OsString> = Vec::new();
        for command in commands {
            if !args.is_empty() {
                args.push(";".into());
            }
            args.extend(command.iter().map(|a| argv_arg(a.as_ref())));
        }
        let stdout = self.run_escaped(args).await?;
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    }

    async fn run_bytes<I, S>(&self, args: I) -> Result<Vec<u8>, TmuxError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| argv_arg(a.as_ref())).collect();
        self.run_escaped(args).await
    }

    /// Runs argv words already escaped (see `argv_arg`), counted in the
    /// metrics by the first word (the command, or a sequence's first).
    async fn run_escaped(&self, args: Vec<OsString>) -> Result<Vec<u8>, TmuxError> {
        let started = std::time::Instant::now();
        let result = self.run_child(&args).await;
        if let Some(metrics) = &self.metrics {
            let name = args.first().map(|a| a.to_string_lossy());
            let outcome = match &result {
                Ok(_) => Outcome::Ok,
                Err(TmuxError::Timeout { .. }) => Outcome::Timeout,
                Err(TmuxError::Spawn { .. } | TmuxError::NoServer { .. }) => Outcome::Unavailable,
                Err(_) => Outcome::Failed,
            };
            let name = name.as_deref().unwrap_or("");
            metrics.tmux_command(name, Via::Fork, outcome, started.elapsed());
        }
        result
    }

    async fn run_child(&self, args: &[OsString]) -> Result<Vec<u8>, TmuxError> {
        let command_line = args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let mut command = self.command();
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = command.spawn().map_err(|source| TmuxError::Spawn {
            bin: self.bin.clone(),
            source,
        })?;
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(result) => result.map_err(|source| TmuxError::Spawn {
                bin: self.bin.clone(),
                source,
            })?,
            Err(_) => {
                return Err(TmuxError::Timeout {
                    command: command_line,
                    timeout: self.timeout,
                });
            }
        };
        if output.status.success() {
            return Ok(output.stdout);
        }
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if is_no_server(&stderr) {
            return Err(TmuxError::NoServer { stderr });
        }
        let stderr = if stderr.is_empty() {
            format!("exited with {}", output.status)
        } else {
            stderr
        };
        Err(TmuxError::Failed {
            command: command_line,
            refusal: Refusal::of(&stderr),
            stderr,
        })
    }

    /// Every pane of every session, in one call. No server means no panes.
    pub async fn list_panes(&self) -> Result<Vec<PaneInfo>, TmuxError> {
        let all = command::ListPaneInfo {
            scope: command::PaneScope::All,
        };
        match self.run_cmd(&all).await {
            Ok(panes) => Ok(panes),
            // A server whose last session just ended says "no current target".
            Err(e) if e.is_missing_session() => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Creates the session, with what `keep_exit` and `tag` ask for in the
    /// same tmux call, a command sequence (one fork: each costs ~15 ms with
    /// 200 control clients attached).
    pub async fn new_session(&self, request: &NewSession<'_>) -> Result<Made, TmuxError> {
        // A new session is announced to every control client (see `control::handshake`).
        let _turn = self.handshake_turn().await;
        let args = command::TmuxCommand::args(request);
        let session = pane_target(request.name);
        // `-w`: the window's option; without it, the session's (user) option.
        let set = |window: bool, name: &str, value: &str| -> Vec<String> {
            let scope: &[&str] = if window { &["-w"] } else { &[] };
            let mut argv = vec!["set-option".to_owned(), "-q".to_owned()];
            argv.extend(scope.iter().map(|s| (*s).to_owned()));
            argv.extend(["-t", session.as_str(), name, value].map(str::to_owned));
            argv
        };
        let mut commands = vec![args];
        if request.keep_exit {
            commands.extend([
                set(true, "remain-on-exit", "on"),
                set(true, "remain-on-exit-format", ""),
                set(false, KEEP_EXIT_OPTION, "1"),
            ]);
        }
        if let Some(id) = request.tag {
            commands.extend(tag::tag_and_list_args(request.name, id));
        }
        let out = self.run_sequence(&commands).await?;
        Ok(Made {
            kept_exit: request.keep_exit,
            tagged_panes: request.tag.map(|_| panes::parse_list_panes(&out)),
        })
    }

    /// Whether a session of exactly this name exists, and if not, whether
    /// the whole server is gone.
    pub async fn session_status(&self, name: &str) -> Result<SessionStatus, TmuxError> {
        match self.run_cmd(&has_session(name)).await {
            Ok(()) => Ok(SessionStatus::Alive),
            Err(TmuxError::NoServer { .. }) => Ok(SessionStatus::NoServer),
            Err(e) if e.is_missing_session() => Ok(SessionStatus::Gone),
            Err(e) => Err(e),
        }
    }

    /// Whether a session of exactly this name exists. No server means no.
    pub async fn has_session(&self, name: &str) -> Result<bool, TmuxError> {
        match self.run_cmd(&has_session(name)).await {
            Ok(()) => Ok(true),
            Err(e) if e.is_missing_session() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Kills one pane; its session ends with it if it was the last
    /// (`closes_session`).
    pub async fn kill_pane(
        &self,
        pane: control::PaneId,
        closes_session: bool,
    ) -> Result<(), TmuxError> {
        self.kill(&command::KillPane { pane }, closes_session).await
    }

    pub async fn kill_session(&self, name: &str) -> Result<(), TmuxError> {
        let target = command::Target::Session(name.to_owned());
        self.kill(&command::KillSession { target }, true).await
    }

    /// A kill takes the handshake turn (a closed session is announced to
    /// every control client), and one that closes a session keeps it until
    /// tmuxd's client on that session has left tmux.
    async fn kill<C: command::TmuxCommand<Output = ()>>(
        &self,
        command: &C,
        closes_session: bool,
    ) -> Result<(), TmuxError> {
        let turn = self.handshake_turn().await;
        let seen = self.handshake.detaches_heard();
        self.run_cmd(command).await?;
        if closes_session && turn.is_some() {
            self.handshake.until_detach_heard(seen, CLIENT_LEAVES).await;
        }
        Ok(())
    }

    /// The handshake turn (`control::handshake`), where control clients
    /// are `tmux -C` children. tmuxd's own clients have no handshake
    /// window to keep tmuxd's actions out of: none is taken for them.
    async fn handshake_turn(&self) -> Option<control::handshake::Turn> {
        match self.client_path().await.is_native() {
            true => None,
            false => Some(self.handshake.turn().await),
        }
    }

    /// Lines of the active pane, joined wrapped lines (`-J`), trailing
    /// spaces trimmed.
    pub async fn capture_pane(
        &self,
        name: &str,
        range: CaptureRange,
    ) -> Result<Vec<String>, TmuxError> {
        let target = command::Target::Session(name.to_owned());
        self.capture_history(target, range).await
    }

    /// As `capture_pane`, of one pane (a dead one that tmux still keeps).
    pub async fn capture_pane_by_id(
        &self,
        pane: control::PaneId,
        range: CaptureRange,
    ) -> Result<Vec<String>, TmuxError> {
        self.capture_history(command::Target::Pane(pane), range)
            .await
    }

    async fn capture_history(
        &self,
        target: command::Target,
        range: CaptureRange,
    ) -> Result<Vec<String>, TmuxError> {
        let CaptureRange::History { lines } = range;
        let lines = i64::try_from(lines).unwrap_or(i64::MAX);
        // Through the screen's first row (`-E 0`), which is then dropped:
        // tmux clamps a line above its history to the first row, so
        // `-E -1` with no history at all printed that row as history.
        // (A history line wrapped onto the screen goes with that row.)
        let capture = command::CapturePane {
            target,
            escapes: false,
            join: true,
            start: Some(command::LineBound::Line(-lines)),
            end: Some(command::LineBound::Line(0)),
        };
        let mut out = self.run_cmd(&capture).await?;
        out.pop();
        let text = |line: &Vec<u8>| String::from_utf8_lossy(line).trim_end().to_owned();
        Ok(out.iter().map(text).collect())
    }

    /// Refuses a tmux too old for control mode (3.2 added what tmuxd uses:
    /// `pause-after`, `%extended-output`, `refresh-client -A`). A tmux that
    /// cannot be run now is not refused: it may be installed later, and
    /// health and readiness say so meanwhile.
    pub async fn check_version(&self) -> Result<(), TooOld> {
        let Ok(version) = self.version().await else {
            return Ok(());
        };
        match parse_version(&version) {
            Some(found) if found < MIN_VERSION => Err(TooOld { version }),
            _ => Ok(()),
        }
    }

    /// `tmux -V`, for health and doctor output.
    pub async fn version(&self) -> Result<String, TmuxError> {
        Ok(self.run(["-V"]).await?.trim().to_owned())
    }
}

/// The oldest tmux whose control mode tmuxd can use.
const MIN_VERSION: (u32, u32) = (3, 2);

/// A tmux older than `MIN_VERSION`; `version` as `tmux -V` says it.
#[derive(Debug, thiserror::Error)]
#[error(
    "{version} is too old: tmuxd needs tmux {}.{} or newer (control mode)",
    MIN_VERSION.0,
    MIN_VERSION.1
)]
pub struct TooOld {
    pub version: String,
}

/// How long a kill holds the turn for tmuxd's client on the session to
/// leave tmux (see `control::handshake::until_detach_heard`).
const CLIENT_LEAVES: std::time::Duration = std::time::Duration::from_millis(250);

/// (major, minor) from `tmux 3.3a`, `tmux next-3.4`, `tmux 3.2-rc2`.
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let number = text
        .split_whitespace()
        .nth(1)?
        .trim_start_matches("next-")
        .trim_start_matches("openbsd-");
    let mut parts = number.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// Whether this `tmux -V` has the handshake crash (tmux issue 4980, fixed
/// in 3.7): a notification reaching a control client between its first and
/// last identify message. `None`: not a version tmuxd can read.
pub fn has_handshake_crash(version: &str) -> Option<bool> {
    parse_version(version).map(|found| found < (3, 7))
}

/// The crashes a client can trigger in this tmux, and which tmuxd avoids,
/// in one line, as `doctor` says them. `native`: tmuxd's own client
/// protocol (else a `tmux -C` child).
pub fn crash_conditions(version: &str, native: bool) -> &'static str {
    match (has_handshake_crash(version), native) {
        (Some(false), _) => "tmux 3.7 and later cannot crash on a control client's handshake",
        (_, true) => {
            "tmux < 3.7 can crash on a control client's handshake (tmux issue 4980) or a \
             subscription (4916): tmuxd's own client avoids both"
        }
        (_, false) => {
            "tmux < 3.7 can crash on a `tmux -C` child's handshake (tmux issue 4980): tmuxd \
             attaches when the server is quiet, but cannot stop other clients' actions"
        }
    }
}

/// `=NAME`: exactly this session, never a prefix or pattern match.
pub fn session_target(name: &str) -> String {
    format!("={name}")
}

/// `has-session` of exactly session `name`.
fn has_session(name: &str) -> command::HasSession {
    command::HasSession {
        target: command::Target::Session(name.to_owned()),
    }
}

/// `=NAME:`: the active pane of the session's current window.
pub fn pane_target(name: &str) -> String {
    format!("={name}:")
}

/// tmux splits a child's argv into command sequences at a trailing `;`;
/// escaped here so an argument (typed text, say) arrives whole.
fn argv_arg(arg: &OsStr) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    OsString::from_vec(control::quote::argv_arg(arg.as_bytes()))
}

fn is_no_server(stderr: &str) -> bool {
    stderr.contains("no server running")
        || stderr.contains("error connecting to")
        || stderr.starts_with("no sessions")
        || stderr.contains("server exited unexpectedly")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for (text, want) in [
            ("tmux 3.3a", Some((3, 3))),
            ("tmux 3.2", Some((3, 2))),
            ("tmux 2.9a", Some((2, 9))),
            ("tmux next-3.6", Some((3, 6))),
            ("tmux 3.2-rc2", Some((3, 2))),
            ("tmux master", None),
            ("", None),
        ] {
            assert_eq!(parse_version(text), want, "{text}");
        }
        assert!((2, 9) < MIN_VERSION && (3, 2) >= MIN_VERSION && (3, 10) > MIN_VERSION);
    }
}
