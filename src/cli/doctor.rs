//! `tmuxd doctor`: checks what the daemon needs and says what is wrong.
//! tmux is checked by doing what the daemon does (create, list and kill a
//! probe session) on a private socket, not by `tmux -V`, which a broken
//! install or a misconfigured fake answers just as well.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use crate::config::Config;
use crate::store::{DataDir, StoreError};
use crate::wire::Health;

/// Prints one line per check; true when all pass.
pub async fn doctor(config: &Config) -> bool {
    let mut all_ok = true;
    let mut report = |ok: bool, what: &str, detail: String| {
        all_ok &= ok;
        println!("{} {what}: {detail}", if ok { "ok  " } else { "FAIL" });
    };
    match tmux_round_trip(config).await {
        Ok((detail, client)) => {
            report(true, "tmux", detail);
            report(true, "control client", client);
        }
        Err(detail) => report(false, "tmux", detail),
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
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => match who_listens(config.bind).await
        {
            Some(health) => report(
                true,
                "bind",
                format!(
                    "{} is in use by a running tmuxd ({} sessions, {})",
                    config.bind,
                    health.sessions,
                    super::output::visible(&health.tmux)
                ),
            ),
            None => report(
                false,
                "bind",
                format!(
                    "{} is in use by another program (it does not answer /healthz as tmuxd does)",
                    config.bind
                ),
            ),
        },
        Err(e) => report(false, "bind", format!("{}: {e}", config.bind)),
    }
    let generated = config.data_dir.join(crate::store::TOKEN_FILE);
    let (ok, auth) = match (&config.auth.token, config.auth.insecure_no_auth) {
        (Some(_), _) => (true, "TCP needs the configured token; the daemon's own user needs none on its unix socket".to_owned()),
        (None, true) => (false, "auth.insecure_no_auth: every local user and any program that can reach the port gets every shell".to_owned()),
        (None, false) if generated.exists() => (true, format!("TCP needs the token in {}; the daemon's own user needs none on its unix socket", generated.display())),
        (None, false) => (true, format!("TCP will need the token tmuxd generates at first start into {}", generated.display())),
    };
    report(ok, "auth", auth);
    all_ok
}

/// Asks whoever listens on `bind` for tmuxd's `/healthz` (open to all), so
/// a port held by another program is not taken for a running tmuxd.
async fn who_listens(bind: SocketAddr) -> Option<Health> {
    let host = match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let url = format!("http://{}/healthz", SocketAddr::new(host, bind.port()));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .ok()?;
    let response = client.get(url).send().await.ok()?;
    response.json::<Health>().await.ok()
}

/// `tmux -V`, then a probe session created, listed, attached to by a
/// control client and killed on a server of its own (`Tmux::check_create`:
/// the configured binary and tmux config, never the user's server). Also
/// says how control clients attach.
async fn tmux_round_trip(config: &Config) -> Result<(String, String), String> {
    let configured = crate::tmux::Tmux::from_config(&config.tmux);
    let bin = configured.bin().display().to_string();
    let version = configured.version().await.map_err(|e| e.to_string())?;
    match configured.check_create().await {
        Ok(client) => Ok((
            format!(
                "{version} ({bin}): created, listed, attached to and killed a probe session \
                 on a private socket"
            ),
            format!(
                "{}; {}",
                client.how,
                crate::tmux::crash_conditions(&version, client.native)
            ),
        )),
        Err(step) => Err(format!("{version} ({bin}) answers -V, but {step}")),
    }
}
