//! Every command, flag and argument of `tmuxd`, with the help text that
//! `--help`, the man page and the shell completions are generated from.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::engine::ArgValueCandidates;

use super::duration::{WaitLimit, parse_duration};

const AFTER_HELP: &str = "\
Client commands reach the daemon on its unix socket in the data dir (tmuxd.sock, which must
be yours, in a directory only you can write; no token needed there); over TCP only at --url
or $TMUXD_URL, and only with a token ($TMUXD_TOKEN, auth.token of the config file, or
--token, which other users can see in ps): the daemon must prove it holds the token before
anything else is sent. A URL without a scheme (127.0.0.1:7420) means http://. With no
socket, no daemon is running: start one with `tmuxd serve`.

A SESSION is a session id (sess_3) or the exact name of its tmux session (build).

Inside a session tmuxd made, $TMUXD_SOCKET names its daemon's socket (held to the same rules).

Exit status: 0 success (also when whoever reads the output has gone, as `| head` does);
1 error (no daemon running, the daemon is unreachable, refused or not proved yours, no such
session); 2 usage (unknown flag, bad value or one the daemon refuses (HTTP 400), ambiguous
SESSION, a URL without a token; nothing was changed); 3 `wait` timed out;
78 bad configuration (serve, config, doctor).";

/// `tmuxd --version`: the crate's version and the commit it was built from
/// (`build.rs`: a short hash, `-dirty` for a changed tree, or `unknown`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("TMUXD_COMMIT"), ")");

#[derive(Parser, Debug)]
#[command(
    name = "tmuxd",
    version = VERSION,
    about = "Supervise tmux sessions over HTTP, WebSocket and SSE",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Settings of the daemon commands (`serve`, `config`, `doctor`).
#[derive(Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// Config file (TOML); default $TMUXD_CONFIG, else ~/.config/tmuxd/config.toml if present.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Address to listen on, ADDR:PORT (default 127.0.0.1:7420).
    #[arg(long, value_name = "ADDR:PORT")]
    pub bind: Option<String>,
    /// Where the registry and event log live.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Append logs to this file instead of stderr (config key `log_file`).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
}

/// Where the daemon is and how to authenticate (client commands).
#[derive(Args, Debug, Clone, Default)]
pub struct Connect {
    /// The daemon's address over TCP: http://HOST:PORT, or HOST:PORT (default: its unix socket).
    #[arg(long, env = "TMUXD_URL", value_name = "URL")]
    pub url: Option<String>,
    /// Bearer token (read-write, or the read token for read-only commands); prefer
    /// $TMUXD_TOKEN: other users can read the command line.
    #[arg(
        long,
        env = "TMUXD_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,
}

/// `--json`, shared by the commands that print the API's answers.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct Format {
    /// Print the API's JSON answer instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The session a command acts on.
#[derive(Args, Debug, Clone)]
pub struct Target {
    /// Session id (sess_3) or exact tmux session name.
    #[arg(value_name = "SESSION", add = ArgValueCandidates::new(super::complete::sessions))]
    pub session: String,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the daemon.
    Serve(ServeArgs),
    /// Print the effective settings and where each came from.
    Config(ServeArgs),
    /// Check tmux (a probe session on a private socket), the data dir, the bind address and auth.
    Doctor(ServeArgs),
    /// List sessions: id, name, state and why, size, queued inputs, command, cwd, thought.
    Ls(LsArgs),
    /// Show one session's summary.
    Show(ShowArgs),
    /// Create a session: `tmuxd new --name build -- cargo build`.
    New(NewArgs),
    /// Track an existing tmux session by name; without one, list those tmuxd does not track.
    Adopt(AdoptArgs),
    /// Make the sessions lost with their tmux server (crash, kill-server, reboot) again, under the same names and ids.
    Restore(RestoreArgs),
    /// Stop tracking a session (its tmux session keeps running), or kill it with --kill.
    Rm(RmArgs),
    /// Type text into a session.
    Send(SendArgs),
    /// Press keys by their tmux names: `tmuxd keys build C-c Up Enter`.
    Keys(KeysArgs),
    /// Set a session's window size: `tmuxd resize build 120x40`.
    Resize(ResizeArgs),
    /// Publish a status line ("thought") for a session, e.g. from an agent's hook.
    Thought(ThoughtArgs),
    /// Print a session's screen.
    Snap(SnapArgs),
    /// Print the history above a session's screen, oldest line first.
    Scrollback(ScrollbackArgs),
    /// Wait until a session is idle, working, waiting, needs attention, exits, is quiet, or shows a line (exit 3 on timeout).
    Wait(WaitArgs),
    /// Show a session's screen, then its output as it comes, until Ctrl-C or the session ends.
    Watch(WatchArgs),
    /// Follow the event log: lifecycle and state changes of every session.
    Events(EventsArgs),
    /// Attach this terminal to a session with tmux itself (on the daemon's tmux server).
    Attach(AttachArgs),
    /// Print a link that logs a browser into the dashboard (works once, for a minute).
    Open(OpenArgs),
    /// List the fleet's peers (`[[fleet.peers]]`): status, since when, round trip, sessions.
    Hosts(HostsArgs),
    /// List or cancel the inputs queued for a session.
    #[command(subcommand)]
    Queue(QueueCommand),
    /// Print a shell completion script: `source <(tmuxd completions bash)`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory.
    Man(ManArgs),
    /// Run tmuxd as a systemd user service.
    #[command(subcommand)]
    Service(ServiceCommand),
    /// Let coding agents' own hooks tell tmuxd what they do: `tmuxd hooks install claude`.
    #[command(subcommand)]
    Hooks(HooksCommand),
}

impl Command {
    /// Where a client command reaches the daemon; `None` for the others.
    pub fn connect(&self) -> Option<&Connect> {
        Some(match self {
            Command::Ls(a) => &a.connect,
            Command::Show(a) | Command::Queue(QueueCommand::Ls(a)) => &a.connect,
            Command::New(a) => &a.connect,
            Command::Adopt(a) => &a.connect,
            Command::Restore(a) => &a.connect,
            Command::Rm(a) => &a.connect,
            Command::Send(a) => &a.connect,
            Command::Keys(a) => &a.connect,
            Command::Resize(a) => &a.connect,
            Command::Thought(a) => &a.connect,
            Command::Snap(a) => &a.connect,
            Command::Scrollback(a) => &a.connect,
            Command::Wait(a) => &a.connect,
            Command::Watch(a) => &a.connect,
            Command::Events(a) => &a.connect,
            Command::Attach(a) => &a.connect,
            Command::Open(a) => &a.connect,
            Command::Hosts(a) => &a.connect,
            Command::Queue(QueueCommand::Rm(a)) => &a.connect,
            Command::Hooks(HooksCommand::Send(a)) => &a.connect,
            Command::Serve(_)
            | Command::Config(_)
            | Command::Doctor(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Service(_)
            | Command::Hooks(HooksCommand::Install(_)) => return None,
        })
    }
}

#[derive(Args, Debug)]
pub struct LsArgs {
    /// Also list sessions that ended recently (with their exit status).
    #[arg(short, long)]
    pub all: bool,
    /// Only the sessions of this fleet peer (a `[[fleet.peers]]` name).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

/// One session, how to print it, where the daemon is (`show`, `queue ls`).
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// tmux session name (default: the next free number).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Working directory (default: this one); a relative path is taken from here.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Text typed once the session has started, then Enter.
    #[arg(long, value_name = "TEXT")]
    pub input: Option<String>,
    /// Window size, COLSxROWS (default: tmux's).
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_size)]
    pub size: Option<(u16, u16)>,
    /// If tmux is lost and the session restored: give each pane a shell
    /// (default), or run each pane's command again.
    #[arg(long, value_enum, value_name = "MODE")]
    pub restore: Option<RestoreWhat>,
    /// If tmux is lost: the command the restored session's first pane runs
    /// (e.g. `claude --continue`).
    #[arg(long, value_name = "COMMAND")]
    pub resume_command: Option<String>,
    /// Print only the new session's id.
    #[arg(short, long, conflicts_with = "json")]
    pub quiet: bool,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
    /// The command to run instead of the shell, after `--`: one argument is a shell
    /// command line (`-- 'htop -d 10'`, as tmux takes it), several are the program and its
    /// arguments, passed as they are.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct AdoptArgs {
    /// The tmux session's exact name; without it, list the tmux sessions
    /// tmuxd does not track (NAME WINDOWS ATTACHED CREATED ID WHY).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Reuse this id (default: the id it had before, else a new one).
    #[arg(long, value_name = "ID", requires = "name")]
    pub id: Option<String>,
    /// Print only the session's id.
    #[arg(short, long, conflicts_with = "json", requires = "name")]
    pub quiet: bool,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

/// What a restored session's panes run.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestoreWhat {
    /// A shell in each pane's cwd.
    Shell,
    /// Each pane's command again.
    Rerun,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// The lost sessions to restore (ids); every one when none is given.
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct RmArgs {
    #[command(flatten)]
    pub target: Target,
    /// Kill the tmux session too (default: detach; it keeps running and is not re-adopted).
    #[arg(long)]
    pub kill: bool,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct SendArgs {
    #[command(flatten)]
    pub target: Target,
    /// The text, typed literally.
    #[arg(value_name = "TEXT")]
    pub text: String,
    /// Press Enter after the text.
    #[arg(long)]
    pub enter: bool,
    /// Queue the input until the session is next idle (a shell at its prompt).
    #[arg(long, conflicts_with = "when")]
    pub when_idle: bool,
    /// Queue the input until the session is idle (a shell at its prompt) or
    /// waiting (a program asks for input).
    #[arg(long, value_enum, value_name = "STATE")]
    pub when: Option<QueueWhen>,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

/// What queued input waits for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueWhen {
    /// A shell at its prompt.
    Idle,
    /// A program waiting for input.
    Waiting,
}

#[derive(Args, Debug)]
pub struct KeysArgs {
    #[command(flatten)]
    pub target: Target,
    /// tmux key names: Enter, C-c, Up, F5, M-x, BSpace...
    #[arg(required = true, value_name = "KEY", add = ArgValueCandidates::new(super::complete::key_names))]
    pub keys: Vec<String>,
    /// Queue the keys until the session is next idle (at its prompt).
    #[arg(long)]
    pub when_idle: bool,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct ResizeArgs {
    #[command(flatten)]
    pub target: Target,
    /// The new window size, COLSxROWS (each 2..=1000).
    #[arg(value_name = "COLSxROWS", value_parser = parse_size)]
    pub size: (u16, u16),
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct ThoughtArgs {
    #[command(flatten)]
    pub target: Target,
    /// The status text (at most 16 KiB).
    #[arg(value_name = "TEXT")]
    pub text: String,
    /// A short state label to go with it, e.g. `thinking` or `blocked`.
    #[arg(long, value_name = "LABEL")]
    pub state: Option<String>,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

/// Which part of the window a snapshot shows.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pane {
    /// The whole window, every pane (default).
    #[default]
    Window,
    /// Only the active pane, as `tmux capture-pane` shows it.
    Active,
}

#[derive(Args, Debug)]
pub struct SnapArgs {
    #[command(flatten)]
    pub target: Target,
    /// Keep colours and attributes as escape sequences.
    #[arg(long)]
    pub ansi: bool,
    /// The whole window, or the active pane only.
    #[arg(long, value_enum, default_value_t = Pane::Window)]
    pub pane: Pane,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct ScrollbackArgs {
    #[command(flatten)]
    pub target: Target,
    /// How many lines above the screen (default 100).
    #[arg(long, value_name = "N")]
    pub lines: Option<usize>,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

/// What `wait --until` waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// A state, attention, exited or change.
    State(crate::wire::Until),
    /// No output for this long.
    Quiet(std::time::Duration),
}

/// The words `--until` takes, as the API names them.
const UNTIL_WORDS: [(&str, crate::wire::Until); 7] = {
    use crate::wire::Until as U;
    [
        ("idle", U::Idle),
        ("working", U::Working),
        ("busy", U::Busy),
        ("waiting", U::Waiting),
        ("attention", U::Attention),
        ("exited", U::Exited),
        ("change", U::Change),
    ]
};

/// `idle`, `working` (or `busy`), `waiting`, `attention`, `exited`,
/// `change`, or `quiet=DURATION`.
fn parse_until(text: &str) -> Result<Until, String> {
    if let Some(duration) = text.strip_prefix("quiet=") {
        return parse_duration(duration).map(Until::Quiet);
    }
    UNTIL_WORDS
        .iter()
        .find(|(word, _)| *word == text)
        .map(|&(_, until)| Until::State(until))
        .ok_or_else(|| {
            let words: Vec<&str> = UNTIL_WORDS.iter().map(|(w, _)| *w).collect();
            format!(
                "`{text}` is not one of {}, quiet=DURATION",
                words.join(", ")
            )
        })
}

/// What the shell completes for `--until`: its words, and `quiet=` to go on typing.
fn until_candidates() -> Vec<clap_complete::engine::CompletionCandidate> {
    use clap_complete::engine::CompletionCandidate;
    UNTIL_WORDS
        .iter()
        .map(|(word, _)| CompletionCandidate::new(*word))
        .chain(std::iter::once(
            CompletionCandidate::new("quiet=")
                .help(Some("quiet=DURATION: no output for this long".into())),
        ))
        .collect()
}

#[derive(Args, Debug)]
pub struct WaitArgs {
    #[command(flatten)]
    pub target: Target,
    /// What to wait for: idle, working (busy), waiting, attention, exited, change, or quiet=DURATION.
    #[arg(long, value_name = "STATE", value_parser = parse_until, required_unless_present = "pattern", conflicts_with = "pattern",
          add = ArgValueCandidates::new(until_candidates))]
    pub until: Option<Until>,
    /// A regex over the screen's lines (like expect): wait until a line matches, print it.
    #[arg(long = "match", value_name = "REGEX")]
    pub pattern: Option<String>,
    /// How long to wait: 500ms, 30s, 2m, 1h30m, or `none` (forever). Exit 3 when it runs out.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = WaitLimit::parse)]
    pub timeout: WaitLimit,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub target: Target,
    /// Only the output bytes: no initial screen, no terminal reset at the end.
    #[arg(long, conflicts_with = "json")]
    pub raw: bool,
    /// One JSON object per line: the stream's messages, and each output chunk as {"seq","data"}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct EventsArgs {
    /// Replay the retained events after sequence number N first (0: all of them);
    /// without it, the last 20 events come first.
    #[arg(long, value_name = "N")]
    pub since: Option<u64>,
    /// Print the retained events and stop instead of following.
    #[arg(long)]
    pub no_follow: bool,
    /// One JSON event per line, as the API sends them.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct AttachArgs {
    #[command(flatten)]
    pub target: Target,
    /// Attach read-only (`tmux attach -r`): watch without typing into it.
    #[arg(short, long)]
    pub read_only: bool,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct OpenArgs {
    /// Only print the link; do not start a browser.
    #[arg(long)]
    pub print: bool,
    /// Also print the link as a QR code, to open it on a phone's camera
    /// (it works once, for a minute). Starts no browser.
    #[arg(long)]
    pub qr: bool,
    /// The dashboard's address as the browser reaches it (a phone: a
    /// Tailscale name, a VPN address, an SSH tunnel's), instead of the
    /// address the CLI used: `--base https://box.tailnet.ts.net:7420`.
    #[arg(long, value_name = "URL")]
    pub base: Option<String>,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct HostsArgs {
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write tmuxd.1 and one tmuxd-COMMAND.1 per command here instead of printing tmuxd.1.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum QueueCommand {
    /// List the inputs queued for a session: number, what it waits for, text.
    Ls(ShowArgs),
    /// Cancel a queued input by its number (as `queue ls` shows it).
    Rm(QueueRmArgs),
}

#[derive(Args, Debug)]
pub struct QueueRmArgs {
    #[command(flatten)]
    pub target: Target,
    /// The queued input's number.
    #[arg(value_name = "N")]
    pub number: u64,
    #[command(flatten)]
    pub format: Format,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Subcommand, Debug)]
pub enum ServiceCommand {
    /// Write ~/.config/systemd/user/tmuxd.service and say how to enable it.
    Install(ServiceArgs),
}

/// `tmuxd hooks ...`
#[derive(Subcommand, Debug)]
pub enum HooksCommand {
    /// Add tmuxd to the agent's hook configuration: Claude Code's Notification, Stop,
    /// UserPromptSubmit and PreToolUse hooks in ~/.claude/settings.json ($CLAUDE_CONFIG_DIR),
    /// Codex's `notify` in ~/.codex/config.toml ($CODEX_HOME). Keeps everything else, backs the
    /// file up beside it, and changes nothing when tmuxd is there already.
    Install(HooksInstallArgs),
    /// Post one hook event for the session of $TMUX_PANE (what the installed hooks run): the
    /// event's JSON on stdin, or as the argument (Codex). Prints nothing, and exits 0 even when
    /// tmuxd cannot be reached, so it never holds up the agent (--verbose: say why on stderr).
    Send(HooksSendArgs),
}

/// The agents whose hooks tmuxd reads.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookAgent {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
}

#[derive(Args, Debug)]
pub struct HooksInstallArgs {
    /// The agent whose configuration to write: claude or codex.
    #[arg(value_enum, value_name = "AGENT")]
    pub agent: HookAgent,
    /// Print which file would change and how it would read, and write nothing.
    #[arg(long)]
    pub print: bool,
}

#[derive(Args, Debug)]
pub struct HooksSendArgs {
    /// The agent the event comes from: claude or codex.
    #[arg(value_enum, value_name = "AGENT")]
    pub agent: HookAgent,
    /// The event's JSON (Codex passes it so); read from stdin when left out.
    #[arg(value_name = "EVENT")]
    pub event: Option<String>,
    /// Say on stderr why an event was not delivered (by hand, to debug; the agent's hooks
    /// run it without, since Codex shares its terminal with the hook).
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub connect: Connect,
}

#[derive(Args, Debug)]
pub struct ServiceArgs {
    /// Print the unit instead of writing it.
    #[arg(long)]
    pub print: bool,
    /// Config file the service runs with (made absolute).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// `COLSxROWS`, e.g. `120x40`.
fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let bad = || format!("`{text}` is not a size like 120x40 (COLSxROWS)");
    let (cols, rows) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let cols = cols.trim().parse().map_err(|_| bad())?;
    let rows = rows.trim().parse().map_err(|_| bad())?;
    Ok((cols, rows))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every argument of every command says what it is in `--help`.
    #[test]
    fn every_argument_is_described() {
        fn check(command: &clap::Command, path: &str) {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                assert!(
                    arg.get_help().is_some_and(|h| !h.to_string().is_empty()),
                    "{path} {id} has no help text"
                );
            }
            for sub in command.get_subcommands() {
                assert!(
                    sub.get_about().is_some(),
                    "{path} {} has no about",
                    sub.get_name()
                );
                check(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        Cli::command().debug_assert();
        check(&Cli::command(), "tmuxd");
    }

    #[test]
    fn until_words() {
        use crate::wire::Until as U;
        assert_eq!(parse_until("waiting"), Ok(Until::State(U::Waiting)));
        assert_eq!(parse_until("busy"), Ok(Until::State(U::Busy)));
        assert_eq!(
            parse_until("quiet=2s"),
            Ok(Until::Quiet(std::time::Duration::from_secs(2)))
        );
        let err = parse_until("sleepy").unwrap_err();
        assert!(err.contains("idle, working, busy, waiting"), "{err}");
        assert!(parse_until("quiet=x").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("120x40"), Ok((120, 40)));
        assert_eq!(parse_size("80X24"), Ok((80, 24)));
        for bad in ["", "120", "x40", "120x", "-1x3", "70000x2", "1.5x2"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
