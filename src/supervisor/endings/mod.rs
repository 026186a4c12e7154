//! Endings: how tracking of a session ends (`end`), and the ended sessions
//! kept readable for a while (their last summary, screens and the history
//! above them, bounded by count and age: `retention`), in memory and in
//! `ended.json` (the history in a file per session beside it) so a restart
//! keeps them. A `DELETE` removes one before its time.
//!
//! The kept sessions are private behind one lock (a std mutex, never held
//! across an `.await`); each change builds `ended.json` and queues its
//! write in the same locked section, so writes queue in the order the
//! states existed.

mod end;
mod retention;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use tokio::sync::{oneshot, watch};

pub use retention::{History, NoHistory, Retained, Retention};

use super::persist::Writer;
use super::types::SessionSummary;
use crate::id::SessionId;
use crate::session::{Region, Snapshot, SnapshotFormat};
use crate::store::EndedFile;

pub struct Endings {
    kept: Mutex<BTreeMap<SessionId, Retained>>,
    retention: Retention,
    write: Writer<EndedFile>,
    /// Counts ends settled; waiters on an ending session watch it for the
    /// record to appear.
    settled: watch::Sender<u64>,
}

impl Endings {
    /// As `ended.json` left them, kept within `retention`, written through
    /// `write`.
    pub fn new(file: EndedFile, retention: Retention, write: Writer<EndedFile>) -> Endings {
        Endings {
            kept: Mutex::new(retention::from_file(file)),
            retention,
            write,
            settled: watch::channel(0).0,
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<SessionId, Retained>> {
        self.kept.lock().expect("endings lock poisoned")
    }

    /// Keeps an ended session, drops what falls out of the window (the ids
    /// dropped), and queues `ended.json`.
    pub fn retain(
        &self,
        id: SessionId,
        retained: Retained,
        now: DateTime<Utc>,
    ) -> (oneshot::Receiver<()>, Vec<SessionId>) {
        let mut kept = self.lock();
        kept.insert(id, retained);
        let dropped = retention::prune(&mut kept, self.retention, now);
        ((self.write)(retention::to_file(&kept)), dropped)
    }

    /// Drops ended sessions past the window; `ended.json` is queued when
    /// any went.
    pub fn prune(&self, now: DateTime<Utc>) -> (Option<oneshot::Receiver<()>>, Vec<SessionId>) {
        let mut kept = self.lock();
        let dropped = retention::prune(&mut kept, self.retention, now);
        let written = (!dropped.is_empty()).then(|| (self.write)(retention::to_file(&kept)));
        (written, dropped)
    }

    /// Drops an ended session kept (`DELETE` on it, or it lives again
    /// under its old id) and queues `ended.json`; its last summary, or
    /// `None` when it is not kept.
    pub fn remove(&self, id: SessionId) -> Option<(oneshot::Receiver<()>, SessionSummary)> {
        let mut kept = self.lock();
        let removed = kept.remove(&id)?;
        Some(((self.write)(retention::to_file(&kept)), removed.summary))
    }

    pub fn is_kept(&self, id: SessionId) -> bool {
        self.lock().contains_key(&id)
    }

    pub fn ids(&self) -> BTreeSet<SessionId> {
        self.lock().keys().copied().collect()
    }

    pub fn summary(&self, id: SessionId) -> Option<SessionSummary> {
        self.lock().get(&id).map(|r| r.summary.clone())
    }

    /// Every ended session kept, by id.
    pub fn summaries(&self) -> Vec<SessionSummary> {
        self.lock().values().map(|r| r.summary.clone()).collect()
    }

    pub fn history(&self, id: SessionId) -> Option<History> {
        self.lock().get(&id).map(|r| r.history.clone())
    }

    /// The last screen of an ended session kept: `Some(None)` when it was
    /// kept without one.
    pub fn snapshot(
        &self,
        id: SessionId,
        format: SnapshotFormat,
        region: Region,
    ) -> Option<Option<Snapshot>> {
        let kept = self.lock();
        let retained = kept.get(&id)?;
        Some(
            retained
                .screens
                .as_ref()
                .map(|s| s.get(format, region).clone()),
        )
    }

    /// An end settled (kept or not): wakes who waits for it.
    pub fn settled(&self) {
        self.settled.send_modify(|n| *n += 1);
    }

    /// Changes each time an end settles.
    pub fn watch_settled(&self) -> watch::Receiver<u64> {
        self.settled.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervisor::endings::retention::tests::ended;

    fn endings(file: EndedFile) -> Endings {
        let retention = Retention {
            max: 10,
            max_age: chrono::Duration::days(1),
        };
        Endings::new(file, retention, Box::new(|_| oneshot::channel().1))
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_100, 0).unwrap()
    }

    #[test]
    fn ended_sessions_are_written_and_read_back() {
        let e = endings(EndedFile::empty());
        let (id, retained) = ended(7, 10);
        let (_, dropped) = e.retain(id, retained, now());
        assert!(dropped.is_empty());
        let file = retention::to_file(&e.lock());
        let back = endings(file);
        assert_eq!(back.history(id), Some(History::Kept { lines: 5 }));
        let summary = back.summary(id).unwrap();
        assert_eq!(summary.actor.exit_status, Some(3));
        assert_eq!(back.ids(), BTreeSet::from([id]));
    }

    #[test]
    fn a_removed_ended_session_leaves_the_file_and_is_gone() {
        let e = endings(EndedFile::empty());
        for n in [7, 8] {
            let (id, retained) = ended(n, 10);
            e.retain(id, retained, now());
        }
        let (_, summary) = e.remove(SessionId(7)).unwrap();
        assert_eq!(summary.session_id, SessionId(7));
        let file = retention::to_file(&e.lock());
        let kept: Vec<&str> = file
            .sessions
            .iter()
            .map(|s| s.session_id.as_str())
            .collect();
        assert_eq!(kept, ["sess_8"]);
        assert!(!e.is_kept(SessionId(7)));
        assert!(e.remove(SessionId(7)).is_none(), "once");
        assert!(e.remove(SessionId(9)).is_none(), "never kept");
    }
}
