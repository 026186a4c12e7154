//! What can go wrong talking to tmux over a control client.

use std::path::PathBuf;
use std::time::Duration;

use super::quote::QuoteError;
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
    #[error("`tmux {command}` failed: {message}")]
    Command { command: String, message: String },
    #[error("the control client is gone; `tmux {command}` was not answered")]
    Closed { command: String },
    #[error("cannot write to the control client: {0}")]
    Write(std::io::Error),
    #[error(transparent)]
    Quote(#[from] QuoteError),
    #[error(transparent)]
    Parse(#[from] ParseError),
}
