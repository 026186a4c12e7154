//! `counters.json`: the high-water marks kept apart from `registry.json` and
//! `events.jsonl`, so that losing either of those cannot make a session id or
//! an event seq be handed out twice.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::files::write_atomic;
use super::floors::ID_BLOCK;
use super::registry::format_version;
use super::{StoreError, io_error};

/// The file as stored.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct CountersFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    /// No `sess_<n>` at or above this was handed out: raised a block ahead
    /// of the registry's counter, so it is rewritten once per many ids.
    pub session_id_reserved: u64,
    /// No event seq at or above this was handed out: raised a block ahead
    /// before the seq reaches it.
    pub event_seq_reserved: u64,
    /// The exact next seq, written by a clean stop with every event on disk;
    /// null while a daemon runs.
    #[serde(default)]
    pub clean_stop_next_seq: Option<u64>,
}

impl CountersFile {
    pub fn empty() -> Self {
        CountersFile {
            version: 1,
            session_id_reserved: 0,
            event_seq_reserved: 0,
            clean_stop_next_seq: None,
        }
    }
}

/// The marks, shared by the event log (seq reservation) and the state writer
/// (session counter). Each change is written at once, under the lock, so the
/// file never goes back even when two writers race.
#[derive(Debug)]
pub struct Counters {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// What the file should say.
    wanted: CountersFile,
    /// What it does say, as far as this process knows.
    on_disk: Option<CountersFile>,
}

impl Counters {
    /// Starts from what was loaded (or an empty file); writes nothing yet.
    pub fn new(path: &Path, loaded: Option<CountersFile>) -> Counters {
        let wanted = loaded.clone().unwrap_or_else(CountersFile::empty);
        Counters {
            path: path.to_path_buf(),
            state: Mutex::new(State {
                wanted,
                on_disk: loaded,
            }),
        }
    }

    /// The seq reservation the file holds: seqs below it may be handed out.
    pub fn seq_reserved_on_disk(&self) -> u64 {
        let state = self.lock();
        state.on_disk.as_ref().map_or(0, |f| f.event_seq_reserved)
    }

    /// A run begins: reserve seqs below `seqs` and ids below `ids`, and
    /// clear the clean-stop mark, which only a stop may set.
    pub fn begin(&self, seqs: u64, ids: u64) -> Result<(), StoreError> {
        self.update(|file| {
            file.event_seq_reserved = file.event_seq_reserved.max(seqs);
            file.session_id_reserved = file.session_id_reserved.max(ids);
            file.clean_stop_next_seq = None;
        })
    }

    /// Lets seqs below `reserved` be handed out.
    pub fn reserve_seqs(&self, reserved: u64) -> Result<(), StoreError> {
        self.update(|file| file.event_seq_reserved = file.event_seq_reserved.max(reserved))
    }

    /// Keeps the id reservation at least half a block ahead of the
    /// registry's counter; writes only when it moves.
    pub fn reserve_ids(&self, next_counter: u64) -> Result<(), StoreError> {
        self.update(|file| {
            if next_counter.saturating_add(ID_BLOCK / 2) > file.session_id_reserved {
                file.session_id_reserved = next_counter.saturating_add(ID_BLOCK);
            }
        })
    }

    /// A clean stop with every event before `next_seq` on disk.
    pub fn mark_clean_stop(&self, next_seq: u64) -> Result<(), StoreError> {
        self.update(|file| file.clean_stop_next_seq = Some(next_seq))
    }

    /// Writes what an earlier failed write could not.
    pub fn retry(&self) -> Result<(), StoreError> {
        self.update(|_| {})
    }

    fn update(&self, change: impl FnOnce(&mut CountersFile)) -> Result<(), StoreError> {
        let mut state = self.lock();
        change(&mut state.wanted);
        if state.on_disk.as_ref() == Some(&state.wanted) {
            return Ok(());
        }
        let mut bytes =
            serde_json::to_vec_pretty(&state.wanted).map_err(|source| StoreError::Encode {
                path: self.path.clone(),
                source,
            })?;
        bytes.push(b'\n');
        write_atomic(&self.path, &bytes)?;
        state.on_disk = Some(state.wanted.clone());
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic mid-update leaves `wanted` ahead of the disk, which the
        // next write repairs: the state stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Reads the moved-aside and damaged copies of tmuxd's JSON files for any
/// number they still hold (see `floors::salvage_pretty_json`).
pub fn salvage_damaged_files(dir: &Path) -> Result<super::floors::Salvage, StoreError> {
    let mut found = super::floors::Salvage::default();
    let entries = std::fs::read_dir(dir).map_err(io_error(dir))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let damaged = ["registry.json", "thoughts.json", "counters.json"]
            .iter()
            .any(|file| name.starts_with(&format!("{file}.corrupt-")));
        if !damaged {
            continue;
        }
        match super::files::read_file(&entry.path()) {
            Ok(bytes) => found.merge(super::floors::salvage_pretty_json(
                &String::from_utf8_lossy(&bytes),
            )),
            Err(e) => tracing::warn!(file = %name, "cannot read a moved-aside file: {e}"),
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> CountersFile {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn marks_only_rise_and_a_run_clears_the_clean_stop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counters.json");
        let counters = Counters::new(&path, None);
        assert_eq!(counters.seq_reserved_on_disk(), 0);
        assert!(!path.exists(), "nothing written before asked");

        counters.begin(1025, 3 + ID_BLOCK).unwrap();
        assert_eq!(counters.seq_reserved_on_disk(), 1025);
        counters.reserve_seqs(100).unwrap();
        let file = read(&path);
        assert_eq!(
            (file.event_seq_reserved, file.session_id_reserved),
            (1025, 3 + ID_BLOCK)
        );

        counters.mark_clean_stop(40).unwrap();
        assert_eq!(read(&path).clean_stop_next_seq, Some(40));
        let again = Counters::new(&path, Some(read(&path)));
        again.begin(1064, 1).unwrap();
        assert_eq!(
            read(&path),
            CountersFile {
                version: 1,
                session_id_reserved: 3 + ID_BLOCK,
                event_seq_reserved: 1064,
                clean_stop_next_seq: None,
            }
        );
    }

    #[test]
    fn ids_are_reserved_a_block_ahead_and_rarely_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counters.json");
        let counters = Counters::new(&path, None);
        counters.reserve_ids(1).unwrap();
        assert_eq!(read(&path).session_id_reserved, 1 + ID_BLOCK);
        // Removed so that any rewrite shows: none is due while the
        // reservation is more than half a block ahead.
        std::fs::remove_file(&path).unwrap();
        for next in 2..=(1 + ID_BLOCK / 2) {
            counters.reserve_ids(next).unwrap();
        }
        assert!(!path.exists(), "rewritten before it had to be");
        counters.reserve_ids(2 + ID_BLOCK / 2).unwrap();
        assert_eq!(read(&path).session_id_reserved, 2 + ID_BLOCK / 2 + ID_BLOCK);
    }

    #[test]
    fn a_failed_write_is_retried() {
        let dir = tempfile::tempdir().unwrap();
        // A directory in the way makes the rename fail, for root too.
        let path = dir.path().join("counters.json");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("x"), "").unwrap();
        let counters = Counters::new(&path, None);
        assert!(counters.reserve_seqs(10).is_err());
        assert_eq!(counters.seq_reserved_on_disk(), 0);
        std::fs::remove_dir_all(&path).unwrap();
        counters.retry().unwrap();
        assert_eq!(counters.seq_reserved_on_disk(), 10);
        assert_eq!(read(&path).event_seq_reserved, 10);
    }

    #[test]
    fn damaged_copies_are_salvaged() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write(
            "registry.json.corrupt-20250304T050607Z",
            "{\n  \"next_session_counter\": 4,\n  \"sessions\": [\n    {\n      \"session_id\": \"sess_9\",\n",
        );
        write(
            "counters.json.corrupt-20250304T050607Z-1",
            "{\n  \"session_id_reserved\": 70,\n  \"event_seq_reserved\": 3000,\n\0",
        );
        // Not a damaged copy: the live registry is parsed properly elsewhere.
        write("registry.json", "{\n  \"next_session_counter\": 50\n");
        let found = salvage_damaged_files(dir.path()).unwrap();
        assert_eq!(found.highest_session_id, Some(9));
        assert_eq!(found.next_session_counter, Some(4));
        assert_eq!(found.session_id_reserved, Some(70));
        assert_eq!(found.event_seq_reserved, Some(3000));
    }
}
