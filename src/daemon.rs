//! `tmuxd serve`: wires the supervisor to the HTTP API and runs until the
//! shutdown future fires. Tests call this same function.

mod connections;
mod credentials;
mod hint;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::{self, AppState, AuthPolicy, HostNames, StreamLimits, TmuxProbe};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::supervisor::{Settings, Supervisor};
use crate::tmux::Tmux;

/// How long open connections get to finish once shutdown starts.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(1500);

/// Serves until `shutdown` completes, then detaches every client cleanly
/// (sessions stay alive) and flushes state to disk.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot bind {}", config.bind))?;
    let address = listener.local_addr()?;
    let tasks = TaskTracker::new();
    let cancel = CancellationToken::new();
    let metrics = Metrics::new();
    // One `Tmux` (and its clones) for the server: its handshake turn and
    // client path are the server's.
    let tmux = Tmux::from_config(&config.tmux).with_metrics(metrics.clone());
    tmux.check_version().await?;
    let budget = crate::heat::budget(config.tmux.live_clients);
    crate::heat::lend_server_client(&tmux, budget, &tasks, cancel.clone());
    let supervisor = Supervisor::start(
        tmux,
        Settings::from_config(&config),
        &config.data_dir,
        &tasks,
        cancel.clone(),
        metrics.clone(),
    )
    .await
    .with_context(|| format!("cannot start with data dir {}", config.data_dir.display()))?;
    let push = match config.notify.web_push {
        true => Some(
            crate::push::Push::open(&config.data_dir, config.notify.push_contact.clone())
                .context("cannot start Web Push")?,
        ),
        false => None,
    };
    let page_url = config
        .notify
        .page_url
        .clone()
        .unwrap_or_else(|| format!("http://{address}"));
    crate::notify::spawn(
        &supervisor,
        config.notify.clone(),
        crate::notify::Targets {
            push: push.clone(),
            page_url,
        },
        &config.data_dir,
        metrics.clone(),
        &tasks,
        cancel.clone(),
    );
    crate::heat::spawn(&supervisor, budget, &tasks, cancel.clone());
    supervisor.after_start(config.restore.on_start);
    let fleet = crate::fleet::Fleet::start(
        &config.fleet,
        &supervisor,
        &metrics,
        &config.data_dir,
        &tasks,
        cancel.clone(),
    )?;
    let token = match (&config.auth.token, config.auth.insecure_no_auth) {
        (Some(token), _) => Some(token.clone()),
        (None, true) => {
            tracing::warn!(
                "auth.insecure_no_auth is set: every local user, and any program that can reach {address}, can read and type into every session without a credential"
            );
            None
        }
        (None, false) => Some(credentials::load_or_create_token(&config.data_dir)?),
    };
    let hosts = HostNames::new(config.http.allowed_hosts.clone());
    let has_token = token.is_some();
    let auth = std::sync::Arc::new(AuthPolicy::new(
        token,
        config.auth.read_token.clone(),
        hosts,
    ));
    let state = AppState {
        supervisor: supervisor.clone(),
        auth: auth.clone(),
        streams: StreamLimits::new(config.http.max_streams_per_session, config.http.max_streams),
        tmux_probe: TmuxProbe::default(),
        cancel: cancel.clone(),
        metrics: metrics.clone(),
        http_address: address,
        fleet,
        push,
    };
    let app = api::router(state, config.http.max_body_bytes);
    let limits = connections::Limits::from_config(&config.http);
    let socket = credentials::bind_socket(&config.data_dir);
    // Scripts and tests read the bound address (the port may have been 0) from this line.
    println!("tmuxd listening on http://{address}");
    if has_token && std::io::stdout().is_terminal() {
        // Whoever started the daemon at a terminal is its user: hand them the
        // dashboard. A log file never gets a code (and it expires anyway).
        let code = auth.issue_login_code();
        println!(
            "dashboard: http://{address}/#login={code} (works once, for a minute; `tmuxd open` prints a new one)"
        );
    } else {
        println!("dashboard: http://{address}/ (`tmuxd open` prints a login link)");
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| "tmuxd".into());
    println!(
        "{}",
        hint::cli_hint(&exe, std::env::var_os("PATH").as_deref())
    );
    tracing::info!(%address, data_dir = %config.data_dir.display(), "tmuxd serving");

    let stop = cancel.clone();
    tokio::spawn(async move {
        shutdown.await;
        stop.cancel();
    });
    let serving = connections::Serving {
        app,
        limits,
        cancel: cancel.clone(),
        drain: DRAIN_TIMEOUT,
        metrics: metrics.clone(),
    };
    let serve = |listener, caps| connections::serve(listener, caps, serving.clone());
    let tcp = serve(connections::Listener::Tcp(listener), limits.tcp_caps());
    match socket {
        Some((listener, path)) => {
            // SAFETY: geteuid(2) cannot fail and touches no memory.
            let uid = unsafe { libc::geteuid() };
            let unix = serve(
                connections::Listener::Unix { listener, uid },
                connections::UNIX_CAPS,
            );
            tokio::join!(tcp, unix);
            let _ = std::fs::remove_file(path);
        }
        None => tcp.await,
    }
    cancel.cancel();
    tasks.close();
    supervisor.shutdown().await;
    tasks.wait().await;
    tracing::info!("tmuxd stopped; every tmux session was left running");
    Ok(())
}
