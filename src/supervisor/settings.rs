//! The supervisor's settings, taken from the config once at start.

use std::path::Path;
use std::time::Duration;

use super::endings::Retention;
use super::plan::NameFilter;
use super::wait::WaitLimits;
use crate::config::{Config, RuleConfig, RuleState};
use crate::session::{ActorConfig, ScreenRule, SessionState, Timing};

/// Supervisor settings, taken from the config.
#[derive(Clone, Debug)]
pub struct Settings {
    pub max_sessions: usize,
    pub discovery_interval: Duration,
    pub reaper_interval: Duration,
    pub checkpoint_interval: Duration,
    pub filter: NameFilter,
    /// How long a session made outside tmuxd must have lived before
    /// discovery adopts it (`discovery.min_age_ms`).
    pub min_age: Duration,
    pub actor: ActorConfig,
    pub max_scrollback_lines: usize,
    /// How long a tmux command may take, forked or over a control client.
    pub command_timeout: Duration,
    /// How many ended sessions stay readable, and for how long.
    pub retention: Retention,
    /// Waits open at once, per session and in all.
    pub waits: WaitLimits,
    /// The environment of every session tmuxd makes: its own unix socket
    /// (`TMUXD_SOCKET`), so `tmuxd hooks send` in an agent there finds
    /// this daemon whatever its data dir. Never a token.
    pub session_env: Vec<(String, String)>,
    /// Where a session starts when its creator names no directory: without
    /// `-c`, tmux would start it in tmuxd's own working directory, which
    /// nobody chose (a service's `/`, the checkout tmuxd was run from).
    pub default_cwd: String,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        Settings {
            max_sessions: config.max_sessions,
            discovery_interval: Duration::from_millis(config.discovery.interval_ms),
            reaper_interval: Duration::from_millis(config.reaper.interval_ms),
            checkpoint_interval: Duration::from_secs(config.checkpoint_interval_s),
            filter: NameFilter::new(&config.discovery.include, &config.discovery.exclude),
            min_age: Duration::from_millis(config.discovery.min_age_ms),
            actor: ActorConfig {
                replay_bytes: config.session.replay_bytes,
                subscriber_queue_bytes: config.session.subscriber_queue_bytes,
                timing: Timing {
                    idle_after: chrono::Duration::milliseconds(config.state.idle_after_ms as i64),
                    prompt_settle: chrono::Duration::milliseconds(
                        config.state.prompt_settle_ms as i64,
                    ),
                    attention_after: chrono::Duration::seconds(
                        config.state.attention_after_s as i64,
                    ),
                    probe_interval: chrono::Duration::milliseconds(
                        config.state.probe_interval_ms as i64,
                    ),
                },
                rules: config
                    .state
                    .rules
                    .iter()
                    .map(compile_rule)
                    .chain(crate::session::presets(&config.state.disabled_presets))
                    .collect(),
                ended_scrollback_lines: config.session.ended_scrollback_lines,
            },
            max_scrollback_lines: config.session.max_scrollback_lines,
            command_timeout: Duration::from_millis(config.tmux.command_timeout_ms),
            retention: Retention {
                max: config.session.ended_max,
                max_age: chrono::Duration::seconds(config.session.ended_max_age_s as i64),
                history_lines: config.session.ended_scrollback_lines,
            },
            waits: WaitLimits {
                per_session: config.http.max_waits_per_session,
                total: config.http.max_waits,
            },
            session_env: vec![(
                crate::cli::SOCKET_VAR.to_owned(),
                std::path::absolute(config.data_dir.join(crate::store::SOCKET_FILE))
                    .unwrap_or_else(|_| config.data_dir.join(crate::store::SOCKET_FILE))
                    .to_string_lossy()
                    .into_owned(),
            )],
            default_cwd: default_cwd(std::env::var_os("HOME").as_deref()),
        }
    }
}

/// The daemon's HOME when it names a directory, else `/` (where tmux itself
/// ends up when neither a directory nor HOME can be entered).
fn default_cwd(home: Option<&std::ffi::OsStr>) -> String {
    home.and_then(|home| home.to_str())
        .map(Path::new)
        .filter(|home| home.is_absolute() && home.is_dir())
        .map_or_else(|| "/".to_owned(), |home| home.display().to_string())
}

/// A validated rule, compiled. Its reason is leaked: rules live as long
/// as the daemon, and a `'static` reason keeps state views `Copy`.
fn compile_rule(rule: &RuleConfig) -> ScreenRule {
    ScreenRule {
        regex: regex::Regex::new(&rule.regex).expect("validated with the config"),
        rows: rule.rows,
        state: match rule.state {
            RuleState::Idle => SessionState::Idle,
            RuleState::Working => SessionState::Working,
            RuleState::Waiting => SessionState::Waiting,
        },
        reason: Box::leak(rule.reason.clone().into_boxed_str()),
        agent: rule.agent,
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    #[test]
    fn the_default_cwd_is_home_when_it_is_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let cases: [(Option<&OsStr>, &str); 5] = [
            (Some(OsStr::new(home)), home),
            (None, "/"),
            (Some(OsStr::new("relative/home")), "/"),
            (Some(OsStr::new("/no/such/home")), "/"),
            (Some(file.as_os_str()), "/"),
        ];
        for (given, expected) in cases {
            assert_eq!(super::default_cwd(given), expected, "{given:?}");
        }
    }
}
