//! What one push says: the session's name, host and the one-line message
//! (`build asks: Proceed? [y/N]`), the attention it is about (so an
//! answer can be refused once that attention is gone), where its page is,
//! and the answers the question on screen takes. Never the screen itself:
//! a push service stores what it relays, encrypted or not. What it says
//! is the notifier's to decide (`notify::push_message`); this is its form.

use serde::{Deserialize, Serialize};

/// The decrypted body of a push, as the service worker reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Format version, 1.
    pub v: u32,
    /// `attention`, `exited` or `tmux_lost`.
    pub trigger: String,
    /// The notification's title: the session's name and host.
    pub title: String,
    /// The one line (`notify`'s message).
    pub body: String,
    pub session_id: Option<String>,
    pub name: Option<String>,
    /// The machine the session runs on.
    pub host: String,
    /// The `since` of the attention this is about (RFC 3339), which an
    /// answer must give back.
    pub since: Option<String>,
    /// The session's page, relative to the dashboard.
    pub url: String,
    /// A notification replaces the one before it with the same tag.
    pub tag: String,
    /// What the action buttons type.
    pub answers: Vec<Answer>,
}

/// One action button: what it says and what it types.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The action's id in the notification (`a0`, `a1`).
    pub action: String,
    pub title: String,
    /// Typed first, without Enter.
    pub text: Option<String>,
    /// Key names typed after the text (`Enter`, `Escape`).
    pub keys: Vec<String>,
}
