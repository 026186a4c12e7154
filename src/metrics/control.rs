//! Control clients: how many attached, by way (tmuxd's own client or a
//! `tmux -C` child), and how many attaches fell back from the one to the
//! other. A fallback is a fork per session and tmux's crash-prone
//! handshake, so it is counted on its own.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ViaLabels {
    via: &'static str,
}

/// Which way a control client attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachVia {
    /// tmuxd's own client on the server's socket.
    Native,
    /// A `tmux -C attach-session` child.
    Child,
}

impl AttachVia {
    fn label(self) -> &'static str {
        match self {
            AttachVia::Native => "native",
            AttachVia::Child => "child",
        }
    }
}

#[derive(Default)]
pub(super) struct ControlMetrics {
    attaches: Family<ViaLabels, Counter>,
    fallbacks: Counter,
}

impl ControlMetrics {
    pub(super) fn register(&self, r: &mut Registry) {
        for via in [AttachVia::Native, AttachVia::Child] {
            let labels = ViaLabels { via: via.label() };
            self.attaches.get_or_create(&labels).inc_by(0);
        }
        r.register(
            "control_attaches",
            "Control clients attached, by way (native: tmuxd's own client; child: a `tmux -C` process)",
            self.attaches.clone(),
        );
        r.register(
            "control_attach_fallbacks",
            "Attaches that tried tmuxd's own client and went on with a `tmux -C` child",
            self.fallbacks.clone(),
        );
    }
}

impl Metrics {
    /// A control client attached this way.
    pub fn control_attached(&self, via: AttachVia) {
        let labels = ViaLabels { via: via.label() };
        self.inner.control.attaches.get_or_create(&labels).inc();
    }

    /// An attach left tmuxd's own client for a `tmux -C` child.
    pub fn control_attach_fell_back(&self) {
        self.inner.control.fallbacks.inc();
    }
}
