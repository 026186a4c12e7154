//! Daemon settings: the [`Config`] that `tmuxd serve` runs with, and how it is
//! built from defaults < config file < environment < flags.
//!
//! Each step can be tested on literal input: `choose_file` picks the file,
//! [`load`] reads it, [`parse_file`] turns TOML into an all-optional
//! [`FileConfig`], the environment and flags become layers of the same shape,
//! `overlay` applies each layer, and [`validate`] checks ranges and
//! combinations. Nothing here reads the process environment; callers pass it
//! in as an [`Env`] map.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::{self, Write as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

mod fleet;
mod mask;
mod sections;
pub use fleet::{FleetConfig, PeerConfig, PeerToken};
pub use mask::mask_urls;
pub use sections::{FileNotify, NotifyConfig, NotifyOn, NtfyConfig, RuleConfig, RuleState};

/// `tmux.screen_checks_per_s`'s default: settled-screen checks a second
/// on one tmux server, all sessions together.
pub const DEFAULT_SCREEN_CHECKS_PER_S: u32 = 20;

/// The process environment, passed in (`std::env::vars().collect()` in main).
pub type Env = BTreeMap<String, String>;

/// Where each key's effective value came from, keyed by dotted key name.
type Sources = BTreeMap<&'static str, Source>;

/// How tokens appear in `tmuxd config` output and in `Debug`.
const MASK: &str = "****";

/// Every key, in the order `tmuxd config` prints them.
#[rustfmt::skip]
const KEYS: [&str; 58] = [
    "bind", "data_dir", "log", "log_file", "max_sessions", "checkpoint_interval_s",
    "auth.token", "auth.read_token", "auth.insecure_no_auth",
    "tmux.bin", "tmux.socket_name", "tmux.socket_path", "tmux.config_file", "tmux.command_timeout_ms",
    "tmux.screen_checks_per_s", "tmux.live_clients",
    "discovery.interval_ms", "discovery.include", "discovery.exclude", "discovery.min_age_ms",
    "reaper.interval_ms",
    "session.replay_bytes", "session.subscriber_queue_bytes", "session.max_scrollback_lines",
    "session.ended_max", "session.ended_max_age_s", "session.ended_scrollback_lines",
    "http.max_body_bytes", "http.max_streams_per_session", "http.max_streams",
    "http.max_connections", "http.header_read_timeout_ms", "http.idle_timeout_ms",
    "http.allowed_hosts",
    "http.max_waits_per_session", "http.max_waits",
    "state.attention_after_s", "state.idle_after_ms", "state.prompt_settle_ms",
    "state.probe_interval_ms", "state.rules", "state.disabled_presets",
    "notify.webhook_url", "notify.command", "notify.cooldown_s", "notify.max_per_minute",
    "notify.retries", "notify.timeout_ms", "notify.secret", "notify.on",
    "notify.web_push", "notify.push_contact", "notify.page_url", "notify.ntfy",
    "restore.on_start",
    "fleet.peers", "fleet.request_timeout_ms", "fleet.heartbeat_ms",
];

/// Every config key, for the man page.
pub(crate) fn keys() -> &'static [&'static str] {
    &KEYS
}

/// The environment variable behind each key that has one.
#[rustfmt::skip]
pub(crate) const ENV_VARS: [(&str, &str); 9] = [
    ("bind", "TMUXD_BIND"), ("data_dir", "TMUXD_DATA_DIR"), ("log", "TMUXD_LOG"),
    ("max_sessions", "TMUXD_MAX_SESSIONS"),
    ("auth.token", "TMUXD_TOKEN"), ("auth.read_token", "TMUXD_READ_TOKEN"),
    ("tmux.bin", "TMUXD_TMUX_BIN"), ("tmux.socket_name", "TMUXD_TMUX_SOCKET_NAME"),
    ("tmux.socket_path", "TMUXD_TMUX_SOCKET_PATH"),
];

/// The `tmuxd serve` flag behind each key that has one.
const FLAGS: [(&str, &str); 3] = [
    ("bind", "--bind"),
    ("data_dir", "--data-dir"),
    ("log_file", "--log-file"),
];

/// The effective, validated settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Address the HTTP API listens on.
    pub bind: SocketAddr,
    /// Directory for the registry, event log and other persisted state.
    pub data_dir: PathBuf,
    /// `tracing` filter directive, e.g. `info` or `tmuxd=debug,info`.
    pub log: String,
    /// Logs go to this file (appended) instead of stderr.
    pub log_file: Option<PathBuf>,
    /// Most sessions tracked at once; creating more answers 429.
    pub max_sessions: usize,
    /// Seconds between registry checkpoints to disk.
    pub checkpoint_interval_s: u64,
    /// API tokens.
    pub auth: AuthConfig,
    /// Which tmux binary and server to talk to.
    pub tmux: TmuxConfig,
    /// Adoption of tmux sessions that tmuxd did not create.
    pub discovery: DiscoveryConfig,
    /// Clean-up of sessions whose tmux session has gone.
    pub reaper: ReaperConfig,
    /// Per-session buffers.
    pub session: SessionConfig,
    /// HTTP limits.
    pub http: HttpConfig,
    /// Thresholds of the idle and attention states.
    pub state: StateConfig,
    /// Webhook and command run on attention and on exit.
    pub notify: NotifyConfig,
    /// Sessions lost with their tmux server.
    pub restore: RestoreConfig,
    /// Peers whose sessions this tmuxd also serves.
    pub fleet: FleetConfig,
}

/// `[restore]`: sessions lost with their tmux server (crash, kill-server, reboot).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreConfig {
    /// Restore them at startup when tmuxd finds none of its sessions (after
    /// a reboot), instead of waiting for `tmuxd restore`.
    pub on_start: bool,
}

/// `[auth]`: API tokens; `Debug` masks them so they never reach a log.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// Read-write bearer token; without it the daemon uses the one it
    /// generates in the data dir (`token`, 0600).
    pub token: Option<String>,
    /// Read-only bearer token (GET and streams); requires and differs from `token`.
    pub read_token: Option<String>,
    /// Serve TCP clients with no credential at all (loopback binds only).
    /// Anyone who can connect, every local user included, gets full control.
    pub insecure_no_auth: bool,
}

/// Tokens shorter than this are refused: a guessable token is no token.
pub const MIN_TOKEN_CHARS: usize = 24;

/// `[tmux]`: which tmux binary and server to talk to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmuxConfig {
    /// tmux executable: a bare name looked up in PATH, or a path.
    pub bin: PathBuf,
    /// Server socket name (`tmux -L`); with neither this nor `socket_path`, tmux's default.
    pub socket_name: Option<String>,
    /// Server socket path (`tmux -S`); excludes `socket_name`.
    pub socket_path: Option<PathBuf>,
    /// Passed as `tmux -f` when tmuxd starts a tmux server.
    pub config_file: Option<PathBuf>,
    /// Longest a single tmux command may take, in milliseconds.
    pub command_timeout_ms: u64,
    /// Settled-screen checks against `capture-pane` a second, all sessions
    /// together; 0 turns them off.
    pub screen_checks_per_s: u32,
    /// Control clients recent activity may hold (`heat`): sessions that
    /// are watched, busy or settling hold one whatever this says, the rest
    /// go without; 0: every session keeps its client.
    pub live_clients: u32,
}

/// `[discovery]`: which existing tmux sessions are adopted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryConfig {
    /// Milliseconds between scans for tmux sessions to adopt.
    pub interval_ms: u64,
    /// Glob patterns over tmux session names; a session must match one.
    pub include: Vec<String>,
    /// Glob patterns over tmux session names; a match is never adopted.
    pub exclude: Vec<String>,
    /// Milliseconds a session made outside tmuxd must have lived before it
    /// is adopted: most that end sooner were never worth a handshake.
    pub min_age_ms: u64,
}

/// `[reaper]`: clean-up of sessions whose tmux session has gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaperConfig {
    /// Milliseconds between checks for exited sessions.
    pub interval_ms: u64,
}

/// `[session]`: per-session buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// Output bytes kept per session for stream replay (`?since=SEQ`).
    pub replay_bytes: usize,
    /// Output bytes queued per stream subscriber; one further behind is dropped.
    pub subscriber_queue_bytes: usize,
    /// Scrollback lines kept per session.
    pub max_scrollback_lines: usize,
    /// Ended sessions kept readable, at most.
    pub ended_max: usize,
    /// Seconds an ended session is kept readable.
    pub ended_max_age_s: u64,
    /// History lines kept of an ended session (above its last screen); 0 keeps none.
    pub ended_scrollback_lines: usize,
}

/// `[http]`: HTTP limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpConfig {
    /// Largest request body accepted; larger answers 413.
    pub max_body_bytes: usize,
    /// Open WebSocket streams allowed per session.
    pub max_streams_per_session: usize,
    /// Open WebSocket streams allowed in all.
    pub max_streams: usize,
    /// Open TCP connections (WebSockets included); more wait to be accepted.
    pub max_connections: usize,
    /// A new connection must send its first request's headers within this
    /// many milliseconds, or is closed.
    pub header_read_timeout_ms: u64,
    /// A kept-alive connection must send its next request's headers within
    /// this many milliseconds of the last response, or is closed.
    pub idle_timeout_ms: u64,
    /// Host names (besides loopback names and IP addresses) clients may use
    /// to reach the daemon; any other `Host` is refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Waits (`POST .../wait`) open at once per session; more answer 429.
    pub max_waits_per_session: usize,
    /// Waits open at once in all; more answer 429.
    pub max_waits: usize,
}

/// `[state]`: thresholds of the idle and attention states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateConfig {
    /// Seconds a busy program (not a shell at its prompt) may stay silent
    /// before the session is marked `attention`.
    pub attention_after_s: u64,
    /// Milliseconds without output after which a busy session is `idle`,
    /// when tmuxd cannot tell which program holds the terminal.
    pub idle_after_ms: u64,
    /// Quiet time after output before the foreground is looked at (long
    /// enough for a prompt to finish drawing).
    pub prompt_settle_ms: u64,
    /// How often a working session is looked at while nothing happens.
    pub probe_interval_ms: u64,
    /// Screen rules, first match wins; they come before the agent presets.
    pub rules: Vec<RuleConfig>,
    /// Agent presets turned off: preset names, agent names, or `all`.
    pub disabled_presets: Vec<String>,
}

impl Config {
    /// The built-in settings; `env` supplies XDG_DATA_HOME / HOME for `data_dir`.
    pub fn defaults(env: &Env) -> Config {
        Config {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 7420)),
            data_dir: default_data_dir(env),
            log: "info".to_owned(),
            log_file: None,
            max_sessions: 256,
            checkpoint_interval_s: 30,
            auth: AuthConfig::default(),
            tmux: TmuxConfig {
                bin: PathBuf::from("tmux"),
                socket_name: None,
                socket_path: None,
                config_file: None,
                command_timeout_ms: 5000,
                screen_checks_per_s: DEFAULT_SCREEN_CHECKS_PER_S,
                live_clients: crate::heat::DEFAULT_LIVE_CLIENTS,
            },
            discovery: DiscoveryConfig {
                interval_ms: 2000,
                include: vec!["*".to_owned()],
                exclude: Vec::new(),
                min_age_ms: 50,
            },
            reaper: ReaperConfig { interval_ms: 250 },
            session: SessionConfig {
                replay_bytes: 1_048_576,
                subscriber_queue_bytes: 4_194_304,
                max_scrollback_lines: 10_000,
                ended_max: 100,
                ended_max_age_s: 86_400,
                ended_scrollback_lines: 2_000,
            },
            http: HttpConfig {
                max_body_bytes: 4 * 1_048_576,
                max_streams_per_session: 16,
                max_streams: 256,
                max_connections: 512,
                header_read_timeout_ms: 10_000,
                idle_timeout_ms: 60_000,
                allowed_hosts: Vec::new(),
                max_waits_per_session: 64,
                max_waits: 256,
            },
            state: StateConfig {
                attention_after_s: 300,
                idle_after_ms: 1500,
                prompt_settle_ms: 250,
                probe_interval_ms: 1000,
                rules: Vec::new(),
                disabled_presets: Vec::new(),
            },
            notify: NotifyConfig::default(),
            restore: RestoreConfig::default(),
            fleet: FleetConfig::default(),
        }
    }
}

/// `$XDG_DATA_HOME/tmuxd`, else `$HOME/.local/share/tmuxd`, else empty, which
/// [`validate`] rejects. A relative XDG_DATA_HOME is ignored, as the XDG spec says.
fn default_data_dir(env: &Env) -> PathBuf {
    let xdg = env_value(env, "XDG_DATA_HOME").map(Path::new);
    match (xdg, env_value(env, "HOME")) {
        (Some(xdg), _) if xdg.is_absolute() => xdg.join("tmuxd"),
        (_, Some(home)) => Path::new(home).join(".local/share/tmuxd"),
        _ => PathBuf::new(),
    }
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("token", &masked(&self.token))
            .field("read_token", &masked(&self.read_token))
            .field("insecure_no_auth", &self.insecure_no_auth)
            .finish()
    }
}

fn masked(token: &Option<String>) -> Option<&'static str> {
    token.as_ref().map(|_| MASK)
}

/// `tmuxd serve` flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--config PATH`: the file to read; it must exist.
    pub config: Option<PathBuf>,
    /// `--bind ADDR:PORT`.
    pub bind: Option<String>,
    /// `--data-dir DIR`.
    pub data_dir: Option<PathBuf>,
    /// `--log-file PATH`.
    pub log_file: Option<PathBuf>,
}

/// Which layer an effective value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Built in (or derived from XDG_DATA_HOME / HOME).
    Default,
    /// The config file.
    File,
    /// A TMUXD_* environment variable.
    Env,
    /// A `tmuxd serve` flag.
    Flag,
}

/// The outcome of [`load`]: the settings and where each one came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The effective, validated settings.
    pub config: Config,
    /// One entry per dotted key (`"bind"`, `"tmux.socket_name"`, ...).
    pub sources: BTreeMap<&'static str, Source>,
    /// The config file that was read, if any.
    pub file: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A value is out of range, malformed, or conflicts with another key.
    #[error("config key `{key}`: {reason}")]
    Invalid { key: String, reason: String },
    /// The chosen config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not TOML, an unknown key or a wrong type; toml's message names the key and line.
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
}

fn invalid(key: &str, reason: impl Into<String>) -> ConfigError {
    let (key, reason) = (key.to_owned(), reason.into());
    ConfigError::Invalid { key, reason }
}

/// One layer of settings shaped like the TOML file, every value optional.
/// The environment and the flags are turned into the same shape.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    #[serde(deserialize_with = "deserialize_bind")]
    pub bind: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub log: Option<String>,
    pub log_file: Option<PathBuf>,
    pub max_sessions: Option<usize>,
    pub checkpoint_interval_s: Option<u64>,
    pub auth: FileAuth,
    pub tmux: FileTmux,
    pub discovery: FileDiscovery,
    pub reaper: FileReaper,
    pub session: FileSession,
    pub http: FileHttp,
    pub state: FileState,
    pub notify: FileNotify,
    pub restore: FileRestore,
    pub fleet: fleet::FileFleet,
}

/// `[restore]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRestore {
    pub on_start: Option<bool>,
}

/// `[auth]`; `Debug` masks the tokens.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileAuth {
    pub token: Option<String>,
    pub read_token: Option<String>,
    pub insecure_no_auth: Option<bool>,
}

impl fmt::Debug for FileAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileAuth")
            .field("token", &masked(&self.token))
            .field("read_token", &masked(&self.read_token))
            .finish()
    }
}

/// `[tmux]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileTmux {
    pub bin: Option<PathBuf>,
    pub socket_name: Option<String>,
    pub socket_path: Option<PathBuf>,
    pub config_file: Option<PathBuf>,
    pub command_timeout_ms: Option<u64>,
    pub screen_checks_per_s: Option<u32>,
    pub live_clients: Option<u32>,
}

/// `[discovery]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDiscovery {
    pub interval_ms: Option<u64>,
    pub include: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
    pub min_age_ms: Option<u64>,
}

/// `[reaper]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileReaper {
    pub interval_ms: Option<u64>,
}

/// `[session]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSession {
    pub replay_bytes: Option<usize>,
    pub subscriber_queue_bytes: Option<usize>,
    pub max_scrollback_lines: Option<usize>,
    pub ended_max: Option<usize>,
    pub ended_max_age_s: Option<u64>,
    pub ended_scrollback_lines: Option<usize>,
}

/// `[http]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileHttp {
    pub max_body_bytes: Option<usize>,
    pub max_streams_per_session: Option<usize>,
    pub max_streams: Option<usize>,
    pub max_connections: Option<usize>,
    pub header_read_timeout_ms: Option<u64>,
    pub idle_timeout_ms: Option<u64>,
    pub allowed_hosts: Option<Vec<String>>,
    pub max_waits_per_session: Option<usize>,
    pub max_waits: Option<usize>,
}

/// `[state]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileState {
    pub attention_after_s: Option<u64>,
    pub idle_after_ms: Option<u64>,
    pub prompt_settle_ms: Option<u64>,
    pub probe_interval_ms: Option<u64>,
    pub rules: Option<Vec<RuleConfig>>,
    pub disabled_presets: Option<Vec<String>>,
}

fn deserialize_bind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
    let text = String::deserialize(d)?;
    parse_bind(&text).map(Some).map_err(D::Error::custom)
}

/// A `bind` that is not an address and port.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not ADDR:PORT (e.g. 127.0.0.1:7420, [::1]:7420, localhost:7420)")]
struct NotAnAddress(String);

/// `ADDR:PORT` (including `[::1]:PORT`) or `localhost:PORT`, which means 127.0.0.1.
fn parse_bind(text: &str) -> Result<SocketAddr, NotAnAddress> {
    let parsed = match text.strip_prefix("localhost:") {
        Some(port) => port
            .parse()
            .ok()
            .map(|port: u16| (Ipv4Addr::LOCALHOST, port).into()),
        None => text.parse().ok(),
    };
    parsed.ok_or_else(|| NotAnAddress(text.to_owned()))
}

/// An environment variable's value; empty counts as unset.
fn env_value<'a>(env: &'a Env, var: &str) -> Option<&'a str> {
    env.get(var)
        .map(String::as_str)
        .filter(|value| !value.is_empty())
}

/// Parses the config file's text. Pure: `load` expands `~` in paths afterwards.
pub fn parse_file(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
    toml::from_str(text).map_err(|err| ConfigError::Parse {
        path: path.to_owned(),
        message: err.to_string().trim_end().to_owned(),
    })
}

/// The config file to read, and whether it must exist.
#[derive(Debug, PartialEq, Eq)]
struct FileChoice {
    path: PathBuf,
    required: bool,
}

/// `--config`, else `$TMUXD_CONFIG`, else `~/.config/tmuxd/config.toml` if present.
fn choose_file(flags: &Flags, env: &Env) -> Option<FileChoice> {
    let explicit = flags.config.clone();
    let explicit = explicit.or_else(|| env_value(env, "TMUXD_CONFIG").map(PathBuf::from));
    if let Some(path) = explicit {
        return Some(FileChoice {
            path,
            required: true,
        });
    }
    let path = Path::new(env_value(env, "HOME")?).join(".config/tmuxd/config.toml");
    Some(FileChoice {
        path,
        required: false,
    })
}

/// The chosen file's text; `None` when an optional file does not exist.
fn read_chosen(choice: &FileChoice) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(&choice.path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !choice.required => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: choice.path.clone(),
            source,
        }),
    }
}

/// Replaces a leading `~` component in the file's path values with HOME.
fn expand_home(layer: &mut FileConfig, env: &Env) -> Result<(), ConfigError> {
    let mut paths = vec![
        ("data_dir".to_owned(), &mut layer.data_dir),
        ("log_file".to_owned(), &mut layer.log_file),
        ("tmux.bin".to_owned(), &mut layer.tmux.bin),
        ("tmux.socket_path".to_owned(), &mut layer.tmux.socket_path),
        ("tmux.config_file".to_owned(), &mut layer.tmux.config_file),
    ];
    let peers = layer.fleet.peers.iter_mut().flatten().enumerate();
    for (i, peer) in peers {
        paths.push((format!("fleet.peers[{i}].token_file"), &mut peer.token_file));
    }
    for (key, path) in paths {
        let Some(rest) = path.as_deref().and_then(|p| p.strip_prefix("~").ok()) else {
            continue;
        };
        let home = env_value(env, "HOME")
            .ok_or_else(|| invalid(&key, "cannot expand `~`: HOME is not set"))?;
        let expanded = Path::new(home).join(rest);
        *path = Some(expanded);
    }
    Ok(())
}

/// The TMUXD_* variables as a layer; a value that does not parse names its key and variable.
fn env_layer(env: &Env) -> Result<FileConfig, ConfigError> {
    let get = |var| env_value(env, var).map(str::to_owned);
    let mut layer = FileConfig::default();
    if let Some(text) = get("TMUXD_BIND") {
        let addr =
            parse_bind(&text).map_err(|reason| invalid("bind", format!("TMUXD_BIND: {reason}")))?;
        layer.bind = Some(addr);
    }
    if let Some(text) = get("TMUXD_MAX_SESSIONS") {
        let reason = format!("TMUXD_MAX_SESSIONS: `{text}` is not a whole number");
        let count = text
            .trim()
            .parse()
            .map_err(|_| invalid("max_sessions", reason))?;
        layer.max_sessions = Some(count);
    }
    layer.data_dir = get("TMUXD_DATA_DIR").map(PathBuf::from);
    layer.log = get("TMUXD_LOG");
    layer.auth.token = get("TMUXD_TOKEN");
    layer.auth.read_token = get("TMUXD_READ_TOKEN");
    layer.tmux.bin = get("TMUXD_TMUX_BIN").map(PathBuf::from);
    layer.tmux.socket_name = get("TMUXD_TMUX_SOCKET_NAME");
    layer.tmux.socket_path = get("TMUXD_TMUX_SOCKET_PATH").map(PathBuf::from);
    Ok(layer)
}

/// The `tmuxd serve` flags as a layer.
fn flag_layer(flags: &Flags) -> Result<FileConfig, ConfigError> {
    let mut layer = FileConfig::default();
    if let Some(text) = &flags.bind {
        let addr =
            parse_bind(text).map_err(|reason| invalid("bind", format!("--bind: {reason}")))?;
        layer.bind = Some(addr);
    }
    layer.data_dir = flags.data_dir.clone();
    layer.log_file = flags.log_file.clone();
    Ok(layer)
}

/// Applies every value `layer` sets on top of `config`, recording `source` for it.
fn overlay(config: &mut Config, sources: &mut Sources, layer: FileConfig, source: Source) {
    macro_rules! take {
        ($key:literal, $($field:ident).+) => {
            if let Some(value) = layer.$($field).+ {
                config.$($field).+ = value;
                sources.insert($key, source);
            }
        };
        ($key:literal, $($field:ident).+, optional) => {
            if let Some(value) = layer.$($field).+ {
                config.$($field).+ = Some(value);
                sources.insert($key, source);
            }
        };
    }
    take!("bind", bind);
    take!("data_dir", data_dir);
    take!("log", log);
    take!("log_file", log_file, optional);
    take!("max_sessions", max_sessions);
    take!("checkpoint_interval_s", checkpoint_interval_s);
    take!("auth.token", auth.token, optional);
    take!("auth.read_token", auth.read_token, optional);
    take!("auth.insecure_no_auth", auth.insecure_no_auth);
    take!("tmux.bin", tmux.bin);
    take!("tmux.socket_name", tmux.socket_name, optional);
    take!("tmux.socket_path", tmux.socket_path, optional);
    take!("tmux.config_file", tmux.config_file, optional);
    take!("tmux.command_timeout_ms", tmux.command_timeout_ms);
    take!("tmux.screen_checks_per_s", tmux.screen_checks_per_s);
    take!("tmux.live_clients", tmux.live_clients);
    take!("discovery.interval_ms", discovery.interval_ms);
    take!("discovery.include", discovery.include);
    take!("discovery.exclude", discovery.exclude);
    take!("discovery.min_age_ms", discovery.min_age_ms);
    take!("reaper.interval_ms", reaper.interval_ms);
    take!("session.replay_bytes", session.replay_bytes);
    take!(
        "session.subscriber_queue_bytes",
        session.subscriber_queue_bytes
    );
    take!("session.max_scrollback_lines", session.max_scrollback_lines);
    take!("session.ended_max", session.ended_max);
    take!("session.ended_max_age_s", session.ended_max_age_s);
    take!(
        "session.ended_scrollback_lines",
        session.ended_scrollback_lines
    );
    take!("http.max_body_bytes", http.max_body_bytes);
    take!("http.max_streams_per_session", http.max_streams_per_session);
    take!("http.max_streams", http.max_streams);
    take!("http.max_connections", http.max_connections);
    take!("http.header_read_timeout_ms", http.header_read_timeout_ms);
    take!("http.idle_timeout_ms", http.idle_timeout_ms);
    take!("http.allowed_hosts", http.allowed_hosts);
    take!("http.max_waits_per_session", http.max_waits_per_session);
    take!("http.max_waits", http.max_waits);
    take!("state.attention_after_s", state.attention_after_s);
    take!("state.idle_after_ms", state.idle_after_ms);
    take!("state.prompt_settle_ms", state.prompt_settle_ms);
    take!("state.probe_interval_ms", state.probe_interval_ms);
    take!("state.rules", state.rules);
    take!("state.disabled_presets", state.disabled_presets);
    take!("notify.webhook_url", notify.webhook_url, optional);
    take!("notify.command", notify.command, optional);
    take!("notify.cooldown_s", notify.cooldown_s);
    take!("notify.max_per_minute", notify.max_per_minute);
    take!("notify.retries", notify.retries);
    take!("notify.timeout_ms", notify.timeout_ms);
    take!("notify.secret", notify.secret, optional);
    take!("notify.on", notify.on);
    take!("notify.web_push", notify.web_push);
    take!("notify.push_contact", notify.push_contact);
    take!("notify.page_url", notify.page_url, optional);
    take!("notify.ntfy", notify.ntfy, optional);
    take!("restore.on_start", restore.on_start);
    take!("fleet.request_timeout_ms", fleet.request_timeout_ms);
    take!("fleet.heartbeat_ms", fleet.heartbeat_ms);
}

/// Defaults < file < env < flags, not yet validated.
fn resolve(
    file: Option<FileConfig>,
    env: &Env,
    flags: &Flags,
) -> Result<(Config, Sources), ConfigError> {
    let mut config = Config::defaults(env);
    let mut sources: Sources = KEYS.iter().map(|&key| (key, Source::Default)).collect();
    if let Some(mut file) = file {
        expand_home(&mut file, env)?;
        // Only the file has peers; checked here, once, into their types.
        if let Some(tables) = file.fleet.peers.take() {
            config.fleet.peers = fleet::check_peers(tables)?;
            sources.insert("fleet.peers", Source::File);
        }
        overlay(&mut config, &mut sources, file, Source::File);
    }
    overlay(&mut config, &mut sources, env_layer(env)?, Source::Env);
    overlay(&mut config, &mut sources, flag_layer(flags)?, Source::Flag);
    Ok((config, sources))
}

/// The whole pipeline: pick and read the file, parse it, merge env and flags, validate.
pub fn load(flags: &Flags, env: &Env) -> Result<Loaded, ConfigError> {
    let mut file = None;
    let mut file_layer = None;
    if let Some(choice) = choose_file(flags, env)
        && let Some(text) = read_chosen(&choice)?
    {
        file_layer = Some(parse_file(&text, &choice.path)?);
        file = Some(choice.path);
    }
    let (config, sources) = resolve(file_layer, env, flags)?;
    validate(&config).map_err(|err| with_origin(err, &sources, file.as_deref()))?;
    Ok(Loaded {
        config,
        sources,
        file,
    })
}

/// Appends where the offending value came from, unless it is a default.
fn with_origin(err: ConfigError, sources: &Sources, file: Option<&Path>) -> ConfigError {
    let ConfigError::Invalid { key, reason } = err else {
        return err;
    };
    let origin = match (sources.get(key.as_str()), file) {
        (Some(Source::File), Some(path)) => format!("config file {}", path.display()),
        (Some(&source), _) if source != Source::Default => origin(&key, source),
        _ => return ConfigError::Invalid { key, reason },
    };
    invalid(&key, format!("{reason} (from {origin})"))
}

/// Checks ranges, glob syntax and combinations of keys; returns the first problem.
pub fn validate(config: &Config) -> Result<(), ConfigError> {
    let c = config;
    if c.data_dir.as_os_str().is_empty() {
        let reason = "must be set when neither XDG_DATA_HOME nor HOME is set";
        return Err(invalid("data_dir", reason));
    }
    non_empty("log", c.log.trim())?;
    check_log_filter(&c.log)?;
    if let Some(path) = &c.log_file {
        non_empty("log_file", path)?;
    }
    check_auth(&c.auth, c.bind)?;
    check_hosts(&c.http.allowed_hosts)?;
    check_tmux(&c.tmux)?;
    check_globs("discovery.include", &c.discovery.include)?;
    check_globs("discovery.exclude", &c.discovery.exclude)?;
    sections::check_rules(&c.state.rules)?;
    sections::check_disabled_presets(&c.state.disabled_presets)?;
    sections::check_notify(&c.notify)?;
    #[rustfmt::skip]
    let ranges: [(&str, u64, RangeInclusive<u64>); 32] = [
        ("max_sessions", c.max_sessions as u64, 1..=4096),
        ("checkpoint_interval_s", c.checkpoint_interval_s, 1..=3600),
        ("tmux.command_timeout_ms", c.tmux.command_timeout_ms, 100..=60_000),
        ("tmux.screen_checks_per_s", u64::from(c.tmux.screen_checks_per_s), 0..=1000),
        ("tmux.live_clients", u64::from(c.tmux.live_clients), 0..=4096),
        ("discovery.interval_ms", c.discovery.interval_ms, 100..=3_600_000),
        ("discovery.min_age_ms", c.discovery.min_age_ms, 0..=60_000),
        ("reaper.interval_ms", c.reaper.interval_ms, 10..=10_000),
        ("session.replay_bytes", c.session.replay_bytes as u64, 4096..=67_108_864),
        ("session.subscriber_queue_bytes", c.session.subscriber_queue_bytes as u64, 65_536..=67_108_864),
        ("session.max_scrollback_lines", c.session.max_scrollback_lines as u64, 1..=1_000_000),
        ("http.max_body_bytes", c.http.max_body_bytes as u64, 1024..=67_108_864),
        ("http.max_streams_per_session", c.http.max_streams_per_session as u64, 1..=1024),
        ("http.max_streams", c.http.max_streams as u64, 1..=65_536),
        ("http.max_connections", c.http.max_connections as u64, 2..=65_536),
        ("http.header_read_timeout_ms", c.http.header_read_timeout_ms, 100..=600_000),
        ("http.idle_timeout_ms", c.http.idle_timeout_ms, 100..=3_600_000),
        ("http.max_waits_per_session", c.http.max_waits_per_session as u64, 1..=65_536),
        ("http.max_waits", c.http.max_waits as u64, 1..=65_536),
        ("state.attention_after_s", c.state.attention_after_s, 1..=86_400),
        ("state.idle_after_ms", c.state.idle_after_ms, 50..=600_000),
        ("state.prompt_settle_ms", c.state.prompt_settle_ms, 10..=10_000),
        ("state.probe_interval_ms", c.state.probe_interval_ms, 100..=60_000),
        ("session.ended_max", c.session.ended_max as u64, 0..=10_000),
        ("session.ended_max_age_s", c.session.ended_max_age_s, 0..=31_536_000),
        ("session.ended_scrollback_lines", c.session.ended_scrollback_lines as u64, 0..=100_000),
        ("notify.cooldown_s", c.notify.cooldown_s, 0..=86_400),
        ("notify.max_per_minute", c.notify.max_per_minute, 1..=6000),
        ("notify.retries", u64::from(c.notify.retries), 0..=10),
        ("notify.timeout_ms", c.notify.timeout_ms, 100..=600_000),
        ("fleet.request_timeout_ms", c.fleet.request_timeout_ms, 100..=600_000),
        ("fleet.heartbeat_ms", c.fleet.heartbeat_ms, 100..=60_000),
    ];
    for (key, value, range) in ranges {
        if !range.contains(&value) {
            let (low, high) = range.into_inner();
            return Err(invalid(
                key,
                format!("must be between {low} and {high}, got {value}"),
            ));
        }
    }
    // Streams hold connections: leave room for plain requests beside them.
    if c.http.max_connections <= c.http.max_streams {
        let reason = format!(
            "must be more than http.max_streams ({}), or open streams could starve requests",
            c.http.max_streams
        );
        return Err(invalid("http.max_connections", reason));
    }
    Ok(())
}

fn non_empty(key: &str, value: impl AsRef<OsStr>) -> Result<(), ConfigError> {
    match value.as_ref().is_empty() {
        true => Err(invalid(key, "must not be empty")),
        false => Ok(()),
    }
}

/// The filter must parse as a whole: a typo would otherwise silence logs.
fn check_log_filter(filter: &str) -> Result<(), ConfigError> {
    tracing_subscriber::EnvFilter::builder()
        .parse(filter)
        .map(drop)
        .map_err(|err| {
            invalid(
                "log",
                format!("`{filter}` is not a log filter: {err} (e.g. info, tmuxd=debug,info)"),
            )
        })
}

fn check_auth(auth: &AuthConfig, bind: SocketAddr) -> Result<(), ConfigError> {
    let tokens = [
        ("auth.token", &auth.token),
        ("auth.read_token", &auth.read_token),
    ];
    for (key, token) in tokens {
        let Some(token) = token else { continue };
        non_empty(key, token)?;
        // Header values are trimmed before comparison, so such a token could never match.
        if token.trim() != token {
            return Err(invalid(key, "must not start or end with whitespace"));
        }
        let chars = token.chars().count();
        if chars < MIN_TOKEN_CHARS {
            let reason = format!(
                "must be at least {MIN_TOKEN_CHARS} characters, got {chars} (e.g. `openssl rand -hex 24`)"
            );
            return Err(invalid(key, reason));
        }
    }
    let open_bind = !bind.ip().to_canonical().is_loopback();
    if auth.insecure_no_auth {
        if auth.token.is_some() {
            let reason = "cannot be set together with auth.token";
            return Err(invalid("auth.insecure_no_auth", reason));
        }
        if open_bind {
            let reason =
                "is refused for a non-loopback bind: anyone on the network would get every shell";
            return Err(invalid("auth.insecure_no_auth", reason));
        }
    }
    match (&auth.token, &auth.read_token) {
        (Some(token), Some(read)) if token == read => {
            Err(invalid("auth.read_token", "must differ from auth.token"))
        }
        // With only a read token it would be unclear whether writes are open or closed.
        (None, Some(_)) => Err(invalid("auth.read_token", "requires auth.token")),
        (None, None) if open_bind => Err(invalid(
            "bind",
            "refusing a non-loopback bind without auth.token",
        )),
        _ => Ok(()),
    }
}

/// Plain DNS names: what a `Host` header carries without its port.
fn check_hosts(hosts: &[String]) -> Result<(), ConfigError> {
    for host in hosts {
        let plain = !host.is_empty()
            && host.len() <= 253
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        if !plain {
            let reason = format!("`{host}` is not a host name (letters, digits, `-`, `.`)");
            return Err(invalid("http.allowed_hosts", reason));
        }
    }
    Ok(())
}

fn check_tmux(tmux: &TmuxConfig) -> Result<(), ConfigError> {
    non_empty("tmux.bin", &tmux.bin)?;
    if let Some(name) = &tmux.socket_name {
        non_empty("tmux.socket_name", name)?;
        if name.contains('/') {
            let reason = "must be a plain name; use tmux.socket_path for a path";
            return Err(invalid("tmux.socket_name", reason));
        }
    }
    if let Some(path) = &tmux.socket_path {
        non_empty("tmux.socket_path", path)?;
    }
    if let Some(path) = &tmux.config_file {
        non_empty("tmux.config_file", path)?;
    }
    if tmux.socket_name.is_some() && tmux.socket_path.is_some() {
        let reason = "set either tmux.socket_name or tmux.socket_path, not both";
        return Err(invalid("tmux.socket_path", reason));
    }
    Ok(())
}

fn check_globs(key: &str, patterns: &[String]) -> Result<(), ConfigError> {
    for pattern in patterns {
        if let Err(err) = glob::Pattern::new(pattern) {
            return Err(invalid(
                key,
                format!("`{pattern}` is not a valid glob: {err}"),
            ));
        }
    }
    Ok(())
}

/// Where a value came from, as `tmuxd config` and error messages say it.
fn origin(key: &str, source: Source) -> String {
    let name_in = |table: &[(&str, &str)]| {
        let found = table.iter().find(|(k, _)| *k == key);
        found.map_or("?", |(_, name)| *name).to_owned()
    };
    match source {
        Source::Default => "default".to_owned(),
        Source::File => "config file".to_owned(),
        Source::Env => format!("env {}", name_in(&ENV_VARS)),
        Source::Flag => format!("flag {}", name_in(&FLAGS)),
    }
}

/// Every key with its value as TOML, `None` when unset; tokens masked (and
/// in `render`, every credential: see `mask`).
fn rendered_values(c: &Config) -> [(&'static str, Option<String>); 58] {
    let text = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let path = |p: &Path| text(&p.to_string_lossy());
    let list = |items: &[String]| toml::Value::from(items.to_vec()).to_string();
    let secret = |token: &Option<String>| masked(token).map(text);
    let num = |n: u64| Some(n.to_string());
    #[rustfmt::skip]
    let values = [
        ("bind", Some(text(&c.bind.to_string()))),
        ("data_dir", Some(path(&c.data_dir))),
        ("log", Some(text(&c.log))),
        ("log_file", c.log_file.as_deref().map(path)),
        ("max_sessions", num(c.max_sessions as u64)),
        ("checkpoint_interval_s", num(c.checkpoint_interval_s)),
        ("auth.token", secret(&c.auth.token)),
        ("auth.read_token", secret(&c.auth.read_token)),
        ("auth.insecure_no_auth", Some(c.auth.insecure_no_auth.to_string())),
        ("tmux.bin", Some(path(&c.tmux.bin))),
        ("tmux.socket_name", c.tmux.socket_name.as_deref().map(text)),
        ("tmux.socket_path", c.tmux.socket_path.as_deref().map(path)),
        ("tmux.config_file", c.tmux.config_file.as_deref().map(path)),
        ("tmux.command_timeout_ms", num(c.tmux.command_timeout_ms)),
        ("tmux.screen_checks_per_s", num(u64::from(c.tmux.screen_checks_per_s))),
        ("tmux.live_clients", num(u64::from(c.tmux.live_clients))),
        ("discovery.interval_ms", num(c.discovery.interval_ms)),
        ("discovery.include", Some(list(&c.discovery.include))),
        ("discovery.exclude", Some(list(&c.discovery.exclude))),
        ("discovery.min_age_ms", num(c.discovery.min_age_ms)),
        ("reaper.interval_ms", num(c.reaper.interval_ms)),
        ("session.replay_bytes", num(c.session.replay_bytes as u64)),
        ("session.subscriber_queue_bytes", num(c.session.subscriber_queue_bytes as u64)),
        ("session.max_scrollback_lines", num(c.session.max_scrollback_lines as u64)),
        ("session.ended_max", num(c.session.ended_max as u64)),
        ("session.ended_max_age_s", num(c.session.ended_max_age_s)),
        ("session.ended_scrollback_lines", num(c.session.ended_scrollback_lines as u64)),
        ("http.max_body_bytes", num(c.http.max_body_bytes as u64)),
        ("http.max_streams_per_session", num(c.http.max_streams_per_session as u64)),
        ("http.max_streams", num(c.http.max_streams as u64)),
        ("http.max_connections", num(c.http.max_connections as u64)),
        ("http.header_read_timeout_ms", num(c.http.header_read_timeout_ms)),
        ("http.idle_timeout_ms", num(c.http.idle_timeout_ms)),
        ("http.allowed_hosts", Some(list(&c.http.allowed_hosts))),
        ("http.max_waits_per_session", num(c.http.max_waits_per_session as u64)),
        ("http.max_waits", num(c.http.max_waits as u64)),
        ("state.attention_after_s", num(c.state.attention_after_s)),
        ("state.idle_after_ms", num(c.state.idle_after_ms)),
        ("state.prompt_settle_ms", num(c.state.prompt_settle_ms)),
        ("state.probe_interval_ms", num(c.state.probe_interval_ms)),
        ("state.rules", Some(sections::render_rules(&c.state.rules))),
        ("state.disabled_presets", Some(list(&c.state.disabled_presets))),
        ("notify.webhook_url", c.notify.webhook_url.as_deref().map(text)),
        ("notify.command", c.notify.command.as_deref().map(|argv| list(&mask::mask_command(argv)))),
        ("notify.cooldown_s", num(c.notify.cooldown_s)),
        ("notify.max_per_minute", num(c.notify.max_per_minute)),
        ("notify.retries", num(u64::from(c.notify.retries))),
        ("notify.timeout_ms", num(c.notify.timeout_ms)),
        ("notify.secret", c.notify.secret.as_deref().map(text)),
        ("notify.on", Some(list(&c.notify.on.iter().map(|o| o.as_str().to_owned()).collect::<Vec<_>>()))),
        ("notify.web_push", Some(c.notify.web_push.to_string())),
        ("notify.push_contact", Some(text(&c.notify.push_contact))),
        ("notify.page_url", c.notify.page_url.as_deref().map(text)),
        ("notify.ntfy", c.notify.ntfy.as_ref().map(sections::render_ntfy)),
        ("restore.on_start", Some(c.restore.on_start.to_string())),
        ("fleet.peers", Some(fleet::render_peers(&c.fleet.peers))),
        ("fleet.request_timeout_ms", num(c.fleet.request_timeout_ms)),
        ("fleet.heartbeat_ms", num(c.fleet.heartbeat_ms)),
    ];
    values
}

impl Loaded {
    /// `tmuxd config` output: the file line, then `key = value  # source` per key.
    /// Unset keys are printed commented out; tokens, any key named like a
    /// secret, and credentials in URLs and the notify command as `****`.
    pub fn render(&self) -> String {
        let mut out = match &self.file {
            Some(path) => format!("# config file: {}\n", path.display()),
            None => "# no config file\n".to_owned(),
        };
        let mut lines = Vec::new();
        for (key, value) in rendered_values(&self.config) {
            let value = value.map(|value| match mask::is_secret_key(key) {
                true => toml::Value::String(MASK.to_owned()).to_string(),
                false => mask_urls(&value),
            });
            let setting = match value {
                Some(value) => format!("{key} = {value}"),
                None => format!("# {key} = (unset)"),
            };
            let source = self.sources.get(key).copied().unwrap_or(Source::Default);
            lines.push((setting, origin(key, source)));
        }
        let width = lines.iter().map(|(setting, _)| setting.len()).max();
        let width = width.unwrap_or(0);
        for (setting, origin) in lines {
            let _ = writeln!(out, "{setting:width$}  # {origin}");
        }
        out
    }
}

#[cfg(test)]
mod tests;
