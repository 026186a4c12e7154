//! tmuxd's entry point: parse, then serve or run a client command, and exit
//! with the documented status (0 ok, 1 error, 2 usage, 3 wait timed out,
//! 78 bad configuration).

use std::process::ExitCode;

use clap::Parser;
use tmuxd::cli::{Cli, Command, ServeArgs, doctor, init_logging, run_client};
use tmuxd::config::{self, Env, Flags, Loaded};
use tmuxd::store::StoreError;
use tmuxd::supervisor::SupervisorError;

/// sysexits' EX_CONFIG: a bad configuration.
const EXIT_CONFIG: u8 = 78;

fn main() -> ExitCode {
    // A shell asking what to complete (`tmuxd completions`) is answered,
    // and the process ends, before anything else runs.
    tmuxd::cli::answer_completion();
    // Usage errors exit 2 and --help/--version 0 (clap's own codes).
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
            if let Err(e) = init_logging(&loaded.config) {
                eprintln!("tmuxd: {e}");
                return ExitCode::from(EXIT_CONFIG);
            }
            match runtime.block_on(tmuxd::daemon::serve(loaded.config, shutdown_signal())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tmuxd: {e:#}");
                    match is_config_error(&e) {
                        true => ExitCode::from(EXIT_CONFIG),
                        false => ExitCode::FAILURE,
                    }
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
        client_command => match runtime.block_on(run_client(client_command, &env)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                let code = e.exit_code();
                if code != 0 {
                    // Errors echo what a daemon said: controls made visible.
                    eprintln!("tmuxd: {}", tmuxd::cli::visible(&e.to_string()));
                }
                ExitCode::from(code)
            }
        },
    }
}

fn load_config(args: &ServeArgs, env: &Env) -> Option<Loaded> {
    let flags = Flags {
        config: args.config.clone(),
        bind: args.bind.clone(),
        data_dir: args.data_dir.clone(),
        log_file: args.log_file.clone(),
    };
    match config::load(&flags, env) {
        Ok(loaded) => Some(loaded),
        Err(e) => {
            eprintln!("tmuxd: {e}");
            None
        }
    }
}

/// Whether serving stopped on a setting that cannot work, found only when
/// used (a data dir of another user), rather than on a failure.
fn is_config_error(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        if cause.is::<config::ConfigError>() {
            return true;
        }
        let store = match cause.downcast_ref::<SupervisorError>() {
            Some(SupervisorError::Store(store)) => Some(store),
            _ => cause.downcast_ref::<StoreError>(),
        };
        store.is_some_and(StoreError::is_config)
    })
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
