//! Storage health: which writes are failing, since when and why, so that a
//! full or read-only disk shows up in `/healthz`, `/readyz` and `/metrics`
//! instead of only in a log line.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::StoreError;

/// What keeps failing: each kind of write is retried and recovers on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Write {
    /// Appending to `events.jsonl` (and reserving seqs in `counters.json`).
    Events,
    /// Replacing `registry.json` (and the id counter in `counters.json`).
    Registry,
    /// Replacing `thoughts.json`.
    Thoughts,
    /// Replacing `ended.json`.
    Ended,
    /// Replacing `restore.json`.
    Restore,
}

/// One write that is failing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    pub write: Write,
    /// The file the last attempt failed on (a name in the data dir).
    pub file: String,
    /// The operating system's reason, e.g. "No space left on device".
    pub error: String,
    /// When this write first failed.
    pub since: DateTime<Utc>,
    /// Failed attempts so far.
    pub attempts: u64,
}

/// Shared by the writers (which report) and the API (which reads).
#[derive(Debug, Default)]
pub struct StorageHealth {
    failing: Mutex<BTreeMap<Write, Failure>>,
    failed_writes: AtomicU64,
}

impl StorageHealth {
    pub fn failed(&self, write: Write, error: &StoreError) {
        self.failed_writes.fetch_add(1, Ordering::Relaxed);
        let (file, reason) = describe(error);
        let mut failing = self.lock();
        let failure = failing.entry(write).or_insert_with(|| {
            tracing::error!(?write, %file, "storage write failed, will retry: {reason}");
            Failure {
                write,
                file: String::new(),
                error: String::new(),
                since: Utc::now(),
                attempts: 0,
            }
        });
        failure.file = file;
        failure.error = reason;
        failure.attempts += 1;
    }

    pub fn recovered(&self, write: Write) {
        if let Some(failure) = self.lock().remove(&write) {
            tracing::warn!(
                ?write,
                attempts = failure.attempts,
                since = %failure.since,
                "storage write works again"
            );
        }
    }

    pub fn is_failing(&self, write: Write) -> bool {
        self.lock().contains_key(&write)
    }

    /// The writes failing now, oldest kind first.
    pub fn failures(&self) -> Vec<Failure> {
        self.lock().values().cloned().collect()
    }

    /// Failed write attempts since the daemon started.
    pub fn failed_writes(&self) -> u64 {
        self.failed_writes.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Write, Failure>> {
        self.failing.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The file name and the reason, without the data dir's path: `/healthz`
/// answers without a token, and where the data lives is none of a caller's
/// business.
fn describe(error: &StoreError) -> (String, String) {
    let name = |path: &std::path::Path| {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        // `.registry.json.tmp-<pid>-<n>` is registry.json being replaced.
        match name.strip_prefix('.').and_then(|n| n.split_once(".tmp-")) {
            Some((file, _)) => file.to_owned(),
            None => name,
        }
    };
    match error {
        StoreError::Io { path, source } => (name(path), source.to_string()),
        StoreError::Encode { path, source } => (name(path), source.to_string()),
        StoreError::Locked { .. } => (String::from("lock"), error.to_string()),
        StoreError::NotOwned { .. } => ("data_dir".into(), "belongs to another user".into()),
        StoreError::Exposed { .. } => ("data_dir".into(), "another user can redirect it".into()),
        StoreError::Link { path } => (name(path), "a symbolic link, not followed".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(path: &str, kind: std::io::ErrorKind) -> StoreError {
        StoreError::Io {
            path: path.into(),
            source: kind.into(),
        }
    }

    #[test]
    fn failures_are_kept_per_write_until_it_recovers() {
        let health = StorageHealth::default();
        assert!(health.failures().is_empty());
        let full = io("/secret/data/events.jsonl", std::io::ErrorKind::StorageFull);
        health.failed(Write::Events, &full);
        health.failed(Write::Events, &full);
        health.failed(
            Write::Registry,
            &io(
                "/secret/data/registry.json",
                std::io::ErrorKind::ReadOnlyFilesystem,
            ),
        );
        let failures = health.failures();
        assert_eq!(failures.len(), 2);
        assert_eq!(failures[0].write, Write::Events);
        assert_eq!(failures[0].file, "events.jsonl");
        assert_eq!(failures[0].attempts, 2);
        assert!(!failures[0].error.contains("/secret"), "{:?}", failures[0]);
        assert_eq!(failures[1].file, "registry.json");
        assert!(health.is_failing(Write::Registry));

        health.recovered(Write::Events);
        assert!(!health.is_failing(Write::Events));
        assert_eq!(health.failures().len(), 1);
        assert_eq!(health.failed_writes(), 3);
    }
}
