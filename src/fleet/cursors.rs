//! Where the hub is in each peer's event stream: the largest peer seq it
//! recorded. The hub's own event log holds it (each recorded peer event
//! carries `host_seq`), so a hub that stops anywhere resumes after the last
//! event it recorded; `fleet-cursors.json` keeps it too for when the log's
//! retained window no longer has any event of that peer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::fanin::cursors_in;
use crate::supervisor::Supervisor;

/// The cursor file in the data dir.
pub const CURSORS_FILE: &str = "fleet-cursors.json";

/// How often the file is rewritten at most while events flow: the log
/// holds the exact cursor, the file is the fallback.
const SAVE_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Cursors {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    seqs: BTreeMap<String, u64>,
    saved: Option<Instant>,
    dirty: bool,
}

impl Cursors {
    /// The larger of the file's cursor and the log's, per host.
    pub fn load(data_dir: &Path, supervisor: &Supervisor) -> Cursors {
        let path = data_dir.join(CURSORS_FILE);
        let mut seqs: BTreeMap<String, u64> = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let (retained, _) = supervisor.events_since(0);
        for (host, seq) in cursors_in(&retained) {
            let entry = seqs.entry(host).or_insert(0);
            *entry = seq.max(*entry);
        }
        Cursors {
            path,
            state: Mutex::new(State {
                seqs,
                saved: None,
                dirty: false,
            }),
        }
    }

    pub fn get(&self, host: &str) -> u64 {
        let state = self.state.lock().expect("cursors lock");
        state.seqs.get(host).copied().unwrap_or(0)
    }

    /// Moves `host`'s cursor to `seq`; rewrites the file if it was not for
    /// a while.
    pub fn advance(&self, host: &str, seq: u64) {
        let mut state = self.state.lock().expect("cursors lock");
        state.seqs.insert(host.to_owned(), seq);
        state.dirty = true;
        if state.saved.is_none_or(|at| at.elapsed() >= SAVE_EVERY) {
            self.save(&mut state);
        }
    }

    /// Writes the file if anything changed since the last write.
    pub fn flush(&self) {
        let mut state = self.state.lock().expect("cursors lock");
        if state.dirty {
            self.save(&mut state);
        }
    }

    fn save(&self, state: &mut State) {
        let bytes = serde_json::to_vec_pretty(&state.seqs).unwrap_or_default();
        match crate::store::write_atomic(&self.path, &bytes) {
            Ok(()) => {
                state.dirty = false;
                state.saved = Some(Instant::now());
            }
            Err(e) => tracing::warn!("cannot save {}: {e}", self.path.display()),
        }
    }
}
