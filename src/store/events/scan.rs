//! Reading a log file back: parsing its lines, counting the unreadable ones,
//! salvaging what a damaged line still says, and repairing a torn tail.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::Event;
use crate::store::floors::{salvage_event_seq, session_number};
use crate::store::{StoreError, io_error};

/// What reading one log file found.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Scan {
    pub(super) events: Vec<Event>,
    pub(super) skipped: usize,
    /// The highest seq still readable at the start of a skipped line.
    pub(super) salvaged_seq: Option<u64>,
    pub(super) tail: Tail,
}

/// The state of the last line, which a crash may have cut short.
#[derive(Debug, Default, PartialEq)]
pub(super) enum Tail {
    /// Empty file, or the last line ends with a newline.
    #[default]
    Clean,
    /// The last line parsed but has no newline; one must be added before
    /// appending, or the next event would be glued onto it.
    Unterminated,
    /// The last line is a torn write; the file is cut back to `keep_len`.
    Torn { keep_len: u64 },
}

impl Scan {
    /// The highest seq the file mentions, in whole or damaged lines.
    pub(super) fn highest_seq(&self) -> Option<u64> {
        self.events
            .iter()
            .map(|e| e.seq)
            .max()
            .max(self.salvaged_seq)
    }

    /// The highest `sess_<n>` any whole line names.
    pub(super) fn highest_session_id(&self) -> Option<u64> {
        self.events
            .iter()
            .filter_map(|e| e.session_id.as_deref().and_then(session_number))
            .max()
    }
}

/// Parses a log file's lines, skipping (and counting) those that are not
/// events, and reports whether its last line was cut short.
pub(super) fn scan_lines(bytes: &[u8]) -> Scan {
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
                scan.salvaged_seq = scan.salvaged_seq.max(salvage_event_seq(line));
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

pub(super) fn repair_tail(file: &mut File, path: &Path, tail: &Tail) -> Result<(), StoreError> {
    match *tail {
        Tail::Clean => Ok(()),
        Tail::Unterminated => file.write_all(b"\n").map_err(io_error(path)),
        Tail::Torn { keep_len } => {
            tracing::warn!(path = %path.display(), keep_len, "cutting off a torn last event line");
            file.set_len(keep_len).map_err(io_error(path))
        }
    }
}
