//! What tmux's refusal of a command means, read once where tmux's text is
//! read (a forked tmux's stderr, a control client's `%error` block), so
//! that no caller decides anything from the text itself.

/// The kinds of refusal tmuxd acts on; the text stays in the error for people.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The target (session, window or pane) does not exist, or the server
    /// has no current one to default to: the session has gone.
    NoTarget,
    /// `new-session`: the name is in use.
    DuplicateSession,
    /// `show-environment`: the variable is not set in that session.
    UnknownVariable,
    /// Anything else tmux said.
    Other,
}

impl Refusal {
    /// Reads tmux's message (3.2 to 3.6 word them alike).
    pub fn of(message: &str) -> Refusal {
        // `set-option -t =NAME` says "no such session" where other commands
        // say "can't find session" (see `command::Target::Session`).
        let no_target = [
            "can't find session",
            "can't find window",
            "can't find pane",
            "no current target",
            "no such session",
        ];
        if no_target.iter().any(|t| message.contains(t)) {
            Refusal::NoTarget
        } else if message.contains("duplicate session") {
            Refusal::DuplicateSession
        } else if message.contains("unknown variable") {
            Refusal::UnknownVariable
        } else {
            Refusal::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Refusal::{self, *};

    #[test]
    fn messages_read_as_tmux_words_them() {
        let table = [
            ("can't find session: =work", NoTarget),
            ("can't find pane: %12", NoTarget),
            ("can't find window: @3", NoTarget),
            ("no current target", NoTarget),
            ("no such session: =work", NoTarget),
            ("duplicate session: work", DuplicateSession),
            ("unknown variable: TMUXD_ID", UnknownVariable),
            ("invalid layout: x", Other),
            ("exited with exit status: 1", Other),
            ("", Other),
        ];
        for (message, want) in table {
            assert_eq!(Refusal::of(message), want, "{message}");
        }
    }
}
