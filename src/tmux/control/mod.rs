//! tmux control mode (tmux 3.2+): the pure protocol parser, layout strings,
//! argument quoting for tmux's command parser, and the client that owns a
//! `tmux -C attach-session` child and matches replies to commands.

mod client;
mod error;
pub mod handshake;
mod ids;
mod layout;
mod notification;
mod protocol;
pub mod quote;
mod spawn;

pub use client::{
    Attached, ClientEvent, ControlClient, ControlOptions, DEFAULT_PAUSE_AFTER_SECS, Ticket,
};
pub use error::ControlError;
pub use ids::{IdError, PaneId, SessionId, WindowId};
pub use layout::{CellContent, LayoutCell, LayoutError, layout_checksum, parse_layout};
pub use protocol::{
    Event, Guard, Notification, Parser, Reply, parse_notification, unescape_output,
};
