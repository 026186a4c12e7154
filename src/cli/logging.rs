//! The daemon's logs: to stderr, with colours only when it is a terminal,
//! or appended to `log_file`.

use std::io::IsTerminal;
use std::os::unix::fs::OpenOptionsExt;

use crate::config::Config;

/// Installs the global subscriber; an unopenable log file is an error (the
/// filter was already checked when the config was validated).
pub fn init_logging(config: &Config) -> Result<(), String> {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::fmt::writer::BoxMakeWriter;
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(&config.log)
        .map_err(|e| format!("config key `log`: {e}"))?;
    let (writer, ansi) = match &config.log_file {
        Some(path) => (
            BoxMakeWriter::new(std::sync::Mutex::new(open_log(path)?)),
            false,
        ),
        None => (
            BoxMakeWriter::new(std::io::stderr),
            std::io::stderr().is_terminal(),
        ),
    };
    let cap = PAYLOAD_LOGGERS.iter().fold(
        Targets::new().with_default(LevelFilter::TRACE),
        |targets, target| targets.with_target(*target, LevelFilter::DEBUG),
    );
    tracing_subscriber::registry()
        .with(cap)
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(ansi)
                .with_writer(writer),
        )
        .init();
    Ok(())
}

/// Dependencies that log message payloads at trace level (a WebSocket's
/// auth message carries its token; input frames carry keystrokes): capped
/// whatever `log` asks for, so no secret reaches the log at any level.
const PAYLOAD_LOGGERS: [&str; 2] = ["tungstenite", "tokio_tungstenite"];

fn open_log(path: &std::path::Path) -> Result<std::fs::File, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "config key `log_file`: cannot create {}: {e}",
                dir.display()
            )
        })?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("config key `log_file`: cannot open {}: {e}", path.display()))
}
