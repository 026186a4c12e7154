//! Why a command an actor ran over its control client for someone did
//! not succeed, and what that means for them: decided here, from the
//! kinds `tmux/` read out of tmux's text, never from the text.

use crate::tmux::Refusal;
use crate::tmux::control::ControlError;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The actor's control client had gone before tmux answered (the
    /// session ended, or tmux went away).
    #[error("the session's tmux client has gone")]
    ClientGone,
    /// tmux refused the command, the client failed to carry it, or the
    /// reply did not parse.
    #[error(transparent)]
    Tmux(#[from] ControlError),
}

impl CommandError {
    /// The session (or tmuxd's client on it) went away meanwhile: not
    /// tmux's refusal of the command itself.
    pub fn is_gone(&self) -> bool {
        match self {
            CommandError::ClientGone => true,
            CommandError::Tmux(e) => e.is_client_gone() || e.refusal() == Some(Refusal::NoTarget),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tmux::command::ParseError;

    #[test]
    fn gone_is_the_session_or_its_client_not_a_refusal() {
        let refused = |refusal| {
            CommandError::Tmux(ControlError::Command {
                command: "send-keys".to_owned(),
                message: "tmux's words".to_owned(),
                refusal,
            })
        };
        let table = [
            (CommandError::ClientGone, true),
            (refused(Refusal::NoTarget), true),
            (refused(Refusal::Other), false),
            (refused(Refusal::DuplicateSession), false),
            (
                CommandError::Tmux(ControlError::Closed {
                    command: "resize-window".to_owned(),
                }),
                true,
            ),
            (
                CommandError::Tmux(ControlError::Write(std::io::ErrorKind::BrokenPipe.into())),
                true,
            ),
            (
                CommandError::Tmux(ControlError::Timeout {
                    command: "send-keys".to_owned(),
                    timeout: Duration::from_secs(5),
                }),
                false,
            ),
            (
                CommandError::Tmux(ControlError::Parse(ParseError {
                    command: "display-message".to_owned(),
                    reason: "two lines".to_owned(),
                })),
                false,
            ),
        ];
        for (error, gone) in table {
            assert_eq!(error.is_gone(), gone, "{error:?}");
        }
    }
}
