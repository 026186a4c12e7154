//! `tmuxd doctor`: checks what the daemon needs and says what is wrong.

use crate::config::Config;
use crate::daemon::tmux_from_config;
use crate::store::{DataDir, StoreError};

/// Prints one line per check; true when all pass.
pub async fn doctor(config: &Config) -> bool {
    let mut all_ok = true;
    let mut report = |ok: bool, what: &str, detail: String| {
        all_ok &= ok;
        println!("{} {what}: {detail}", if ok { "ok  " } else { "FAIL" });
    };
    match tmux_from_config(config).version().await {
        Ok(version) => report(
            true,
            "tmux",
            format!("{version} ({})", config.tmux.bin.display()),
        ),
        Err(e) => report(false, "tmux", e.to_string()),
    }
    match DataDir::open(&config.data_dir) {
        Ok(_) => report(
            true,
            "data dir",
            format!("{} is usable", config.data_dir.display()),
        ),
        Err(StoreError::Locked { .. }) => report(
            true,
            "data dir",
            format!("{} is in use by a running tmuxd", config.data_dir.display()),
        ),
        Err(e) => report(false, "data dir", e.to_string()),
    }
    match std::net::TcpListener::bind(config.bind) {
        Ok(_) => report(true, "bind", format!("{} is free", config.bind)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => report(
            true,
            "bind",
            format!("{} is in use (a running tmuxd?)", config.bind),
        ),
        Err(e) => report(false, "bind", format!("{}: {e}", config.bind)),
    }
    let auth = match (&config.auth.token, config.bind.ip().is_loopback()) {
        (Some(_), _) => "bearer token required".to_owned(),
        (None, true) => "no token; loopback clients only (Host/Origin checked)".to_owned(),
        (None, false) => "no token on a non-loopback bind".to_owned(),
    };
    report(
        config.auth.token.is_some() || config.bind.ip().is_loopback(),
        "auth",
        auth,
    );
    all_ok
}
