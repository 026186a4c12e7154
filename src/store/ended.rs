//! `ended.json`: sessions that ended, kept readable for a while (their last
//! summary and screens), so a restart does not lose how they ended; and
//! beside it one `ended-scrollback-<id>.json` per ended session, the
//! history above its last screen, written once and removed with the record.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::files::{Loaded, load_json, write_atomic};
use super::registry::format_version;
use super::{StoreError, io_error};
use crate::id::SessionId;

/// A scrollback file holds at most this much text: the oldest lines go
/// first. Lines are as wide as the pane, so the line count alone does not
/// bound it (2,000 lines of a 1,000-column pane would be 2 MB).
pub const SCROLLBACK_FILE_MAX_BYTES: usize = 1024 * 1024;
const SCROLLBACK_PREFIX: &str = "ended-scrollback-";
const SCROLLBACK_SUFFIX: &str = ".json";

/// `ended.json`, newest last.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EndedFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    pub sessions: Vec<EndedRecord>,
}

/// One ended session. The summary and screens are kept as the API served
/// them; the store does not look inside.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EndedRecord {
    pub session_id: String,
    pub ended_at: DateTime<Utc>,
    /// The session summary as of its end (`state: "exited"`).
    pub summary: Value,
    /// The last screens (window and active pane, text and ANSI), if kept.
    #[serde(default)]
    pub screens: Option<Value>,
    /// What was kept of the history above the last screen (its lines are
    /// in the session's `ScrollbackFile`); absent in older files.
    #[serde(default)]
    pub scrollback: Option<Value>,
}

impl EndedFile {
    pub fn empty() -> Self {
        EndedFile {
            version: 1,
            sessions: Vec::new(),
        }
    }
}

/// `ended-scrollback-<id>.json`: the history above an ended session's
/// last screen, oldest first.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ScrollbackFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    pub session_id: SessionId,
    pub lines: Vec<String>,
}

impl ScrollbackFile {
    /// The newest of `lines` that fit in `SCROLLBACK_FILE_MAX_BYTES`.
    pub fn new(session_id: SessionId, mut lines: Vec<String>) -> Self {
        let keep = newest_within(&lines, SCROLLBACK_FILE_MAX_BYTES);
        lines.drain(..lines.len() - keep);
        ScrollbackFile {
            version: 1,
            session_id,
            lines,
        }
    }
}

/// How many of the last `lines` fit in `max_bytes` (each counted with the
/// newline and quotes that store it, roughly).
fn newest_within(lines: &[String], max_bytes: usize) -> usize {
    let mut used = 0;
    lines
        .iter()
        .rev()
        .take_while(|line| {
            used += line.len() + 8;
            used <= max_bytes
        })
        .count()
}

/// The scrollback files of a data dir (its lock is held by the
/// `DataDir`); opened and replaced as every file there is (`files`): no
/// link followed, mode 0600, replaced atomically.
#[derive(Clone, Debug)]
pub struct ScrollbackFiles {
    dir: PathBuf,
}

impl ScrollbackFiles {
    pub fn new(dir: &Path) -> Self {
        ScrollbackFiles {
            dir: dir.to_path_buf(),
        }
    }

    /// The file of session `id` (a name in the directory, which a sweep
    /// may find not to be an id at all).
    fn path(&self, session_id: &str) -> PathBuf {
        self.dir.join(format!(
            "{SCROLLBACK_PREFIX}{session_id}{SCROLLBACK_SUFFIX}"
        ))
    }

    pub fn save(&self, file: &ScrollbackFile) -> Result<(), StoreError> {
        let path = self.path(&file.session_id.to_string());
        let bytes = serde_json::to_vec(file).map_err(|source| StoreError::Encode {
            path: path.clone(),
            source,
        })?;
        write_atomic(&path, &bytes)
    }

    /// The session's file; None if it is missing, or was corrupt (then
    /// moved aside, as any corrupt file of the data dir).
    pub fn load(&self, session_id: SessionId) -> Result<Option<ScrollbackFile>, StoreError> {
        match load_json(&self.path(&session_id.to_string()))? {
            Loaded::Found(file) => Ok(Some(file)),
            Loaded::Missing => Ok(None),
            Loaded::Corrupt { moved_to, error } => {
                tracing::warn!(moved_to = %moved_to.display(), "a corrupt scrollback file: {error}");
                Ok(None)
            }
        }
    }

    /// Removes the session's file; one already gone is no error.
    pub fn remove(&self, session_id: SessionId) -> Result<(), StoreError> {
        self.remove_named(&session_id.to_string())
    }

    fn remove_named(&self, session_id: &str) -> Result<(), StoreError> {
        let path = self.path(session_id);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(&path)(e)),
            _ => Ok(()),
        }
    }

    /// Removes the files of sessions not in `keep` (left by a crash
    /// between dropping a record and its file); answers how many.
    pub fn sweep(&self, keep: &BTreeSet<SessionId>) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = scrollback_id(&name) else {
                continue;
            };
            let kept = id.parse().is_ok_and(|id| keep.contains(&id));
            if !kept && self.remove_named(id).is_ok() {
                removed += 1;
            }
        }
        removed
    }
}

/// The session id in a scrollback file's name.
fn scrollback_id(name: &OsStr) -> Option<&str> {
    name.to_str()?
        .strip_prefix(SCROLLBACK_PREFIX)?
        .strip_suffix(SCROLLBACK_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrollback_file_keeps_the_newest_lines_within_its_cap() {
        let line = |n: usize| "x".repeat(n);
        // (line lengths, cap, lines kept)
        let cases: [(&[usize], usize, usize); 5] = [
            (&[], 100, 0),
            (&[1, 2, 3], 100, 3),
            (&[10, 10, 10], 36, 2),
            (&[10, 10, 10], 17, 0),
            (&[100, 1, 1], 20, 2),
        ];
        for (lengths, cap, want) in cases {
            let lines: Vec<String> = lengths.iter().map(|&n| line(n)).collect();
            assert_eq!(newest_within(&lines, cap), want, "{lengths:?} in {cap}");
        }
        let many: Vec<String> = (0..20_000).map(|i| format!("{i:0>100}")).collect();
        let file = ScrollbackFile::new(SessionId(1), many);
        let size = serde_json::to_vec(&file).unwrap().len();
        assert!(size <= SCROLLBACK_FILE_MAX_BYTES, "{size}");
        assert_eq!(file.lines.last().unwrap(), &format!("{:0>100}", 19_999));
    }

    #[test]
    fn scrollback_files_are_saved_loaded_swept_and_never_followed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let files = ScrollbackFiles::new(dir.path());
        for id in [SessionId(1), SessionId(2)] {
            let file = ScrollbackFile::new(id, vec![format!("{id} line")]);
            files.save(&file).unwrap();
        }
        let path = files.path("sess_1");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            files.load(SessionId(1)).unwrap().unwrap().lines,
            ["sess_1 line"]
        );
        assert_eq!(files.load(SessionId(9)).unwrap(), None);
        std::fs::write(dir.path().join("other.json"), "{}").unwrap();
        std::fs::write(files.path("sess_07"), "{}").unwrap();
        let keep: BTreeSet<SessionId> = [SessionId(2)].into();
        assert_eq!(files.sweep(&keep), 2, "sess_1, and a name that is no id");
        assert!(!path.exists());
        assert!(
            dir.path().join("other.json").exists(),
            "only scrollback files"
        );
        files.remove(SessionId(2)).unwrap();
        files.remove(SessionId(2)).unwrap();
        // A link planted in a file's place is not read through.
        let secret = dir.path().join("secret");
        std::fs::write(
            &secret,
            r#"{"version":1,"session_id":"sess_3","lines":["s"]}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink(&secret, files.path("sess_3")).unwrap();
        assert!(files.load(SessionId(3)).is_err());
    }

    #[test]
    fn round_trips_and_refuses_other_versions() {
        let file = EndedFile {
            version: 1,
            sessions: vec![EndedRecord {
                session_id: "sess_4".into(),
                ended_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
                summary: serde_json::json!({"state": "exited", "exit_status": 3}),
                screens: None,
                scrollback: None,
            }],
        };
        let text = serde_json::to_string(&file).unwrap();
        assert_eq!(serde_json::from_str::<EndedFile>(&text).unwrap(), file);
        let other = text.replace("\"version\":1", "\"version\":2");
        assert!(serde_json::from_str::<EndedFile>(&other).is_err());
    }
}
