//! How many settled-screen checks tmuxd's session actors may ask of one
//! tmux server per second, all sessions together (`tmux.screen_checks_per_s`).
//! Each check is two or three commands tmux runs in its own loop, between
//! its human clients' keystrokes; at 200 sessions settling at once the
//! budget, not the sessions, sets that load. One per server, shared by the
//! `Tmux` clones that reach it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket: `per_second` tokens a second, at most one second's worth
/// saved up.
#[derive(Debug)]
pub struct CheckBudget {
    per_second: u32,
    bucket: Mutex<Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Option<Instant>,
}

impl Bucket {
    /// Refills for the time since the last take, then takes one token if
    /// there is one.
    fn take(&mut self, now: Instant, per_second: u32) -> bool {
        let rate = f64::from(per_second);
        let elapsed = self.at.map_or(Duration::from_secs(1), |at| {
            now.saturating_duration_since(at)
        });
        self.tokens = (self.tokens + elapsed.as_secs_f64() * rate).min(rate.max(1.0));
        self.at = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

impl CheckBudget {
    /// Checks disabled when `per_second` is 0.
    pub fn new(per_second: u32) -> Self {
        CheckBudget {
            per_second,
            bucket: Mutex::new(Bucket {
                tokens: 0.0,
                at: None,
            }),
        }
    }

    pub fn enabled(&self) -> bool {
        self.per_second > 0
    }

    /// Whether one more check may run at `now`.
    pub fn try_take(&self, now: Instant) -> bool {
        if !self.enabled() {
            return false;
        }
        // A short section: no await inside.
        let mut bucket = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        bucket.take(now, self.per_second)
    }
}

impl Default for CheckBudget {
    fn default() -> Self {
        CheckBudget::new(crate::config::DEFAULT_SCREEN_CHECKS_PER_S)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_worth_then_the_rate() {
        let t0 = Instant::now();
        let budget = CheckBudget::new(4);
        let taken = (0..10).filter(|_| budget.try_take(t0)).count();
        assert_eq!(taken, 4, "a full bucket at first");
        assert!(!budget.try_take(t0 + Duration::from_millis(100)));
        assert!(budget.try_take(t0 + Duration::from_millis(260)));
        assert!(!budget.try_take(t0 + Duration::from_millis(270)));
        // Idle for long: never more than a second's worth.
        let later = t0 + Duration::from_secs(60);
        let taken = (0..10).filter(|_| budget.try_take(later)).count();
        assert_eq!(taken, 4);
    }

    #[test]
    fn zero_disables() {
        let budget = CheckBudget::new(0);
        assert!(!budget.enabled());
        assert!(!budget.try_take(Instant::now()));
    }
}
