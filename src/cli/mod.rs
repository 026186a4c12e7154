//! The command line: `tmuxd serve` runs the daemon; the other subcommands
//! are clients of a running daemon over HTTP.

mod client;
mod commands;
mod doctor;
mod watch;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use client::ClientError;
pub use commands::run_client;
pub use doctor::doctor;

#[derive(Parser, Debug)]
#[command(
    name = "tmuxd",
    version,
    about = "Supervise tmux sessions over HTTP, WebSocket and SSE"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// Config file (TOML); default $TMUXD_CONFIG, else ~/.config/tmuxd/config.toml if present.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Address to listen on, ADDR:PORT (default 127.0.0.1:7420).
    #[arg(long)]
    pub bind: Option<String>,
    /// Where the registry and event log live.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the daemon.
    Serve(ServeArgs),
    /// Print the effective settings and where each came from.
    Config(ServeArgs),
    /// Check tmux, the data dir, the bind address and auth.
    Doctor(ServeArgs),
    /// List sessions.
    Ls {
        /// Print the API's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create a session: `tmuxd new --name build -- cargo build`.
    New {
        #[arg(long)]
        name: Option<String>,
        /// Working directory (absolute; default: tmux's).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Text typed after start, then Enter.
        #[arg(long)]
        input: Option<String>,
        /// The command to run instead of the shell.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Stop tracking a session (it keeps running), or kill it with --kill.
    Rm {
        id: String,
        #[arg(long)]
        kill: bool,
    },
    /// Track an existing tmux session by name.
    Adopt { name: String },
    /// Type text into a session.
    Send {
        id: String,
        text: String,
        /// Press Enter after the text.
        #[arg(long)]
        enter: bool,
        /// Queue the text until the session is next idle.
        #[arg(long)]
        when_idle: bool,
    },
    /// Send tmux key names: `tmuxd keys sess_1 C-c Up Enter`.
    Keys {
        id: String,
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Wait until a session is idle, busy, needs attention, exits, or changes.
    Wait {
        id: String,
        /// idle | busy | attention | exited | change
        #[arg(long)]
        until: String,
        /// How long to wait: 30s, 500ms, 2m, 1h (default 30s).
        #[arg(long, default_value = "30s")]
        timeout: String,
    },
    /// Stream a session's output to stdout until Ctrl-C.
    Watch { id: String },
    /// Follow the event log (replaying from --since N).
    Events {
        #[arg(long)]
        since: Option<u64>,
    },
    /// Print a session's screen.
    Snap {
        id: String,
        /// Keep colors and attributes as escape sequences.
        #[arg(long)]
        ansi: bool,
    },
}
