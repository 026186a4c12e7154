//! The supervisor's link to disk: one storage task for `registry.json`,
//! `thoughts.json`, `ended.json` and retries (so writes never interleave, a burst of
//! changes costs one write, and a failing disk is retried with backoff), and
//! the event log, numbered and broadcast to live listeners whether or not the
//! disk takes it at once.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::registry::Registry;
use crate::id::SessionId;
use crate::metrics::{Metrics, StoreFile};
use crate::store::floors::{
    ID_BLOCK, IdEvidence, SEQ_BLOCK, SeqEvidence, plan_next_seq, plan_session_counter,
    session_number,
};
use crate::store::{
    Counters, CountersFile, DataDir, EndedFile, EventLog, EventPage, Failure, Found, Loaded,
    NewEvent, RegistryFile, RestoreFile, ScrollbackFiles, StorageHealth, StoreError, ThoughtsFile,
    Write, salvage_damaged_files,
};
use crate::wire::{Event, Payload, Renamed};

/// Rotate `events.jsonl` past this size.
const EVENT_LOG_BYTES: u64 = 8 * 1024 * 1024;
/// Events kept in memory for replay.
const EVENTS_KEPT: usize = 10_000;
/// Live event listeners that fall this far behind re-read from the log.
const EVENT_BROADCAST: usize = 1024;
/// A failed write is retried after this, then twice as long each time...
const RETRY_FIRST: Duration = Duration::from_millis(100);
/// ...up to this.
const RETRY_MAX: Duration = Duration::from_secs(5);

/// Queues a whole new version of one file; the receiver fires once the
/// storage task tried it. An owner calls it under its own lock, so its
/// writes queue in the order its states existed.
pub type Writer<F> = Box<dyn Fn(F) -> oneshot::Receiver<()> + Send + Sync>;

/// Work for the storage task.
enum Job {
    /// A whole new version of `registry.json`; `done` fires after one try.
    Registry(RegistryFile, oneshot::Sender<()>),
    /// A whole new version of `thoughts.json`; `done` fires after one try.
    Thoughts(ThoughtsFile, oneshot::Sender<()>),
    /// A whole new version of `ended.json`; `done` fires after one try.
    Ended(EndedFile, oneshot::Sender<()>),
    /// A whole new version of `restore.json`; `done` fires after one try.
    Restore(RestoreFile, oneshot::Sender<()>),
    /// The event log could not write: keep trying until it can.
    Events,
}

/// What is still to be written; newer versions replace older ones.
#[derive(Default)]
struct Pending {
    registry: Option<RegistryFile>,
    thoughts: Option<ThoughtsFile>,
    ended: Option<EndedFile>,
    restore: Option<RestoreFile>,
    events: bool,
}

impl Pending {
    fn any(&self) -> bool {
        self.registry.is_some()
            || self.thoughts.is_some()
            || self.ended.is_some()
            || self.restore.is_some()
            || self.events
    }
}

/// What the data dir held at startup.
pub struct Restored {
    /// With its counter raised past every id that may have gone out.
    pub registry: RegistryFile,
    pub thoughts: ThoughtsFile,
    pub ended: EndedFile,
    pub restore: RestoreFile,
}

/// Shared by the callers and the storage task.
struct Store {
    /// Held for its lock: a second daemon on this data dir must fail to start.
    dir: DataDir,
    events: Mutex<EventLog>,
    counters: Arc<Counters>,
    health: StorageHealth,
    metrics: Metrics,
    /// Set by `close`: an event recorded after it (a session's end that a
    /// task was still recording) moves the clean-stop mark with it, or the
    /// next start would see an event past the mark and skip ahead.
    closed: std::sync::atomic::AtomicBool,
}

/// The state of the data dir, as `/healthz`, `/readyz` and `/metrics` show it.
#[derive(Clone, Debug, Serialize)]
pub struct StorageReport {
    /// `ok`, or `degraded` while some write keeps failing (it is retried).
    pub status: &'static str,
    pub failures: Vec<Failure>,
    /// Events numbered and served but not on disk yet.
    pub unwritten_events: usize,
    /// Events that never reached the disk (dropped after it failed too long).
    pub lost_events: u64,
    /// Failed write attempts since the daemon started.
    pub failed_writes: u64,
}

pub struct Persistence {
    store: Arc<Store>,
    live_events: broadcast::Sender<Event>,
    jobs: mpsc::UnboundedSender<Job>,
}

impl Persistence {
    /// Locks the data dir and loads the registry, thoughts and ended
    /// sessions (a corrupt file is moved aside and an empty one used),
    /// decides where ids and seqs resume (past every trace on disk: see
    /// `store::floors`), and starts the storage task.
    pub fn open(data_dir: &Path, metrics: Metrics) -> Result<(Persistence, Restored), StoreError> {
        survive_file_size_limit();
        let dir = DataDir::open(data_dir)?;
        let (mut registry, registry_found) =
            load_or_empty(&dir, &dir.registry_path(), RegistryFile::empty)?;
        let (thoughts, _) = load_or_empty(&dir, &dir.thoughts_path(), ThoughtsFile::empty)?;
        let (ended, _) = load_or_empty(&dir, &dir.ended_path(), EndedFile::empty)?;
        let (restore, _) = load_or_empty(&dir, &dir.restore_path(), RestoreFile::empty)?;
        let counters_file = load_counters(&dir)?;
        let mut events = EventLog::open(&dir.events_path(), EVENT_LOG_BYTES, EVENTS_KEPT)?;
        let loaded = LoadedFiles {
            registry: &registry,
            registry_found,
            thoughts: &thoughts,
            ended: &ended,
            counters: counters_file.as_ref(),
        };
        let resume = plan_resume(&dir, &loaded, &events)?;
        registry.next_session_counter = resume.session_counter;
        events.resume_at(resume.next_seq);

        let counters = Arc::new(Counters::new(&dir.counters_path(), counters_file));
        let store = Arc::new(Store {
            events: Mutex::new(events.with_counters(counters.clone())),
            dir,
            counters,
            health: StorageHealth::default(),
            metrics,
            closed: std::sync::atomic::AtomicBool::new(false),
        });
        let (jobs, queue) = mpsc::unbounded_channel();
        // Reserved before the first event: a crash from here on resumes past it.
        let begun = store.counters.begin(
            resume.next_seq.saturating_add(SEQ_BLOCK),
            resume.session_counter.saturating_add(ID_BLOCK),
        );
        if let Err(e) = begun {
            store.health.failed(Write::Events, &e);
            let _ = jobs.send(Job::Events);
        }
        tokio::spawn(run_storage(store.clone(), queue));
        let persistence = Persistence {
            store,
            live_events: broadcast::channel(EVENT_BROADCAST).0,
            jobs,
        };
        let restored = Restored {
            registry,
            thoughts,
            ended,
            restore,
        };
        Ok((persistence, restored))
    }

    /// Queues a registry write; callers send in the order they built the
    /// files (under the registry lock), so the last write is the newest state.
    /// The receiver fires after the first attempt, failed or not: a failing
    /// disk is retried in the background, and shows in `storage_report`.
    pub fn queue_registry(&self, file: RegistryFile) -> oneshot::Receiver<()> {
        self.queue(|done| Job::Registry(file, done))
    }

    /// Builds the registry file and queues its write in one locked
    /// section, so writes land in the order the states existed.
    pub fn write_registry(&self, registry: &Registry) -> oneshot::Receiver<()> {
        registry.write_file(|file| self.queue_registry(file))
    }

    /// Follows tmux's rename of tracked session `id` (heard by its actor,
    /// or seen by discovery) in the registry: recorded once, persisted.
    pub fn follow_rename(&self, registry: &Registry, id: SessionId, name: &str) {
        if let Some(old) = registry.rename(id, name) {
            self.record_rename(registry, id, &old, name);
        }
    }

    /// Records a rename already made in the registry, and persists it.
    pub fn record_rename(&self, registry: &Registry, id: SessionId, old: &str, new: &str) {
        tracing::info!(session_id = %id, old_name = %old, new_name = %new, "session renamed in tmux");
        let renamed = Renamed {
            old_name: old.to_owned(),
            new_name: new.to_owned(),
        };
        let event = NewEvent::new(Payload::SessionRenamed(renamed));
        self.record(event.session_id(id).tmux_name(new));
        // Queued; nothing waits for the write.
        drop(self.write_registry(registry));
    }

    pub fn queue_thoughts(&self, file: ThoughtsFile) -> oneshot::Receiver<()> {
        self.queue(|done| Job::Thoughts(file, done))
    }

    /// The ended sessions' scrollback files, each written once at the
    /// end (not through the storage task: no newer version replaces it).
    pub fn scrollback_files(&self) -> ScrollbackFiles {
        ScrollbackFiles::new(self.store.dir.path())
    }

    /// What queues `restore.json` writes, for the restore owner to call
    /// under its lock.
    pub fn restore_writer(&self) -> Writer<RestoreFile> {
        self.writer(Job::Restore)
    }

    /// What queues `ended.json` writes, for the endings owner to call
    /// under its lock.
    pub fn ended_writer(&self) -> Writer<EndedFile> {
        self.writer(Job::Ended)
    }

    fn writer<F: 'static>(&self, job: fn(F, oneshot::Sender<()>) -> Job) -> Writer<F> {
        let jobs = self.jobs.clone();
        Box::new(move |file| {
            let (done, written) = oneshot::channel();
            let _ = jobs.send(job(file, done));
            written
        })
    }

    fn queue(&self, job: impl FnOnce(oneshot::Sender<()>) -> Job) -> oneshot::Receiver<()> {
        let (done, written) = oneshot::channel();
        let _ = self.jobs.send(job(done));
        written
    }

    /// Numbers the event, appends it to the log and tells live listeners.
    /// A disk that refuses the line does not stop the event: it is served
    /// from memory and written when the disk recovers. The broadcast happens
    /// under the log's lock, so listeners see events in seq order.
    pub fn record(&self, event: NewEvent) -> Event {
        let mut log = self.store.events();
        let event = log.stamp(event);
        let kind = serde_json::to_value(event.kind()).unwrap_or_default();
        let reason = event.reason.as_deref();
        self.store
            .metrics
            .event_appended(kind.as_str().unwrap_or(""), reason);
        // While failing, only the storage task's retries touch the disk.
        if !self.store.health.is_failing(Write::Events) {
            match log.flush() {
                Ok(()) => {
                    self.store.metrics.persisted(StoreFile::Events);
                    if self.store.closed.load(std::sync::atomic::Ordering::Relaxed)
                        && log.sync().is_ok()
                    {
                        let _ = self.store.counters.mark_clean_stop(log.next_seq());
                    }
                }
                Err(e) => {
                    self.store.health.failed(Write::Events, &e);
                    let _ = self.jobs.send(Job::Events);
                }
            }
        }
        let _ = self.live_events.send(event.clone());
        event
    }

    /// Retained events after `since`, and whether some were already dropped.
    pub fn events_since(&self, since: u64) -> (Vec<Event>, bool) {
        self.store.events().since(since)
    }

    /// At most `limit` retained events after `since`, and at most
    /// `max_bytes` of their JSON: see `EventLog::page`.
    pub fn events_page(&self, since: u64, limit: usize, max_bytes: usize) -> EventPage {
        self.store.events().page(since, limit, max_bytes)
    }

    /// Live events, and the retained ones after `since`, taken together so
    /// none falls between the two.
    pub fn follow_events(&self, since: u64) -> (broadcast::Receiver<Event>, Vec<Event>, bool) {
        let log = self.store.events();
        let live = self.live_events.subscribe();
        let (replay, truncated) = log.since(since);
        (live, replay, truncated)
    }

    pub fn next_event_seq(&self) -> u64 {
        self.store.events().next_seq()
    }

    /// Makes the events written so far durable (a checkpoint).
    pub fn sync_events(&self) {
        if self.store.health.is_failing(Write::Events) {
            return;
        }
        if let Err(e) = self.store.events().sync() {
            self.store.health.failed(Write::Events, &e);
            let _ = self.jobs.send(Job::Events);
        }
    }

    /// A clean stop, after the final registry write: writes and syncs every
    /// event, then records the exact next seq (and so that the registry's
    /// counter is exact), so the next start continues without a jump. Not
    /// while any write is failing: the next start then resumes at the
    /// reservations.
    pub fn close(&self) {
        let mut log = self.store.events();
        let written = log.flush().and_then(|()| log.sync());
        let failing = self.store.health.failures();
        let marked = match (written, failing.first()) {
            (Ok(()), None) => {
                let marked = self.store.counters.mark_clean_stop(log.next_seq());
                let closed = marked.is_ok();
                self.store
                    .closed
                    .store(closed, std::sync::atomic::Ordering::Relaxed);
                marked
            }
            (Err(e), _) => Err(e),
            (Ok(()), Some(failure)) => {
                tracing::error!(file = %failure.file, "stopping while a write fails: {}", failure.error);
                return;
            }
        };
        if let Err(e) = marked {
            tracing::error!(
                unwritten = log.unwritten(),
                "stopping with events not on disk; the next start skips ahead: {e}"
            );
        }
    }

    pub fn storage_report(&self) -> StorageReport {
        let failures = self.store.health.failures();
        let (unwritten_events, lost_events) = {
            let log = self.store.events();
            (log.unwritten(), log.lost())
        };
        StorageReport {
            status: if failures.is_empty() {
                "ok"
            } else {
                "degraded"
            },
            failures,
            unwritten_events,
            lost_events,
            failed_writes: self.store.health.failed_writes(),
        }
    }
}

impl Store {
    fn events(&self) -> MutexGuard<'_, EventLog> {
        self.events.lock().expect("event log lock")
    }

    /// One try at everything pending; what fails stays pending.
    fn write_pending(&self, mut pending: Pending) -> Pending {
        if let Some(file) = pending.registry.take() {
            let counted = self.counters.reserve_ids(file.next_session_counter);
            let saved = self.dir.save_json(&self.dir.registry_path(), &file);
            match saved.and(counted) {
                Ok(()) => {
                    self.metrics.persisted(StoreFile::Registry);
                    self.health.recovered(Write::Registry);
                }
                Err(e) => {
                    self.health.failed(Write::Registry, &e);
                    pending.registry = Some(file);
                }
            }
        }
        if let Some(file) = pending.thoughts.take() {
            match self.dir.save_json(&self.dir.thoughts_path(), &file) {
                Ok(()) => {
                    self.metrics.persisted(StoreFile::Thoughts);
                    self.health.recovered(Write::Thoughts);
                }
                Err(e) => {
                    self.health.failed(Write::Thoughts, &e);
                    pending.thoughts = Some(file);
                }
            }
        }
        if let Some(file) = pending.ended.take() {
            match self.dir.save_json(&self.dir.ended_path(), &file) {
                Ok(()) => {
                    self.metrics.persisted(StoreFile::Ended);
                    self.health.recovered(Write::Ended);
                }
                Err(e) => {
                    self.health.failed(Write::Ended, &e);
                    pending.ended = Some(file);
                }
            }
        }
        if let Some(file) = pending.restore.take() {
            match self.dir.save_json(&self.dir.restore_path(), &file) {
                Ok(()) => {
                    self.metrics.persisted(StoreFile::Restore);
                    self.health.recovered(Write::Restore);
                }
                Err(e) => {
                    self.health.failed(Write::Restore, &e);
                    pending.restore = Some(file);
                }
            }
        }
        if pending.events {
            let mut log = self.events();
            // The counters too: a failed `begin` left the last clean-stop
            // mark on disk, which must not survive this run.
            let written = log
                .flush()
                .and_then(|()| log.sync())
                .and_then(|()| self.counters.retry());
            match written {
                Ok(()) => {
                    self.metrics.persisted(StoreFile::Events);
                    self.health.recovered(Write::Events);
                    pending.events = false;
                }
                Err(e) => self.health.failed(Write::Events, &e),
            }
        }
        pending
    }
}

/// Writes what is queued, coalescing bursts; retries failures with backoff
/// until they succeed. Runs until the `Persistence` is dropped.
async fn run_storage(store: Arc<Store>, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut pending = Pending::default();
    let mut backoff = RETRY_FIRST;
    loop {
        let retrying = pending.any();
        tokio::select! {
            job = jobs.recv() => {
                let Some(job) = job else { return };
                let mut waiting = Vec::new();
                let queued = std::iter::once(job).chain(std::iter::from_fn(|| jobs.try_recv().ok()));
                for job in queued {
                    match job {
                        Job::Registry(file, done) => {
                            pending.registry = Some(file);
                            waiting.push(done);
                        }
                        Job::Thoughts(file, done) => {
                            pending.thoughts = Some(file);
                            waiting.push(done);
                        }
                        Job::Ended(file, done) => {
                            pending.ended = Some(file);
                            waiting.push(done);
                        }
                        Job::Restore(file, done) => {
                            pending.restore = Some(file);
                            waiting.push(done);
                        }
                        Job::Events => pending.events = true,
                    }
                }
                pending = write_pending(&store, pending).await;
                for done in waiting {
                    let _ = done.send(());
                }
            }
            () = tokio::time::sleep(backoff), if retrying => {
                pending = write_pending(&store, pending).await;
                backoff = (backoff * 2).min(RETRY_MAX);
            }
        }
        if !pending.any() {
            backoff = RETRY_FIRST;
        }
    }
}

async fn write_pending(store: &Arc<Store>, pending: Pending) -> Pending {
    let store = store.clone();
    match tokio::task::spawn_blocking(move || store.write_pending(pending)).await {
        Ok(pending) => pending,
        Err(e) => {
            tracing::error!("the state writer failed: {e}");
            Pending::default()
        }
    }
}

/// Where numbering resumes.
struct Resume {
    session_counter: u64,
    next_seq: u64,
}

/// What startup read from the data dir's JSON files.
struct LoadedFiles<'a> {
    registry: &'a RegistryFile,
    /// `registry.json` was there and parsed.
    registry_found: bool,
    thoughts: &'a ThoughtsFile,
    ended: &'a EndedFile,
    counters: Option<&'a CountersFile>,
}

/// Takes every trace of earlier numbers into account: the registry, the
/// thoughts, the ended sessions, `counters.json`, the event log, and whatever moved-aside
/// copies still hold. Ids live on tmux sessions too; the restore adds those.
fn plan_resume(
    dir: &DataDir,
    loaded: &LoadedFiles<'_>,
    events: &EventLog,
) -> Result<Resume, StoreError> {
    let salvage = salvage_damaged_files(dir.path())?;
    let found = events.found();
    // Read as text, as every source here: numbers past `MAX_TRUSTED` are not taken.
    let registry_ids = loaded
        .registry
        .sessions
        .iter()
        .map(|s| s.session_id.to_string());
    let thought_ids = loaded.thoughts.thoughts.keys().cloned();
    let ended_ids = loaded.ended.sessions.iter().map(|s| s.session_id.clone());
    let highest_id = registry_ids
        .chain(thought_ids)
        .chain(ended_ids)
        .filter_map(|id| session_number(&id))
        .chain(found.highest_session_id)
        .chain(salvage.highest_session_id)
        .max();
    let clean_stop = loaded.counters.and_then(|c| c.clean_stop_next_seq);
    let session_counter = plan_session_counter(&IdEvidence {
        registry_counter: loaded
            .registry_found
            .then_some(loaded.registry.next_session_counter),
        salvaged_counter: salvage.next_session_counter,
        highest_id,
        reserved: loaded
            .counters
            .map(|c| c.session_id_reserved)
            .max(salvage.session_id_reserved),
        clean_stop: clean_stop.is_some(),
    });
    let next_seq = plan_next_seq(&SeqEvidence {
        highest_in_log: found.highest_seq,
        log_damaged: found.skipped_lines > 0,
        reserved: loaded
            .counters
            .map(|c| c.event_seq_reserved)
            .max(salvage.event_seq_reserved),
        clean_stop,
    });
    log_resume(loaded.registry, &found, session_counter, next_seq);
    Ok(Resume {
        session_counter,
        next_seq,
    })
}

fn log_resume(registry: &RegistryFile, found: &Found, session_counter: u64, next_seq: u64) {
    if session_counter != registry.next_session_counter {
        tracing::warn!(
            registry_said = registry.next_session_counter,
            "session ids continue at sess_{session_counter}: after a crash or a lost file, past every id that may have gone out"
        );
    }
    let after_log = found.highest_seq.map_or(1, |seq| seq.saturating_add(1));
    if next_seq != after_log {
        tracing::warn!(
            after_log,
            "event seq continues at {next_seq}: after a crash or a damaged or lost log, past every seq that may have gone out"
        );
    }
}

/// The file, or an empty one; and whether it was there and whole.
fn load_or_empty<T: serde::de::DeserializeOwned>(
    dir: &DataDir,
    path: &Path,
    empty: fn() -> T,
) -> Result<(T, bool), StoreError> {
    Ok(match dir.load_json::<T>(path)? {
        Loaded::Found(file) => (file, true),
        Loaded::Missing => (empty(), false),
        Loaded::Corrupt { moved_to, error } => {
            tracing::error!(
                "{} is corrupt ({error}); moved it to {} and starting empty",
                path.display(),
                moved_to.display()
            );
            (empty(), false)
        }
    })
}

/// `counters.json`, if it exists and parses; a corrupt one is moved aside
/// (and salvaged from there).
fn load_counters(dir: &DataDir) -> Result<Option<CountersFile>, StoreError> {
    let path = dir.counters_path();
    Ok(match dir.load_json::<CountersFile>(&path)? {
        Loaded::Found(file) => Some(file),
        Loaded::Missing => None,
        Loaded::Corrupt { moved_to, error } => {
            tracing::error!(
                "{} is corrupt ({error}); moved it to {}",
                path.display(),
                moved_to.display()
            );
            None
        }
    })
}

/// A file size limit (RLIMIT_FSIZE) must fail a write with EFBIG, which the
/// storage task reports and retries, not kill the daemon with SIGXFSZ. A
/// handler (unlike ignoring the signal) is reset by exec, so tmux and the
/// sessions' programs keep the default.
fn survive_file_size_limit() {
    use tokio::signal::unix::{SignalKind, signal};
    // The handler stays installed after the stream is dropped.
    if let Err(e) = signal(SignalKind::from_raw(libc::SIGXFSZ)) {
        tracing::warn!("cannot handle SIGXFSZ; a file size limit would stop the daemon: {e}");
    }
}
