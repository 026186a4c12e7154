//! The supervisor's link to disk: one writer task for `registry.json` and
//! `thoughts.json` (so writes never interleave and a burst of changes costs
//! one write), and the event log, appended in order and broadcast to live
//! listeners.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc, oneshot};

use crate::store::{
    DataDir, EndedFile, Event, EventLog, Loaded, NewEvent, RegistryFile, StoreError, ThoughtsFile,
};

/// Rotate `events.jsonl` past this size.
const EVENT_LOG_BYTES: u64 = 8 * 1024 * 1024;
/// Events kept in memory for replay.
const EVENTS_KEPT: usize = 10_000;
/// Live event listeners that fall this far behind re-read from the log.
const EVENT_BROADCAST: usize = 1024;

/// A file to write: each write is a whole new version of it.
enum FileWrite {
    Registry(RegistryFile),
    Thoughts(ThoughtsFile),
    Ended(EndedFile),
}

/// What the data dir held at startup.
pub struct Restored {
    pub registry: RegistryFile,
    pub thoughts: ThoughtsFile,
    pub ended: EndedFile,
}

struct QueuedWrite {
    file: FileWrite,
    done: oneshot::Sender<()>,
}

pub struct Persistence {
    /// Held for its lock: a second daemon on this data dir must fail to start.
    _data_dir: Arc<DataDir>,
    events: Mutex<EventLog>,
    live_events: broadcast::Sender<Event>,
    writes: mpsc::UnboundedSender<QueuedWrite>,
}

impl Persistence {
    /// Locks the data dir and loads the registry and thoughts; a corrupt
    /// file is moved aside and an empty one used. Starts the writer task.
    pub fn open(data_dir: &Path) -> Result<(Persistence, Restored), StoreError> {
        let dir = Arc::new(DataDir::open(data_dir)?);
        let registry = load_or_empty(&dir, &dir.registry_path(), RegistryFile::empty)?;
        let thoughts = load_or_empty(&dir, &dir.thoughts_path(), ThoughtsFile::empty)?;
        let ended = load_or_empty(&dir, &dir.ended_path(), EndedFile::empty)?;
        let events = EventLog::open(&dir.events_path(), EVENT_LOG_BYTES, EVENTS_KEPT)?;
        if events.skipped_lines() > 0 {
            tracing::warn!(
                "skipped {} unreadable lines in events.jsonl",
                events.skipped_lines()
            );
        }
        let (writes, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_files(dir.clone(), queue));
        let persistence = Persistence {
            _data_dir: dir,
            events: Mutex::new(events),
            live_events: broadcast::channel(EVENT_BROADCAST).0,
            writes,
        };
        let restored = Restored {
            registry,
            thoughts,
            ended,
        };
        Ok((persistence, restored))
    }

    /// Queues a registry write; callers send in the order they built the
    /// files (under the registry lock), so the last write is the newest state.
    pub fn queue_registry(&self, file: RegistryFile) -> oneshot::Receiver<()> {
        self.queue(FileWrite::Registry(file))
    }

    pub fn queue_thoughts(&self, file: ThoughtsFile) -> oneshot::Receiver<()> {
        self.queue(FileWrite::Thoughts(file))
    }

    pub fn queue_ended(&self, file: EndedFile) -> oneshot::Receiver<()> {
        self.queue(FileWrite::Ended(file))
    }

    fn queue(&self, file: FileWrite) -> oneshot::Receiver<()> {
        let (done, written) = oneshot::channel();
        let _ = self.writes.send(QueuedWrite { file, done });
        written
    }

    /// Appends an event to the log and tells live listeners. The broadcast
    /// happens under the log's lock, so listeners see events in seq order.
    pub fn record(&self, event: NewEvent) -> Option<Event> {
        let mut log = self.events.lock().expect("event log lock");
        match log.append(event) {
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

    /// Live events, and the retained ones after `since`, taken together so
    /// none falls between the two.
    pub fn follow_events(&self, since: u64) -> (broadcast::Receiver<Event>, Vec<Event>, bool) {
        let log = self.events.lock().expect("event log lock");
        let live = self.live_events.subscribe();
        let (replay, truncated) = log.since(since);
        (live, replay, truncated)
    }

    pub fn next_event_seq(&self) -> u64 {
        self.events.lock().expect("event log lock").next_seq()
    }

    pub fn sync_events(&self) {
        if let Err(e) = self.events.lock().expect("event log lock").sync() {
            tracing::error!("cannot sync the event log: {e}");
        }
    }
}

fn load_or_empty<T: serde::de::DeserializeOwned>(
    dir: &DataDir,
    path: &Path,
    empty: fn() -> T,
) -> Result<T, StoreError> {
    Ok(match dir.load_json::<T>(path)? {
        Loaded::Found(file) => file,
        Loaded::Missing => empty(),
        Loaded::Corrupt { moved_to, error } => {
            tracing::error!(
                "{} is corrupt ({error}); moved it to {} and starting empty",
                path.display(),
                moved_to.display()
            );
            empty()
        }
    })
}

async fn write_files(dir: Arc<DataDir>, mut queue: mpsc::UnboundedReceiver<QueuedWrite>) {
    while let Some(first) = queue.recv().await {
        // Everything queued meanwhile is older than the last of its kind: write only those.
        let (mut registry, mut thoughts, mut ended) = (None, None, None);
        let mut waiting = Vec::new();
        for write in std::iter::once(first).chain(std::iter::from_fn(|| queue.try_recv().ok())) {
            match write.file {
                FileWrite::Registry(file) => registry = Some(file),
                FileWrite::Thoughts(file) => thoughts = Some(file),
                FileWrite::Ended(file) => ended = Some(file),
            }
            waiting.push(write.done);
        }
        let dir = dir.clone();
        let written = tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            if let Some(file) = registry {
                dir.save_json(&dir.registry_path(), &file)?;
            }
            if let Some(file) = thoughts {
                dir.save_json(&dir.thoughts_path(), &file)?;
            }
            if let Some(file) = ended {
                dir.save_json(&dir.ended_path(), &file)?;
            }
            Ok(())
        })
        .await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!("cannot write state to disk: {e}"),
            Err(e) => tracing::error!("state writer failed: {e}"),
        }
        for done in waiting {
            let _ = done.send(());
        }
    }
}
