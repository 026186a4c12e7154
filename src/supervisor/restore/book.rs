//! What tmuxd keeps to bring sessions back when their tmux server is lost
//! (crash, `kill-server`, reboot), and whether it is lost: plain data,
//! every transition a method with table tests. The owner (`Restore`) keeps
//! it behind its lock; the choreography is in `revive`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::id::SessionId;
use crate::store::{Origin, RestoreFile, RestoreMode, RestoreRecord};
use crate::tmux::Blueprint;
use crate::tmux::command::restore::read_start_command;

/// The sessions' restore records, by id number.
#[derive(Debug, Default)]
pub struct Book {
    records: BTreeMap<SessionId, RestoreRecord>,
    lost_since: Option<DateTime<Utc>>,
    /// The loss was logged, recorded and notified (once per loss).
    announced: bool,
}

/// Why a restore cannot be asked for.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    #[error("{0} is not a session lost with its tmux server")]
    NotLost(String),
}

impl Book {
    /// As `restore.json` left it; a loss found there was announced by the
    /// run that found it.
    pub fn from_file(file: RestoreFile) -> Book {
        let records = file
            .sessions
            .into_iter()
            .filter_map(|(id, mut record)| {
                upgrade_start_commands(&mut record);
                Some((id.parse().ok()?, record))
            })
            .collect::<BTreeMap<_, _>>();
        let any_lost = records.values().any(|r| r.lost);
        Book {
            records,
            lost_since: file.lost_since.filter(|_| any_lost),
            announced: any_lost,
        }
    }

    pub fn to_file(&self) -> RestoreFile {
        RestoreFile {
            version: 1,
            lost_since: self.lost_since,
            sessions: self
                .records
                .iter()
                .map(|(id, record)| (id.to_string(), record.clone()))
                .collect(),
        }
    }

    /// A session tmuxd just created, with what its creator allows to run
    /// again.
    pub fn created(
        &mut self,
        id: SessionId,
        tmux_name: &str,
        mode: RestoreMode,
        resume_command: Option<String>,
        command: Option<String>,
    ) {
        let record = self.records.entry(id).or_insert_with(|| record(tmux_name));
        record.tmux_name = tmux_name.to_owned();
        record.origin = Origin::Created;
        record.mode = mode;
        record.resume_command = resume_command;
        record.command = command;
        record.lost = false;
    }

    /// A tracked session's windows as tmux reports them now; a session not
    /// in the book yet was adopted. True when anything changed.
    pub fn observed(&mut self, id: SessionId, tmux_name: &str, blueprint: Blueprint) -> bool {
        let record = self.records.entry(id).or_insert_with(|| record(tmux_name));
        let changed = record.tmux_name != tmux_name
            || record.blueprint.as_ref() != Some(&blueprint)
            || record.lost;
        record.tmux_name = tmux_name.to_owned();
        record.blueprint = Some(blueprint);
        record.lost = false;
        changed
    }

    /// Tracking ended for a reason that is not the server's loss: nothing
    /// to bring back. True when a record went.
    pub fn forget(&mut self, id: SessionId) -> bool {
        self.records.remove(&id).is_some()
    }

    /// The session ended with its tmux server. True when this starts a
    /// loss (the first session to go).
    pub fn lose(&mut self, id: SessionId, now: DateTime<Utc>) -> bool {
        let Some(record) = self.records.get_mut(&id) else {
            return false;
        };
        record.lost = true;
        let first = self.lost_since.is_none();
        self.lost_since.get_or_insert(now);
        first
    }

    /// Whether the loss is to be announced now: sessions are lost, none is
    /// tracked any longer (all went with the server), and it was not yet.
    pub fn announce(&mut self, still_tracked: usize) -> bool {
        if self.lost_since.is_none() || self.announced || still_tracked > 0 {
            return false;
        }
        self.announced = true;
        true
    }

    /// Since when the server is lost and how many sessions can be restored.
    pub fn lost(&self) -> Option<(DateTime<Utc>, usize)> {
        let since = self.lost_since?;
        Some((since, self.records.values().filter(|r| r.lost).count()))
    }

    /// The lost sessions to restore: those named (each must be lost), or
    /// every one; by id.
    pub fn to_restore(
        &self,
        ids: Option<&[SessionId]>,
    ) -> Result<Vec<(SessionId, RestoreRecord)>, BookError> {
        let lost = |id: SessionId| self.records.get(&id).filter(|r| r.lost).cloned();
        match ids {
            None => Ok(self
                .records
                .iter()
                .filter(|(_, r)| r.lost)
                .map(|(id, r)| (*id, r.clone()))
                .collect()),
            Some(ids) => {
                let mut wanted = BTreeMap::new();
                for &id in ids {
                    let not_lost = BookError::NotLost(id.to_string());
                    wanted.insert(id, lost(id).ok_or(not_lost)?);
                }
                Ok(wanted.into_iter().collect())
            }
        }
    }

    /// A lost session is tracked again; the loss is over when none is left.
    pub fn restored(&mut self, id: SessionId) {
        if let Some(record) = self.records.get_mut(&id) {
            record.lost = false;
        }
        if !self.records.values().any(|r| r.lost) {
            self.lost_since = None;
            self.announced = false;
        }
    }

    /// Startup found none of the persisted sessions (`missing` all of
    /// them): the server was lost while tmuxd was away, and these are
    /// lost with it. When some were found, the missing simply ended.
    /// True when this starts a loss (to announce).
    pub fn after_startup(
        &mut self,
        missing: &[SessionId],
        found: usize,
        now: DateTime<Utc>,
    ) -> bool {
        if found > 0 || missing.is_empty() {
            for id in missing {
                self.forget(*id);
            }
            return false;
        }
        let mut started = false;
        for id in missing {
            started |= self.lose(*id, now);
        }
        started
    }

    /// Drops records of sessions neither tracked nor lost (`tracked` says
    /// which are), e.g. left by a crash between an end and its write.
    pub fn prune(&mut self, tracked: impl Fn(SessionId) -> bool) {
        self.records.retain(|id, r| r.lost || tracked(*id));
    }
}

fn record(tmux_name: &str) -> RestoreRecord {
    RestoreRecord {
        tmux_name: tmux_name.to_owned(),
        origin: Origin::Adopted,
        mode: RestoreMode::Shell,
        resume_command: None,
        command: None,
        blueprint: None,
        lost: false,
    }
}

/// A file from before `start_argv` kept each pane's start command as
/// tmux's quoted text: read once into an argv (`read_start_command`). Such
/// text holding a raw control character was shifted there from a cwd by
/// the old tab-separated reader (tmux quotes every one), and runs nothing.
fn upgrade_start_commands(record: &mut RestoreRecord) {
    let Some(blueprint) = &mut record.blueprint else {
        return;
    };
    for pane in blueprint
        .windows
        .iter_mut()
        .flat_map(|w| w.panes.iter_mut())
    {
        if let Some(text) = pane.legacy_start_command.take() {
            pane.start_argv = pane.start_argv.take().or_else(|| read_start_command(&text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::{PaneBlueprint, WindowBlueprint};

    fn blueprint(cwd: &str) -> Blueprint {
        Blueprint {
            windows: vec![WindowBlueprint {
                index: 0,
                name: "sh".into(),
                layout: "b25d,80x24,0,0,2".into(),
                cols: 80,
                rows: 24,
                active: true,
                panes: vec![PaneBlueprint {
                    index: 0,
                    cwd: cwd.into(),
                    command_line: "bash".into(),
                    start_argv: None,
                    legacy_start_command: None,
                    active: true,
                }],
            }],
        }
    }

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(s, 0).unwrap()
    }

    #[test]
    fn a_loss_is_announced_once_when_every_session_went() {
        let mut book = Book::default();
        book.created(
            SessionId(1),
            "a",
            RestoreMode::Rerun,
            Some("claude --continue".into()),
            None,
        );
        assert!(book.observed(SessionId(1), "a", blueprint("/tmp")));
        assert!(
            !book.observed(SessionId(1), "a", blueprint("/tmp")),
            "nothing new"
        );
        assert!(book.observed(SessionId(2), "b", blueprint("/")), "adopted");
        assert_eq!(book.lost(), None);
        assert!(!book.announce(0), "nothing lost");

        assert!(
            book.lose(SessionId(1), at(10)),
            "the first to go starts the loss"
        );
        assert!(!book.announce(1), "b is still tracked");
        assert!(!book.lose(SessionId(2), at(11)));
        assert!(book.announce(0));
        assert!(!book.announce(0), "once");
        assert_eq!(book.lost(), Some((at(10), 2)));
        assert!(
            !book.lose(SessionId(9), at(12)),
            "unknown sessions are not lost"
        );

        let records = book.to_file().sessions;
        assert_eq!(records["sess_1"].origin, Origin::Created);
        assert_eq!(records["sess_2"].origin, Origin::Adopted);
        assert_eq!(records["sess_2"].mode, RestoreMode::Shell);
    }

    #[test]
    fn restores_are_asked_for_lost_sessions_only() {
        let mut book = Book::default();
        for (id, name) in [(1, "a"), (2, "b"), (3, "c")] {
            book.observed(SessionId(id), name, blueprint("/"));
        }
        book.lose(SessionId(1), at(1));
        book.lose(SessionId(3), at(2));
        let ids = |v: Vec<(SessionId, RestoreRecord)>| {
            v.into_iter().map(|(id, _)| id.0).collect::<Vec<_>>()
        };
        assert_eq!(ids(book.to_restore(None).unwrap()), [1, 3]);
        let some = [SessionId(3), SessionId(1)];
        assert_eq!(ids(book.to_restore(Some(&some)).unwrap()), [1, 3]);
        for bad in [2, 9] {
            assert_eq!(
                book.to_restore(Some(&[SessionId(bad)])),
                Err(BookError::NotLost(format!("sess_{bad}"))),
            );
        }
        book.restored(SessionId(1));
        assert_eq!(book.lost(), Some((at(1), 1)));
        book.restored(SessionId(3));
        assert_eq!(book.lost(), None, "over once every lost session is back");
        assert!(book.to_restore(None).unwrap().is_empty());
    }

    #[test]
    fn startup_without_any_persisted_session_is_a_loss() {
        // (missing, found, loss announced, still restorable)
        let (a, b) = (SessionId(1), SessionId(2));
        let cases: &[(&[SessionId], usize, bool, usize)] = &[
            (&[a, b], 0, true, 2),
            (&[a], 1, false, 0),
            (&[], 0, false, 0),
        ];
        for (missing, found, announced, restorable) in cases {
            let mut book = Book::default();
            book.observed(SessionId(1), "a", blueprint("/"));
            book.observed(SessionId(2), "b", blueprint("/"));
            assert_eq!(book.after_startup(missing, *found, at(5)), *announced);
            assert_eq!(book.lost().map_or(0, |(_, n)| n), *restorable);
        }
    }

    #[test]
    fn a_loss_read_back_is_not_announced_again() {
        let mut book = Book::default();
        book.observed(SessionId(1), "a", blueprint("/"));
        book.lose(SessionId(1), at(3));
        let mut again = Book::from_file(book.to_file());
        assert_eq!(again.lost(), Some((at(3), 1)));
        assert!(!again.announce(0));
        again.prune(|_| false);
        assert_eq!(
            again.lost(),
            Some((at(3), 1)),
            "lost records survive a prune"
        );
        again.observed(SessionId(2), "b", blueprint("/"));
        again.prune(|id| id == SessionId(1));
        assert_eq!(again.to_file().sessions.len(), 1);
    }

    /// A file written before `start_argv`: each start command read once
    /// from tmux's quoting; one shifted there from a cwd runs nothing.
    #[test]
    fn old_files_give_their_start_commands_as_argvs() {
        let pane = |start: &str| {
            serde_json::json!({"index": 0, "cwd": "/", "command_line": "x",
                "start_command": start, "active": true})
        };
        let json = serde_json::json!({"version": 1, "sessions": {"sess_1": {
            "tmux_name": "a", "origin": "created", "mode": "rerun",
            "blueprint": {"windows": [{"index": 0, "name": "w", "layout": "",
                "cols": 80, "rows": 24, "active": true,
                "panes": [pane("\"make deploy\" --now"), pane("b\tw\tsh -c evil")]}]}}}});
        let file: RestoreFile = serde_json::from_value(json).unwrap();
        let book = Book::from_file(file);
        let saved = book.to_file();
        let panes = &saved.sessions["sess_1"].blueprint.as_ref().unwrap().windows[0].panes;
        let argv = |words: &[&str]| Some(words.iter().map(|w| w.to_string()).collect());
        assert_eq!(panes[0].start_argv, argv(&["make deploy", "--now"]));
        assert_eq!(panes[1].start_argv, None);
        let text = serde_json::to_string(&saved).unwrap();
        assert!(
            text.contains("start_argv") && !text.contains("start_command"),
            "{text}"
        );
    }
}
