//! tmux control mode (tmux 3.2+): the pure protocol parser, layout strings,
//! argument quoting for tmux's command parser, and the client that attaches
//! to a session (natively, or through a `tmux -C attach-session` child) and
//! matches replies to commands.

mod client;
mod error;
pub mod handshake;
mod ids;
mod layout;
pub mod native;
mod notification;
pub mod pace;
mod path;
mod protocol;
pub mod quote;
mod spawn;
mod transport;

pub use client::{
    Attached, Batch, ClientEvent, ControlClient, ControlOptions, DEFAULT_PAUSE_AFTER_SECS, Ticket,
};
pub use error::ControlError;
pub use ids::{IdError, PaneId, TmuxSessionId, WindowId};
pub use layout::{CellContent, LayoutCell, LayoutError, layout_checksum, parse_layout};
pub use path::{ClientPath, PathCell};
pub use protocol::{
    Event, Guard, Notification, Parser, Reply, parse_notification, unescape_output,
};
pub use transport::Departure;
