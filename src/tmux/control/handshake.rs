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
//! handshake. (A person's action at that instant still can; see the README.)

use tokio::sync::{Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::const_new(());

/// Waits for the turn; held until the guard drops.
pub async fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().await
}
