//! Endings: the ended sessions kept readable for a while (their last
//! summary, screens and the history above them, bounded by count and age:
//! `retention`), in memory and in `ended.json` (the history in a file per
//! session beside it) so a restart keeps them. A `DELETE` removes one
//! before its time. How tracking ends is `Ends` (`supervisor/ends.rs`).
//!
//! The kept sessions are private behind one lock (a std mutex, never held
//! across an `.await`); each change builds `ended.json` and queues its
//! write in the same locked section, so writes queue in the order the
//! states existed. A history file is written before the record naming it
//! is kept, and removed after `ended.json` stopped naming it, so the file
//! never names a history that is not there (a crash between leaves only an
//! unnamed file, swept at startup).

mod retention;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use tokio::sync::{oneshot, watch};

pub use retention::{History, NoHistory, Retained, Retention};

use super::persist::Writer;
use super::types::{Scrollback, SessionSummary, SupervisorError};
use crate::id::SessionId;
use crate::session::{EndHistory, Region, Snapshot, SnapshotFormat};
use crate::store::{EndedFile, ScrollbackFile, ScrollbackFiles};
use retention::plan_history;

pub struct Endings {
    kept: Mutex<BTreeMap<SessionId, Retained>>,
    retention: Retention,
    write: Writer<EndedFile>,
    /// The history files beside `ended.json`, one per kept session.
    histories: ScrollbackFiles,
    /// Counts ends settled; waiters on an ending session watch it for the
    /// record to appear.
    settled: watch::Sender<u64>,
}

impl Endings {
    /// As `ended.json` left them, kept within `retention`, written through
    /// `write`, their histories in `histories`. History files no kept
    /// session names (a crash came between dropping a record and its
    /// file) are removed.
    pub fn new(
        file: EndedFile,
        retention: Retention,
        write: Writer<EndedFile>,
        histories: ScrollbackFiles,
    ) -> Endings {
        let endings = Endings {
            kept: Mutex::new(retention::from_file(file)),
            retention,
            write,
            histories,
            settled: watch::channel(0).0,
        };
        let removed = endings.histories.sweep(&endings.ids());
        if removed > 0 {
            tracing::info!(
                removed,
                "removed history files of ended sessions no longer kept"
            );
        }
        endings
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<SessionId, Retained>> {
        self.kept.lock().expect("endings lock poisoned")
    }

    /// Keeps an ended session (dropping what falls out of the window),
    /// waits for `ended.json` to be written, and wakes waiters looking for
    /// it.
    pub async fn keep(&self, id: SessionId, retained: Retained) {
        let (written, dropped) = self.retain(id, retained, Utc::now());
        self.settled();
        let _ = written.await;
        self.forget_histories(dropped).await;
    }

    /// Drops ended sessions past the window (at each checkpoint).
    pub async fn prune_due(&self) {
        let (written, dropped) = self.prune(Utc::now());
        if let Some(written) = written {
            let _ = written.await;
        }
        self.forget_histories(dropped).await;
    }

    /// Removes an ended session kept (`DELETE` on it): its record leaves
    /// `ended.json`, then its history file goes. Its last summary, or
    /// `NotFound` when it is not kept.
    pub async fn discard(&self, id: SessionId) -> Result<SessionSummary, SupervisorError> {
        let (written, summary) = self.remove(id).ok_or_else(|| not_found(id))?;
        let _ = written.await;
        self.forget_histories(vec![id]).await;
        Ok(summary)
    }

    /// Writes what is kept of an end's history beside `ended.json`, before
    /// the end is kept (so a record never names a file not yet there).
    pub async fn keep_history(&self, id: SessionId, read: Option<EndHistory>) -> History {
        if let Some(EndHistory::Refused(error)) = &read {
            tracing::warn!(session_id = %id, "tmux did not give the history of an ended session: {error}");
        }
        let lines = match plan_history(self.retention.history_lines, read) {
            Ok(lines) => lines,
            Err(why) => return History::Missing { why },
        };
        if lines.is_empty() {
            return History::Kept { lines: 0 };
        }
        let file = ScrollbackFile::new(id, lines);
        let count = file.lines.len();
        let files = self.histories.clone();
        match tokio::task::spawn_blocking(move || files.save(&file)).await {
            Ok(Ok(())) => History::Kept { lines: count },
            Ok(Err(e)) => {
                tracing::warn!(session_id = %id, "cannot keep an ended session's history: {e}");
                History::Missing {
                    why: NoHistory::Lost,
                }
            }
            Err(_) => History::Missing {
                why: NoHistory::Lost,
            },
        }
    }

    /// Removes the history files of ended sessions no longer kept, after
    /// `ended.json` stopped naming them.
    async fn forget_histories(&self, dropped: Vec<SessionId>) {
        if dropped.is_empty() {
            return;
        }
        let files = self.histories.clone();
        let removed = tokio::task::spawn_blocking(move || {
            for id in dropped {
                if let Err(e) = files.remove(id) {
                    tracing::warn!("cannot remove an ended session's history: {e}");
                }
            }
        });
        let _ = removed.await;
    }

    /// The history kept of an ended session: its last `lines` lines, or
    /// why there are none.
    pub async fn scrollback(
        &self,
        id: SessionId,
        lines: usize,
    ) -> Result<Scrollback, SupervisorError> {
        let missing = |why| Scrollback {
            lines: Vec::new(),
            ended: true,
            missing: Some(why),
        };
        match self.history(id).ok_or_else(|| not_found(id))? {
            History::Missing { why } => Ok(missing(why)),
            History::Kept { lines: 0 } => Ok(Scrollback {
                lines: Vec::new(),
                ended: true,
                missing: None,
            }),
            History::Kept { .. } => {
                let files = self.histories.clone();
                match tokio::task::spawn_blocking(move || files.load(id)).await {
                    Ok(Ok(Some(mut file))) => {
                        file.lines.drain(..file.lines.len().saturating_sub(lines));
                        Ok(Scrollback {
                            lines: file.lines,
                            ended: true,
                            missing: None,
                        })
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(session_id = %id, "cannot read an ended session's history: {e}");
                        Ok(missing(NoHistory::Lost))
                    }
                    _ => Ok(missing(NoHistory::Lost)),
                }
            }
        }
    }

    /// The last screen of an ended session kept: `NotFound` when it is not
    /// kept, `NoLastScreen` when it was kept without one.
    pub fn last_screen(
        &self,
        id: SessionId,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<Snapshot, SupervisorError> {
        let kept = self.lock();
        let retained = kept.get(&id).ok_or_else(|| not_found(id))?;
        let screens = retained.screens.as_ref();
        let screens = screens.ok_or_else(|| SupervisorError::NoLastScreen(id.to_string()))?;
        Ok(screens.get(format, region).clone())
    }

    /// Keeps an ended session, drops what falls out of the window (the ids
    /// dropped), and queues `ended.json`.
    fn retain(
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
    fn prune(&self, now: DateTime<Utc>) -> (Option<oneshot::Receiver<()>>, Vec<SessionId>) {
        let mut kept = self.lock();
        let dropped = retention::prune(&mut kept, self.retention, now);
        let written = (!dropped.is_empty()).then(|| (self.write)(retention::to_file(&kept)));
        (written, dropped)
    }

    /// Drops an ended session kept (`DELETE` on it, or it lives again
    /// under its old id) and queues `ended.json`; its last summary, or
    /// `None` when it is not kept.
    fn remove(&self, id: SessionId) -> Option<(oneshot::Receiver<()>, SessionSummary)> {
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

    fn history(&self, id: SessionId) -> Option<History> {
        self.lock().get(&id).map(|r| r.history.clone())
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

fn not_found(id: SessionId) -> SupervisorError {
    SupervisorError::NotFound(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervisor::endings::retention::tests::ended;

    /// Endings whose history files are never touched (loading sweeps an
    /// empty directory of their own).
    fn endings(file: EndedFile) -> Endings {
        let dir = tempfile::tempdir().unwrap();
        endings_in(file, dir.path(), 10)
    }

    /// Endings keeping at most `max`, their histories in `dir`.
    fn endings_in(file: EndedFile, dir: &std::path::Path, max: usize) -> Endings {
        let retention = Retention {
            max,
            max_age: chrono::Duration::days(1),
            history_lines: 3,
        };
        let write = Box::new(|_| oneshot::channel().1);
        Endings::new(file, retention, write, ScrollbackFiles::new(dir))
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

    /// Session `n`, ended `n` seconds into the last minute (so the window
    /// keeps it and orders the ends by `n`).
    fn ended_lately(n: u64) -> (SessionId, Retained) {
        let (id, mut retained) = ended(n, 10);
        retained.ended_at = Utc::now() - chrono::Duration::seconds(60 - n as i64);
        (id, retained)
    }

    fn captured(lines: &[&str]) -> Option<EndHistory> {
        Some(EndHistory::Captured(
            lines.iter().map(|l| l.to_string()).collect(),
        ))
    }

    /// The history files follow the records: written before one is kept,
    /// gone once it is dropped (by the window or a `DELETE`), and only the
    /// last `history_lines` of them kept.
    #[tokio::test]
    async fn a_history_file_lives_exactly_as_long_as_its_record() {
        let dir = tempfile::tempdir().unwrap();
        let files = ScrollbackFiles::new(dir.path());
        let e = endings_in(EndedFile::empty(), dir.path(), 2);
        let mut ids = Vec::new();
        for n in [7, 8, 9] {
            let (id, mut retained) = ended_lately(n);
            retained.history = e.keep_history(id, captured(&["a", "b", "c", "d"])).await;
            assert_eq!(retained.history, History::Kept { lines: 3 });
            assert!(
                files.load(id).unwrap().is_some(),
                "written before it is kept"
            );
            e.keep(id, retained).await;
            ids.push(id);
        }
        // The oldest fell out of the window of 2, and its file with it.
        assert!(files.load(ids[0]).unwrap().is_none());
        let kept = e.scrollback(ids[1], 2).await.unwrap();
        assert_eq!(kept.lines, ["c", "d"]);
        assert!(kept.ended && kept.missing.is_none());
        e.discard(ids[1]).await.unwrap();
        assert!(files.load(ids[1]).unwrap().is_none());
        assert!(matches!(
            e.scrollback(ids[1], 2).await,
            Err(SupervisorError::NotFound(_))
        ));
        assert!(matches!(
            e.discard(ids[1]).await,
            Err(SupervisorError::NotFound(_))
        ));
        assert!(files.load(ids[2]).unwrap().is_some());
    }

    /// Why an end has no history, as `scrollback` then says.
    #[tokio::test]
    async fn an_end_without_history_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let e = endings_in(EndedFile::empty(), dir.path(), 10);
        let cases = [
            (None, Some(NoHistory::NotCaptured)),
            (
                Some(EndHistory::Refused("no".into())),
                Some(NoHistory::Refused),
            ),
            (captured(&[]), None),
        ];
        for (n, (read, why)) in (1..).zip(cases) {
            let (id, mut retained) = ended_lately(n);
            retained.history = e.keep_history(id, read).await;
            e.keep(id, retained).await;
            let answer = e.scrollback(id, 5).await.unwrap();
            assert_eq!((answer.lines.len(), answer.missing), (0, why), "case {n}");
        }
    }

    /// A file left by a crash between dropping a record and its history is
    /// swept when the endings are loaded; a kept one stays.
    #[tokio::test]
    async fn unnamed_history_files_are_swept_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let files = ScrollbackFiles::new(dir.path());
        let e = endings_in(EndedFile::empty(), dir.path(), 10);
        let (kept, retained) = ended_lately(7);
        e.keep(kept, retained).await;
        for id in [kept, SessionId(8)] {
            files
                .save(&ScrollbackFile::new(id, vec!["x".into()]))
                .unwrap();
        }
        let file = retention::to_file(&e.lock());
        let _reloaded = endings_in(file, dir.path(), 10);
        assert!(files.load(kept).unwrap().is_some());
        assert!(files.load(SessionId(8)).unwrap().is_none());
    }
}
