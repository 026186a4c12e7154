//! What a push says: the session's name and host, the notifier's one
//! line, the attention it is about (an answer must give its `since` back)
//! and the answers the question on screen takes; never the screen. The
//! notifier decides it; `push` only carries it.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::{Context, Trigger};
use crate::push::{Answer, Message};
use crate::wire::Event;

/// What `encodeURIComponent` leaves alone, as the page writes its routes.
const PATH_PART: &AsciiSet = &NON_ALPHANUMERIC.remove(b'_').remove(b'-').remove(b'.');

/// Answers offered at most: Chromium shows two action buttons.
const MAX_ANSWERS: usize = 2;

/// What a push says of `event` (see `push::Message`).
pub fn push_message(trigger: Trigger, event: &Event, context: &Context, host: &str) -> Message {
    let session_id = event.session_id.clone();
    let name = context.name.clone();
    let who = name
        .clone()
        .or_else(|| session_id.clone())
        .unwrap_or_default();
    let title = match trigger {
        Trigger::TmuxLost => format!("tmux lost on {host}"),
        _ => format!("{who} on {host}"),
    };
    let since = (trigger == Trigger::Attention)
        .then(|| event.attention_since())
        .flatten();
    let answers = match since {
        Some(_) => answers_for(context),
        None => Vec::new(),
    };
    let url = match &session_id {
        Some(id) => format!("/#/s/{}", utf8_percent_encode(id, PATH_PART)),
        None => "/#/".to_owned(),
    };
    Message {
        v: 1,
        trigger: trigger.as_str().to_owned(),
        title,
        body: super::message(trigger, event, context),
        tag: session_id.clone().unwrap_or_else(|| "tmuxd".to_owned()),
        session_id,
        name,
        host: host.to_owned(),
        since,
        url,
        answers,
    }
}

/// The answers a question on screen takes, from what the agent presets
/// know: a `[y/N]`-style choice takes `y` and `n` (or `yes` and `no`),
/// Claude Code's permission menu takes `1` (allow) and Escape (deny).
/// Anything else has no answers: the notification opens the session.
pub fn answers_for(context: &Context) -> Vec<Answer> {
    let answer = |n: usize, title: &str, text: Option<&str>, keys: &[&str]| Answer {
        action: format!("a{n}"),
        title: title.to_owned(),
        text: text.map(str::to_owned),
        keys: keys.iter().map(|k| (*k).to_owned()).collect(),
    };
    let last = context
        .screen
        .last()
        .map(|l| l.trim().to_lowercase())
        .unwrap_or_default();
    let claude_menu = context.agent.as_deref() == Some("claude")
        && context.screen.iter().any(|l| l.contains("1. Yes"));
    let mut answers = if claude_menu {
        vec![
            answer(0, "Allow", Some("1"), &[]),
            answer(1, "Deny", None, &["Escape"]),
        ]
    } else if ["[yes/no]", "(yes/no)"].iter().any(|c| last.ends_with(c)) {
        vec![
            answer(0, "yes", Some("yes"), &["Enter"]),
            answer(1, "no", Some("no"), &["Enter"]),
        ]
    } else if ["[y/n]", "(y/n)"]
        .iter()
        .any(|c| last.trim_end_matches([':', '?', ' ']).ends_with(c))
    {
        vec![
            answer(0, "y", Some("y"), &["Enter"]),
            answer(1, "n", Some("n"), &["Enter"]),
        ]
    } else {
        Vec::new()
    };
    answers.truncate(MAX_ANSWERS);
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn context(agent: Option<&str>, screen: &[&str]) -> Context {
        Context {
            name: Some("build".into()),
            agent: agent.map(str::to_owned),
            screen: screen.iter().map(|s| (*s).to_owned()).collect(),
            ..Context::default()
        }
    }

    #[test]
    fn answers_from_the_question_on_screen() {
        let titles =
            |c: Context| -> Vec<String> { answers_for(&c).into_iter().map(|a| a.title).collect() };
        assert_eq!(titles(context(None, &["Proceed? [y/N]"])), ["y", "n"]);
        assert_eq!(titles(context(None, &["Continue (Y/n)? "])), ["y", "n"]);
        assert_eq!(
            titles(context(None, &["Overwrite? [yes/no]"])),
            ["yes", "no"]
        );
        assert_eq!(
            titles(context(
                Some("claude"),
                &["Do you want to proceed?", "❯ 1. Yes", "  2. No"]
            )),
            ["Allow", "Deny"]
        );
        assert!(titles(context(Some("claude"), &["Proceed? [y/N] in a file"])).is_empty());
        assert!(titles(context(None, &["What next?"])).is_empty());
        let y = &answers_for(&context(None, &["Proceed? [y/N]"]))[0];
        assert_eq!(
            (y.text.as_deref(), y.keys.as_slice()),
            (Some("y"), &["Enter".to_owned()][..])
        );
    }

    /// One line and the attention's `since`; not a line more of the screen.
    #[test]
    fn a_message_carries_the_line_not_the_screen() {
        let event: Event = serde_json::from_value(json!({
            "seq": 9, "at": "2026-01-01T00:00:00Z", "kind": "session_state",
            "session_id": "sess_4", "state": "waiting", "state_since": "2026-01-01T00:00:00Z",
            "attention": {"reason": "needs_input", "since": "2026-01-01T00:00:00.5Z"},
        }))
        .unwrap();
        let c = context(
            None,
            &["secret line one", "secret line two", "Proceed? [y/N]"],
        );
        let m = push_message(Trigger::Attention, &event, &c, "box");
        assert_eq!(m.title, "build on box");
        assert_eq!(m.body, "build (sess_4) asks: Proceed? [y/N]");
        assert_eq!(m.since.as_deref(), Some("2026-01-01T00:00:00.500Z"));
        assert_eq!(m.url, "/#/s/sess_4");
        assert_eq!(m.answers.len(), 2);
        let text = serde_json::to_string(&m).unwrap();
        assert!(!text.contains("secret line"), "{text}");
        let ended = push_message(Trigger::Exited, &event, &c, "box");
        assert!(ended.since.is_none() && ended.answers.is_empty());
    }
}
