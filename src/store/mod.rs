//! Disk persistence: the locked data directory, atomically replaced JSON
//! files (registry, thoughts, counters), the append-only event log, and the
//! health of writing them.
//!
//! Nothing here knows about tmux or session actors; the supervisor decides
//! what to write and when, this module makes sure nothing on disk is ever
//! half-written and that a damaged file never stops the daemon from starting.

mod counters;
mod ended;
mod events;
mod files;
pub mod floors;
mod health;
mod registry;

use std::io;
use std::path::{Path, PathBuf};

pub use counters::{Counters, CountersFile, salvage_damaged_files};
pub use ended::{EndedFile, EndedRecord};
pub use events::{
    CUT_KEY, Event, EventKind, EventLog, EventPage, Found, MAX_CUT_STRING_BYTES, MAX_EVENT_BYTES,
    NewEvent, RING_BYTES, cut_str,
};
pub use files::{DataDir, Loaded, write_atomic};
pub use health::{Failure, StorageHealth, Write};
pub use registry::{
    InputWhen, PersistedAttention, PersistedSession, QueuedInput, RegistryFile, Thought,
    ThoughtsFile,
};

/// Everything that can go wrong reading or writing the data directory.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file system call on `path` failed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// Another process holds the data directory's lock file.
    #[error(
        "another tmuxd is already using data dir {} (lock held on {})",
        path.display(),
        path.join(files::LOCK_FILE).display()
    )]
    Locked { path: PathBuf },
    /// A value destined for `path` could not be turned into JSON.
    #[error("{}: cannot encode as JSON: {source}", path.display())]
    Encode {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Wraps an I/O error with the path it happened on, for `map_err`.
fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}
