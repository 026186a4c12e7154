//! How many streams (WebSocket and SSE) may be open, per session and in
//! all: a slot per open stream, freed when it drops.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::id::SessionId;
use crate::metrics::{DropReason, Metrics, StreamKind};

/// Why a stream was refused (its socket is closed with this reason).
#[derive(Debug, thiserror::Error)]
pub enum TooManyStreams {
    #[error("too many open streams ({open}/{max})")]
    Total { open: usize, max: usize },
    #[error("too many open streams for {session_id} ({open}/{max})")]
    Session {
        session_id: SessionId,
        open: usize,
        max: usize,
    },
}

/// Counts open streams, per session and in all.
#[derive(Clone)]
pub struct StreamLimits {
    per_session: usize,
    total: usize,
    open: Arc<Mutex<HashMap<SessionId, usize>>>,
}

/// One open stream; dropping it frees the slot.
#[derive(Debug)]
pub struct StreamSlot {
    session_id: SessionId,
    open: Arc<Mutex<HashMap<SessionId, usize>>>,
}

impl StreamLimits {
    pub fn new(per_session: usize, total: usize) -> Self {
        StreamLimits {
            per_session,
            total,
            open: Arc::default(),
        }
    }

    /// A slot, or the reason there is none (counted as a refused subscriber).
    pub fn acquire_for(
        &self,
        session_id: SessionId,
        metrics: &Metrics,
        kind: StreamKind,
    ) -> Result<StreamSlot, TooManyStreams> {
        let slot = self.acquire(session_id);
        if slot.is_err() {
            metrics.subscriber_dropped(kind, DropReason::StreamLimit);
        }
        slot
    }

    /// A slot, or the reason there is none.
    pub fn acquire(&self, session_id: SessionId) -> Result<StreamSlot, TooManyStreams> {
        let mut open = self.open.lock().expect("stream limits lock");
        let total: usize = open.values().sum();
        if total >= self.total {
            return Err(TooManyStreams::Total {
                open: total,
                max: self.total,
            });
        }
        let count = open.entry(session_id).or_default();
        if *count >= self.per_session {
            return Err(TooManyStreams::Session {
                session_id,
                open: *count,
                max: self.per_session,
            });
        }
        *count += 1;
        Ok(StreamSlot {
            session_id,
            open: self.open.clone(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().expect("stream limits lock");
        if let Some(count) = open.get_mut(&self.session_id) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.session_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_count_and_free_slots() {
        let limits = StreamLimits::new(2, 3);
        let a1 = limits.acquire(SessionId(1)).unwrap();
        let _a2 = limits.acquire(SessionId(1)).unwrap();
        let refused = limits.acquire(SessionId(1)).unwrap_err().to_string();
        assert!(refused.contains("for sess_1 (2/2)"), "{refused}");
        let _b1 = limits.acquire(SessionId(2)).unwrap();
        let refused = limits.acquire(SessionId(3)).unwrap_err().to_string();
        assert!(refused.contains("(3/3)"), "{refused}");
        drop(a1);
        assert!(limits.acquire(SessionId(3)).is_ok());
    }
}
