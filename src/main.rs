//! tmuxd's entry point: parse the command line, then serve or run a client
//! command.

use std::process::ExitCode;

use clap::Parser;
use tmuxd::cli::{Cli, ClientError, Command, ServeArgs, doctor, run_client};
use tmuxd::config::{self, Env, Flags, Loaded};

/// sysexits' EX_CONFIG: a bad configuration.
const EXIT_CONFIG: u8 = 78;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let env: Env = std::env::vars().collect();
    // Blocking-pool threads (child waits, file writes) idle out quickly, so
    // thread counts reflect current work rather than past bursts.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_keep_alive(std::time::Duration::from_secs(1))
        .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tmuxd: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve(args) => {
            let Some(loaded) = load_config(&args, &env) else {
                return ExitCode::from(EXIT_CONFIG);
            };
            init_logging(&loaded.config.log);
            match runtime.block_on(tmuxd::daemon::serve(loaded.config, shutdown_signal())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tmuxd: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Config(args) => {
            let Some(loaded) = load_config(&args, &env) else {
                return ExitCode::from(EXIT_CONFIG);
            };
            print!("{}", loaded.render());
            ExitCode::SUCCESS
        }
        Command::Doctor(args) => {
            let Some(loaded) = load_config(&args, &env) else {
                return ExitCode::from(EXIT_CONFIG);
            };
            if runtime.block_on(doctor(&loaded.config)) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        client_command => {
            let (base, token) = client_target(&env);
            match runtime.block_on(run_client(client_command, base, token)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e @ ClientError::Usage(_)) => {
                    eprintln!("tmuxd: {e}");
                    ExitCode::from(2)
                }
                Err(e) => {
                    eprintln!("tmuxd: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn load_config(args: &ServeArgs, env: &Env) -> Option<Loaded> {
    let flags = Flags {
        config: args.config.clone(),
        bind: args.bind.clone(),
        data_dir: args.data_dir.clone(),
    };
    match config::load(&flags, env) {
        Ok(loaded) => Some(loaded),
        Err(e) => {
            eprintln!("tmuxd: {e}");
            None
        }
    }
}

/// `TMUXD_URL`, else the configured bind; `TMUXD_TOKEN`, else the configured token.
fn client_target(env: &Env) -> (String, Option<String>) {
    let loaded = config::load(&Flags::default(), env).ok();
    let base = env
        .get("TMUXD_URL")
        .filter(|url| !url.is_empty())
        .cloned()
        .unwrap_or_else(|| match &loaded {
            Some(loaded) => format!("http://{}", loaded.config.bind),
            None => "http://127.0.0.1:7420".to_owned(),
        });
    let token = env
        .get("TMUXD_TOKEN")
        .filter(|t| !t.is_empty())
        .cloned()
        .or_else(|| loaded.and_then(|l| l.config.auth.token));
    (base, token)
}

/// Dependencies that log message payloads at trace level (a WebSocket's
/// auth message carries its token; input frames carry keystrokes): capped
/// whatever `log` asks for, so no secret reaches the log at any level.
const PAYLOAD_LOGGERS: [&str; 2] = ["tungstenite", "tokio_tungstenite"];

fn init_logging(directive: &str) {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::try_new(directive)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let cap = PAYLOAD_LOGGERS.iter().fold(
        Targets::new().with_default(LevelFilter::TRACE),
        |targets, target| targets.with_target(*target, LevelFilter::DEBUG),
    );
    tracing_subscriber::registry()
        .with(cap)
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .init();
}

/// SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = int.recv() => tracing::info!("SIGINT: shutting down"),
    }
}
