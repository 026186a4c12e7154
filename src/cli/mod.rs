//! The command line: `tmuxd serve` runs the daemon; the other subcommands
//! are clients of a running daemon over HTTP, or install helpers.

mod args;
mod attach;
mod client;
mod complete;
mod doctor;
mod duration;
mod error;
mod events;
mod hints;
mod hooks;
mod hosts;
mod input;
mod install;
mod logging;
mod manpage;
mod open;
mod output;
mod pipe;
mod queue;
mod resolve;
mod restore;
mod screen;
mod sessions;
mod terminal;
mod trust;
mod wait;
mod watch;

pub use args::{Cli, Command, HooksCommand, QueueCommand, ServeArgs, ServiceCommand};
pub use client::ClientError;
pub use doctor::doctor;
pub use logging::init_logging;
pub use output::visible;

use args::Connect;
use client::{Client, base_url};

use crate::config::{self, Env, Flags, Loaded};

/// Runs a command other than `serve`, `config` and `doctor`.
pub async fn run_client(command: Command, env: &Env) -> Result<(), ClientError> {
    if let Some(connect) = command.connect() {
        warn_of_token_flag(connect, env);
    }
    match command {
        Command::Ls(args) => sessions::ls(&connect(&args.connect, env)?, args).await,
        Command::Show(args) => sessions::show(&connect(&args.connect, env)?, args).await,
        Command::New(args) => sessions::new(&connect(&args.connect, env)?, args).await,
        Command::Adopt(args) => sessions::adopt(&connect(&args.connect, env)?, args).await,
        Command::Restore(args) => restore::restore(&connect(&args.connect, env)?, args).await,
        Command::Rm(args) => sessions::rm(&connect(&args.connect, env)?, args).await,
        Command::Send(args) => input::send(&connect(&args.connect, env)?, args).await,
        Command::Keys(args) => input::keys(&connect(&args.connect, env)?, args).await,
        Command::Resize(args) => input::resize(&connect(&args.connect, env)?, args).await,
        Command::Thought(args) => input::thought(&connect(&args.connect, env)?, args).await,
        Command::Snap(args) => screen::snap(&connect(&args.connect, env)?, args).await,
        Command::Scrollback(args) => screen::scrollback(&connect(&args.connect, env)?, args).await,
        Command::Wait(args) => wait::wait(&connect(&args.connect, env)?, args).await,
        Command::Watch(args) => watch::watch(&connect(&args.connect, env)?, args).await,
        Command::Events(args) => events::events(&connect(&args.connect, env)?, args).await,
        Command::Attach(args) => {
            let tmux_bin = loaded(env).map(|l| l.config.tmux.bin);
            attach::attach(&connect(&args.connect, env)?, args, tmux_bin).await
        }
        Command::Open(args) => open::open(&connect(&args.connect, env)?, args).await,
        Command::Hosts(args) => hosts::hosts(&connect(&args.connect, env)?, args).await,
        Command::Queue(QueueCommand::Ls(args)) => {
            queue::ls(&connect(&args.connect, env)?, args).await
        }
        Command::Queue(QueueCommand::Rm(args)) => {
            queue::rm(&connect(&args.connect, env)?, args).await
        }
        Command::Completions(args) => install::completions(args),
        Command::Man(args) => install::man(args),
        Command::Service(ServiceCommand::Install(args)) => install::service_install(args),
        Command::Hooks(HooksCommand::Install(args)) => hooks::install(args, env),
        Command::Hooks(HooksCommand::Send(args)) => {
            let client = connect(&args.connect, env);
            hooks::send(args, env, client).await;
            Ok(())
        }
        Command::Serve(_) | Command::Config(_) | Command::Doctor(_) => {
            unreachable!("daemon commands are run by main")
        }
    }
}

/// Answers a shell's completion request and exits, when it made one.
pub fn answer_completion() {
    complete::answer_if_asked(<Cli as clap::CommandFactory>::command);
}

/// A client as the command line's `--url`/`--token` would make it from the
/// environment alone: shell completion runs before the flags are parsed.
pub(crate) fn connect_from_env(env: &Env) -> Result<Client, ClientError> {
    let from_env = Connect {
        url: env.get("TMUXD_URL").cloned(),
        token: env.get("TMUXD_TOKEN").cloned(),
    };
    connect(&from_env, env)
}

/// `--token` given on the command line, where every local user can read
/// it (`ps`, `/proc/PID/cmdline`) while the command runs: warned about, not
/// refused, so scripts that pass it keep working while they move to the
/// variable or the config file. (clap fills `token` from `TMUXD_TOKEN`
/// too; a value equal to the variable's came from there.)
fn warn_of_token_flag(connect: &Connect, env: &Env) {
    let from_flag = connect
        .token
        .as_ref()
        .is_some_and(|token| env.get("TMUXD_TOKEN") != Some(token));
    if from_flag {
        eprintln!(
            "tmuxd: warning: --token on the command line can be read by every user of this \
             machine (ps, /proc/PID/cmdline); set TMUXD_TOKEN or auth.token in the config file \
             instead"
        );
    }
}

/// The configuration as a client reads it (no flags): `None` when the
/// file is broken, since the flags and environment may be all a client needs.
fn loaded(env: &Env) -> Option<Loaded> {
    config::load(&Flags::default(), env).ok()
}

/// The variable a session tmuxd made carries: its daemon's unix socket
/// (set with `new-session -e`; never a token), so that `hooks send` and
/// any other command run inside it reach the daemon that made it, wherever
/// that daemon's data dir is.
pub const SOCKET_VAR: &str = "TMUXD_SOCKET";

/// The daemon this command talks to (`trust` says why these rules):
/// over TCP at `--url`/`TMUXD_URL` only, with `--token`/`TMUXD_TOKEN` or
/// the configured token, which the daemon must prove it holds; else the
/// unix socket `TMUXD_SOCKET` names (inside a session tmuxd made), else
/// the daemon's unix socket in the configured data dir; a socket must be
/// ours either way (no token needed). Never TCP because the socket is
/// missing: that says no daemon runs.
pub(crate) fn connect(connect: &Connect, env: &Env) -> Result<Client, ClientError> {
    let given = |value: &Option<String>| value.clone().filter(|v| !v.trim().is_empty());
    let loaded = loaded(env);
    let token = given(&connect.token).or_else(|| {
        let loaded = loaded.as_ref()?;
        loaded.config.auth.token.clone()
    });
    if let Some(url) = given(&connect.url) {
        let base = base_url(&url)?;
        let token = token.ok_or_else(trust::needs_token)?;
        return Ok(Client::over_tcp(base, token));
    }
    if let Some(socket) = env.get(SOCKET_VAR).filter(|s| !s.trim().is_empty()) {
        let socket = std::path::PathBuf::from(socket);
        if !socket.is_absolute() {
            return Err(ClientError::Usage(format!(
                "{SOCKET_VAR}={} is not an absolute path to a tmuxd socket",
                output::visible(&socket.to_string_lossy())
            )));
        }
        trust::check_socket(&socket)?;
        return Ok(Client::over_socket(socket, token));
    }
    let data_dir = match loaded {
        Some(loaded) => loaded.config.data_dir,
        None => {
            let error = config::load(&Flags::default(), env)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            return Err(ClientError::Usage(format!(
                "cannot tell where the daemon's socket is: {error}"
            )));
        }
    };
    let socket = data_dir.join(crate::store::SOCKET_FILE);
    trust::check_socket(&socket)?;
    Ok(Client::over_socket(socket, token))
}
