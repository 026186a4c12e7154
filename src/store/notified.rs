//! `notified.json`: what the notifier already sent per session (the
//! attention it notified and when, whether its end was notified), so a
//! restart re-sends nothing and the cooldown holds across restarts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::registry::format_version;
use super::{StoreError, files};

/// The file's name in the data dir.
pub const NOTIFIED_FILE: &str = "notified.json";

/// `notified.json`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct NotifiedFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version", default = "one")]
    pub version: u32,
    /// By session id.
    pub sessions: BTreeMap<String, NotifiedSession>,
}

fn one() -> u32 {
    1
}

impl Default for NotifiedFile {
    fn default() -> Self {
        NotifiedFile {
            version: 1,
            sessions: BTreeMap::new(),
        }
    }
}

/// What was notified of one session.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct NotifiedSession {
    /// The `since` of the attention flag last seen up (None: down).
    #[serde(default)]
    pub attention_since: Option<String>,
    /// When its attention was last notified (the cooldown runs from it).
    #[serde(default)]
    pub attention_notified_at: Option<DateTime<Utc>>,
    /// When its end was notified; a session ends once.
    #[serde(default)]
    pub exit_notified_at: Option<DateTime<Utc>>,
}

impl NotifiedFile {
    /// The path of the file in `data_dir`.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(NOTIFIED_FILE)
    }

    /// Reads the file; a missing one is empty, a corrupt one is moved aside
    /// (and reported in the log) and read as empty.
    pub fn load(path: &Path) -> NotifiedFile {
        files::load_or_default(path)
    }

    /// Replaces the file atomically (`write_atomic`).
    pub fn save(&self, path: &Path) -> Result<(), StoreError> {
        let mut bytes = serde_json::to_vec_pretty(self).map_err(|source| StoreError::Encode {
            path: path.to_path_buf(),
            source,
        })?;
        bytes.push(b'\n');
        files::write_atomic(path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_across_a_save_and_a_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = NotifiedFile::path(dir.path());
        assert_eq!(NotifiedFile::load(&path), NotifiedFile::default());
        let mut file = NotifiedFile::default();
        file.sessions.insert(
            "sess_1".into(),
            NotifiedSession {
                attention_since: Some("2026-01-01T00:00:00Z".into()),
                attention_notified_at: Some(Utc::now()),
                exit_notified_at: None,
            },
        );
        file.save(&path).unwrap();
        assert_eq!(NotifiedFile::load(&path), file);
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(NotifiedFile::load(&path), NotifiedFile::default());
        assert!(!path.exists(), "the corrupt file is moved aside");
    }
}
