//! The supervisor owns the registry (session id -> actor handle): it creates,
//! adopts and deletes sessions, answers queries by asking actors, and runs
//! discovery, the reaper and checkpoints in the background. Features with
//! state of their own are owners it holds (the registry, endings, restore,
//! waits, input, the finder), each reached through its methods; what
//! needs several of them at once is a step of the supervisor's.

mod attach;
mod background;
mod discovery;
mod endings;
mod ends;
mod find;
mod hooks;
mod input;
mod lifecycle;
mod persist;
mod plan;
mod queue;
mod registry;
mod restore;
mod settings;
mod sightings;
mod status_timers;
mod tags;
mod thoughts;
mod types;
mod untracked;
mod wait;

use std::path::Path;
use std::sync::Arc;

use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use endings::{NoHistory, Retention};
pub use hooks::HookOutcome;
pub use persist::StorageReport;
pub use plan::NameFilter;
pub use restore::{RestoreCause, RestoreFailure, RestoreOutcome, TmuxLost};
pub use settings::Settings;
pub use types::*;
pub use untracked::{Untracked, UntrackedWhy};
pub use wait::{MAX_WAIT_MS, PatternError, REGEX_SIZE_LIMIT, WaitLimits};

use crate::id::SessionId;
use crate::metrics::Metrics;
use crate::session::{HookEvent, Region, SessionHandle, SnapshotFormat};
use crate::store::{EventPage, Thought};
use crate::tmux::command::ListSessions;
use crate::tmux::control::PaneId;
use crate::tmux::{CaptureRange, SessionStatus, Tmux, TmuxError};
use crate::wire::Event;
use persist::Persistence;
use registry::Registry;

#[derive(Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

struct Inner {
    tmux: Tmux,
    settings: Arc<Settings>,
    registry: Arc<Registry>,
    persistence: Arc<Persistence>,
    /// Finds a session's actor for a request, waiting out attaches and ends.
    find: find::Finder,
    /// Typing and queued input.
    input: input::Inputs,
    /// Creates, adopts and deletes sessions on request.
    lifecycle: lifecycle::Lifecycle,
    /// The ended sessions kept readable, and `ended.json`.
    endings: Arc<endings::Endings>,
    /// Open waits, their caps, and what `match` waits share.
    waits: wait::Waits,
    /// Brings the sessions lost with their tmux server back.
    revive: restore::Revive,
}

impl Supervisor {
    /// Locks and loads the data dir, restores persisted sessions against the
    /// live tmux ones, adopts the rest, and starts the background loops,
    /// which stop when `cancel` fires. Returns once every session is known
    /// (listed as `starting`); their clients attach in the background.
    pub async fn start(
        tmux: Tmux,
        settings: Settings,
        data_dir: &Path,
        tasks: &TaskTracker,
        cancel: CancellationToken,
        metrics: Metrics,
    ) -> Result<Supervisor, SupervisorError> {
        let (persistence, restored) = Persistence::open(data_dir, metrics.clone())?;
        let persistence = Arc::new(persistence);
        let settings = Arc::new(settings);
        let (events, actor_events) = mpsc::unbounded_channel();
        // A thought under a key that is no session id (a hand edit) is dropped.
        let thoughts = restored
            .thoughts
            .thoughts
            .into_iter()
            .filter_map(|(id, thought)| Some((id.parse().ok()?, thought)))
            .collect();
        let endings = Arc::new(endings::Endings::new(
            restored.ended,
            settings.retention,
            persistence.ended_writer(),
            persistence.scrollback_files(),
        ));
        let registry = Arc::new(Registry::restored(
            restored.registry,
            thoughts,
            endings.ids(),
        ));
        let find = find::Finder::new(registry.clone(), endings.clone());
        let input = input::Inputs::new(
            registry.clone(),
            persistence.clone(),
            endings.clone(),
            find.clone(),
        );
        let waits = wait::Waits::new(
            settings.waits,
            metrics.clone(),
            find.clone(),
            endings.clone(),
        );
        let restore = restore::Restore::new(restored.restore, persistence.restore_writer());
        let restore = Arc::new(restore);
        let ends = ends::Ends::new(
            registry.clone(),
            persistence.clone(),
            restore.clone(),
            endings.clone(),
        );
        let sessions_changed = Arc::new(Notify::new());
        let client_attached = Arc::new(Notify::new());
        let attacher = attach::Attacher {
            tmux: tmux.clone(),
            settings: settings.clone(),
            registry: registry.clone(),
            persistence: persistence.clone(),
            endings: endings.clone(),
            find: find.clone(),
            ends: ends.clone(),
            restore: restore.clone(),
            events,
            actor_ids: attach::ActorIds::default(),
            sessions_changed: sessions_changed.clone(),
            client_attached: client_attached.clone(),
            tasks: tasks.clone(),
            cancel: cancel.clone(),
        };
        let revive = restore::Revive {
            restore: restore.clone(),
            attacher: attacher.clone(),
            tmux: tmux.clone(),
            registry: registry.clone(),
            persistence: persistence.clone(),
            settings: settings.clone(),
            tasks: tasks.clone(),
        };
        let sightings = Arc::new(sightings::Sightings::default());
        let lifecycle = lifecycle::Lifecycle {
            tmux: tmux.clone(),
            settings: settings.clone(),
            registry: registry.clone(),
            sightings: sightings.clone(),
            attacher: attacher.clone(),
            restore: restore.clone(),
            input: input.clone(),
            find: find.clone(),
            endings: endings.clone(),
            ends: ends.clone(),
            persistence: persistence.clone(),
        };
        let discovery = discovery::Discovery {
            tmux: tmux.clone(),
            settings: settings.clone(),
            registry: registry.clone(),
            sightings,
            persistence: persistence.clone(),
            attacher: attacher.clone(),
        };
        let reaper = background::Reaper {
            tmux: tmux.clone(),
            registry: registry.clone(),
            persistence: persistence.clone(),
            input: input.clone(),
            attacher,
            ends,
            restore,
            interval: settings.reaper_interval,
        };
        discovery.discover(discovery::Adoptions::Startup).await;
        tasks.spawn(discovery::discover_often(
            discovery,
            sessions_changed,
            cancel.clone(),
        ));
        tasks.spawn(status_timers::align_after_attaches(
            client_attached,
            registry.clone(),
            tmux.clone(),
            cancel.clone(),
        ));
        tasks.spawn(background::checkpoints(
            settings.checkpoint_interval,
            registry.clone(),
            persistence.clone(),
            endings.clone(),
            cancel.clone(),
        ));
        tasks.spawn(reaper.run(actor_events, cancel, tasks.clone()));
        Ok(Supervisor {
            inner: Arc::new(Inner {
                tmux,
                settings,
                registry,
                persistence,
                find,
                input,
                lifecycle,
                endings,
                waits,
                revive,
            }),
        })
    }

    /// The registry: each of its methods is one short locked section.
    fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    pub fn tmux(&self) -> &Tmux {
        &self.inner.tmux
    }

    /// Where a session created without a directory starts.
    pub fn default_cwd(&self) -> &str {
        &self.inner.settings.default_cwd
    }

    /// Every tracked session's actor (not those still attaching).
    pub fn session_handles(&self) -> Vec<(SessionId, SessionHandle)> {
        self.registry().handles()
    }

    /// Notes which sessions' actors hold a control client (the heat owner),
    /// so commands are lent by those and discovery polls while none does.
    pub fn note_live(&self, live: &std::collections::BTreeMap<SessionId, bool>) {
        self.registry().note_live(live);
    }

    pub fn session_count(&self) -> usize {
        self.registry().tracked_count()
    }

    /// Builds the registry file and queues its write in one locked section,
    /// so writes land in the order the states existed.
    fn persist(&self) -> tokio::sync::oneshot::Receiver<()> {
        self.inner.persistence.write_registry(self.registry())
    }

    /// The handle of a live session and its tmux name; `HasEnded` for an
    /// ended session still kept, else `NotFound`. A session still
    /// attaching is waited for (its attach has a deadline).
    pub async fn handle(&self, id: SessionId) -> Result<(SessionHandle, String), SupervisorError> {
        self.inner.find.handle(id).await
    }

    /// Every live session, and with `ended` those ended within the
    /// retention window, sorted by id: each actor's published summary
    /// (`SessionHandle::summary_now`), no actor asked, so a list of a
    /// thousand costs what reading a thousand summaries does.
    pub async fn list(&self, ended: bool) -> Vec<SessionSummary> {
        let handles = self.registry().handles();
        let answers = handles
            .into_iter()
            .map(|(id, handle)| (id, handle.summary_now()))
            .collect();
        let mut sessions = self.registry().list(answers);
        if ended {
            let live: std::collections::BTreeSet<SessionId> =
                sessions.iter().map(|s| s.session_id).collect();
            let ended = self.inner.endings.summaries().into_iter();
            sessions.extend(ended.filter(|s| !live.contains(&s.session_id)));
            sessions.sort_by_key(|s| s.session_id);
        }
        sessions
    }

    /// A live session's summary, or the last one of an ended session
    /// still kept.
    pub async fn get(&self, id: SessionId) -> Result<SessionSummary, SupervisorError> {
        self.inner.find.summary(id).await
    }

    /// Answers as soon as `until` holds (at once if it already does), or
    /// `Timeout` after `timeout_ms`.
    pub async fn wait(
        &self,
        id: SessionId,
        until: Until,
        timeout_ms: u64,
    ) -> Result<WaitOutcome, SupervisorError> {
        self.inner.waits.wait(id, until, timeout_ms).await
    }

    /// Compiles a `match` wait's regex: within `REGEX_SIZE_LIMIT`, on a
    /// blocking thread, a few at a time.
    pub async fn compile_match(
        &self,
        pattern: &str,
    ) -> Result<std::sync::Arc<regex::Regex>, PatternError> {
        self.inner.waits.compile_match(pattern).await
    }

    /// Makes a tmux session (its name, directory, size, command and
    /// environment checked first) and tracks it.
    pub async fn create(&self, request: CreateSession) -> Result<SessionSummary, SupervisorError> {
        self.inner.lifecycle.create(request).await
    }

    /// Tracks an existing tmux session, reusing its old id if it had one.
    pub async fn adopt(
        &self,
        tmux_name: &str,
        session_id: Option<SessionId>,
    ) -> Result<SessionSummary, SupervisorError> {
        self.inner.lifecycle.adopt(tmux_name, session_id).await
    }

    /// Stops tracking a session (detach) or kills it; an ended session
    /// still kept is removed.
    pub async fn delete(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        self.inner.lifecycle.delete(id, mode).await
    }

    /// The live screen, or an ended session's last one.
    pub async fn snapshot(
        &self,
        id: SessionId,
        format: SnapshotFormat,
        region: Region,
    ) -> Result<ScreenServed, SupervisorError> {
        let live = match self.handle(id).await {
            Ok((handle, _)) => handle.snapshot(format, region).await.ok(),
            Err(_) => None,
        };
        match live {
            Some(snapshot) => Ok(ScreenServed {
                snapshot,
                ended: false,
            }),
            None => {
                self.inner.find.until_retained(id).await;
                let snapshot = self.inner.endings.last_screen(id, format, region)?;
                Ok(ScreenServed {
                    snapshot,
                    ended: true,
                })
            }
        }
    }

    /// Sets the window size (an explicit request; tmuxd never resizes on its own).
    pub async fn resize(
        &self,
        id: SessionId,
        cols: u16,
        rows: u16,
    ) -> Result<SessionSummary, SupervisorError> {
        check_size(cols, rows)?;
        let (handle, _) = self.handle(id).await?;
        let resized = handle
            .resize(cols, rows)
            .await
            .map_err(SupervisorError::gone(id))?;
        resized.map_err(|message| tmux_refused(id, "resize-window", message))?;
        // tmux announces the new layout after its reply, so the actor may
        // not know it yet: the answer says the size tmux just took.
        let mut summary = self.get(id).await?;
        summary.actor.cols = cols;
        summary.actor.rows = rows;
        Ok(summary)
    }

    /// Older lines from tmux's own history, oldest first; for an ended
    /// session, the last of those its end kept.
    pub async fn scrollback(
        &self,
        id: SessionId,
        lines: usize,
    ) -> Result<Scrollback, SupervisorError> {
        let max = self.inner.settings.max_scrollback_lines;
        if lines == 0 || lines > max {
            return Err(SupervisorError::BadRequest(format!(
                "lines must be between 1 and {max}"
            )));
        }
        let name = match self.handle(id).await {
            Ok((_, name)) => name,
            Err(SupervisorError::HasEnded(_)) => {
                return self.inner.endings.scrollback(id, lines).await;
            }
            Err(e) => return Err(e),
        };
        match self
            .tmux()
            .capture_pane(&name, CaptureRange::History { lines })
            .await
        {
            Ok(lines) => Ok(Scrollback {
                lines,
                ended: false,
                missing: None,
            }),
            Err(e) => match self.unless_ended(id, &name, e).await {
                SupervisorError::Gone(_) => {
                    self.inner.find.until_retained(id).await;
                    self.inner.endings.scrollback(id, lines).await
                }
                e => Err(e),
            },
        }
    }

    /// What a failed fork of tmux for session `name` means: the session
    /// ended while tmux was asked (killed from outside, its server gone),
    /// which is `Gone` (404) and not tmux's failure (502); else `error`.
    async fn unless_ended(&self, id: SessionId, name: &str, error: TmuxError) -> SupervisorError {
        if error.is_missing_session() {
            return SupervisorError::Gone(id.to_string());
        }
        match self.tmux().session_status(name).await {
            Ok(SessionStatus::Gone | SessionStatus::NoServer) => {
                SupervisorError::Gone(id.to_string())
            }
            _ => error.into(),
        }
    }

    /// Types text, then keys, then Enter, through tmux so the order holds;
    /// or queues the text until the session is ready for it.
    pub async fn input(
        &self,
        id: SessionId,
        input: Input,
    ) -> Result<InputOutcome, SupervisorError> {
        self.inner.input.send(id, input).await
    }

    /// Raw bytes from a stream client, written to the program in the pane.
    pub async fn write_raw(&self, id: SessionId, bytes: &[u8]) -> Result<(), SupervisorError> {
        self.inner.input.write_raw(id, bytes).await
    }

    /// Types an answer only while the attention raised at `since` is up.
    pub async fn answer(
        &self,
        id: SessionId,
        since: chrono::DateTime<chrono::Utc>,
        text: Option<&str>,
        keys: &[String],
    ) -> Result<(), SupervisorError> {
        self.inner.input.answer(id, since, text, keys).await
    }

    /// The items queued for a session, oldest first.
    pub fn queued(&self, id: SessionId) -> Result<Vec<QueueItem>, SupervisorError> {
        self.inner.input.queued(id)
    }

    /// Takes queued item `n` out, unless its typing has begun.
    pub async fn cancel_queued(&self, id: SessionId, n: u64) -> Result<QueueItem, SupervisorError> {
        self.inner.input.cancel_queued(id, n).await
    }

    /// Stores an external status; an older one (by `updated_at`) never
    /// replaces a newer one. Returns the thought in force and whether this
    /// update was applied.
    pub async fn put_thought(
        &self,
        id: SessionId,
        update: ThoughtUpdate,
    ) -> Result<(Thought, bool), SupervisorError> {
        let now = chrono::Utc::now();
        let thought = thoughts::checked_thought(update, now)?;
        let (_, name) = self.handle(id).await?;
        Ok(self.inner.input.put_thought(id, name, thought, now).await)
    }

    /// Applies a coding agent's hook `event` to the session whose window
    /// holds `pane`: its detector is told, and its message becomes the
    /// session's thought.
    pub async fn hook(
        &self,
        pane: PaneId,
        event: HookEvent,
    ) -> Result<HookOutcome, SupervisorError> {
        let (id, handle) = hooks::session_of_pane(self.registry(), self.tmux(), pane).await?;
        let view = match event.hook {
            Some(hook) => Some(handle.hook(hook).await.map_err(SupervisorError::gone(id))?),
            None => None,
        };
        if let Some(update) = hooks::hook_thought(&event.name, event.message) {
            self.put_thought(id, update).await?;
        }
        Ok(HookOutcome {
            session_id: id,
            view,
        })
    }

    /// The tmux sessions tmuxd does not track, asked of tmux now (over a
    /// tracked session's control client when there is one); none when no
    /// tmux server runs.
    pub async fn untracked(&self) -> Result<Vec<Untracked>, SupervisorError> {
        let lender = self.registry().any_handle_except(None);
        let listing = match self.tmux().run_routed(&ListSessions, lender.as_ref()).await {
            Ok(listing) => listing,
            Err(e) if e.is_missing_session() => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let tracked = self.registry().tracked();
        let filter = &self.inner.settings.filter;
        Ok(untracked::plan_untracked(&listing, &tracked, filter))
    }

    /// Whether the tmux server was lost with sessions still to restore.
    pub fn tmux_lost(&self) -> Option<TmuxLost> {
        self.inner.revive.tmux_lost()
    }

    /// Once the daemon is up (the notifier listening): says that tmux was
    /// found lost at startup, and with `restore_now` (`restore.on_start`)
    /// restores the lost sessions in the background.
    pub fn after_start(&self, restore_now: bool) {
        self.inner.revive.after_start(restore_now);
    }

    /// Restores the lost sessions named in `ids` (every lost one when
    /// `None`); see `Revive::restore_lost`.
    pub async fn restore_lost(
        &self,
        ids: Option<&[SessionId]>,
        cause: RestoreCause,
    ) -> Result<RestoreOutcome, SupervisorError> {
        self.inner.revive.restore_lost(ids, cause).await
    }

    /// Whether the data dir takes writes, for health and metrics.
    pub fn storage_report(&self) -> StorageReport {
        self.inner.persistence.storage_report()
    }

    pub fn events_since(&self, since: u64) -> (Vec<Event>, bool) {
        self.inner.persistence.events_since(since)
    }

    /// One page of retained events after `since` (`EventLog::page`).
    pub fn events_page(&self, since: u64, limit: usize, max_bytes: usize) -> EventPage {
        self.inner.persistence.events_page(since, limit, max_bytes)
    }

    /// Live events plus the retained ones after `since`, with nothing lost between.
    pub fn follow_events(
        &self,
        since: u64,
    ) -> (tokio::sync::broadcast::Receiver<Event>, Vec<Event>, bool) {
        self.inner.persistence.follow_events(since)
    }

    /// Records an event from outside the supervisor (a fleet peer's, fanned in).
    pub fn record_event(&self, event: crate::store::NewEvent) -> Event {
        self.inner.persistence.record(event)
    }

    pub fn next_event_seq(&self) -> u64 {
        self.inner.persistence.next_event_seq()
    }

    /// Ends every actor's tmux client cleanly (sessions stay alive) and
    /// flushes the registry and the event log.
    pub async fn shutdown(&self) {
        let handles = self.registry().close();
        futures::future::join_all(handles.iter().map(SessionHandle::shutdown)).await;
        // An attention raised just before the stop may not have reached the
        // registry through the event loop; the actor's last summary has it.
        for (id, handle) in self.registry().handles() {
            if let Some(summary) = handle.summary_now() {
                self.registry().keep_last_attention(id, summary.attention);
            }
        }
        let _ = self.persist().await;
        self.inner.persistence.close();
    }
}
