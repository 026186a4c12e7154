//! Restore: what it takes to bring each tracked session back if its tmux
//! server is lost, and `restore.json`, which keeps it across restarts.
//! The book is private behind one lock, and each change builds the file
//! and queues its write inside that same locked section: writes queue in
//! the order the states existed, so the newest state is the last one
//! written, however close two changes come. (A std mutex, never held
//! across an `.await`; the queueing does not wait for the disk.)
//!
//! `book` is the data and its rules; `revive` the choreography around it
//! (announcing a loss, recreating the lost sessions).

mod book;
mod revive;

use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use book::BookError;
pub use revive::{RestoreCause, RestoreFailure, RestoreOutcome, Revive, TmuxLost};

use super::persist::{Persistence, Writer};
use crate::id::SessionId;
use crate::session::EndReason;
use crate::store::{NewEvent, RestoreFile, RestoreMode, RestoreRecord};
use crate::tmux::command::restore::{PanePlanRow, blueprint_of, proc_command_line};
use crate::wire::{Payload, ServerLost};
use book::Book;

/// Queues a whole new version of `restore.json`.
pub type RestoreWriter = Writer<RestoreFile>;

pub struct Restore {
    book: Mutex<Book>,
    write: RestoreWriter,
}

impl Restore {
    /// As `restore.json` left it, writing through `write`.
    pub fn new(file: RestoreFile, write: RestoreWriter) -> Restore {
        Restore {
            book: Mutex::new(Book::from_file(file)),
            write,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        self.book.lock().expect("restore book lock poisoned")
    }

    /// Runs one change and, when it says something changed, queues the
    /// book's file before the lock is let go.
    fn change<T>(&self, change: impl FnOnce(&mut Book) -> (T, bool)) -> T {
        let mut book = self.lock();
        let (answer, changed) = change(&mut book);
        if changed {
            drop((self.write)(book.to_file()));
        }
        answer
    }

    /// A session tmuxd just created, with what its creator allows to run
    /// again.
    pub fn created(
        &self,
        id: SessionId,
        tmux_name: &str,
        mode: RestoreMode,
        resume_command: Option<String>,
        command: Option<String>,
    ) {
        self.change(|book| {
            book.created(id, tmux_name, mode, resume_command, command);
            ((), true)
        })
    }

    /// A tracked session's windows and panes as its actor reports them
    /// now (written when they changed). A shell pane's command line is
    /// read from /proc here, no fork.
    pub fn observed(&self, id: SessionId, tmux_name: &str, rows: &[PanePlanRow]) {
        let Some(blueprint) = blueprint_of(rows, proc_command_line) else {
            return;
        };
        self.change(|book| ((), book.observed(id, tmux_name, blueprint)))
    }

    /// Tracking of a session ended: with its server (kept to be restored),
    /// or for good (forgotten).
    pub fn tracking_ended(&self, id: SessionId, server_gone: bool, now: DateTime<Utc>) {
        self.change(|book| match server_gone {
            true => {
                book.lose(id, now);
                ((), true)
            }
            false => ((), book.forget(id)),
        })
    }

    /// A session detached is not tmuxd's to restore any more.
    pub fn forget(&self, id: SessionId) {
        self.change(|book| ((), book.forget(id)))
    }

    /// Since when the server is lost and how many sessions can be
    /// restored, when the loss is to be announced now (once: sessions are
    /// lost and `still_tracked` is 0).
    pub fn announce(&self, still_tracked: usize) -> Option<(DateTime<Utc>, usize)> {
        self.change(|book| {
            let lost = book.announce(still_tracked).then(|| book.lost()).flatten();
            (lost, lost.is_some())
        })
    }

    /// Says once that the server is lost, when every session went with it
    /// (`tracked` are still tracked): a warning in the log and a
    /// `tmux_lost` event in `events` (which the notifier follows).
    pub fn announce_loss(&self, events: &Persistence, reason: EndReason, tracked: usize) {
        let Some((since, restorable)) = self.announce(tracked) else {
            return;
        };
        tracing::warn!(
            %since,
            restorable,
            "the tmux server is gone and took every session with it; `tmuxd restore` brings them back"
        );
        let lost = Payload::TmuxLost(ServerLost { since, restorable });
        events.record(NewEvent::new(lost).reason(reason.as_str()));
    }

    /// Startup found the persisted sessions in `missing` gone and `found`
    /// alive; records of sessions neither `tracked` nor lost are dropped.
    pub fn after_startup(
        &self,
        missing: &[SessionId],
        found: usize,
        tracked: impl Fn(SessionId) -> bool,
        now: DateTime<Utc>,
    ) {
        self.change(|book| {
            book.after_startup(missing, found, now);
            book.prune(tracked);
            ((), true)
        })
    }

    /// A lost session is tracked again.
    pub fn restored(&self, id: SessionId) {
        self.change(|book| {
            book.restored(id);
            ((), true)
        })
    }

    /// Since when the server is lost and how many sessions can be restored.
    pub fn lost(&self) -> Option<(DateTime<Utc>, usize)> {
        self.lock().lost()
    }

    /// The lost sessions to restore: those named (each must be lost), or
    /// every one; by id.
    pub fn to_restore(
        &self,
        ids: Option<&[SessionId]>,
    ) -> Result<Vec<(SessionId, RestoreRecord)>, BookError> {
        self.lock().to_restore(ids)
    }

    /// Queues the book's file as it is now; the receiver fires once it
    /// was tried.
    pub fn write_now(&self) -> oneshot::Receiver<()> {
        (self.write)(self.lock().to_file())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, mpsc};
    use std::time::Duration;

    use super::*;

    /// A writer that keeps every file queued, in order.
    fn recording() -> (RestoreWriter, Arc<Mutex<Vec<RestoreFile>>>) {
        let written = Arc::new(Mutex::new(Vec::new()));
        let sink = written.clone();
        let write: RestoreWriter = Box::new(move |file| {
            sink.lock().unwrap().push(file);
            oneshot::channel().1
        });
        (write, written)
    }

    fn ids(file: &RestoreFile) -> Vec<&str> {
        file.sessions.keys().map(String::as_str).collect()
    }

    /// Which changes queue a write: (change, file written, sessions after).
    #[test]
    fn each_change_queues_the_file_it_made() {
        type Change = fn(&Restore);
        let cases: &[(&str, Change, bool, &[&str])] = &[
            (
                "created",
                |r| r.created(SessionId(3), "c", RestoreMode::Shell, None, None),
                true,
                &["sess_1", "sess_2", "sess_3"],
            ),
            (
                "forget a known one",
                |r| r.forget(SessionId(1)),
                true,
                &["sess_2"],
            ),
            (
                "forget an unknown one",
                |r| r.forget(SessionId(9)),
                false,
                &["sess_1", "sess_2"],
            ),
            (
                "ended for good",
                |r| r.tracking_ended(SessionId(2), false, DateTime::from_timestamp(5, 0).unwrap()),
                true,
                &["sess_1"],
            ),
            (
                "lost with the server",
                |r| r.tracking_ended(SessionId(2), true, DateTime::from_timestamp(5, 0).unwrap()),
                true,
                &["sess_1", "sess_2"],
            ),
            (
                "nothing to announce",
                |r| {
                    r.announce(0);
                },
                false,
                &["sess_1", "sess_2"],
            ),
            (
                "restored",
                |r| r.restored(SessionId(1)),
                true,
                &["sess_1", "sess_2"],
            ),
        ];
        for (what, change, writes, after) in cases {
            let (write, written) = recording();
            let restore = Restore::new(RestoreFile::empty(), write);
            restore.created(SessionId(1), "a", RestoreMode::Shell, None, None);
            restore.created(SessionId(2), "b", RestoreMode::Rerun, None, None);
            written.lock().unwrap().clear();
            change(&restore);
            let written = written.lock().unwrap();
            assert_eq!(written.len(), usize::from(*writes), "{what}");
            assert_eq!(ids(&restore.lock().to_file()), *after, "{what}");
            if let Some(file) = written.last() {
                assert_eq!(
                    ids(file),
                    *after,
                    "{what}: the file queued is the state made"
                );
            }
        }
    }

    /// Two changes race: the first one's write is slow to queue (a thread
    /// preempted between building its file and queueing it). The second
    /// must not overtake it, or the older state lands on disk last.
    #[test]
    fn the_newest_state_is_the_last_file_queued() {
        let written = Arc::new(Mutex::new(Vec::<RestoreFile>::new()));
        let (in_first_write, first_writing) = mpsc::channel::<()>();
        let (second_done, second_finished) = mpsc::channel::<()>();
        let second_finished = Mutex::new(second_finished);
        let sink = written.clone();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let write: RestoreWriter = Box::new(move |file| {
            if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                in_first_write.send(()).unwrap();
                // Where the first write may be overtaken, the second change
                // finishes meanwhile; where it may not, it cannot, and this
                // gives up waiting.
                let _ = second_finished
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_secs(1));
            }
            sink.lock().unwrap().push(file);
            oneshot::channel().1
        });
        let restore = Arc::new(Restore::new(RestoreFile::empty(), write));
        let first = {
            let restore = restore.clone();
            std::thread::spawn(move || {
                restore.created(SessionId(1), "a", RestoreMode::Shell, None, None)
            })
        };
        first_writing.recv().unwrap();
        let second = {
            let restore = restore.clone();
            std::thread::spawn(move || {
                restore.created(SessionId(2), "b", RestoreMode::Shell, None, None);
                let _ = second_done.send(());
            })
        };
        first.join().unwrap();
        second.join().unwrap();
        let written = written.lock().unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(
            ids(written.last().unwrap()),
            ["sess_1", "sess_2"],
            "the last file queued holds both sessions"
        );
    }
}
