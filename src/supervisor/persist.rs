//! The supervisor's link to disk: one writer task for `registry.json` (so
//! writes never interleave and a burst of changes costs one write), and the
//! event log, appended in order and broadcast to live listeners.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc, oneshot};

use crate::store::{DataDir, Event, EventLog, Loaded, NewEvent, RegistryFile, StoreError};

/// Rotate `events.jsonl` past this size.
const EVENT_LOG_BYTES: u64 = 8 * 1024 * 1024;
/// Events kept in memory for replay.
const EVENTS_KEPT: usize = 10_000;
/// Live event listeners that fall this far behind miss events (and are told).
const EVENT_BROADCAST: usize = 1024;

struct RegistryWrite {
    file: RegistryFile,
    done: oneshot::Sender<()>,
}

pub struct Persistence {
    dir: Arc<DataDir>,
    events: Mutex<EventLog>,
    live_events: broadcast::Sender<Event>,
    writes: mpsc::UnboundedSender<RegistryWrite>,
}

impl Persistence {
    /// Locks the data dir and loads the registry; a corrupt registry is moved
    /// aside and an empty one used. Starts the writer task.
    pub fn open(data_dir: &Path) -> Result<(Persistence, RegistryFile), StoreError> {
        let dir = Arc::new(DataDir::open(data_dir)?);
        let registry = match dir.load_json::<RegistryFile>(&dir.registry_path())? {
            Loaded::Found(file) => file,
            Loaded::Missing => RegistryFile::empty(),
            Loaded::Corrupt { moved_to, error } => {
                tracing::error!(
                    "registry.json is corrupt ({error}); moved it to {} and starting empty",
                    moved_to.display()
                );
                RegistryFile::empty()
            }
        };
        let events = EventLog::open(&dir.events_path(), EVENT_LOG_BYTES, EVENTS_KEPT)?;
        if events.skipped_lines() > 0 {
            tracing::warn!(
                "skipped {} unreadable lines in events.jsonl",
                events.skipped_lines()
            );
        }
        let (writes, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_registry_files(dir.clone(), queue));
        let persistence = Persistence {
            dir,
            events: Mutex::new(events),
            live_events: broadcast::channel(EVENT_BROADCAST).0,
            writes,
        };
        Ok((persistence, registry))
    }

    /// Queues a registry write; callers send in the order they built the
    /// files (under the registry lock), so the last write is the newest state.
    pub fn queue_registry(&self, file: RegistryFile) -> oneshot::Receiver<()> {
        let (done, written) = oneshot::channel();
        let _ = self.writes.send(RegistryWrite { file, done });
        written
    }

    /// Appends an event to the log and tells live listeners.
    pub fn record(&self, event: NewEvent) -> Option<Event> {
        let appended = self.events.lock().expect("event log lock").append(event);
        match appended {
            Ok(event) => {
                let _ = self.live_events.send(event.clone());
                Some(event)
            }
            Err(e) => {
                tracing::error!("cannot append to the event log: {e}");
                None
            }
        }
    }

    /// Retained events after `since`, and whether some were already dropped.
    pub fn events_since(&self, since: u64) -> (Vec<Event>, bool) {
        self.events.lock().expect("event log lock").since(since)
    }

    pub fn subscribe_events(&self) -> broadcast::Receiver<Event> {
        self.live_events.subscribe()
    }

    pub fn sync_events(&self) {
        if let Err(e) = self.events.lock().expect("event log lock").sync() {
            tracing::error!("cannot sync the event log: {e}");
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }
}

async fn write_registry_files(
    dir: Arc<DataDir>,
    mut queue: mpsc::UnboundedReceiver<RegistryWrite>,
) {
    while let Some(first) = queue.recv().await {
        // Everything queued meanwhile is older than the last one: write only that.
        let mut latest = first.file;
        let mut waiting = vec![first.done];
        while let Ok(next) = queue.try_recv() {
            latest = next.file;
            waiting.push(next.done);
        }
        let dir = dir.clone();
        let written =
            tokio::task::spawn_blocking(move || dir.save_json(&dir.registry_path(), &latest)).await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!("cannot write the registry: {e}"),
            Err(e) => tracing::error!("registry writer failed: {e}"),
        }
        for done in waiting {
            let _ = done.send(());
        }
    }
}
