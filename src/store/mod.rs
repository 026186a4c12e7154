//! Disk persistence: the locked data directory, atomically replaced JSON
//! files (registry, thoughts, counters), the append-only event log, and the
//! health of writing them.
//!
//! Nothing here knows about session actors or talks to tmux (the restore
//! plan's shape, `tmux::Blueprint`, is tmux's); the supervisor decides
//! what to write and when, this module makes sure nothing on disk is ever
//! half-written and that a damaged file never stops the daemon from starting.

mod counters;
mod ended;
mod events;
mod files;
pub mod floors;
mod health;
mod notified;
mod reach;
mod registry;
mod restore;

use std::io;
use std::path::{Path, PathBuf};

/// The token the daemon generates when none is configured, in the data
/// dir; the CLI of the daemon's user reads it.
pub const TOKEN_FILE: &str = "token";
/// The unix socket the daemon's own user reaches it through, in the data dir.
pub const SOCKET_FILE: &str = "tmuxd.sock";

pub use counters::{Counters, CountersFile, salvage_damaged_files};
pub use ended::{
    EndedFile, EndedRecord, SCROLLBACK_FILE_MAX_BYTES, ScrollbackFile, ScrollbackFiles,
};
pub use events::{
    EventLog, EventPage, Found, MAX_CUT_STRING_BYTES, MAX_EVENT_BYTES, NewEvent, RING_BYTES,
    cut_str,
};
pub use files::{DataDir, Loaded, NotJson, load_or_default, write_atomic};
pub use health::{Failure, StorageHealth, Write};
pub use notified::{NOTIFIED_FILE, NotifiedFile, NotifiedSession};
pub use registry::{
    InputWhen, PersistedAttention, PersistedSession, QueuedInput, RegistryFile, Thought,
    ThoughtsFile,
};
pub use restore::{Origin, RestoreFile, RestoreMode, RestoreRecord};

/// Everything that can go wrong reading or writing the data directory.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file system call on `path` failed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// Another process holds the data directory's lock.
    #[error(
        "another tmuxd is already using data dir {} (it holds the lock on the directory)",
        path.display()
    )]
    Locked { path: PathBuf },
    /// The data directory belongs to a user other than the daemon's.
    #[error(
        "config key `data_dir`: {} belongs to uid {owner}, not to tmuxd's user (uid {uid}); \
         use a directory of tmuxd's own user",
        path.display()
    )]
    NotOwned { path: PathBuf, owner: u32, uid: u32 },
    /// Another user can replace a directory or link on the way to the
    /// data dir, and so redirect tmuxd's files after it starts.
    #[error(
        "config key `data_dir`: {} is reached through {}, {why}: that user could redirect \
         tmuxd's files after it starts; use a data dir that only tmuxd's user and root can \
         change the way to",
        path.display(),
        component.display()
    )]
    Exposed {
        path: PathBuf,
        component: PathBuf,
        why: reach::Exposure,
    },
    /// A file of the data directory is a symbolic link, which is not followed.
    #[error(
        "{} is a symbolic link; tmuxd does not follow links in its data dir (remove it)",
        path.display()
    )]
    Link { path: PathBuf },
    /// A value destined for `path` could not be turned into JSON.
    #[error("{}: cannot encode as JSON: {source}", path.display())]
    Encode {
        path: PathBuf,
        source: serde_json::Error,
    },
}

impl StoreError {
    /// Whether the data dir is unusable as configured (exit 78), rather
    /// than failing.
    pub fn is_config(&self) -> bool {
        matches!(
            self,
            StoreError::NotOwned { .. } | StoreError::Exposed { .. }
        )
    }

    /// Whether the file asked for does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Wraps an I/O error with the path it happened on, for `map_err`.
fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}
