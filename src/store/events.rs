//! The append-only event log (`events.jsonl`): one JSON object per line,
//! numbered by a `seq` that keeps rising across restarts and rotations, with
//! the latest events kept in memory so clients can catch up without disk
//! reads, and those the disk refused kept until it takes them.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;

use super::counters::Counters;
use super::files::{FILE_MODE, open_file, parent_dir, read_file, restrict_file_mode, sync_dir};
use super::floors::SEQ_BLOCK;
use super::{StoreError, io_error};
use crate::wire::{Body, Event, FromPeer, Payload};
use bound::bounded;
pub use bound::{MAX_CUT_STRING_BYTES, MAX_EVENT_BYTES, cut_str};
pub use ring::EventPage;
use ring::Ring;
#[cfg(test)]
use scan::Tail;
use scan::{Scan, repair_tail, scan_lines};

mod bound;
mod ring;
mod scan;

/// Unwritten events kept while the disk fails, at most; older ones are
/// dropped from the queue (and counted) past this.
const MAX_UNWRITTEN_BYTES: usize = 64 * 1024 * 1024;

/// JSON bytes of the events kept in memory for replay, unless
/// `retain_bytes` says otherwise: with `MAX_EVENT_BYTES` per event, at
/// least 512 events however large.
pub const RING_BYTES: usize = 4 * 1024 * 1024;

/// What a caller records; the log assigns `seq` and `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEvent {
    pub session_id: Option<String>,
    pub reason: Option<String>,
    pub tmux_name: Option<String>,
    /// Whole, unless a fleet peer cut it already.
    pub body: Body,
    /// On a fleet hub, for a peer's event.
    pub from_peer: Option<FromPeer>,
}

/// The open log file plus a bounded in-memory copy of its newest events.
///
/// Numbering and serving come first, the disk second: `stamp` gives an event
/// its seq and keeps it for replay at once, `flush` writes what is queued.
/// When the disk fails, events stay queued (up to `MAX_UNWRITTEN_BYTES`) and
/// a later `flush` writes them in order, so the file never has a gap that
/// the disk alone caused.
#[derive(Debug)]
pub struct EventLog {
    /// `None` after a rotation whose new file could not be created yet.
    file: Option<File>,
    path: PathBuf,
    /// `<path>.1`: the previous file, kept after one rotation.
    rotated_path: PathBuf,
    next_seq: u64,
    /// Size of the current file up to its last whole line, so rotation needs
    /// no stat per event and a failed write can be cut back.
    bytes: u64,
    max_bytes: u64,
    /// The newest events (by count and bytes), for `since` and `page`.
    ring: Ring,
    /// Encoded events not yet on disk, oldest first.
    unwritten: VecDeque<Unwritten>,
    unwritten_bytes: usize,
    max_unwritten_bytes: usize,
    /// Events dropped from `unwritten` to bound memory: never on disk.
    lost: u64,
    /// A write failed part-way: cut the file back to `bytes` before the next.
    cut_needed: bool,
    /// Where seqs are reserved before they are handed out, if anywhere.
    counters: Option<Arc<Counters>>,
    found: Found,
}

/// What opening the log learned about numbers handed out before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The highest seq in either file, damaged lines included.
    pub highest_seq: Option<u64>,
    /// The highest `sess_<n>` either file names.
    pub highest_session_id: Option<u64>,
    /// Unparsable lines skipped, across both files.
    pub skipped_lines: usize,
}

#[derive(Debug)]
struct Unwritten {
    seq: u64,
    line: Vec<u8>,
}

impl NewEvent {
    pub fn new(payload: Payload) -> Self {
        NewEvent {
            session_id: None,
            reason: None,
            tmux_name: None,
            body: Body::Whole(payload),
            from_peer: None,
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
}

impl EventLog {
    /// Opens or creates `path` (mode 0600) and recovers from it and from
    /// `<path>.1`: `next_seq` continues after the highest seq found (see
    /// `resume_at` for a later start), the ring holds the newest `keep`
    /// events that fit in `RING_BYTES`, each cut to `MAX_EVENT_BYTES` as
    /// `stamp` would (files from older versions hold larger ones). Unparsable lines are skipped and counted, so a torn last line
    /// after a crash cannot stop startup.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> Result<EventLog, StoreError> {
        let rotated_path = rotated_path(path);
        let older = match read_file(&rotated_path) {
            Ok(bytes) => scan_lines(&bytes),
            Err(e) if e.is_not_found() => Scan::default(),
            Err(e) => return Err(e),
        };
        let mut file = open_log_file(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io_error(path))?;
        let current = scan_lines(&bytes);
        repair_tail(&mut file, path, &current.tail)?;
        let size = file.metadata().map_err(io_error(path))?.len();

        let found = Found {
            highest_seq: older.highest_seq().max(current.highest_seq()),
            highest_session_id: older.highest_session_id().max(current.highest_session_id()),
            skipped_lines: older.skipped + current.skipped,
        };
        if found.skipped_lines > 0 {
            tracing::warn!(path = %path.display(), skipped_lines = found.skipped_lines, "skipped unreadable event log lines");
        }
        let mut events = older.events;
        events.extend(current.events);
        events.sort_by_key(|e| e.seq);
        let mut ring = Ring::new(keep, RING_BYTES);
        for event in events.split_off(events.len().saturating_sub(keep)) {
            if let Ok((event, line)) = bounded(event) {
                ring.push(event, line.len());
            }
        }
        Ok(EventLog {
            file: Some(file),
            path: path.to_path_buf(),
            rotated_path,
            next_seq: found.highest_seq.map_or(1, |seq| seq.saturating_add(1)),
            bytes: size,
            max_bytes,
            ring,
            unwritten: VecDeque::new(),
            unwritten_bytes: 0,
            max_unwritten_bytes: MAX_UNWRITTEN_BYTES,
            lost: 0,
            cut_needed: false,
            counters: None,
            found,
        })
    }

    /// Keeps at most `max_bytes` of events' JSON in memory (see `RING_BYTES`).
    pub fn retain_bytes(mut self, max_bytes: usize) -> Self {
        self.ring.set_max_bytes(max_bytes);
        self
    }

    /// Reserves seqs in `counters` before handing them out from now on.
    pub fn with_counters(mut self, counters: Arc<Counters>) -> Self {
        self.counters = Some(counters);
        self
    }

    /// Continues numbering at `next_seq` if that is further than the log
    /// itself said (see `floors::plan_next_seq`); never goes back.
    pub fn resume_at(&mut self, next_seq: u64) {
        self.next_seq = self.next_seq.max(next_seq);
    }

    /// Numbers the event, bounds its size (see `bound`), keeps it for
    /// replay and queues it for the disk. Touches no file: `flush` does.
    pub fn stamp(&mut self, new: NewEvent) -> Event {
        let event = Event {
            seq: self.next_seq,
            at: Utc::now(),
            session_id: new.session_id,
            reason: new.reason,
            tmux_name: new.tmux_name,
            body: new.body,
            from_peer: new.from_peer,
        };
        self.next_seq = self.next_seq.saturating_add(1);
        let seq = event.seq;
        match bounded(event.clone()) {
            Ok((event, mut line)) => {
                self.ring.push(event.clone(), line.len());
                line.push(b'\n');
                self.queue(seq, line);
                event
            }
            Err(e) => {
                tracing::error!(seq, "cannot encode an event; it is not written: {e}");
                self.lost += 1;
                event
            }
        }
    }

    /// `stamp` and `flush` in one: the event, or why it is not on disk yet
    /// (it stays queued either way).
    pub fn append(&mut self, new: NewEvent) -> Result<Event, StoreError> {
        let event = self.stamp(new);
        self.flush().map(|()| event)
    }

    /// Writes every queued event, oldest first, one line each; flushed, not
    /// fsynced (fdatasync per event is too slow: the supervisor calls `sync`
    /// at checkpoints). Reserves seqs in `counters.json` first when the
    /// newest passes the reservation, rotates to `<path>.1` when a line would
    /// take the file past `max_bytes`. On failure the rest stays queued.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        let Some(newest) = self.unwritten.back().map(|u| u.seq) else {
            return Ok(());
        };
        if let Some(counters) = &self.counters
            && newest >= counters.seq_reserved_on_disk()
        {
            counters.reserve_seqs(newest.saturating_add(SEQ_BLOCK))?;
        }
        while let Some(next) = self.unwritten.front() {
            let len = next.line.len() as u64;
            if self.bytes > 0 && self.bytes.saturating_add(len) > self.max_bytes {
                self.rotate()?;
            }
            self.writable_file()?;
            let (Some(file), Some(next)) = (self.file.as_mut(), self.unwritten.front()) else {
                break;
            };
            if let Err(source) = file.write_all(&next.line) {
                // A partial line would have the next event glued onto it.
                self.cut_needed = file.set_len(self.bytes).is_err();
                return Err(StoreError::Io {
                    path: self.path.clone(),
                    source,
                });
            }
            self.bytes += len;
            self.unwritten_bytes -= next.line.len();
            self.unwritten.pop_front();
        }
        Ok(())
    }

    /// Makes every written event durable.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        match &self.file {
            Some(file) => file.sync_data().map_err(io_error(&self.path)),
            None => Ok(()),
        }
    }

    /// Retained events with seq > `since`, oldest first, and whether some
    /// events after `since` are no longer retained (the caller missed them).
    pub fn since(&self, since: u64) -> (Vec<Event>, bool) {
        self.ring.since(since, self.next_seq)
    }

    /// Like `since`, but at most `limit` events and at most `max_bytes` of
    /// their JSON (at least one event, if any): a client pages through a
    /// large backlog instead of one answer holding all of it.
    pub fn page(&self, since: u64, limit: usize, max_bytes: usize) -> EventPage {
        self.ring.page(since, self.next_seq, limit, max_bytes)
    }

    /// Retained events, and the bytes of their JSON.
    pub fn retained(&self) -> (usize, usize) {
        (self.ring.len(), self.ring.bytes())
    }

    /// The seq the next appended event will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// What opening found in the files.
    pub fn found(&self) -> Found {
        self.found
    }

    /// Unparsable lines skipped while opening, across both files.
    pub fn skipped_lines(&self) -> usize {
        self.found.skipped_lines
    }

    /// Events numbered and served but not on disk yet.
    pub fn unwritten(&self) -> usize {
        self.unwritten.len()
    }

    /// Events that will never reach the disk: dropped from the queue while
    /// the disk failed for too long.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    fn queue(&mut self, seq: u64, line: Vec<u8>) {
        self.unwritten_bytes += line.len();
        self.unwritten.push_back(Unwritten { seq, line });
        while self.unwritten_bytes > self.max_unwritten_bytes && self.unwritten.len() > 1 {
            let Some(dropped) = self.unwritten.pop_front() else {
                break;
            };
            self.unwritten_bytes -= dropped.line.len();
            if self.lost == 0 {
                tracing::error!(
                    seq = dropped.seq,
                    "the event log has failed for too long; dropping the oldest unwritten events"
                );
            }
            self.lost += 1;
        }
    }

    /// The current file, re-created if a rotation could not, and cut back
    /// if a failed write left part of a line.
    fn writable_file(&mut self) -> Result<(), StoreError> {
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = open_log_file(&self.path)?;
                self.bytes = file.metadata().map_err(io_error(&self.path))?.len();
                self.file.insert(file)
            }
        };
        if self.cut_needed {
            file.set_len(self.bytes).map_err(io_error(&self.path))?;
            self.cut_needed = false;
        }
        Ok(())
    }

    fn rotate(&mut self) -> Result<(), StoreError> {
        // Once renamed, the old file is the only copy of its events.
        self.sync()?;
        fs::rename(&self.path, &self.rotated_path).map_err(io_error(&self.path))?;
        self.file = None;
        self.bytes = 0;
        self.cut_needed = false;
        self.writable_file()?;
        sync_dir(parent_dir(&self.path))
    }
}

fn rotated_path(path: &Path) -> PathBuf {
    let mut rotated = OsString::from(path.as_os_str());
    rotated.push(".1");
    rotated.into()
}

fn open_log_file(path: &Path) -> Result<File, StoreError> {
    let file = open_file(
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(FILE_MODE),
        path,
    )?;
    restrict_file_mode(&file, path)?;
    Ok(file)
}

#[cfg(test)]
mod tests;
