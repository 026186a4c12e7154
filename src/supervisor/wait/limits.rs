//! Caps on waits held open at once, per session and in all: each holds a
//! connection, a task and (for `match`) a compiled regex, so a client
//! cannot pile up more than the config allows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::id::SessionId;
use crate::metrics::Metrics;
use crate::supervisor::types::WaitCap;

/// `http.max_waits_per_session` and `http.max_waits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitLimits {
    pub per_session: usize,
    pub total: usize,
}

/// Whether one more wait fits beside `open_here` on its session and
/// `open_total` in all. The total is checked first: it is the one that
/// protects the daemon.
pub fn admit(
    limits: WaitLimits,
    session_id: SessionId,
    open_here: usize,
    open_total: usize,
) -> Result<(), WaitCap> {
    if open_total >= limits.total {
        return Err(WaitCap::Total { max: limits.total });
    }
    if open_here >= limits.per_session {
        return Err(WaitCap::Session {
            session_id: session_id.to_string(),
            max: limits.per_session,
        });
    }
    Ok(())
}

#[derive(Default)]
struct Counts {
    by_session: HashMap<SessionId, usize>,
    total: usize,
}

/// The waits open now. The lock is held only to count.
pub struct OpenWaits {
    limits: WaitLimits,
    counts: Arc<Mutex<Counts>>,
    metrics: Metrics,
}

/// One open wait; dropping it (the wait answered, timed out, or its client
/// went away) frees the slot.
pub struct WaitSlot {
    id: SessionId,
    counts: Arc<Mutex<Counts>>,
    metrics: Metrics,
}

impl OpenWaits {
    pub fn new(limits: WaitLimits, metrics: Metrics) -> Self {
        OpenWaits {
            limits,
            counts: Arc::default(),
            metrics,
        }
    }

    /// A slot for a wait on session `id`, or the cap it would pass.
    pub fn open(&self, id: SessionId) -> Result<WaitSlot, WaitCap> {
        let mut counts = self.counts.lock().expect("wait counts lock");
        let here = counts.by_session.get(&id).copied().unwrap_or(0);
        admit(self.limits, id, here, counts.total)?;
        *counts.by_session.entry(id).or_default() += 1;
        counts.total += 1;
        self.metrics.set_waits(counts.total);
        Ok(WaitSlot {
            id,
            counts: self.counts.clone(),
            metrics: self.metrics.clone(),
        })
    }
}

impl Drop for WaitSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().expect("wait counts lock");
        counts.total -= 1;
        self.metrics.set_waits(counts.total);
        if let Some(here) = counts.by_session.get_mut(&self.id) {
            *here -= 1;
            if *here == 0 {
                counts.by_session.remove(&self.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: WaitLimits = WaitLimits {
        per_session: 2,
        total: 3,
    };

    #[test]
    fn admission_follows_both_caps() {
        let total = || Err(WaitCap::Total { max: 3 });
        let session = || {
            Err(WaitCap::Session {
                session_id: "sess_1".into(),
                max: 2,
            })
        };
        // (open on the session, open in all, answer)
        let table = [
            (0, 0, Ok(())),
            (1, 1, Ok(())),
            (1, 2, Ok(())),
            (2, 2, session()),
            (0, 3, total()),
            // Both passed: the total is named.
            (2, 3, total()),
        ];
        for (here, all, expected) in table {
            assert_eq!(
                admit(LIMITS, SessionId(1), here, all),
                expected,
                "{here}/{all}"
            );
        }
    }

    #[test]
    fn slots_count_and_free() {
        let open = OpenWaits::new(LIMITS, Metrics::new());
        let a1 = open.open(SessionId(1)).unwrap();
        let _a2 = open.open(SessionId(1)).unwrap();
        let refused = open.open(SessionId(1)).err().unwrap();
        assert!(
            refused
                .to_string()
                .contains("http.max_waits_per_session = 2")
        );
        let _b1 = open.open(SessionId(2)).unwrap();
        let refused = open.open(SessionId(3)).err().unwrap();
        assert!(refused.to_string().contains("http.max_waits = 3"));
        drop(a1);
        assert!(open.open(SessionId(3)).is_ok());
    }
}
