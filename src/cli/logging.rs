//! The daemon's logs: to stderr, with colours only when it is a terminal,
//! or appended to `log_file`.

use std::fs::{File, OpenOptions, Permissions};
use std::io::IsTerminal;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

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
    let mut tightened = None;
    let (writer, ansi) = match &config.log_file {
        Some(path) => {
            let (file, was) = open_log(path)?;
            tightened = was.map(|mode| (path, mode));
            (BoxMakeWriter::new(std::sync::Mutex::new(file)), false)
        }
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
    if let Some((path, mode)) = tightened {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            "log_file was readable by others; restricted it to 0600"
        );
    }
    Ok(())
}

/// Dependencies that log message payloads at trace level (a WebSocket's
/// auth message carries its token; input frames carry keystrokes): capped
/// whatever `log` asks for, so no secret reaches the log at any level.
const PAYLOAD_LOGGERS: [&str; 2] = ["tungstenite", "tokio_tungstenite"];

/// Opens `log_file` for appending: created 0600; never through a symbolic
/// link, nor a file that belongs to another user (a link planted in a
/// sticky directory such as /tmp would have tmuxd append to its target);
/// an existing file of ours that others can read is tightened to 0600, and
/// its old mode returned to be logged.
fn open_log(path: &Path) -> Result<(File, Option<u32>), String> {
    let refuse = |reason: String| format!("config key `log_file`: {}: {reason}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| refuse(format!("cannot create {}: {e}", dir.display())))?;
    }
    // O_NONBLOCK: a FIFO in its place fails instead of hanging startup
    // (it is then refused as not a regular file); a regular file ignores it.
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(LOG_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refuse("is a symbolic link, which tmuxd does not follow".into()),
            _ => refuse(format!("cannot open: {e}")),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| refuse(format!("cannot stat: {e}")))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    if meta.uid() != uid {
        return Err(refuse(format!(
            "belongs to uid {}, not to tmuxd's user (uid {uid})",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok((file, None));
    }
    file.set_permissions(Permissions::from_mode(LOG_MODE))
        .map_err(|e| refuse(format!("cannot restrict its mode {mode:o} to 0600: {e}")))?;
    Ok((file, Some(mode)))
}

/// The log holds session names, commands and error details: private.
const LOG_MODE: u32 = 0o600;
