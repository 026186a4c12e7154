//! The command line: `tmuxd serve` runs the daemon; the other subcommands
//! are clients of a running daemon over HTTP, or install helpers.

mod args;
mod attach;
mod client;
mod complete;
mod doctor;
mod duration;
mod events;
mod hooks;
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
mod wait;
mod watch;

pub use args::{Cli, Command, HooksCommand, QueueCommand, ServeArgs, ServiceCommand};
pub use client::ClientError;
pub use doctor::doctor;
pub use logging::init_logging;
pub use output::visible;

use args::Connect;
use client::{Client, base_url};

use crate::config::{self, Env, Flags};

/// Runs a command other than `serve`, `config` and `doctor`.
pub async fn run_client(command: Command, env: &Env) -> Result<(), ClientError> {
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
        Command::Attach(args) => attach::attach(&connect(&args.connect, env)?, args).await,
        Command::Open(args) => open::open(&connect(&args.connect, env)?, args).await,
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

/// `--url`/`TMUXD_URL`; else the daemon's unix socket in the configured
/// data dir, where the daemon's own user needs no token; else the
/// configured bind. `--token`/`TMUXD_TOKEN`, else the configured token. A
/// broken config file is ignored here: the flags and environment may be all
/// a client needs.
pub(crate) fn connect(connect: &Connect, env: &Env) -> Result<Client, ClientError> {
    let given = |value: &Option<String>| value.clone().filter(|v| !v.trim().is_empty());
    let loaded = config::load(&Flags::default(), env).ok();
    let token = given(&connect.token).or_else(|| {
        let loaded = loaded.as_ref()?;
        loaded.config.auth.token.clone()
    });
    if let Some(url) = given(&connect.url) {
        return Ok(Client::new(base_url(&url)?, token));
    }
    let data_dir = loaded.as_ref().map(|l| l.config.data_dir.clone());
    let socket = data_dir.map(|dir| dir.join(crate::daemon::SOCKET_FILE));
    if let Some(socket) = socket.filter(|s| s.exists()) {
        return Ok(Client::over_socket(socket, token));
    }
    let bind = loaded.map_or_else(
        || "127.0.0.1:7420".to_owned(),
        |l| l.config.bind.to_string(),
    );
    Ok(Client::new(base_url(&bind)?, token))
}
