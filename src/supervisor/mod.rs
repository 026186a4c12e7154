//! The supervisor owns the registry (session id -> actor handle): it creates,
//! adopts and deletes sessions, answers queries by asking actors, and runs
//! discovery, the reaper and checkpoints in the background.

mod background;
mod lifecycle;
mod persist;
mod plan;
mod registry;
mod types;

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use plan::NameFilter;
pub use registry::{format_id, parse_id};
pub use types::*;

use crate::config::Config;
use crate::session::{
    ActorConfig, ActorSummary, ClientExited, Region, SessionHandle, Snapshot, SnapshotFormat,
};
use crate::store::{Event, RegistryFile};
use crate::tmux::{CaptureRange, Tmux, validate_key};
use persist::Persistence;
use registry::Registry;

/// How long a list waits for each actor before serving its last known summary.
const SUMMARY_TIMEOUT: Duration = Duration::from_millis(500);

/// Supervisor settings, taken from the config.
#[derive(Clone, Debug)]
pub struct Settings {
    pub max_sessions: usize,
    pub discovery_interval: Duration,
    pub reaper_interval: Duration,
    pub checkpoint_interval: Duration,
    pub filter: NameFilter,
    pub actor: ActorConfig,
    pub max_scrollback_lines: usize,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        Settings {
            max_sessions: config.max_sessions,
            discovery_interval: Duration::from_millis(config.discovery.interval_ms),
            reaper_interval: Duration::from_millis(config.reaper.interval_ms),
            checkpoint_interval: Duration::from_secs(config.checkpoint_interval_s),
            filter: NameFilter::new(&config.discovery.include, &config.discovery.exclude),
            actor: ActorConfig {
                replay_bytes: config.session.replay_bytes,
                subscriber_queue: config.session.subscriber_queue,
                idle_after: Duration::from_millis(config.state.idle_after_ms),
            },
            max_scrollback_lines: config.session.max_scrollback_lines,
        }
    }
}

#[derive(Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

struct Inner {
    tmux: Tmux,
    settings: Settings,
    registry: Mutex<Registry>,
    persistence: Persistence,
    exits: mpsc::UnboundedSender<ClientExited>,
    next_actor_id: AtomicU64,
    /// Actors wake this when tmux redrew their client (see `session::redraw`).
    layout_hint: Arc<Notify>,
}

impl Supervisor {
    /// Locks and loads the data dir, restores persisted sessions against the
    /// live tmux ones, adopts the rest, and starts the background loops,
    /// which stop when `cancel` fires.
    pub async fn start(
        tmux: Tmux,
        settings: Settings,
        data_dir: &Path,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> Result<Supervisor, SupervisorError> {
        let (persistence, file) = Persistence::open(data_dir)?;
        let (exits, exited) = mpsc::unbounded_channel();
        let mut registry = Registry::new(file.next_session_counter);
        registry.restore_pending = Some(file);
        let supervisor = Supervisor {
            inner: Arc::new(Inner {
                tmux,
                settings,
                registry: Mutex::new(registry),
                persistence,
                exits,
                next_actor_id: AtomicU64::new(1),
                layout_hint: Arc::new(Notify::new()),
            }),
        };
        supervisor.discover().await;
        background::spawn_loops(&supervisor, exited, tasks, cancel);
        Ok(supervisor)
    }

    /// The registry lock: held only in short synchronous sections, never
    /// across an `.await` (a std mutex held there would block other tasks'
    /// threads, and the guard is not `Send` anyway).
    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.inner.registry.lock().expect("registry lock poisoned")
    }

    pub fn tmux(&self) -> &Tmux {
        &self.inner.tmux
    }

    pub fn data_dir(&self) -> &Path {
        self.inner.persistence.data_dir()
    }

    pub fn session_count(&self) -> usize {
        self.registry().sessions.len()
    }

    /// Builds the registry file and queues its write in one locked section,
    /// so writes land in the order the states existed.
    fn persist(&self) -> tokio::sync::oneshot::Receiver<()> {
        let registry = self.registry();
        self.inner.persistence.queue_registry(registry.to_file())
    }

    /// The handle of a live session, or `NotFound`.
    fn handle(&self, session_id: &str) -> Result<(SessionHandle, String), SupervisorError> {
        let not_found = || SupervisorError::NotFound(session_id.to_owned());
        let id = parse_id(session_id).ok_or_else(not_found)?;
        let registry = self.registry();
        let entry = registry.sessions.get(&id).ok_or_else(not_found)?;
        Ok((entry.handle.clone(), entry.tmux_name.clone()))
    }

    /// Every live session, sorted by id. Actors are asked in parallel; one
    /// that does not answer in time is shown with its last known summary.
    pub async fn list(&self) -> Vec<SessionSummary> {
        let handles: Vec<(u64, SessionHandle)> = self
            .registry()
            .sessions
            .values()
            .map(|e| (e.id, e.handle.clone()))
            .collect();
        let answers =
            futures::future::join_all(handles.into_iter().map(|(id, handle)| async move {
                (
                    id,
                    tokio::time::timeout(SUMMARY_TIMEOUT, handle.summary()).await,
                )
            }))
            .await;
        let mut registry = self.registry();
        let mut summaries = Vec::with_capacity(answers.len());
        for (id, answer) in answers {
            let Some(entry) = registry.sessions.get_mut(&id) else {
                continue;
            };
            match answer {
                Ok(Ok(actor)) => {
                    let summary = summarize(entry, actor);
                    entry.last_summary = Some(summary.clone());
                    summaries.push(summary);
                }
                _ => summaries.extend(entry.last_summary.clone()),
            }
        }
        summaries
    }

    pub async fn get(&self, session_id: &str) -> Result<SessionSummary, SupervisorError> {
        let (handle, _) = self.handle(session_id)?;
        let actor = handle
            .summary()
            .await
            .map_err(SupervisorError::gone(session_id))?;
        let id = parse_id(session_id).unwrap_or_default();
        let mut registry = self.registry();
        let entry = registry
            .sessions
            .get_mut(&id)
            .ok_or_else(|| SupervisorError::Gone(session_id.to_owned()))?;
        let summary = summarize(entry, actor);
        entry.last_summary = Some(summary.clone());
        Ok(summary)
    }

    pub async fn snapshot(
        &self,
        session_id: &str,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<Snapshot, SupervisorError> {
        let (handle, _) = self.handle(session_id)?;
        handle
            .snapshot(format, region)
            .await
            .map_err(SupervisorError::gone(session_id))
    }

    /// Types text, then keys, then Enter, through tmux so the order holds.
    pub async fn input(&self, session_id: &str, input: Input) -> Result<(), SupervisorError> {
        let text = input.text.as_deref().filter(|t| !t.is_empty());
        if text.is_none() && input.keys.is_empty() && !input.submit {
            return Err(SupervisorError::BadRequest(
                "nothing to send: give text, keys or submit".into(),
            ));
        }
        if text.is_some_and(|t| t.contains('\0')) {
            return Err(SupervisorError::BadRequest(
                "text contains a NUL byte".into(),
            ));
        }
        for key in &input.keys {
            validate_key(key)?;
        }
        let (_, name) = self.handle(session_id)?;
        let tmux = self.tmux();
        if let Some(text) = text {
            tmux.send_text(&name, text).await?;
        }
        if !input.keys.is_empty() {
            tmux.send_keys(&name, &input.keys).await?;
        }
        if input.submit {
            tmux.send_keys(&name, &["Enter".to_owned()]).await?;
        }
        Ok(())
    }

    /// Sets the window size (an explicit request; tmuxd never resizes on its own).
    pub async fn resize(
        &self,
        session_id: &str,
        cols: u16,
        rows: u16,
    ) -> Result<SessionSummary, SupervisorError> {
        check_size(cols, rows)?;
        let (handle, name) = self.handle(session_id)?;
        self.tmux().resize_window(&name, cols, rows).await?;
        if let Some(view) = self.view_of(&name).await? {
            handle.update_view(view);
        }
        self.get(session_id).await
    }

    /// Older lines from tmux's own history, oldest first.
    pub async fn scrollback(
        &self,
        session_id: &str,
        lines: usize,
    ) -> Result<Vec<String>, SupervisorError> {
        let max = self.inner.settings.max_scrollback_lines;
        if lines == 0 || lines > max {
            return Err(SupervisorError::BadRequest(format!(
                "lines must be between 1 and {max}"
            )));
        }
        let (_, name) = self.handle(session_id)?;
        Ok(self
            .tmux()
            .capture_pane(&name, CaptureRange::History { lines })
            .await?)
    }

    pub fn events_since(&self, since: u64) -> (Vec<Event>, bool) {
        self.inner.persistence.events_since(since)
    }

    pub fn subscribe_events(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.inner.persistence.subscribe_events()
    }

    /// Ends every actor's tmux client cleanly (sessions stay alive) and
    /// flushes the registry and the event log.
    pub async fn shutdown(&self) {
        let handles: Vec<SessionHandle> = self
            .registry()
            .sessions
            .values()
            .map(|e| e.handle.clone())
            .collect();
        futures::future::join_all(handles.iter().map(SessionHandle::shutdown)).await;
        let _ = self.persist().await;
        self.inner.persistence.sync_events();
    }

    /// The registry as it would be written now (for tests and `doctor`).
    pub fn registry_file(&self) -> RegistryFile {
        self.registry().to_file()
    }
}

fn summarize(entry: &registry::Entry, actor: ActorSummary) -> SessionSummary {
    SessionSummary {
        session_id: format_id(entry.id),
        tmux_name: entry.tmux_name.clone(),
        state: actor.state,
        state_reason: actor.state_reason,
        state_since: actor.state_since,
        current_command: actor.current_command,
        cwd: actor.cwd,
        title: actor.title,
        cols: actor.cols,
        rows: actor.rows,
        created_at: entry.created_at,
        last_activity_at: actor.last_activity_at,
        transport: actor.transport,
        subscribers: actor.subscribers,
        latest_seq: actor.latest_seq,
        queued_inputs: 0,
        thought: None,
    }
}

pub fn check_size(cols: u16, rows: u16) -> Result<(), SupervisorError> {
    let ok = |n: u16| (MIN_SIZE..=MAX_SIZE).contains(&n);
    if ok(cols) && ok(rows) {
        Ok(())
    } else {
        Err(SupervisorError::BadRequest(format!(
            "cols and rows must be between {MIN_SIZE} and {MAX_SIZE} (got {cols}x{rows})"
        )))
    }
}
