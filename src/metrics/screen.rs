//! The settled-screen check's counters: how many checks ran and how they
//! came out, and how often tmuxd's screen had drifted from tmux's, by
//! cause. Label values are fixed words (`DriftCause::as_str`, `CheckOutcome`).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CauseLabels {
    cause: &'static str,
}

/// How a settled-screen check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// tmuxd's screen equalled tmux's.
    Equal,
    /// They differed; tmuxd took tmux's.
    Drift,
    /// Not compared: the pane wrote meanwhile, or a person has it in a mode.
    Skipped,
    /// tmux answered with an error, or the client went away.
    Failed,
}

impl CheckOutcome {
    fn label(self) -> &'static str {
        match self {
            CheckOutcome::Equal => "equal",
            CheckOutcome::Drift => "drift",
            CheckOutcome::Skipped => "skipped",
            CheckOutcome::Failed => "failed",
        }
    }
}

#[derive(Default)]
pub(super) struct ScreenMetrics {
    checks: Family<OutcomeLabels, Counter>,
    drift: Family<CauseLabels, Counter>,
}

impl ScreenMetrics {
    pub(super) fn register(&self, r: &mut Registry) {
        for outcome in [
            CheckOutcome::Equal,
            CheckOutcome::Drift,
            CheckOutcome::Skipped,
            CheckOutcome::Failed,
        ] {
            let labels = OutcomeLabels {
                outcome: outcome.label(),
            };
            self.checks.get_or_create(&labels).inc_by(0);
        }
        // Every cause from the first scrape, so a rate over them starts there.
        for cause in crate::screen::DriftCause::ALL {
            let labels = CauseLabels {
                cause: cause.as_str(),
            };
            self.drift.get_or_create(&labels).inc_by(0);
        }
        r.register(
            "screen_checks",
            "Settled-screen checks against tmux's capture-pane, by outcome",
            self.checks.clone(),
        );
        r.register(
            "screen_drift",
            "Settled screens that differed from tmux's (tmux's was taken), by cause",
            self.drift.clone(),
        );
    }
}

impl Metrics {
    /// A settled-screen check came out so.
    pub fn screen_checked(&self, outcome: CheckOutcome) {
        let labels = OutcomeLabels {
            outcome: outcome.label(),
        };
        self.inner.screen.checks.get_or_create(&labels).inc();
    }

    /// A settled screen had drifted; `cause` is a `DriftCause`'s name.
    pub fn screen_drift(&self, cause: &'static str) {
        self.inner
            .screen
            .drift
            .get_or_create(&CauseLabels { cause })
            .inc();
    }
}
