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

/// The process environment, passed in (`std::env::vars().collect()` in main).
pub type Env = BTreeMap<String, String>;

/// Where each key's effective value came from, keyed by dotted key name.
type Sources = BTreeMap<&'static str, Source>;

/// How tokens appear in `tmuxd config` output and in `Debug`.
const MASK: &str = "****";

/// Every key, in the order `tmuxd config` prints them.
#[rustfmt::skip]
const KEYS: [&str; 22] = [
    "bind", "data_dir", "log", "max_sessions", "checkpoint_interval_s",
    "auth.token", "auth.read_token",
    "tmux.bin", "tmux.socket_name", "tmux.socket_path", "tmux.config_file", "tmux.command_timeout_ms",
    "discovery.interval_ms", "discovery.include", "discovery.exclude",
    "reaper.interval_ms",
    "session.replay_bytes", "session.subscriber_queue", "session.max_scrollback_lines",
    "http.max_body_bytes",
    "state.attention_after_s", "state.idle_after_ms",
];

/// The environment variable behind each key that has one.
#[rustfmt::skip]
const ENV_VARS: [(&str, &str); 9] = [
    ("bind", "TMUXD_BIND"), ("data_dir", "TMUXD_DATA_DIR"), ("log", "TMUXD_LOG"),
    ("max_sessions", "TMUXD_MAX_SESSIONS"),
    ("auth.token", "TMUXD_TOKEN"), ("auth.read_token", "TMUXD_READ_TOKEN"),
    ("tmux.bin", "TMUXD_TMUX_BIN"), ("tmux.socket_name", "TMUXD_TMUX_SOCKET_NAME"),
    ("tmux.socket_path", "TMUXD_TMUX_SOCKET_PATH"),
];

/// The `tmuxd serve` flag behind each key that has one.
const FLAGS: [(&str, &str); 2] = [("bind", "--bind"), ("data_dir", "--data-dir")];

/// The effective, validated settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Address the HTTP API listens on.
    pub bind: SocketAddr,
    /// Directory for the registry, event log and other persisted state.
    pub data_dir: PathBuf,
    /// `tracing` filter directive, e.g. `info` or `tmuxd=debug,info`.
    pub log: String,
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
}

/// `[auth]`: API tokens; `Debug` masks them so they never reach a log.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// Read-write bearer token; without it only loopback clients are served.
    pub token: Option<String>,
    /// Read-only bearer token (GET and streams); requires and differs from `token`.
    pub read_token: Option<String>,
}

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
    /// Output chunks queued per stream subscriber; one further behind is dropped.
    pub subscriber_queue: usize,
    /// Scrollback lines kept per session.
    pub max_scrollback_lines: usize,
}

/// `[http]`: HTTP limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpConfig {
    /// Largest request body accepted; larger answers 413.
    pub max_body_bytes: usize,
}

/// `[state]`: thresholds of the idle and attention states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateConfig {
    /// Seconds a session may wait idle before it is marked `attention`.
    pub attention_after_s: u64,
    /// Milliseconds without output after which a busy session is `idle`.
    pub idle_after_ms: u64,
}

impl Config {
    /// The built-in settings; `env` supplies XDG_DATA_HOME / HOME for `data_dir`.
    pub fn defaults(env: &Env) -> Config {
        Config {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 7420)),
            data_dir: default_data_dir(env),
            log: "info".to_owned(),
            max_sessions: 256,
            checkpoint_interval_s: 30,
            auth: AuthConfig::default(),
            tmux: TmuxConfig {
                bin: PathBuf::from("tmux"),
                socket_name: None,
                socket_path: None,
                config_file: None,
                command_timeout_ms: 5000,
            },
            discovery: DiscoveryConfig {
                interval_ms: 2000,
                include: vec!["*".to_owned()],
                exclude: Vec::new(),
            },
            reaper: ReaperConfig { interval_ms: 250 },
            session: SessionConfig {
                replay_bytes: 524_288,
                subscriber_queue: 256,
                max_scrollback_lines: 10_000,
            },
            http: HttpConfig {
                max_body_bytes: 1_048_576,
            },
            state: StateConfig {
                attention_after_s: 300,
                idle_after_ms: 1500,
            },
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
    pub max_sessions: Option<usize>,
    pub checkpoint_interval_s: Option<u64>,
    pub auth: FileAuth,
    pub tmux: FileTmux,
    pub discovery: FileDiscovery,
    pub reaper: FileReaper,
    pub session: FileSession,
    pub http: FileHttp,
    pub state: FileState,
}

/// `[auth]`; `Debug` masks the tokens.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileAuth {
    pub token: Option<String>,
    pub read_token: Option<String>,
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
}

/// `[discovery]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDiscovery {
    pub interval_ms: Option<u64>,
    pub include: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
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
    pub subscriber_queue: Option<usize>,
    pub max_scrollback_lines: Option<usize>,
}

/// `[http]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileHttp {
    pub max_body_bytes: Option<usize>,
}

/// `[state]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileState {
    pub attention_after_s: Option<u64>,
    pub idle_after_ms: Option<u64>,
}

fn deserialize_bind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
    let text = String::deserialize(d)?;
    parse_bind(&text).map(Some).map_err(D::Error::custom)
}

/// `ADDR:PORT` (including `[::1]:PORT`) or `localhost:PORT`, which means 127.0.0.1.
fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    let parsed = match text.strip_prefix("localhost:") {
        Some(port) => port
            .parse()
            .ok()
            .map(|port: u16| (Ipv4Addr::LOCALHOST, port).into()),
        None => text.parse().ok(),
    };
    let example = "e.g. 127.0.0.1:7420, [::1]:7420, localhost:7420";
    parsed.ok_or_else(|| format!("`{text}` is not ADDR:PORT ({example})"))
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
    let paths = [
        ("data_dir", &mut layer.data_dir),
        ("tmux.bin", &mut layer.tmux.bin),
        ("tmux.socket_path", &mut layer.tmux.socket_path),
        ("tmux.config_file", &mut layer.tmux.config_file),
    ];
    for (key, path) in paths {
        let Some(rest) = path.as_deref().and_then(|p| p.strip_prefix("~").ok()) else {
            continue;
        };
        let home = env_value(env, "HOME")
            .ok_or_else(|| invalid(key, "cannot expand `~`: HOME is not set"))?;
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
    take!("max_sessions", max_sessions);
    take!("checkpoint_interval_s", checkpoint_interval_s);
    take!("auth.token", auth.token, optional);
    take!("auth.read_token", auth.read_token, optional);
    take!("tmux.bin", tmux.bin);
    take!("tmux.socket_name", tmux.socket_name, optional);
    take!("tmux.socket_path", tmux.socket_path, optional);
    take!("tmux.config_file", tmux.config_file, optional);
    take!("tmux.command_timeout_ms", tmux.command_timeout_ms);
    take!("discovery.interval_ms", discovery.interval_ms);
    take!("discovery.include", discovery.include);
    take!("discovery.exclude", discovery.exclude);
    take!("reaper.interval_ms", reaper.interval_ms);
    take!("session.replay_bytes", session.replay_bytes);
    take!("session.subscriber_queue", session.subscriber_queue);
    take!("session.max_scrollback_lines", session.max_scrollback_lines);
    take!("http.max_body_bytes", http.max_body_bytes);
    take!("state.attention_after_s", state.attention_after_s);
    take!("state.idle_after_ms", state.idle_after_ms);
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
    check_auth(&c.auth, c.bind)?;
    check_tmux(&c.tmux)?;
    check_globs("discovery.include", &c.discovery.include)?;
    check_globs("discovery.exclude", &c.discovery.exclude)?;
    #[rustfmt::skip]
    let ranges: [(&str, u64, RangeInclusive<u64>); 11] = [
        ("max_sessions", c.max_sessions as u64, 1..=4096),
        ("checkpoint_interval_s", c.checkpoint_interval_s, 1..=3600),
        ("tmux.command_timeout_ms", c.tmux.command_timeout_ms, 100..=60_000),
        ("discovery.interval_ms", c.discovery.interval_ms, 100..=3_600_000),
        ("reaper.interval_ms", c.reaper.interval_ms, 10..=10_000),
        ("session.replay_bytes", c.session.replay_bytes as u64, 4096..=67_108_864),
        ("session.subscriber_queue", c.session.subscriber_queue as u64, 1..=65_536),
        ("session.max_scrollback_lines", c.session.max_scrollback_lines as u64, 1..=1_000_000),
        ("http.max_body_bytes", c.http.max_body_bytes as u64, 1024..=67_108_864),
        ("state.attention_after_s", c.state.attention_after_s, 1..=86_400),
        ("state.idle_after_ms", c.state.idle_after_ms, 50..=600_000),
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
    Ok(())
}

fn non_empty(key: &str, value: impl AsRef<OsStr>) -> Result<(), ConfigError> {
    match value.as_ref().is_empty() {
        true => Err(invalid(key, "must not be empty")),
        false => Ok(()),
    }
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
    }
    let open_bind = !bind.ip().to_canonical().is_loopback();
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

/// Every key with its value as TOML, `None` when unset; tokens masked.
fn rendered_values(c: &Config) -> [(&'static str, Option<String>); 22] {
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
        ("max_sessions", num(c.max_sessions as u64)),
        ("checkpoint_interval_s", num(c.checkpoint_interval_s)),
        ("auth.token", secret(&c.auth.token)),
        ("auth.read_token", secret(&c.auth.read_token)),
        ("tmux.bin", Some(path(&c.tmux.bin))),
        ("tmux.socket_name", c.tmux.socket_name.as_deref().map(text)),
        ("tmux.socket_path", c.tmux.socket_path.as_deref().map(path)),
        ("tmux.config_file", c.tmux.config_file.as_deref().map(path)),
        ("tmux.command_timeout_ms", num(c.tmux.command_timeout_ms)),
        ("discovery.interval_ms", num(c.discovery.interval_ms)),
        ("discovery.include", Some(list(&c.discovery.include))),
        ("discovery.exclude", Some(list(&c.discovery.exclude))),
        ("reaper.interval_ms", num(c.reaper.interval_ms)),
        ("session.replay_bytes", num(c.session.replay_bytes as u64)),
        ("session.subscriber_queue", num(c.session.subscriber_queue as u64)),
        ("session.max_scrollback_lines", num(c.session.max_scrollback_lines as u64)),
        ("http.max_body_bytes", num(c.http.max_body_bytes as u64)),
        ("state.attention_after_s", num(c.state.attention_after_s)),
        ("state.idle_after_ms", num(c.state.idle_after_ms)),
    ];
    values
}

impl Loaded {
    /// `tmuxd config` output: the file line, then `key = value  # source` per key.
    /// Unset keys are printed commented out; tokens as `"****"`.
    pub fn render(&self) -> String {
        let mut out = match &self.file {
            Some(path) => format!("# config file: {}\n", path.display()),
            None => "# no config file\n".to_owned(),
        };
        let mut lines = Vec::new();
        for (key, value) in rendered_values(&self.config) {
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
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../config.example.toml");

    fn env(pairs: &[(&str, &str)]) -> Env {
        let pairs = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        pairs.collect()
    }

    fn home() -> Env {
        env(&[("HOME", "/home/u")])
    }

    fn file(text: &str) -> FileConfig {
        parse_file(text, Path::new("test.toml")).unwrap()
    }

    fn flag_bind(bind: &str) -> Flags {
        let bind = Some(bind.to_owned());
        Flags {
            bind,
            ..Flags::default()
        }
    }

    /// Sources that are not `Default`, as `key=Source` strings.
    fn set_keys(sources: &Sources) -> Vec<String> {
        let set = sources.iter().filter(|(_, s)| **s != Source::Default);
        set.map(|(k, s)| format!("{k}={s:?}")).collect()
    }

    fn invalid_parts<T: fmt::Debug>(result: Result<T, ConfigError>) -> (String, String) {
        match result {
            Err(ConfigError::Invalid { key, reason }) => (key, reason),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn data_dir_default_follows_xdg_then_home() {
        #[rustfmt::skip]
        let cases: [(&[(&str, &str)], &str); 5] = [
            (&[], ""),
            (&[("HOME", "/home/u")], "/home/u/.local/share/tmuxd"),
            (&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/xdg")], "/xdg/tmuxd"),
            (&[("HOME", "/home/u"), ("XDG_DATA_HOME", "rel")], "/home/u/.local/share/tmuxd"),
            (&[("HOME", "/home/u"), ("XDG_DATA_HOME", "")], "/home/u/.local/share/tmuxd"),
        ];
        for (pairs, expected) in cases {
            let data_dir = Config::defaults(&env(pairs)).data_dir;
            assert_eq!(data_dir, Path::new(expected), "{pairs:?}");
        }
    }

    #[test]
    fn defaults_are_valid_and_match_the_contract() {
        let config = Config::defaults(&home());
        validate(&config).unwrap();
        assert_eq!(config.bind, "127.0.0.1:7420".parse().unwrap());
        assert_eq!((config.log.as_str(), config.max_sessions), ("info", 256));
        assert_eq!(config.discovery.include, ["*"]);
        assert_eq!(config.tmux.bin, Path::new("tmux"));
        assert_eq!(config.auth, AuthConfig::default());
    }

    #[test]
    fn file_values_override_defaults() {
        let text = r#"
            bind = "[::1]:0"
            max_sessions = 12
            [tmux]
            socket_name = "tmuxd-test"
            [discovery]
            exclude = ["scratch-*"]
            [state]
            idle_after_ms = 50
        "#;
        let (config, sources) = resolve(Some(file(text)), &home(), &Flags::default()).unwrap();
        assert_eq!(config.bind, "[::1]:0".parse().unwrap());
        assert_eq!(config.max_sessions, 12);
        assert_eq!(config.tmux.socket_name.as_deref(), Some("tmuxd-test"));
        assert_eq!(config.discovery.exclude, ["scratch-*"]);
        assert_eq!(config.state.idle_after_ms, 50);
        let expected = [
            "bind=File",
            "discovery.exclude=File",
            "max_sessions=File",
            "state.idle_after_ms=File",
            "tmux.socket_name=File",
        ];
        assert_eq!(set_keys(&sources), expected);
    }

    #[test]
    fn parse_errors_name_the_key() {
        #[rustfmt::skip]
        let cases = [
            ("colour = 1", "colour"),
            ("[tmux]\nsocket = \"x\"", "socket"),
            ("[tmuxx]", "tmuxx"),
            ("max_sessions = \"many\"", "max_sessions"),
            ("[session]\nreplay_bytes = -1", "replay_bytes"),
            ("[discovery]\ninclude = \"*\"", "include"),
            ("bind = \"nonsense\"", "nonsense"),
            ("log = ", "log"),
        ];
        for (text, needle) in cases {
            match parse_file(text, Path::new("test.toml")) {
                Err(ConfigError::Parse { path, message }) => {
                    assert_eq!(path, Path::new("test.toml"));
                    assert!(message.contains(needle), "{text:?}: {message}");
                }
                other => panic!("{text:?}: expected Parse, got {other:?}"),
            }
        }
    }

    #[test]
    fn later_layers_win() {
        let in_file = "bind = \"127.0.0.2:1\"";
        let no_flags = Flags::default();
        #[rustfmt::skip]
        let cases = [
            (in_file, env(&[]), &no_flags, "127.0.0.2:1", Source::File),
            (in_file, env(&[("TMUXD_BIND", "127.0.0.3:2")]), &no_flags, "127.0.0.3:2", Source::Env),
            (in_file, env(&[("TMUXD_BIND", "127.0.0.3:2")]), &flag_bind("127.0.0.4:3"), "127.0.0.4:3", Source::Flag),
            (in_file, env(&[("TMUXD_BIND", "")]), &no_flags, "127.0.0.2:1", Source::File),
            ("", env(&[]), &flag_bind("localhost:9"), "127.0.0.1:9", Source::Flag),
            ("", env(&[]), &no_flags, "127.0.0.1:7420", Source::Default),
        ];
        for (text, env, flags, bind, source) in cases {
            let (config, sources) = resolve(Some(file(text)), &env, flags).unwrap();
            assert_eq!(
                config.bind,
                bind.parse().unwrap(),
                "{text} {env:?} {flags:?}"
            );
            assert_eq!(sources["bind"], source, "{text} {env:?} {flags:?}");
        }
    }

    #[test]
    fn mixed_layers_record_each_source() {
        let text = "log = \"debug\"\nmax_sessions = 10\ndata_dir = \"/file\"";
        let env = env(&[
            ("HOME", "/h"),
            ("TMUXD_MAX_SESSIONS", " 20 "),
            ("TMUXD_DATA_DIR", "/env"),
        ]);
        let flags = Flags {
            data_dir: Some("/flag".into()),
            ..Flags::default()
        };
        let (config, sources) = resolve(Some(file(text)), &env, &flags).unwrap();
        assert_eq!((config.log.as_str(), config.max_sessions), ("debug", 20));
        assert_eq!(config.data_dir, Path::new("/flag"));
        assert_eq!(sources.len(), KEYS.len());
        let expected = ["data_dir=Flag", "log=File", "max_sessions=Env"];
        assert_eq!(set_keys(&sources), expected);
    }

    #[test]
    fn every_env_var_sets_its_key() {
        #[rustfmt::skip]
        let cases = [
            ("TMUXD_BIND", "127.0.0.1:1", "bind"),
            ("TMUXD_DATA_DIR", "/d", "data_dir"),
            ("TMUXD_LOG", "debug", "log"),
            ("TMUXD_MAX_SESSIONS", "7", "max_sessions"),
            ("TMUXD_TOKEN", "rw", "auth.token"),
            ("TMUXD_READ_TOKEN", "ro", "auth.read_token"),
            ("TMUXD_TMUX_BIN", "/usr/bin/tmux", "tmux.bin"),
            ("TMUXD_TMUX_SOCKET_NAME", "t", "tmux.socket_name"),
            ("TMUXD_TMUX_SOCKET_PATH", "/tmp/t.sock", "tmux.socket_path"),
        ];
        assert_eq!(cases.len(), ENV_VARS.len());
        for (var, value, key) in cases {
            assert!(ENV_VARS.contains(&(key, var)), "{var}");
            let (_, sources) = resolve(None, &env(&[(var, value)]), &Flags::default()).unwrap();
            assert_eq!(set_keys(&sources), [format!("{key}=Env")]);
        }
    }

    #[test]
    fn env_and_flag_values_that_do_not_parse_name_key_and_origin() {
        let no_flags = Flags::default();
        #[rustfmt::skip]
        let cases = [
            (env(&[("TMUXD_MAX_SESSIONS", "abc")]), &no_flags, "max_sessions", "TMUXD_MAX_SESSIONS"),
            (env(&[("TMUXD_MAX_SESSIONS", "-1")]), &no_flags, "max_sessions", "TMUXD_MAX_SESSIONS"),
            (env(&[("TMUXD_BIND", "nonsense")]), &no_flags, "bind", "TMUXD_BIND"),
            (env(&[("TMUXD_BIND", "127.0.0.1")]), &no_flags, "bind", "TMUXD_BIND"),
            (env(&[]), &flag_bind("nonsense"), "bind", "--bind"),
        ];
        for (env, flags, key, needle) in cases {
            let (got_key, reason) = invalid_parts(resolve(None, &env, flags));
            assert_eq!(got_key, key);
            assert!(reason.contains(needle), "{reason}");
        }
    }

    #[test]
    fn bind_forms() {
        #[rustfmt::skip]
        let cases = [
            ("127.0.0.1:7420", Some("127.0.0.1:7420")),
            ("[::1]:0", Some("[::1]:0")),
            ("localhost:8080", Some("127.0.0.1:8080")),
            ("0.0.0.0:80", Some("0.0.0.0:80")),
            ("localhost", None),
            ("localhost:99999", None),
            ("::1:80", None),
            ("example.com:80", None),
            ("", None),
        ];
        for (text, expected) in cases {
            let expected = expected.map(|addr| addr.parse::<SocketAddr>().unwrap());
            assert_eq!(parse_bind(text).ok(), expected, "{text:?}");
        }
    }

    /// Each case is a config file; `None` means it must validate.
    #[test]
    fn validate_checks_ranges_and_combinations() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("", None),
            ("max_sessions = 0", Some(("max_sessions", "must be between 1 and 4096, got 0"))),
            ("max_sessions = 1", None),
            ("max_sessions = 4096", None),
            ("max_sessions = 4097", Some(("max_sessions", "got 4097"))),
            ("checkpoint_interval_s = 0", Some(("checkpoint_interval_s", "between 1 and 3600"))),
            ("checkpoint_interval_s = 3600", None),
            ("checkpoint_interval_s = 3601", Some(("checkpoint_interval_s", "got 3601"))),
            ("[tmux]\ncommand_timeout_ms = 99", Some(("tmux.command_timeout_ms", "got 99"))),
            ("[tmux]\ncommand_timeout_ms = 100", None),
            ("[tmux]\ncommand_timeout_ms = 60000", None),
            ("[tmux]\ncommand_timeout_ms = 60001", Some(("tmux.command_timeout_ms", "got 60001"))),
            ("[discovery]\ninterval_ms = 99", Some(("discovery.interval_ms", "got 99"))),
            ("[discovery]\ninterval_ms = 3600001", Some(("discovery.interval_ms", "got 3600001"))),
            ("[reaper]\ninterval_ms = 9", Some(("reaper.interval_ms", "got 9"))),
            ("[reaper]\ninterval_ms = 10001", Some(("reaper.interval_ms", "got 10001"))),
            ("[session]\nreplay_bytes = 4095", Some(("session.replay_bytes", "got 4095"))),
            ("[session]\nreplay_bytes = 67108864", None),
            ("[session]\nsubscriber_queue = 0", Some(("session.subscriber_queue", "got 0"))),
            ("[session]\nsubscriber_queue = 65537", Some(("session.subscriber_queue", "got 65537"))),
            ("[session]\nmax_scrollback_lines = 0", Some(("session.max_scrollback_lines", "got 0"))),
            ("[http]\nmax_body_bytes = 1023", Some(("http.max_body_bytes", "got 1023"))),
            ("[state]\nattention_after_s = 86401", Some(("state.attention_after_s", "got 86401"))),
            ("[state]\nidle_after_ms = 49", Some(("state.idle_after_ms", "got 49"))),
            ("log = \" \"", Some(("log", "must not be empty"))),
            ("data_dir = \"\"", Some(("data_dir", "HOME"))),
            ("[tmux]\nbin = \"\"", Some(("tmux.bin", "must not be empty"))),
            ("[tmux]\nsocket_name = \"\"", Some(("tmux.socket_name", "must not be empty"))),
            ("[tmux]\nsocket_name = \"a/b\"", Some(("tmux.socket_name", "plain name"))),
            ("[tmux]\nconfig_file = \"\"", Some(("tmux.config_file", "must not be empty"))),
            ("[tmux]\nsocket_name = \"a\"\nsocket_path = \"/tmp/a\"",
                Some(("tmux.socket_path", "set either tmux.socket_name or tmux.socket_path, not both"))),
            ("[auth]\ntoken = \"\"", Some(("auth.token", "must not be empty"))),
            ("[auth]\ntoken = \" tok\"", Some(("auth.token", "whitespace"))),
            ("[auth]\ntoken = \"same\"\nread_token = \"same\"", Some(("auth.read_token", "must differ from auth.token"))),
            ("[auth]\nread_token = \"ro\"", Some(("auth.read_token", "requires auth.token"))),
            ("bind = \"0.0.0.0:7420\"", Some(("bind", "refusing a non-loopback bind without auth.token"))),
            ("bind = \"192.168.1.5:80\"", Some(("bind", "non-loopback"))),
            ("bind = \"0.0.0.0:7420\"\n[auth]\ntoken = \"secret\"", None),
            ("bind = \"[::1]:0\"", None),
            ("bind = \"[::ffff:127.0.0.1]:1\"", None),
            ("[discovery]\ninclude = [\"[\"]", Some(("discovery.include", "`[` is not a valid glob"))),
            ("[discovery]\nexclude = [\"a[b\"]", Some(("discovery.exclude", "not a valid glob"))),
            ("[discovery]\ninclude = [\"build-*\", \"?x\"]\nexclude = []", None),
        ];
        for (text, expected) in cases {
            let (config, _) = resolve(Some(file(text)), &home(), &Flags::default()).unwrap();
            match expected {
                None => assert!(validate(&config).is_ok(), "{text}: {:?}", validate(&config)),
                Some((key, needle)) => {
                    let (got_key, reason) = invalid_parts(validate(&config));
                    assert_eq!(got_key, *key, "{text}");
                    assert!(reason.contains(needle), "{text}: {reason}");
                }
            }
        }
    }

    #[test]
    fn home_is_expanded_in_file_paths_only() {
        let text = "data_dir = \"~/d\"\n[tmux]\nbin = \"~/bin/tmux\"\nconfig_file = \"~user/x\"";
        let env = env(&[("HOME", "/home/u"), ("TMUXD_TMUX_SOCKET_PATH", "~/sock")]);
        let (config, _) = resolve(Some(file(text)), &env, &Flags::default()).unwrap();
        assert_eq!(config.data_dir, Path::new("/home/u/d"));
        assert_eq!(config.tmux.bin, Path::new("/home/u/bin/tmux"));
        assert_eq!(config.tmux.config_file.unwrap(), Path::new("~user/x"));
        assert_eq!(config.tmux.socket_path.unwrap(), Path::new("~/sock"));
        let (key, reason) =
            invalid_parts(resolve(Some(file(text)), &Env::new(), &Flags::default()));
        assert_eq!(
            (key.as_str(), reason.as_str()),
            ("data_dir", "cannot expand `~`: HOME is not set")
        );
    }

    #[test]
    fn file_choice_prefers_flag_then_env_then_home() {
        let explicit = |path: &str| {
            Some(FileChoice {
                path: path.into(),
                required: true,
            })
        };
        let optional = |path: &str| {
            Some(FileChoice {
                path: path.into(),
                required: false,
            })
        };
        let with_flag = Flags {
            config: Some("/flag.toml".into()),
            ..Flags::default()
        };
        let no_flags = Flags::default();
        #[rustfmt::skip]
        let cases = [
            (&with_flag, env(&[("TMUXD_CONFIG", "/env.toml"), ("HOME", "/h")]), explicit("/flag.toml")),
            (&no_flags, env(&[("TMUXD_CONFIG", "/env.toml"), ("HOME", "/h")]), explicit("/env.toml")),
            (&no_flags, env(&[("TMUXD_CONFIG", ""), ("HOME", "/h")]), optional("/h/.config/tmuxd/config.toml")),
            (&no_flags, env(&[]), None),
        ];
        for (flags, env, expected) in cases {
            assert_eq!(choose_file(flags, &env), expected, "{flags:?} {env:?}");
        }
    }

    #[test]
    fn load_reads_files_and_reports_problems() {
        let dir = tempfile::tempdir().unwrap();
        let home = env(&[("HOME", dir.path().to_str().unwrap())]);
        let no_flags = Flags::default();
        let default_file = dir.path().join(".config/tmuxd/config.toml");

        assert_eq!(
            load(&no_flags, &home).unwrap().file,
            None,
            "a missing default file is fine"
        );

        std::fs::create_dir_all(default_file.parent().unwrap()).unwrap();
        std::fs::write(&default_file, "log = \"debug\"\n").unwrap();
        let loaded = load(&no_flags, &home).unwrap();
        assert_eq!(loaded.file.as_deref(), Some(default_file.as_path()));
        assert_eq!(
            (loaded.config.log.as_str(), loaded.sources["log"]),
            ("debug", Source::File)
        );

        let missing = dir.path().join("missing.toml");
        let by_flag = Flags {
            config: Some(missing.clone()),
            ..Flags::default()
        };
        let mut by_env = home.clone();
        by_env.insert("TMUXD_CONFIG".into(), missing.to_str().unwrap().into());
        for result in [load(&by_flag, &home), load(&no_flags, &by_env)] {
            assert!(matches!(result, Err(ConfigError::Read { path, .. }) if path == missing));
        }

        std::fs::write(&default_file, "max_sessions = 0\n").unwrap();
        let (key, reason) = invalid_parts(load(&no_flags, &home));
        assert_eq!(key, "max_sessions");
        assert!(reason.ends_with(&format!("(from config file {})", default_file.display())));
        let mut bad_env = home.clone();
        bad_env.insert("TMUXD_MAX_SESSIONS".into(), "9999".into());
        let (_, reason) = invalid_parts(load(&no_flags, &bad_env));
        assert!(
            reason.ends_with("(from env TMUXD_MAX_SESSIONS)"),
            "{reason}"
        );

        std::fs::write(&default_file, "[auth]\ntokn = \"x\"\n").unwrap();
        let result = load(&no_flags, &home);
        assert!(
            matches!(result, Err(ConfigError::Parse { message, .. }) if message.contains("tokn"))
        );
    }

    #[test]
    fn render_masks_tokens_and_names_sources() {
        let env = env(&[
            ("HOME", "/h"),
            ("TMUXD_TOKEN", "s3cret-rw"),
            ("TMUXD_READ_TOKEN", "s3cret-ro"),
        ]);
        let (config, sources) = resolve(None, &env, &flag_bind("0.0.0.0:1")).unwrap();
        let loaded = Loaded {
            config,
            sources,
            file: None,
        };
        let text = loaded.render();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(!format!("{loaded:?}").contains("s3cret"));
        let layer = env_layer(&env).unwrap();
        assert!(!format!("{layer:?}").contains("s3cret"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + KEYS.len());
        assert_eq!(lines[0], "# no config file");
        let line = |prefix: &str| *lines.iter().find(|l| l.starts_with(prefix)).unwrap();
        assert!(line("auth.token = \"****\" ").ends_with("  # env TMUXD_TOKEN"));
        assert!(line("auth.read_token = \"****\" ").ends_with("  # env TMUXD_READ_TOKEN"));
        assert!(line("bind = \"0.0.0.0:1\" ").ends_with("  # flag --bind"));
        assert!(line("# tmux.socket_name = (unset) ").ends_with("  # default"));
        assert!(line("discovery.include = [\"*\"] ").ends_with("  # default"));
        let rendered_keys = rendered_values(&loaded.config).map(|(key, _)| key);
        assert_eq!(rendered_keys, KEYS);
    }

    #[test]
    fn example_file_parses_to_nothing_set() {
        let parsed = parse_file(EXAMPLE, Path::new("config.example.toml")).unwrap();
        assert_eq!(parsed, FileConfig::default());
    }

    /// Uncommenting every `# key = value` line must set every key, to its default.
    #[test]
    fn example_file_lists_every_key_with_its_default() {
        let is_key = |key: &str| key.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        let uncomment = |line: &'static str| match line.strip_prefix("# ") {
            Some(rest) if rest.split_once(" = ").is_some_and(|(key, _)| is_key(key)) => rest,
            _ => line,
        };
        let text: Vec<&str> = EXAMPLE.lines().map(uncomment).collect();
        let layer = file(&text.join("\n"));
        let (mut config, sources) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
        assert!(sources.values().all(|s| *s == Source::File), "{sources:?}");
        config.auth = AuthConfig::default();
        config.tmux.socket_name = None;
        config.tmux.socket_path = None;
        config.tmux.config_file = None;
        assert_eq!(config, Config::defaults(&home()));
    }
}
