//! The two ways a control client's bytes travel, behind one small type:
//! the pipes of a `tmux -C` child, or tmuxd's own client (`native`). Both
//! carry the same control-mode lines; they differ in how the client ends.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWrite};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::time::{Instant, timeout_at};

use super::native::{Ending, NativeClient};

pub(super) enum Transport {
    Child {
        child: Child,
        stdin: Option<ChildStdin>,
        stdout: ChildStdout,
    },
    Native(NativeClient),
}

/// How a closed client left tmux.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Departure {
    /// tmux let it go within the grace: its control stream ended (and a
    /// child client's process exited by itself).
    Clean,
    /// Not within the grace: the child was killed, or the native client
    /// hung up (either makes tmux drop the client at once).
    Forced,
}

impl Transport {
    pub(super) fn child(mut child: Child) -> Transport {
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        Transport::Child {
            child,
            stdin,
            stdout,
        }
    }

    /// Control-stream bytes; 0 once the stream ended. Cancel-safe.
    pub(super) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Child { stdout, .. } => stdout.read(buf).await,
            Transport::Native(native) => native.read(buf).await,
        }
    }

    /// Where command lines go, until the input is ended.
    pub(super) fn writer(&mut self) -> Option<&mut (dyn AsyncWrite + Unpin + Send)> {
        match self {
            Transport::Child { stdin, .. } => stdin.as_mut().map(|w| w as _),
            Transport::Native(native) => native.writer().map(|w| w as _),
        }
    }

    /// Ends the client's input: tmux detaches it, the session untouched.
    pub(super) fn end_input(&mut self) {
        match self {
            Transport::Child { stdin, .. } => *stdin = None,
            Transport::Native(native) => native.end_input(),
        }
    }

    /// The `%exit` reason a native client reports once its stream ended
    /// (the child prints its own `%exit` into the stream).
    pub(super) fn exit_at_end(&self) -> Option<Option<String>> {
        match self {
            Transport::Child { .. } => None,
            Transport::Native(native) => Some(native.ending().and_then(Ending::reason)),
        }
    }

    /// Whether the server refused the native client's protocol version.
    pub(super) fn version_refused(&self) -> bool {
        match self {
            Transport::Child { .. } => false,
            Transport::Native(native) => {
                matches!(native.ending(), Some(Ending::VersionMismatch { .. }))
            }
        }
    }

    /// The child client's pid, while it runs (a native client has none).
    pub(super) fn child_pid(&self) -> Option<u32> {
        match self {
            Transport::Child { child, .. } => child.id(),
            Transport::Native(_) => None,
        }
    }

    pub(super) fn is_native(&self) -> bool {
        matches!(self, Transport::Native(_))
    }

    /// After the stream was drained (`drained`) or the grace ran out: the
    /// child is waited for (killed at `deadline`), the native client hangs up.
    pub(super) async fn finish(self, drained: bool, deadline: Instant) -> Departure {
        match self {
            Transport::Child { mut child, .. } => match timeout_at(deadline, child.wait()).await {
                Ok(_) => Departure::Clean,
                Err(_) => {
                    let _ = child.kill().await;
                    let _ = child.wait().await;
                    Departure::Forced
                }
            },
            Transport::Native(mut native) => {
                native.hang_up();
                match drained {
                    true => Departure::Clean,
                    false => Departure::Forced,
                }
            }
        }
    }
}
