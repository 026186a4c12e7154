//! What a notification says besides its event: the session's name, cwd,
//! command, agent and state, the last lines on its screen, and one human
//! line (`message`) made of them.

use serde::Serialize;

use super::Trigger;
use crate::id::SessionId;
use crate::session::{Region, SnapshotFormat};
use crate::supervisor::Supervisor;
use crate::wire::{AttentionReason, Event, Payload};

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
    let exit = event.payload().and_then(Payload::exit).unwrap_or_default();
    match trigger {
        Trigger::TmuxLost => "the tmux server is gone, with tmuxd's sessions".to_owned(),
        Trigger::Exited => match (exit.exit_status, exit.exit_signal) {
            (Some(status), _) => format!("{who} exited {status}"),
            (None, Some(signal)) => format!("{who} was killed by signal {signal}"),
            (None, None) => {
                let reason = event.reason.as_deref().unwrap_or("unknown");
                format!("{who} ended ({reason})")
            }
        },
        Trigger::Attention => {
            let attention = match event.payload() {
                Some(Payload::SessionState(changed)) => changed.attention.as_ref(),
                _ => None,
            };
            let reason = attention.map(|a| a.reason);
            let text = attention
                .and_then(|a| a.text.as_deref())
                .filter(|t| !t.is_empty());
            use AttentionReason as R;
            match (reason, last) {
                (Some(R::Notification), _) if let Some(text) = text => {
                    format!("{who} says: {}", quote(text))
                }
                (Some(R::NeedsInput), Some(line)) => format!("{who} asks: {line}"),
                (Some(R::Bell), Some(line)) => format!("{who} rang the bell: {line}"),
                (Some(R::Bell), None) => format!("{who} rang the bell"),
                (Some(R::LongSilence), Some(line)) => format!("{who} went silent: {line}"),
                (Some(R::LongSilence), None) => format!("{who} went silent"),
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
    use crate::wire::{Attention, Body, Deleted, Exit, SessionState, StateChanged};

    fn event(reason: Option<&str>, payload: Payload) -> Event {
        Event {
            seq: 7,
            at: "2026-01-01T00:00:00Z".parse().unwrap(),
            session_id: Some("sess_4".into()),
            reason: reason.map(str::to_owned),
            tmux_name: None,
            body: Body::Whole(payload),
            from_peer: None,
        }
    }

    fn attention(reason: AttentionReason, text: Option<&str>) -> Payload {
        let at = "2026-01-01T00:00:00Z".parse().unwrap();
        Payload::SessionState(StateChanged {
            state: SessionState::Waiting,
            state_since: at,
            attention: Some(Attention {
                reason,
                since: at,
                text: text.map(str::to_owned),
            }),
            acknowledged_by: None,
            exit: None,
        })
    }

    fn ended(exit_status: Option<i32>, exit_signal: Option<i32>) -> Payload {
        let exit = Exit {
            exit_status,
            exit_signal,
        };
        Payload::SessionDeleted(Deleted { exit: Some(exit) })
    }

    #[test]
    fn messages_say_who_and_what() {
        let build = Context {
            name: Some("build".into()),
            screen: vec!["compiling".into(), "Proceed? [y/N]".into()],
            ..Context::default()
        };
        let nameless = Context::default();
        let cases = [
            (
                Trigger::Attention,
                event(None, attention(AttentionReason::NeedsInput, None)),
                &build,
                "build (sess_4) asks: Proceed? [y/N]",
            ),
            (
                Trigger::Attention,
                event(None, attention(AttentionReason::Bell, None)),
                &build,
                "build (sess_4) rang the bell: Proceed? [y/N]",
            ),
            (
                Trigger::Attention,
                event(None, attention(AttentionReason::Bell, None)),
                &nameless,
                "sess_4 rang the bell",
            ),
            (
                Trigger::Attention,
                event(None, attention(AttentionReason::LongSilence, None)),
                &nameless,
                "sess_4 went silent",
            ),
            (
                Trigger::Attention,
                event(
                    None,
                    attention(AttentionReason::Notification, Some("Tests passed")),
                ),
                &build,
                "build (sess_4) says: Tests passed",
            ),
            (
                Trigger::Attention,
                event(None, attention(AttentionReason::Notification, None)),
                &build,
                "build (sess_4) needs you: Proceed? [y/N]",
            ),
            (
                Trigger::Exited,
                event(Some("process_exit"), ended(Some(3), None)),
                &build,
                "build (sess_4) exited 3",
            ),
            (
                Trigger::Exited,
                event(Some("process_exit"), ended(None, Some(9))),
                &build,
                "build (sess_4) was killed by signal 9",
            ),
            (
                Trigger::Exited,
                event(
                    Some("api_kill"),
                    Payload::SessionDeleted(Deleted::default()),
                ),
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
