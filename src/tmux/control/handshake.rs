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
//! handshake after a quiet spell; see the README.
//!
//! All of this is for `tmux -C` children only (the fallback: see
//! `control::path`). tmuxd's own client (`control::native`) sends the
//! identify messages in one read's worth, so its handshake has no window:
//! it takes no turn and waits for no quiet, and neither do tmuxd's creates
//! and kills while its clients are native (`Tmux::handshake_turn`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, MutexGuard, Notify};

use super::Notification;

static TURN: Mutex<()> = Mutex::const_new(());

/// How many `%client-detached` tmuxd's clients have heard, and a wake-up
/// for each.
static DETACHES: AtomicU64 = AtomicU64::new(0);
static DETACH_HEARD: Notify = Notify::const_new();

/// When a notification that goes to every control client was last heard,
/// in milliseconds since `epoch()` (0: none yet).
static LAST_HEARD_MS: AtomicU64 = AtomicU64::new(0);

/// How long the server must have been quiet before a handshake.
const QUIET: Duration = Duration::from_millis(150);
/// A server that never goes quiet gets its handshake after this long anyway.
const MAX_WAIT: Duration = Duration::from_secs(3);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Waits for the turn; held until the guard drops.
pub async fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().await
}

/// The turn, once the server has been quiet for `QUIET` (or `MAX_WAIT`
/// has passed): for handshakes.
pub async fn quiet_turn() -> MutexGuard<'static, ()> {
    let started = Instant::now();
    loop {
        let guard = TURN.lock().await;
        // Nothing heard yet counts as noise heard at the first look: a
        // daemon started right after another died meets that one's clients
        // leaving and its last commands landing.
        let last = Duration::from_millis(LAST_HEARD_MS.load(Ordering::Relaxed));
        let quiet_for = epoch().elapsed().saturating_sub(last);
        if quiet_for >= QUIET || started.elapsed() >= MAX_WAIT {
            return guard;
        }
        drop(guard);
        tokio::time::sleep(QUIET - quiet_for).await;
    }
}

/// Notes a notification tmux sends to every control client (the kinds
/// that crash a client mid-handshake).
pub fn heard(notification: &Notification) {
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
        let now = (epoch().elapsed().as_millis() as u64).max(1);
        LAST_HEARD_MS.fetch_max(now, Ordering::Relaxed);
    }
    if matches!(notification, Notification::ClientDetached { .. }) {
        DETACHES.fetch_add(1, Ordering::Relaxed);
        DETACH_HEARD.notify_waiters();
    }
}

/// How many `%client-detached` have been heard so far.
pub fn detaches_heard() -> u64 {
    DETACHES.load(Ordering::Relaxed)
}

/// Holds on (with the turn) until a `%client-detached` beyond `seen` is
/// heard, at most `max`. A control client whose session tmuxd closed, or
/// that tmuxd closed, leaves tmux a moment after its process ends, and
/// tmux then tells every control client: that must happen inside the turn,
/// not in the next client's handshake. Another of tmuxd's clients hearing
/// it is the sign it has happened; with none left to hear, `max` is waited.
pub async fn until_detach_heard(seen: u64, max: Duration) {
    let deadline = tokio::time::Instant::now() + max;
    loop {
        let heard = DETACH_HEARD.notified();
        tokio::pin!(heard);
        heard.as_mut().enable();
        if detaches_heard() > seen {
            return;
        }
        if tokio::time::timeout_at(deadline, heard).await.is_err() {
            return;
        }
    }
}
