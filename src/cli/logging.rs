//! The daemon's logs: to stderr, with colours only when it is a terminal,
//! or appended to `log_file`.

use std::io::IsTerminal;
use std::os::unix::fs::OpenOptionsExt;

use crate::config::Config;

/// Installs the global subscriber; an unopenable log file is an error (the
/// filter was already checked when the config was validated).
pub fn init_logging(config: &Config) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(&config.log)
        .map_err(|e| format!("config key `log`: {e}"))?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match &config.log_file {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    format!(
                        "config key `log_file`: cannot create {}: {e}",
                        dir.display()
                    )
                })?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| {
                    format!("config key `log_file`: cannot open {}: {e}", path.display())
                })?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .init(),
    }
    Ok(())
}
