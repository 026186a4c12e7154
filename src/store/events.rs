//! The append-only event log (`events.jsonl`): one JSON object per line,
//! numbered by a `seq` that keeps rising across restarts and rotations, with
//! the latest events kept in memory so clients can catch up without disk reads.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::files::{FILE_MODE, parent_dir, restrict_file_mode, sync_dir};
use super::{StoreError, io_error};

/// Names `Event` writes itself. A `detail` entry with one of them would put a
/// duplicate key on the line, which then fails to parse on the next start.
const RESERVED_KEYS: [&str; 6] = ["seq", "at", "kind", "session_id", "reason", "tmux_name"];

/// What happened, as recorded in the log.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// tmuxd created a new tmux session.
    SessionCreated,
    /// An existing tmux session was taken under supervision.
    SessionAdopted,
    /// Supervision ended while the tmux session was left running.
    SessionDetached,
    /// A session ended; `reason` says why (`api_delete`, `process_exit`...).
    SessionDeleted,
    /// The state detector moved a session to a new state.
    SessionState,
    /// A session's published status ("thought") changed.
    ThoughtUpdate,
    /// Input queued for a session was discarded without being typed.
    InputDropped,
}

/// What a caller records; the log assigns `seq` and `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEvent {
    pub kind: EventKind,
    pub session_id: Option<String>,
    pub reason: Option<String>,
    pub tmux_name: Option<String>,
    /// Extra fields, flattened into the JSON line. Keys that collide with the
    /// fields above are dropped (with a warning).
    pub detail: Map<String, Value>,
}

/// One line of the log, as stored and as served to clients.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Event {
    /// Position in the log: one more than the previous event, across restarts.
    pub seq: u64,
    /// When the event was appended.
    pub at: DateTime<Utc>,
    /// What happened.
    pub kind: EventKind,
    /// The session it happened to, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_id: Option<String>,
    /// Why it happened, e.g. why a session ended or changed state.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// The tmux session name, for events about sessions without an id yet.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmux_name: Option<String>,
    /// Kind-specific extra fields, written at the top level of the object.
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

/// The open log file plus a bounded in-memory copy of its newest events.
#[derive(Debug)]
pub struct EventLog {
    file: File,
    path: PathBuf,
    /// `<path>.1`: the previous file, kept after one rotation.
    rotated_path: PathBuf,
    next_seq: u64,
    /// Size of the current file, tracked so rotation needs no stat per event.
    bytes: u64,
    max_bytes: u64,
    /// How many events the ring retains for `since`.
    keep: usize,
    /// The newest `keep` events, oldest first, seq ascending.
    ring: VecDeque<Event>,
    skipped_lines: usize,
}

/// What reading one log file found.
#[derive(Debug, Default, PartialEq)]
struct Scan {
    events: Vec<Event>,
    skipped: usize,
    tail: Tail,
}

/// The state of the last line, which a crash may have cut short.
#[derive(Debug, Default, PartialEq)]
enum Tail {
    /// Empty file, or the last line ends with a newline.
    #[default]
    Clean,
    /// The last line parsed but has no newline; one must be added before
    /// appending, or the next event would be glued onto it.
    Unterminated,
    /// The last line is a torn write; the file is cut back to `keep_len`.
    Torn { keep_len: u64 },
}

impl NewEvent {
    pub fn new(kind: EventKind) -> Self {
        NewEvent {
            kind,
            session_id: None,
            reason: None,
            tmux_name: None,
            detail: Map::new(),
        }
    }

    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    pub fn tmux_name(mut self, tmux_name: impl Into<String>) -> Self {
        self.tmux_name = Some(tmux_name.into());
        self
    }

    pub fn detail(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.detail.insert(key.into(), value.into());
        self
    }
}

impl EventLog {
    /// Opens or creates `path` (mode 0600) and recovers from it and from
    /// `<path>.1`: `next_seq` continues after the highest seq found, the ring
    /// holds the newest `keep` events. Unparsable lines are skipped and
    /// counted, so a torn last line after a crash cannot stop startup.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> Result<EventLog, StoreError> {
        let rotated_path = rotated_path(path);
        let older = match fs::read(&rotated_path) {
            Ok(bytes) => scan_lines(&bytes),
            Err(e) if e.kind() == ErrorKind::NotFound => Scan::default(),
            Err(e) => return Err(io_error(&rotated_path)(e)),
        };
        let mut file = open_log_file(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io_error(path))?;
        let current = scan_lines(&bytes);
        repair_tail(&mut file, path, &current.tail)?;
        let size = file.metadata().map_err(io_error(path))?.len();

        let skipped_lines = older.skipped + current.skipped;
        if skipped_lines > 0 {
            tracing::warn!(path = %path.display(), skipped_lines, "skipped unreadable event log lines");
        }
        let mut events = older.events;
        events.extend(current.events);
        events.sort_by_key(|e| e.seq);
        let next_seq = events.last().map_or(1, |e| e.seq.saturating_add(1));
        let ring = events.split_off(events.len().saturating_sub(keep)).into();
        Ok(EventLog {
            file,
            path: path.to_path_buf(),
            rotated_path,
            next_seq,
            bytes: size,
            max_bytes,
            keep,
            ring,
            skipped_lines,
        })
    }

    /// Stamps the event with the next seq and the current time and appends
    /// it as one line. Written and flushed, not fsynced: fdatasync per event
    /// is too slow, so the supervisor calls `sync` at checkpoints. Rotates to
    /// `<path>.1` first when this line would take the file past `max_bytes`.
    pub fn append(&mut self, new: NewEvent) -> Result<Event, StoreError> {
        let event = Event {
            seq: self.next_seq,
            at: Utc::now(),
            kind: new.kind,
            session_id: new.session_id,
            reason: new.reason,
            tmux_name: new.tmux_name,
            detail: without_reserved_keys(new.detail),
        };
        let mut line = serde_json::to_vec(&event).map_err(|source| StoreError::Encode {
            path: self.path.clone(),
            source,
        })?;
        line.push(b'\n');
        let line_len = line.len() as u64;
        if self.bytes > 0 && self.bytes.saturating_add(line_len) > self.max_bytes {
            self.rotate()?;
        }
        if let Err(source) = self.file.write_all(&line).and_then(|()| self.file.flush()) {
            // A partial line would have the next event glued onto it; cutting
            // it off keeps the file one event per line.
            let _ = self.file.set_len(self.bytes);
            return Err(StoreError::Io {
                path: self.path.clone(),
                source,
            });
        }
        self.bytes += line_len;
        self.next_seq += 1;
        if self.keep > 0 {
            if self.ring.len() >= self.keep {
                self.ring.pop_front();
            }
            self.ring.push_back(event.clone());
        }
        Ok(event)
    }

    /// Makes every appended event durable.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(io_error(&self.path))
    }

    /// Retained events with seq > `since`, oldest first, and whether some
    /// events after `since` are no longer retained (the caller missed them).
    pub fn since(&self, since: u64) -> (Vec<Event>, bool) {
        let oldest_retained = self.ring.front().map_or(self.next_seq, |e| e.seq);
        let truncated = since.saturating_add(1) < oldest_retained;
        let start = self.ring.partition_point(|e| e.seq <= since);
        (self.ring.range(start..).cloned().collect(), truncated)
    }

    /// The seq the next appended event will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Unparsable lines skipped while opening, across both files.
    pub fn skipped_lines(&self) -> usize {
        self.skipped_lines
    }

    fn rotate(&mut self) -> Result<(), StoreError> {
        // Once renamed, the old file is the only copy of its events.
        self.sync()?;
        fs::rename(&self.path, &self.rotated_path).map_err(io_error(&self.path))?;
        self.file = open_log_file(&self.path)?;
        self.bytes = 0;
        sync_dir(parent_dir(&self.path))
    }
}

fn rotated_path(path: &Path) -> PathBuf {
    let mut rotated = OsString::from(path.as_os_str());
    rotated.push(".1");
    rotated.into()
}

fn open_log_file(path: &Path) -> Result<File, StoreError> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(FILE_MODE)
        .open(path)
        .map_err(io_error(path))?;
    restrict_file_mode(&file, path)?;
    Ok(file)
}

fn repair_tail(file: &mut File, path: &Path, tail: &Tail) -> Result<(), StoreError> {
    match *tail {
        Tail::Clean => Ok(()),
        Tail::Unterminated => file.write_all(b"\n").map_err(io_error(path)),
        Tail::Torn { keep_len } => {
            tracing::warn!(path = %path.display(), keep_len, "cutting off a torn last event line");
            file.set_len(keep_len).map_err(io_error(path))
        }
    }
}

/// Parses a log file's lines, skipping (and counting) those that are not
/// events, and reports whether its last line was cut short.
fn scan_lines(bytes: &[u8]) -> Scan {
    let mut scan = Scan::default();
    let mut offset = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let line_start = offset;
        offset += line.len();
        let terminated = line.ends_with(b"\n");
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice::<Event>(line) {
            Ok(event) => {
                scan.events.push(event);
                if !terminated {
                    scan.tail = Tail::Unterminated;
                }
            }
            Err(_) => {
                scan.skipped += 1;
                if !terminated {
                    scan.tail = Tail::Torn {
                        keep_len: line_start as u64,
                    };
                }
            }
        }
    }
    scan
}

fn without_reserved_keys(mut detail: Map<String, Value>) -> Map<String, Value> {
    for key in RESERVED_KEYS {
        if detail.remove(key).is_some() {
            tracing::warn!(
                key,
                "event detail key collides with an event field; dropped"
            );
        }
    }
    detail
}

#[cfg(test)]
mod tests;
