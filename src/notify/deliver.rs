//! Sending one notification: the webhook POST (retried with doubling
//! delays, never redirected), the command (its environment scrubbed of
//! tmuxd's own variables, then given the event), the ntfy publish and a
//! Web Push to every subscribed browser, each bounded by the timeout.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Trigger;
use super::message::{Context, message};
use crate::config::{NotifyConfig, NtfyConfig, mask_urls};
use crate::metrics::Metrics;
use crate::push::http::Poster;
use crate::push::{Message, Push, Sent};
use crate::wire::Event;

/// The first retry's delay; each next one doubles it.
const FIRST_RETRY: Duration = Duration::from_secs(1);

/// The targets besides the webhook and command, shared by every delivery.
#[derive(Clone)]
pub struct Targets {
    push: Option<Push>,
    page_url: String,
    /// This machine's name, as pushes and ntfy say it.
    host: String,
    /// ntfy's client, made at its first publish (it reads the system's
    /// certificates).
    poster: std::sync::Arc<std::sync::OnceLock<Poster>>,
}

impl Targets {
    pub fn new(targets: super::Targets) -> Targets {
        Targets {
            push: targets.push,
            page_url: targets.page_url,
            host: crate::push::host_name(),
            poster: Default::default(),
        }
    }
}

pub struct Delivery {
    webhook: Option<String>,
    command: Option<Vec<String>>,
    retries: u32,
    timeout: Duration,
    trigger: Trigger,
    event: Event,
    /// Signs the webhook body (`X-Tmuxd-Signature`).
    secret: Option<String>,
    /// The session, as `run` found it.
    context: Context,
    ntfy: Option<NtfyConfig>,
    targets: Targets,
}

impl Delivery {
    pub fn new(config: &NotifyConfig, targets: &Targets, trigger: Trigger, event: &Event) -> Self {
        Delivery {
            webhook: config.webhook_url.clone(),
            command: config.command.clone(),
            retries: config.retries,
            timeout: Duration::from_millis(config.timeout_ms),
            trigger,
            event: event.clone(),
            secret: config.secret.clone(),
            context: Context::default(),
            ntfy: config.ntfy.clone(),
            targets: targets.clone(),
        }
    }

    /// The notification with what it says of its session.
    pub fn with_context(mut self, context: Context) -> Self {
        self.context = context;
        self
    }

    /// Sends to every target configured, each counted in the metrics as
    /// delivered or failed (a push per browser).
    pub async fn run(self, cancel: CancellationToken, metrics: Metrics) {
        let message =
            super::push_message(self.trigger, &self.event, &self.context, &self.targets.host);
        let (posted, ran, published, pushed) = tokio::join!(
            self.post(&cancel),
            self.run_command(),
            self.publish_ntfy(&message),
            self.push(&message),
        );
        let pushed = pushed.into_iter().filter(|sent| *sent != Sent::Gone);
        let pushed = pushed.map(|sent| Some(sent == Sent::Delivered));
        for outcome in [posted, ran, published].into_iter().chain(pushed).flatten() {
            match outcome {
                true => metrics.notification_delivered(),
                false => metrics.notification_failed(),
            }
        }
    }

    /// Whether ntfy took it; `None` without `notify.ntfy`.
    async fn publish_ntfy(&self, message: &Message) -> Option<bool> {
        let ntfy = self.ntfy.as_ref()?;
        let poster = self.targets.poster.get_or_init(Poster::new);
        let page = &self.targets.page_url;
        Some(super::ntfy::publish(poster, ntfy, message, page, self.timeout).await)
    }

    /// How the push to each subscribed browser went.
    async fn push(&self, message: &Message) -> Vec<Sent> {
        match &self.targets.push {
            Some(push) => push.send(message, self.timeout).await,
            None => Vec::new(),
        }
    }

    /// `{"trigger", "seq", "event", "message", "session_id", "name", "cwd",
    /// "command", "agent", "state", "screen"}`.
    fn body(&self) -> Value {
        let c = &self.context;
        json!({
            "trigger": self.trigger.as_str(),
            "seq": self.event.seq,
            "event": self.event,
            "message": message(self.trigger, &self.event, c),
            "session_id": self.event.session_id,
            "name": c.name,
            "cwd": c.cwd,
            "command": c.command,
            "agent": c.agent,
            "state": c.state,
            "screen": c.screen,
        })
    }

    /// Whether the webhook took it; `None` without a webhook (or when
    /// tmuxd stops while retrying).
    async fn post(&self, cancel: &CancellationToken) -> Option<bool> {
        let url = self.webhook.as_ref()?;
        // A redirect would re-send the event (a 307 or 308 with its body)
        // to wherever the answer names: only the configured URL gets it.
        let client = match reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
        {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!("cannot build the webhook client: {}", describe(e));
                return Some(false);
            }
        };
        let body = serde_json::to_vec(&self.body()).unwrap_or_default();
        let signature = self
            .secret
            .as_ref()
            .map(|secret| super::sign::signature(secret.as_bytes(), &body));
        let shown = mask_urls(url);
        let mut delay = FIRST_RETRY;
        for attempt in 0..=self.retries {
            let mut request = client
                .post(url)
                .timeout(self.timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
            if let Some(signature) = &signature {
                request = request.header("x-tmuxd-signature", signature);
            }
            let sent = request.send().await;
            match sent {
                Ok(answer) if answer.status().is_success() => return Some(true),
                Ok(answer) if answer.status().is_redirection() => {
                    let location = answer
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .map(|l| mask_urls(&String::from_utf8_lossy(l.as_bytes())));
                    // The same URL answers the same way: no retry.
                    tracing::warn!(
                        seq = self.event.seq,
                        attempt,
                        status = %answer.status(),
                        location = location.as_deref().unwrap_or("(none)"),
                        webhook = %shown,
                        "webhook answered with a redirect, which tmuxd does not follow; notification not delivered"
                    );
                    return Some(false);
                }
                Ok(answer) => {
                    tracing::warn!(seq = self.event.seq, attempt, status = %answer.status(), webhook = %shown, "webhook refused a notification")
                }
                Err(e) => {
                    tracing::warn!(seq = self.event.seq, attempt, webhook = %shown, "webhook unreachable: {}", describe(e))
                }
            }
            if attempt == self.retries {
                break;
            }
            tokio::select! {
                _ = cancel.cancelled() => return None,
                _ = tokio::time::sleep(delay) => {}
            }
            delay *= 2;
        }
        tracing::warn!(
            seq = self.event.seq,
            "notification not delivered to the webhook"
        );
        Some(false)
    }

    /// Whether the command ran and succeeded; `None` without a command.
    async fn run_command(&self) -> Option<bool> {
        let (program, args) = self.command.as_ref()?.split_first()?;
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        // Never a token: every inherited TMUXD_* (and tmux's pane
        // variables) goes, then only the event is added.
        for var in crate::tmux::child_env_removals() {
            command.env_remove(var);
        }
        command
            .env("TMUXD_EVENT", self.event_json())
            .env("TMUXD_EVENT_SEQ", self.event.seq.to_string())
            .env("TMUXD_EVENT_TRIGGER", self.trigger.as_str())
            .env(
                "TMUXD_MESSAGE",
                message(self.trigger, &self.event, &self.context),
            )
            .env(
                "TMUXD_SESSION_ID",
                self.event.session_id.clone().unwrap_or_default(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                tracing::warn!("cannot run the notify command {program:?}: {e}");
                return Some(false);
            }
        };
        let succeeded = match tokio::time::timeout(self.timeout, child.wait()).await {
            Ok(Ok(status)) if status.success() => true,
            Ok(Ok(status)) => {
                tracing::warn!(seq = self.event.seq, "the notify command {status}");
                false
            }
            Ok(Err(e)) => {
                tracing::warn!("waiting for the notify command: {e}");
                false
            }
            Err(_) => {
                tracing::warn!(
                    seq = self.event.seq,
                    "the notify command timed out; killing it"
                );
                let _ = child.kill().await;
                false
            }
        };
        Some(succeeded)
    }

    fn event_json(&self) -> String {
        serde_json::to_string(&self.event).unwrap_or_default()
    }
}

/// The error and its causes, without the URL reqwest would print (it may
/// carry the webhook's credentials; callers name the masked URL).
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&mask_urls(&cause.to_string()));
        source = cause.source();
    }
    text
}
