//! What a notification says besides its event: the session's name, cwd,
//! command, agent and state, the last lines on its screen, and one human
//! line (`message`) made of them.

use serde::Serialize;
use serde_json::Value;

use super::Trigger;
use crate::id::SessionId;
use crate::session::{Region, SnapshotFormat};
use crate::store::Event;
use crate::supervisor::Supervisor;

/// Non-empty screen lines a notification carries, the last ones.
const SCREEN_LINES: usize = 5;
/// Longest screen line quoted in `message`, in characters.
const QUOTED_CHARS: usize = 120;

/// The session as a notification describes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Context {
    /// The tmux session's name.
    pub name: Option<String>,
    pub cwd: Option<String>,
    /// The foreground program of the active pane.
    pub command: Option<String>,
    /// The coding agent in its foreground (`claude`, `codex`...), if any.
    pub agent: Option<String>,
    pub state: Option<String>,
    /// The last non-empty lines of the active pane, oldest first.
    pub screen: Vec<String>,
}

impl Context {
    /// Asks the supervisor about the event's session (live, or ended and
    /// kept); what it cannot tell stays empty.
    pub async fn gather(supervisor: &Supervisor, event: &Event) -> Context {
        let Some(Ok(id)) = event.session_id.as_deref().map(str::parse::<SessionId>) else {
            return Context::default();
        };
        let mut context = Context::default();
        if let Ok(summary) = supervisor.get(id).await {
            let text = |s: String| Some(s).filter(|s| !s.is_empty());
            context.name = Some(summary.tmux_name);
            context.cwd = text(summary.actor.cwd);
            context.command = text(summary.actor.current_command);
            context.agent = summary.actor.agent.map(|a| a.as_str().to_owned());
            context.state = serde_json::to_value(summary.actor.state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned));
        }
        if let Ok(snapshot) = supervisor
            .snapshot(id, SnapshotFormat::Text, Region::ActivePane)
            .await
        {
            context.screen = last_lines(&snapshot.snapshot.screen.lines, SCREEN_LINES);
        }
        context
    }
}

/// The last `n` lines with something on them, trimmed at the end.
fn last_lines(lines: &[String], n: usize) -> Vec<String> {
    let mut kept: Vec<String> = lines
        .iter()
        .rev()
        .map(|l| l.trim_end())
        .filter(|l| !l.is_empty())
        .take(n)
        .map(str::to_owned)
        .collect();
    kept.reverse();
    kept
}

/// One line for a human: who, and what happened, e.g.
/// `build (sess_4) asks: Proceed? [y/N]` or `build (sess_4) exited 3`.
pub fn message(trigger: Trigger, event: &Event, context: &Context) -> String {
    let id = event.session_id.as_deref().unwrap_or("");
    let who = match &context.name {
        Some(name) => format!("{name} ({id})"),
        None => id.to_owned(),
    };
    let last = context.screen.last().map(|l| quote(l));
    let detail = |key: &str| event.detail.get(key).and_then(Value::as_i64);
    match trigger {
        Trigger::TmuxLost => "the tmux server is gone, with tmuxd's sessions".to_owned(),
        Trigger::Exited => match (detail("exit_status"), detail("exit_signal")) {
            (Some(status), _) => format!("{who} exited {status}"),
            (None, Some(signal)) => format!("{who} was killed by signal {signal}"),
            (None, None) => {
                let reason = event.reason.as_deref().unwrap_or("unknown");
                format!("{who} ended ({reason})")
            }
        },
        Trigger::Attention => {
            let reason = event
                .detail
                .get("attention")
                .and_then(|a| a.get("reason"))
                .and_then(Value::as_str);
            let text = event
                .detail
                .get("attention")
                .and_then(|a| a.get("text"))
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty());
            match (reason, last) {
                (Some("notification"), _) if let Some(text) = text => {
                    format!("{who} says: {}", quote(text))
                }
                (Some("needs_input"), Some(line)) => format!("{who} asks: {line}"),
                (Some("bell"), Some(line)) => format!("{who} rang the bell: {line}"),
                (Some("bell"), None) => format!("{who} rang the bell"),
                (Some("long_silence"), Some(line)) => format!("{who} went silent: {line}"),
                (Some("long_silence"), None) => format!("{who} went silent"),
                (_, Some(line)) => format!("{who} needs you: {line}"),
                (_, None) => format!("{who} needs you"),
            }
        }
    }
}

/// A screen line as quoted in a message: trimmed, cut at `QUOTED_CHARS`.
fn quote(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(reason: Option<&str>, detail: Value) -> Event {
        serde_json::from_value(json!({
            "seq": 7, "at": "2026-01-01T00:00:00Z", "kind": "session_state",
            "session_id": "sess_4", "reason": reason,
        }))
        .map(|mut e: Event| {
            e.detail = detail.as_object().cloned().unwrap_or_default();
            e
        })
        .unwrap()
    }

    #[test]
    fn messages_say_who_and_what() {
        let build = Context {
            name: Some("build".into()),
            screen: vec!["compiling".into(), "Proceed? [y/N]".into()],
            ..Context::default()
        };
        let nameless = Context::default();
        let attention = |reason: &str| json!({"attention": {"reason": reason}});
        let cases = [
            (
                Trigger::Attention,
                event(None, attention("needs_input")),
                &build,
                "build (sess_4) asks: Proceed? [y/N]",
            ),
            (
                Trigger::Attention,
                event(None, attention("bell")),
                &build,
                "build (sess_4) rang the bell: Proceed? [y/N]",
            ),
            (
                Trigger::Attention,
                event(None, attention("bell")),
                &nameless,
                "sess_4 rang the bell",
            ),
            (
                Trigger::Attention,
                event(None, attention("long_silence")),
                &nameless,
                "sess_4 went silent",
            ),
            (
                Trigger::Attention,
                event(
                    None,
                    json!({"attention": {"reason": "notification", "text": "Tests passed"}}),
                ),
                &build,
                "build (sess_4) says: Tests passed",
            ),
            (
                Trigger::Attention,
                event(None, attention("tests_failed")),
                &build,
                "build (sess_4) needs you: Proceed? [y/N]",
            ),
            (
                Trigger::Exited,
                event(Some("process_exit"), json!({"exit_status": 3})),
                &build,
                "build (sess_4) exited 3",
            ),
            (
                Trigger::Exited,
                event(
                    Some("process_exit"),
                    json!({"exit_status": null, "exit_signal": 9}),
                ),
                &build,
                "build (sess_4) was killed by signal 9",
            ),
            (
                Trigger::Exited,
                event(Some("api_kill"), json!({})),
                &build,
                "build (sess_4) ended (api_kill)",
            ),
        ];
        for (trigger, event, context, want) in cases {
            assert_eq!(message(trigger, &event, context), want);
        }
    }

    #[test]
    fn the_last_non_empty_lines() {
        let lines: Vec<String> = ["a", "", "b  ", "c", "", ""].map(String::from).to_vec();
        assert_eq!(last_lines(&lines, 2), ["b", "c"]);
        assert_eq!(last_lines(&lines, 5), ["a", "b", "c"]);
        let long = "x".repeat(200);
        assert_eq!(quote(&long).chars().count(), QUOTED_CHARS + 1);
    }
}
