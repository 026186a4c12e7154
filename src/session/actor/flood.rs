//! A pane flooding output: past a screen's worth many times over, drawing
//! every byte only to scroll it away costs more than the rest of tmuxd's
//! reading together, and tmux holds the pane while its control client is
//! behind, so the program itself waits for it. Past `SKIP_AFTER` bytes
//! without a pause the pane's screen stops being fed and is re-seeded from
//! tmux instead: once the pane is quiet, and every `RESEED_EVERY` while it
//! keeps writing. Streams and the detector still get every byte.

use std::time::{Duration, Instant};

/// Output in one burst (no pause of `QUIET`) drawn before the rest is skipped.
pub(super) const SKIP_AFTER: usize = 256 * 1024;

/// A pause this long ends a burst; a skipping pane is re-seeded after it.
pub(super) const QUIET: Duration = Duration::from_millis(20);

/// How stale a skipping pane's screen may get while output goes on.
pub(super) const RESEED_EVERY: Duration = Duration::from_millis(200);

/// One pane's current burst of output.
#[derive(Debug, Default)]
pub(super) struct Flood {
    /// Bytes since the last pause of `QUIET`.
    bytes: usize,
    last_output: Option<Instant>,
    /// Output is not fed to the screen; since when (or since the last re-seed).
    skipping_since: Option<Instant>,
}

impl Flood {
    /// `len` bytes of output at `now`: whether the screen should be fed them.
    pub(super) fn feed(&mut self, now: Instant, len: usize) -> bool {
        if self
            .last_output
            .is_none_or(|last| now.duration_since(last) >= QUIET)
        {
            self.bytes = 0;
        }
        self.bytes = self.bytes.saturating_add(len);
        self.last_output = Some(now);
        if self.skipping_since.is_none() && self.bytes > SKIP_AFTER {
            self.skipping_since = Some(now);
        }
        self.skipping_since.is_none()
    }

    /// When the screen is due to be re-seeded, if output is being skipped.
    pub(super) fn reseed_at(&self) -> Option<Instant> {
        let since = self.skipping_since?;
        let quiet = self.last_output.unwrap_or(since) + QUIET;
        Some(quiet.min(since + RESEED_EVERY))
    }

    /// A re-seed was asked for at `now`. Once the pane is quiet the seed
    /// has everything and later output is fed again; while it still writes,
    /// skipping goes on and another re-seed follows.
    pub(super) fn reseeded(&mut self, now: Instant) {
        let quiet = self
            .last_output
            .is_none_or(|last| now.duration_since(last) >= QUIET);
        if quiet {
            *self = Flood::default();
        } else {
            self.skipping_since = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn small_bursts_are_always_fed() {
        let t0 = Instant::now();
        let mut flood = Flood::default();
        for i in 0..100 {
            // 100 KiB each, 25 ms apart: every one a burst of its own.
            assert!(flood.feed(t0 + ms(25 * i), 100 * 1024));
        }
        assert_eq!(flood.reseed_at(), None);
    }

    #[test]
    fn a_flood_is_skipped_then_reseeded_when_quiet() {
        let t0 = Instant::now();
        let mut flood = Flood::default();
        assert!(flood.feed(t0, 200 * 1024));
        assert!(!flood.feed(t0 + ms(5), 100 * 1024), "past SKIP_AFTER");
        assert!(!flood.feed(t0 + ms(10), 10));
        assert_eq!(flood.reseed_at(), Some(t0 + ms(10) + QUIET));
        flood.reseeded(t0 + ms(30));
        assert_eq!(flood.reseed_at(), None);
        assert!(flood.feed(t0 + ms(40), 100), "the next burst is fed");
    }

    #[test]
    fn a_long_flood_is_reseeded_meanwhile() {
        let t0 = Instant::now();
        let mut flood = Flood::default();
        let mut at = t0;
        assert!(!flood.feed(at, SKIP_AFTER + 1));
        for _ in 0..40 {
            at += ms(5);
            assert!(!flood.feed(at, 64 * 1024));
        }
        // 200 ms of output without a pause: due now, not at a quiet moment.
        assert_eq!(flood.reseed_at(), Some(t0 + RESEED_EVERY));
        flood.reseeded(at);
        assert!(!flood.feed(at + ms(5), 64 * 1024), "still flooding");
        assert_eq!(flood.reseed_at(), Some(at + ms(5) + QUIET));
    }
}
