//! The settings of state rules (`[[state.rules]]`) and notifications
//! (`[notify]`): their shapes, and the checks `validate` runs on them.

use serde::Deserialize;

use super::{ConfigError, invalid};
use crate::wire::Agent;

/// Rows a rule looks at when it does not say.
const DEFAULT_RULE_ROWS: usize = 5;

/// One `[[state.rules]]` table: a regex over the active pane's last `rows`
/// rows with text, and the state and reason it means.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    pub regex: String,
    #[serde(default = "default_rows")]
    pub rows: usize,
    pub state: RuleState,
    /// Reported as `state_reason`: lowercase letters, digits and `_`.
    pub reason: String,
    /// Applies only while this coding agent is in the foreground.
    #[serde(default)]
    pub agent: Option<Agent>,
}

fn default_rows() -> usize {
    DEFAULT_RULE_ROWS
}

/// The states a rule can set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleState {
    Idle,
    Working,
    Waiting,
}

impl RuleState {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleState::Idle => "idle",
            RuleState::Working => "working",
            RuleState::Waiting => "waiting",
        }
    }
}

/// What `notify.on` can name: the kinds of notification tmuxd sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyOn {
    /// A session's attention flag raised.
    Attention,
    /// Every end of a session.
    Exited,
    /// An end with a non-zero status or by a signal.
    FailedExit,
    /// The tmux server lost with tmuxd's sessions.
    TmuxLost,
}

impl NotifyOn {
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyOn::Attention => "attention",
            NotifyOn::Exited => "exited",
            NotifyOn::FailedExit => "failed_exit",
            NotifyOn::TmuxLost => "tmux_lost",
        }
    }
}

/// `[notify]`: what tmuxd does when a session needs attention or exits.
/// Its `Debug` masks the secret (a config may be logged).
#[derive(Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// POSTed a JSON body per notification (http:// only).
    pub webhook_url: Option<String>,
    /// Run per notification (argv; no shell), the event in its environment.
    pub command: Option<Vec<String>>,
    /// Seconds after a session's attention notification in which its next
    /// one is skipped (exits are always sent).
    pub cooldown_s: u64,
    /// Notifications sent at most per minute, all sessions together.
    pub max_per_minute: u64,
    /// Retries of a failed webhook call, with doubling delays from 1 s.
    pub retries: u32,
    /// Longest a webhook call or the command may take, in milliseconds.
    pub timeout_ms: u64,
    /// Signs each webhook body: `X-Tmuxd-Signature`, hex HMAC-SHA256.
    pub secret: Option<String>,
    /// What is notified: everything unless the config narrows it.
    pub on: Vec<NotifyOn>,
    /// Pushes to the browsers that turned notifications on (Web Push).
    pub web_push: bool,
    /// The VAPID contact (`mailto:` or `https:`) push services may use.
    pub push_contact: String,
    /// The dashboard's address as a phone reaches it, for links in ntfy
    /// notifications (default: the bind address).
    pub page_url: Option<String>,
    /// An ntfy server and topic to publish to.
    pub ntfy: Option<NtfyConfig>,
}

/// `notify.ntfy = { url, topic, token }`. Its `Debug` masks the token.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NtfyConfig {
    /// The server, `https://ntfy.sh` or your own.
    pub url: String,
    pub topic: String,
    /// An access token (`tk_...`), sent as a bearer header.
    #[serde(default)]
    pub token: Option<String>,
}

impl std::fmt::Debug for NtfyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NtfyConfig")
            .field("url", &super::mask_urls(&self.url))
            .field("topic", &self.topic)
            .field("token", &self.token.as_ref().map(|_| "****"))
            .finish()
    }
}

/// `{ url = "...", topic = "...", token = "****" }`.
pub fn render_ntfy(ntfy: &NtfyConfig) -> String {
    let text = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let mut fields = vec![
        format!("url = {}", text(&super::mask_urls(&ntfy.url))),
        format!("topic = {}", text(&ntfy.topic)),
    ];
    if ntfy.token.is_some() {
        fields.push(format!("token = {}", text(super::MASK)));
    }
    format!("{{ {} }}", fields.join(", "))
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            webhook_url: None,
            command: None,
            cooldown_s: 300,
            max_per_minute: 20,
            retries: 3,
            timeout_ms: 5000,
            secret: None,
            on: vec![NotifyOn::Attention, NotifyOn::Exited, NotifyOn::TmuxLost],
            web_push: true,
            push_contact: "mailto:tmuxd@localhost".to_owned(),
            page_url: None,
            ntfy: None,
        }
    }
}

impl std::fmt::Debug for NotifyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotifyConfig")
            .field(
                "webhook_url",
                &self.webhook_url.as_deref().map(super::mask_urls),
            )
            .field("command", &self.command)
            .field("cooldown_s", &self.cooldown_s)
            .field("max_per_minute", &self.max_per_minute)
            .field("retries", &self.retries)
            .field("timeout_ms", &self.timeout_ms)
            .field("secret", &self.secret.as_ref().map(|_| "****"))
            .field("on", &self.on)
            .field("web_push", &self.web_push)
            .field("push_contact", &self.push_contact)
            .field("page_url", &self.page_url)
            .field("ntfy", &self.ntfy)
            .finish()
    }
}

/// `[notify]` in a layer. Its `Debug` masks the secret.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileNotify {
    pub webhook_url: Option<String>,
    pub command: Option<Vec<String>>,
    pub cooldown_s: Option<u64>,
    pub max_per_minute: Option<u64>,
    pub retries: Option<u32>,
    pub timeout_ms: Option<u64>,
    pub secret: Option<String>,
    pub on: Option<Vec<NotifyOn>>,
    pub web_push: Option<bool>,
    pub push_contact: Option<String>,
    pub page_url: Option<String>,
    pub ntfy: Option<NtfyConfig>,
}

impl std::fmt::Debug for FileNotify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileNotify")
            .field(
                "webhook_url",
                &self.webhook_url.as_deref().map(super::mask_urls),
            )
            .field("command", &self.command)
            .field("secret", &self.secret.as_ref().map(|_| "****"))
            .field("on", &self.on)
            .field("ntfy", &self.ntfy)
            .finish_non_exhaustive()
    }
}

/// Each rule's regex compiles, its rows and reason are sensible.
pub fn check_rules(rules: &[RuleConfig]) -> Result<(), ConfigError> {
    for (i, rule) in rules.iter().enumerate() {
        let key = format!("state.rules[{i}]");
        if let Err(e) = regex::Regex::new(&rule.regex) {
            return Err(invalid(&key, format!("regex does not compile: {e}")));
        }
        if !(1..=500).contains(&rule.rows) {
            return Err(invalid(
                &key,
                format!("rows must be between 1 and 500, got {}", rule.rows),
            ));
        }
        let word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if rule.reason.is_empty() || rule.reason.len() > 64 || !rule.reason.chars().all(word) {
            return Err(invalid(
                &key,
                format!("reason {:?} must be 1 to 64 of a-z, 0-9 and _", rule.reason),
            ));
        }
    }
    Ok(())
}

/// Each word names a preset, an agent, or `all`.
pub fn check_disabled_presets(words: &[String]) -> Result<(), ConfigError> {
    for word in words {
        crate::session::check_disabled_preset(word)
            .map_err(|reason| invalid("state.disabled_presets", reason.to_string()))?;
    }
    Ok(())
}

/// Shortest `notify.secret`: a receiver checks signatures only as well as
/// the secret is hard to guess.
pub const MIN_SECRET_CHARS: usize = 24;

pub fn check_notify(notify: &NotifyConfig) -> Result<(), ConfigError> {
    if let Some(secret) = &notify.secret
        && secret.chars().count() < MIN_SECRET_CHARS
    {
        let reason = format!(
            "must be at least {MIN_SECRET_CHARS} characters, got {}",
            secret.chars().count()
        );
        return Err(invalid("notify.secret", reason));
    }
    if let Some(url) = &notify.webhook_url {
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            let shown = super::mask_urls(url);
            invalid("notify.webhook_url", format!("{shown:?} is not a URL: {e}"))
        })?;
        if parsed.scheme() != "http" {
            let reason = "must be an http:// URL (tmuxd is built without TLS; use a local relay)";
            return Err(invalid("notify.webhook_url", reason));
        }
    }
    let contact = &notify.push_contact;
    let contact_ok = (contact.starts_with("mailto:") && contact.len() > 7)
        || reqwest::Url::parse(contact).is_ok_and(|u| u.scheme() == "https");
    if !contact_ok || contact.len() > 256 || contact.chars().any(char::is_control) {
        return Err(invalid(
            "notify.push_contact",
            format!("{contact:?} must be a mailto: address or an https:// URL"),
        ));
    }
    if let Some(page) = &notify.page_url {
        let parsed = reqwest::Url::parse(page).ok();
        if !parsed.is_some_and(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.username().is_empty()
                && u.password().is_none()
        }) {
            let shown = super::mask_urls(page);
            return Err(invalid(
                "notify.page_url",
                format!("{shown:?} must be an http:// or https:// URL without credentials"),
            ));
        }
    }
    if let Some(ntfy) = &notify.ntfy {
        let parsed = reqwest::Url::parse(&ntfy.url).ok();
        if !parsed.is_some_and(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.username().is_empty()
                && u.password().is_none()
        }) {
            let shown = super::mask_urls(&ntfy.url);
            return Err(invalid(
                "notify.ntfy",
                format!(
                    "url {shown:?} must be an http:// or https:// URL without credentials (put a token in `token`)"
                ),
            ));
        }
        let topic_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if ntfy.topic.is_empty() || ntfy.topic.len() > 64 || !ntfy.topic.chars().all(topic_char) {
            return Err(invalid(
                "notify.ntfy",
                format!(
                    "topic {:?} must be 1 to 64 of A-Z, a-z, 0-9, - and _",
                    ntfy.topic
                ),
            ));
        }
        if ntfy.token.as_ref().is_some_and(|t| {
            t.is_empty() || t.len() > 256 || !t.chars().all(|c| c.is_ascii_graphic())
        }) {
            return Err(invalid(
                "notify.ntfy",
                "token must be 1 to 256 printable ASCII characters",
            ));
        }
    }
    if let Some(command) = &notify.command
        && command.first().is_none_or(|program| program.is_empty())
    {
        return Err(invalid(
            "notify.command",
            "must name a program: [\"/path/to/program\", \"arg\"...]",
        ));
    }
    Ok(())
}

/// `[{ regex = "...", rows = 5, state = "waiting", reason = "..." }]`.
pub fn render_rules(rules: &[RuleConfig]) -> String {
    let tables: Vec<String> = rules
        .iter()
        .map(|r| {
            let text = |s: &str| toml::Value::String(s.to_owned()).to_string();
            let agent = r
                .agent
                .map(|a| format!(", agent = {}", text(a.as_str())))
                .unwrap_or_default();
            format!(
                "{{ regex = {}, rows = {}, state = {}, reason = {}{agent} }}",
                text(&r.regex),
                r.rows,
                text(r.state.as_str()),
                text(&r.reason)
            )
        })
        .collect();
    format!("[{}]", tables.join(", "))
}
