//! One turn at a time for what could crash tmux while a control client
//! connects.
//!
//! tmux before 3.7 (fixed there: tmux issue 4980) marks a connecting client
//! as a control client before it has set up its control-mode state, and
//! sends some notifications to every control client without checking that
//! state: `%sessions-changed` (a session created or closed),
//! `%client-detached`, `%session-renamed`, `%session-window-changed`,
//! `%window-pane-changed`, `%pane-mode-changed`. One of those firing while a
//! control client is between its first and last identify message makes the
//! server dereference a null pointer and exit, taking every session with
//! it. Measured on tmux 3.3a: eight clients creating sessions that exit at
//! once killed the server within a second.
//!
//! tmuxd cannot stop other tmux clients, but it can stop itself: attaching
//! a control client, closing one, creating and killing a session all take
//! this turn, so none of tmuxd's own actions ever lands inside another's
//! handshake. Other clients' actions it can only see coming: every control
//! client hears those notifications, so an attach waits until the server
//! has been quiet for `QUIET` (at most `MAX_WAIT`), which keeps handshakes
//! out of bursts (a script creating sessions, someone switching panes, a
//! program that ends as soon as its session was created).
//! What remains is an action landing within the few milliseconds of a
//! handshake after a quiet spell; see docs/architecture.md.
//!
//! All of this is for `tmux -C` children only (the fallback: see
//! `control::path`). tmuxd's own client (`control::native`) sends the
//! identify messages in one read's worth, so its handshake has no window:
//! it takes no turn and waits for no quiet, and neither do tmuxd's creates
//! and kills while its clients are native (`Tmux::handshake_turn`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, Notify, OwnedMutexGuard};

use super::Notification;

/// How long the server must have been quiet before a handshake.
const QUIET: Duration = Duration::from_millis(150);
/// A server that never goes quiet gets its handshake after this long anyway.
const MAX_WAIT: Duration = Duration::from_secs(3);

/// The turn and what tmuxd's clients heard, for one tmux server: every
/// `Tmux` of that server (its clones) shares it; another server's is its
/// own (tests run many servers in one process).
#[derive(Debug)]
pub struct Handshake {
    turn: Arc<Mutex<()>>,
    /// How many `%client-detached` tmuxd's clients have heard, and a
    /// wake-up for each.
    detaches: AtomicU64,
    detach_heard: Notify,
    /// When a notification that goes to every control client was last
    /// heard, in milliseconds since `epoch` (0: none yet).
    last_heard_ms: AtomicU64,
    epoch: Instant,
}

impl Default for Handshake {
    fn default() -> Self {
        Handshake {
            turn: Arc::default(),
            detaches: AtomicU64::new(0),
            detach_heard: Notify::new(),
            last_heard_ms: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

/// The turn, held until the guard drops.
pub type Turn = OwnedMutexGuard<()>;

impl Handshake {
    /// Waits for the turn.
    pub async fn turn(&self) -> Turn {
        self.turn.clone().lock_owned().await
    }

    /// The turn, once the server has been quiet for `QUIET` (or `MAX_WAIT`
    /// has passed): for handshakes.
    pub async fn quiet_turn(&self) -> Turn {
        let started = Instant::now();
        loop {
            let guard = self.turn().await;
            // Nothing heard yet counts as noise heard at the first look: a
            // daemon started right after another died meets that one's
            // clients leaving and its last commands landing.
            let last = Duration::from_millis(self.last_heard_ms.load(Ordering::Relaxed));
            let quiet_for = self.epoch.elapsed().saturating_sub(last);
            if quiet_for >= QUIET || started.elapsed() >= MAX_WAIT {
                return guard;
            }
            drop(guard);
            tokio::time::sleep(QUIET - quiet_for).await;
        }
    }

    /// Notes a notification tmux sends to every control client (the kinds
    /// that crash a client mid-handshake).
    pub fn heard(&self, notification: &Notification) {
        let global = matches!(
            notification,
            Notification::SessionsChanged
                | Notification::SessionRenamed { .. }
                | Notification::SessionWindowChanged { .. }
                | Notification::WindowPaneChanged { .. }
                | Notification::PaneModeChanged { .. }
                | Notification::ClientDetached { .. }
        );
        if global {
            let now = (self.epoch.elapsed().as_millis() as u64).max(1);
            self.last_heard_ms.fetch_max(now, Ordering::Relaxed);
        }
        if matches!(notification, Notification::ClientDetached { .. }) {
            self.detaches.fetch_add(1, Ordering::Relaxed);
            self.detach_heard.notify_waiters();
        }
    }

    /// How many `%client-detached` have been heard so far.
    pub fn detaches_heard(&self) -> u64 {
        self.detaches.load(Ordering::Relaxed)
    }

    /// Holds on (with the turn) until a `%client-detached` beyond `seen` is
    /// heard, at most `max`. A control client whose session tmuxd closed,
    /// or that tmuxd closed, leaves tmux a moment after its process ends,
    /// and tmux then tells every control client: that must happen inside
    /// the turn, not in the next client's handshake. Another of tmuxd's
    /// clients hearing it is the sign it has happened; with none left to
    /// hear, `max` is waited.
    pub async fn until_detach_heard(&self, seen: u64, max: Duration) {
        let deadline = tokio::time::Instant::now() + max;
        loop {
            let heard = self.detach_heard.notified();
            tokio::pin!(heard);
            heard.as_mut().enable();
            if self.detaches_heard() > seen {
                return;
            }
            if tokio::time::timeout_at(deadline, heard).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two servers' turns are their own: one held does not hold the other.
    #[tokio::test]
    async fn each_server_has_its_own_turn() {
        let (one, two) = (Handshake::default(), Handshake::default());
        let _held = one.turn().await;
        let other = tokio::time::timeout(Duration::from_secs(5), two.turn()).await;
        assert!(other.is_ok(), "another server's turn is free");
        let same = tokio::time::timeout(Duration::from_millis(50), one.turn()).await;
        assert!(same.is_err(), "the held turn is held");
    }

    #[tokio::test]
    async fn a_detach_heard_ends_the_wait_for_it() {
        let handshake = Handshake::default();
        let seen = handshake.detaches_heard();
        handshake.heard(&Notification::ClientDetached { client: "c".into() });
        let waited = Instant::now();
        handshake
            .until_detach_heard(seen, Duration::from_secs(30))
            .await;
        assert!(waited.elapsed() < Duration::from_secs(5));
        assert_eq!(handshake.detaches_heard(), seen + 1);
    }
}
