//! The data directory: its owner check and exclusive lock, atomic file
//! replacement, and loading JSON files that may be missing or corrupt
//! without failing startup.
//!
//! Every file here is opened with `O_NOFOLLOW`: a symbolic link planted in
//! place of `events.jsonl` would otherwise have tmuxd append to, or read,
//! whatever it points at, with tmuxd's rights.

use std::ffi::{OsStr, OsString};
use std::fs::{self, DirBuilder, File, OpenOptions, Permissions, TryLockError};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{StoreError, io_error};

/// The directory holds session commands, working directories and agent
/// status text: private to the owner.
const DIR_MODE: u32 = 0o700;
pub(super) const FILE_MODE: u32 = 0o600;
const TEMP_MARKER: &str = ".tmp-";

/// Makes temp names unique among concurrent writers in this process; the pid
/// in the name separates processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// An open data directory, exclusively locked for as long as this value lives.
///
/// The lock is an `flock` on the directory itself, so the kernel releases it
/// when the process dies, even by SIGKILL (a crash never leaves a stale
/// lock), and no file in it can be deleted to defeat it (a lock on a
/// `lock` file was: after `rm lock` a second daemon created a new one).
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    /// The directory, kept open only to hold the lock.
    _lock: File,
}

/// The outcome of loading a JSON file that the daemon can live without.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded<T> {
    /// The file does not exist (first start).
    Missing,
    /// The file was read and parsed.
    Found(T),
    /// The file could not be parsed and was renamed to `moved_to`, so the
    /// next write does not destroy what an operator may want to inspect.
    Corrupt { moved_to: PathBuf, error: NotJson },
}

/// Why a file did not parse (serde's error, shared: `Loaded` is `Clone`).
#[derive(Clone, Debug, thiserror::Error)]
#[error(transparent)]
pub struct NotJson(std::sync::Arc<serde_json::Error>);

/// The same failure: serde's errors have no equality of their own.
impl PartialEq for NotJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}

impl DataDir {
    /// Creates the dir (and parents) with mode 0700, refuses one that
    /// belongs to another user (`StoreError::NotOwned`, whoever tmuxd runs
    /// as) or that another user could redirect (`StoreError::Exposed`,
    /// `reach.rs`), tightens one that others can read, and takes the
    /// exclusive lock on it. Fails with `StoreError::Locked` if another
    /// process holds it.
    pub fn open(path: &Path) -> Result<DataDir, StoreError> {
        super::reach::check_reach(path)?;
        DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(path)
            .map_err(io_error(path))?;
        super::reach::check_reach(path)?;
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)
            .map_err(io_error(path))?;
        // Checked on the open directory, so what is checked, tightened and
        // locked is one directory even if the path is swapped meanwhile.
        check_owner(&dir, path)?;
        restrict_dir_mode(&dir, path)?;
        lock_dir(&dir, path)?;
        remove_stale_temps(path);
        Ok(DataDir {
            path: path.to_path_buf(),
            _lock: dir,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn registry_path(&self) -> PathBuf {
        self.path.join("registry.json")
    }

    pub fn thoughts_path(&self) -> PathBuf {
        self.path.join("thoughts.json")
    }

    pub fn ended_path(&self) -> PathBuf {
        self.path.join("ended.json")
    }

    pub fn restore_path(&self) -> PathBuf {
        self.path.join("restore.json")
    }

    pub fn events_path(&self) -> PathBuf {
        self.path.join("events.jsonl")
    }

    pub fn counters_path(&self) -> PathBuf {
        self.path.join("counters.json")
    }

    /// Reads and parses a JSON file. An unparsable file is moved aside to
    /// `<name>.corrupt-<YYYYmmddTHHMMSSZ>[-N]` and reported as
    /// `Loaded::Corrupt`; only I/O failures are errors.
    pub fn load_json<T: DeserializeOwned>(&self, path: &Path) -> Result<Loaded<T>, StoreError> {
        load_json(path)
    }

    /// Serializes `value` as pretty JSON and replaces `path` atomically.
    pub fn save_json<T: Serialize>(&self, path: &Path, value: &T) -> Result<(), StoreError> {
        let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| StoreError::Encode {
            path: path.to_path_buf(),
            source,
        })?;
        bytes.push(b'\n');
        write_atomic(path, &bytes)
    }
}

/// `DataDir::load_json`, for a file of the locked data dir whose owner
/// holds only its path (the notifier's memory).
pub fn load_json<T: DeserializeOwned>(path: &Path) -> Result<Loaded<T>, StoreError> {
    let bytes = match read_file(path) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Ok(Loaded::Missing),
        Err(e) => return Err(e),
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => Ok(Loaded::Found(value)),
        Err(error) => Ok(Loaded::Corrupt {
            moved_to: move_aside(path, Utc::now())?,
            error: NotJson(std::sync::Arc::new(error)),
        }),
    }
}

/// `load_json` for a file that may start empty: a missing one is the
/// default, a corrupt one is moved aside (and logged) and read as the
/// default, an unreadable one is logged and read as the default.
pub fn load_or_default<T: DeserializeOwned + Default>(path: &Path) -> T {
    match load_json(path) {
        Ok(Loaded::Found(file)) => file,
        Ok(Loaded::Missing) => T::default(),
        Ok(Loaded::Corrupt { moved_to, error }) => {
            tracing::warn!(moved_to = %moved_to.display(), "{}: unreadable ({error}); moved aside", path.display());
            T::default()
        }
        Err(e) => {
            tracing::warn!("{e}");
            T::default()
        }
    }
}

/// Replaces `path` with `bytes` so that a crash at any point leaves either the
/// old content or the new, never a mix: temp file in the same directory
/// (mode 0600), write, fsync, rename, fsync the directory. If anything before
/// the rename fails, the temp file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let name = file_name(path)?;
    let dir = parent_dir(path);
    let (temp_path, mut temp) = create_temp(dir, name)?;
    let replaced = temp
        .write_all(bytes)
        .and_then(|()| temp.sync_all())
        .map_err(io_error(&temp_path))
        .and_then(|()| fs::rename(&temp_path, path).map_err(io_error(path)));
    if let Err(e) = replaced {
        drop(temp);
        // The original error is the one worth reporting; a temp file that
        // cannot be removed is swept by the next `DataDir::open`.
        let _ = fs::remove_file(&temp_path);
        return Err(e);
    }
    sync_dir(dir)
}

/// Makes a rename or file creation in `dir` durable.
pub(super) fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error(dir))
}

/// The directory `path` lives in; `.` for a bare file name.
pub(super) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Opens a file of the data dir with `options` and `O_NOFOLLOW` (and
/// `O_NONBLOCK`, so a FIFO planted in its place cannot hang startup: it
/// changes nothing for a regular file). A symbolic link is refused as
/// `StoreError::Link`, anything but a regular file as `StoreError::Io`.
pub(super) fn open_file(options: &mut OpenOptions, path: &Path) -> Result<File, StoreError> {
    let file = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            Some(libc::ELOOP) => StoreError::Link {
                path: path.to_path_buf(),
            },
            _ => io_error(path)(source),
        })?;
    let kind = file.metadata().map_err(io_error(path))?.file_type();
    if !kind.is_file() {
        let source = io::Error::new(ErrorKind::InvalidInput, "not a regular file");
        return Err(io_error(path)(source));
    }
    Ok(file)
}

/// The whole content of a data dir file, read as `open_file` opens it;
/// `NotFound` stays an `Io` error with that kind, for callers that accept a
/// missing file.
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>, StoreError> {
    let mut file = open_file(OpenOptions::new().read(true), path)?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes).map_err(io_error(path))?;
    Ok(bytes)
}

/// Tightens a file that an older version or a human left readable by others.
pub(super) fn restrict_file_mode(file: &File, path: &Path) -> Result<(), StoreError> {
    let mode = file
        .metadata()
        .map_err(io_error(path))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(FILE_MODE))
            .map_err(io_error(path))?;
    }
    Ok(())
}

fn file_name(path: &Path) -> Result<&OsStr, StoreError> {
    path.file_name().ok_or_else(|| StoreError::Io {
        path: path.to_path_buf(),
        source: io::Error::new(ErrorKind::InvalidInput, "path does not name a file"),
    })
}

/// A root daemon on a directory another user owns would write files that
/// user can replace with links between two starts (and the user could read
/// root's sessions): the data dir must be the daemon's own, whoever it runs
/// as.
fn check_owner(dir: &File, path: &Path) -> Result<(), StoreError> {
    let owner = dir.metadata().map_err(io_error(path))?.uid();
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    if owner != uid {
        return Err(StoreError::NotOwned {
            path: path.to_path_buf(),
            owner,
            uid,
        });
    }
    Ok(())
}

fn restrict_dir_mode(dir: &File, path: &Path) -> Result<(), StoreError> {
    let mode = dir.metadata().map_err(io_error(path))?.permissions().mode();
    if mode & 0o077 != 0 {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{:o}", mode & 0o777),
            "data dir was accessible to others; restricting it to 0700"
        );
        dir.set_permissions(Permissions::from_mode(DIR_MODE))
            .map_err(io_error(path))?;
    }
    Ok(())
}

fn lock_dir(dir: &File, path: &Path) -> Result<(), StoreError> {
    match dir.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(StoreError::Locked {
            path: path.to_path_buf(),
        }),
        Err(TryLockError::Error(source)) => Err(io_error(path)(source)),
    }
}

/// A crash between creating a temp file and renaming it leaves the temp file
/// behind. With the lock held no other writer can own one, so they are junk;
/// failing to remove one is not worth refusing to start over.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if is_temp_name(&entry.file_name()) {
            let path = entry.path();
            match fs::remove_file(&path) {
                Ok(()) => tracing::info!(path = %path.display(), "removed stale temp file"),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "cannot remove stale temp file: {e}")
                }
            }
        }
    }
}

fn create_temp(dir: &Path, name: &OsStr) -> Result<(PathBuf, File), StoreError> {
    loop {
        let counter = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(temp_file_name(name, std::process::id(), counter));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            // Left over from an earlier process that had the same pid.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(StoreError::Io { path, source }),
        }
    }
}

/// Hidden, so a human listing the directory sees only the real files.
fn temp_file_name(name: &OsStr, pid: u32, counter: u64) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!("{TEMP_MARKER}{pid}-{counter}"));
    temp
}

fn is_temp_name(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') && name.contains(TEMP_MARKER)
}

/// Renames a corrupt file out of the way without overwriting an earlier one.
/// The data dir lock makes this process the only writer, so checking for a
/// free name before renaming cannot race.
fn move_aside(path: &Path, now: DateTime<Utc>) -> Result<PathBuf, StoreError> {
    let name = file_name(path)?;
    let dir = parent_dir(path);
    let mut attempt = 0;
    let target = loop {
        let candidate = dir.join(corrupt_file_name(name, now, attempt));
        if fs::symlink_metadata(&candidate).is_err() {
            break candidate;
        }
        attempt += 1;
    };
    fs::rename(path, &target).map_err(io_error(path))?;
    sync_dir(dir)?;
    Ok(target)
}

fn corrupt_file_name(name: &OsStr, at: DateTime<Utc>, attempt: u32) -> OsString {
    let mut moved = name.to_os_string();
    moved.push(format!(".corrupt-{}", at.format("%Y%m%dT%H%M%SZ")));
    if attempt > 0 {
        moved.push(format!("-{attempt}"));
    }
    moved
}

#[cfg(test)]
mod tests;
