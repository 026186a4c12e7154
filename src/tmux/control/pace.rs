//! How many native control clients connect at once, per tmux server.
//!
//! tmux accepts connections on a listen socket with a small backlog
//! (`listen(2)` with SOMAXCONN, but it accepts only in its event loop, one
//! turn at a time). Adopting a thousand sessions at once overflows it:
//! `connect` answers EAGAIN (measured: 727 of 1,000). So at most
//! `IN_FLIGHT` clients are between `connect` and their attach being
//! confirmed at any time; the rest wait their turn here, and a connect that
//! still meets a full backlog is tried again with backoff
//! (`native::connect`), never turned into a `tmux -C` child: the server
//! speaks the protocol, it is only busy.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Native connects and handshakes in flight on one server: a quarter of
/// tmux's backlog (128), so it never fills whatever tmux is doing.
/// Measured (debug build, 200 sessions adopted at startup): 8 took 2.0 s
/// to attach them all, 32 took 1.3 s (tmuxd before pacing: 1.4 s); at
/// 1,000 (release, `tmux.live_clients = 64`) 8 and 32 both took 15 s.
pub const IN_FLIGHT: usize = 32;

/// The permits of one server, shared by every clone of its `Tmux`.
#[derive(Debug)]
pub struct AttachPace {
    permits: Arc<Semaphore>,
}

impl Default for AttachPace {
    fn default() -> Self {
        AttachPace {
            permits: Arc::new(Semaphore::new(IN_FLIGHT)),
        }
    }
}

impl AttachPace {
    /// Waits for a place among the attaches in flight; held until the
    /// attach is confirmed or failed.
    pub async fn turn(&self) -> OwnedSemaphorePermit {
        self.permits
            .clone()
            .acquire_owned()
            .await
            .expect("the attach semaphore is never closed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_more_than_in_flight_turns_are_held_at_once() {
        let pace = AttachPace::default();
        let mut held = Vec::new();
        for _ in 0..IN_FLIGHT {
            held.push(pace.turn().await);
        }
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(20), pace.turn());
        assert!(waiting.await.is_err(), "a turn past the limit must wait");
        held.pop();
        let next = tokio::time::timeout(std::time::Duration::from_secs(5), pace.turn());
        assert!(next.await.is_ok(), "a freed turn is given to the next");
    }
}
