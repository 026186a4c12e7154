//! The CLI's error: what went wrong talking to the daemon, and the exit
//! status each case documents. A leaf, so the client, its trust checks and
//! the output helpers can all name it without importing one another.

use reqwest::StatusCode;

/// Where a command says to set the token, in every auth error.
pub const TOKEN_HINT: &str = "set TMUXD_TOKEN or pass --token";

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(
        "cannot reach tmuxd at {base}: {source} (is `tmuxd serve` running? set TMUXD_URL or pass --url to point elsewhere)"
    )]
    Unreachable {
        base: String,
        source: reqwest::Error,
    },
    #[error("{message} ({code}, HTTP {}){}", status.as_u16(), auth_hint(*status))]
    Api {
        status: StatusCode,
        code: String,
        message: String,
    },
    #[error("unexpected answer from tmuxd: {0}")]
    Protocol(String),
    /// A bad argument found before anything was sent (exit 2).
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Stream(String),
    /// `wait` ran out of time (exit 3).
    #[error("{0}")]
    TimedOut(String),
    /// Whoever read our output has gone: not an error (exit 0, quietly).
    #[error("stdout closed")]
    StdoutClosed,
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// No daemon listens on the socket of the configured data dir.
    #[error(
        "no tmuxd is running for {data_dir} ({why}): start it with `tmuxd serve` (`scripts/serve` in a checkout; `tmuxd service install` to keep one running); a daemon elsewhere is reached with TMUXD_URL (or --url) and its token"
    )]
    NotRunning { data_dir: String, why: String },
    /// A socket at the daemon's path that another user could have made.
    #[error(
        "refusing the unix socket {socket}: {why}; tmuxd talks only to a socket of your own in a directory only you can write"
    )]
    UntrustedSocket { socket: String, why: String },
    /// Over TCP, whoever answered did not show it holds our token.
    #[error(
        "{base} did not prove it is your tmuxd ({why}), so the CLI sent it nothing: another program may be listening there, or the token is not that daemon's (check --url/TMUXD_URL and TMUXD_TOKEN, --token or auth.token)"
    )]
    Unproven { base: String, why: String },
}

impl ClientError {
    /// The documented exit status for this error. A value the daemon
    /// refuses (400: a bad name, cwd, key or size) is a usage error as
    /// much as one the CLI catches itself: nothing was changed.
    pub fn exit_code(&self) -> u8 {
        match self {
            ClientError::StdoutClosed => 0,
            ClientError::Usage(_) => 2,
            ClientError::Api { status, .. } if *status == StatusCode::BAD_REQUEST => 2,
            ClientError::TimedOut(_) => 3,
            _ => 1,
        }
    }
}

fn auth_hint(status: StatusCode) -> String {
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => format!("; {TOKEN_HINT}"),
        _ => String::new(),
    }
}
