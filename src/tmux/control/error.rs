//! What can go wrong talking to tmux over a control client.

use std::path::PathBuf;
use std::time::Duration;

use super::quote::QuoteError;
use crate::tmux::Refusal;
use crate::tmux::command::ParseError;

#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("cannot run {bin}: {source}")]
    Spawn {
        bin: PathBuf,
        source: std::io::Error,
    },
    #[error("control client could not attach to session {session:?}: {message}")]
    Attach { session: String, message: String },
    /// The server speaks another protocol version than tmuxd's own client.
    #[error("the tmux server refused tmuxd's client for session {session:?}: {message}")]
    ProtocolRefused { session: String, message: String },
    #[error("`tmux {command}` got no reply within {} ms (control mode)", timeout.as_millis())]
    Timeout { command: String, timeout: Duration },
    /// tmux refused the command: `refusal` is what its `message` means.
    #[error("`tmux {command}` failed: {message}")]
    Command {
        command: String,
        message: String,
        refusal: Refusal,
    },
    #[error("the control client is gone; `tmux {command}` was not answered")]
    Closed { command: String },
    #[error("cannot write to the control client: {0}")]
    Write(std::io::Error),
    #[error(transparent)]
    Quote(#[from] QuoteError),
    #[error(transparent)]
    Parse(#[from] ParseError),
}

impl ControlError {
    /// What tmux's refusal meant; None when tmux did not refuse (the
    /// client failed, or the reply did not parse).
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            ControlError::Command { refusal, .. } => Some(*refusal),
            _ => None,
        }
    }

    /// The client has gone (closed, or its pipe broke): tmux never
    /// answered, and this client never will.
    pub fn is_client_gone(&self) -> bool {
        matches!(self, ControlError::Closed { .. } | ControlError::Write(_))
    }
}
