//! What every handler is given: the supervisor and the daemon's shared
//! parts (auth, stream limits, metrics, the fleet, Web Push).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::auth::AuthPolicy;
use super::limits::StreamLimits;
use super::probe::TmuxProbe;
use crate::metrics::Metrics;
use crate::supervisor::Supervisor;

/// The state the router hands each handler.
#[derive(Clone)]
pub struct AppState {
    pub supervisor: Supervisor,
    pub auth: Arc<AuthPolicy>,
    pub streams: StreamLimits,
    /// `tmux -V`, shared by health checks so they do not fork per request.
    pub tmux_probe: TmuxProbe,
    /// Fires at shutdown: open streams close instead of holding the server.
    pub cancel: CancellationToken,
    pub metrics: Metrics,
    /// The TCP address the daemon listens on, for the login links it makes.
    pub http_address: std::net::SocketAddr,
    /// The fleet peers whose sessions this daemon also serves.
    pub fleet: crate::fleet::Fleet,
    /// Web Push, unless `notify.web_push` is off.
    pub push: Option<crate::push::Push>,
}
