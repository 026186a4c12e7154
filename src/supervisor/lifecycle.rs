//! How a session enters and leaves the registry: create, adopt, re-attach,
//! delete (detach or kill) and end. Every path reserves its id and name
//! first, runs tmux outside the lock, then commits in one locked section.

use std::path::Path;
use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use super::Supervisor;
use super::queue::dropped_input;
use super::registry::{Commit, MarkEnding, NewEntry, Reservation, restore_attention};
use super::tags;
use super::types::{
    CreateSession, DeleteMode, DeleteOutcome, MAX_COMMAND_BYTES, SessionSummary, SupervisorError,
    check_input_size, check_size,
};
use crate::id::SessionId;
use crate::session::{
    ActorSpec, ActorSummary, Attention, EndHistory, ExitUnknown, SessionState, Spawned,
};
use crate::session::{StateReason, StateView};
use crate::store::{NewEvent, PersistedAttention, QueuedInput};
use crate::tmux::control::{ControlError, ControlOptions, TmuxSessionId};
use crate::tmux::{
    CaptureRange, NewSession, SessionStatus, SessionView, session_views, validate_session_name,
};
use crate::wire::{Adopted, Deleted, Exit, Payload, Renamed};

/// Tries at picking a free numeric name when tmux has one we had not seen.
const AUTO_NAME_TRIES: usize = 5;

pub use crate::session::EndReason;

/// A tmux session about to get an actor.
pub(super) struct Attach {
    pub(super) reservation: Reservation,
    pub(super) view: SessionView,
    pub(super) created_at: DateTime<Utc>,
    pub(super) command: Option<String>,
    pub(super) cwd: Option<String>,
    /// Input still queued from before (a restart or a detach).
    pub(super) queue: Vec<QueuedInput>,
    /// tmux already carries the session's id (see `tags`).
    pub(super) tagged: bool,
    /// Attention raised before (a restart or a detach).
    pub(super) attention: Option<PersistedAttention>,
    /// tmuxd just made it with `remain-on-exit`: it cannot close during
    /// the handshake, so the attach need not wait for a quiet server.
    pub(super) kept_exit: bool,
    /// The state a previous run of tmuxd last recorded, and since when.
    pub(super) previous_state: Option<(SessionState, DateTime<Utc>)>,
}

/// What a new actor takes over from the one before it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Carried {
    pub(super) attention: Option<Attention>,
    pub(super) state: Option<(SessionState, DateTime<Utc>)>,
}

/// The state of an actor gone before it could be watched (its exit is on
/// its way to the reaper): `starting`, as before it said anything.
pub(super) fn state_unknown(attention: Option<Attention>) -> watch::Receiver<StateView> {
    let view = StateView {
        state: SessionState::Starting,
        reason: StateReason::Attaching,
        since: Utc::now(),
        attention,
        acknowledged_by: None,
    };
    watch::channel(view).1
}

/// The view tmux draws before discovery has looked at a session.
pub(super) fn default_view(name: &str) -> SessionView {
    SessionView {
        name: name.to_owned(),
        cols: 80,
        rows: 24,
        status_lines: 1,
        status_top: false,
        current_command: String::new(),
        cwd: String::new(),
        title: String::new(),
        dead: false,
        alternate_on: false,
        pid: None,
        active_pane: None,
    }
}

impl Supervisor {
    pub async fn create(&self, request: CreateSession) -> Result<SessionSummary, SupervisorError> {
        validate_create(&request)?;
        let max = self.inner.settings.max_sessions;
        let names = self.inner.sightings.names();
        let mut reservation = self
            .registry()
            .reserve_new(request.name.as_deref(), max, &names)?;
        let mut tries = 0;
        let made = loop {
            let tag = reservation.id().to_string();
            let new = NewSession {
                name: reservation.tmux_name(),
                cwd: Some(request.cwd.as_deref().unwrap_or(self.default_cwd())),
                size: request.size,
                command: request.command.as_deref(),
                keep_exit: true,
                tag: Some(&tag),
                env: &self.inner.settings.session_env,
            };
            match self.tmux().new_session(&new).await {
                Ok(made) => break made,
                Err(e)
                    if e.is_duplicate_session()
                        && request.name.is_none()
                        && tries < AUTO_NAME_TRIES =>
                {
                    tries += 1;
                    reservation = self.next_free_name(reservation);
                }
                Err(e) => {
                    return Err(match e.is_duplicate_session() {
                        true => SupervisorError::NameTaken(reservation.tmux_name().to_owned()),
                        false => e.into(),
                    });
                }
            }
        };
        let name = reservation.tmux_name().to_owned();
        let (view, tagged) = match made.tagged_panes {
            Some(panes) => (session_views(&panes).remove(&name), true),
            None => tags::view_tagging(self.tmux(), &name, reservation.id())
                .await
                .unwrap_or((None, false)),
        };
        let view = view.unwrap_or_else(|| default_view(&name));
        let kept_exit = made.kept_exit;
        let attach = Attach {
            reservation,
            view,
            created_at: Utc::now(),
            command: request.command.clone(),
            cwd: request.cwd.clone(),
            queue: Vec::new(),
            tagged,
            attention: None,
            kept_exit,
            previous_state: None,
        };
        let summary = match self
            .attach(
                attach,
                NewEvent::new(Payload::SessionCreated).reason("api_create"),
            )
            .await
        {
            Ok(summary) => summary,
            Err(e) => {
                // Nothing may be left behind by a failed create.
                let _ = self.tmux().kill_session(&name).await;
                return Err(e);
            }
        };
        self.inner.restore.created(
            summary.session_id,
            &summary.tmux_name,
            request.restore,
            request.resume_command.clone(),
            request.command.clone(),
        );
        if let Some(input) = request.initial_input.as_deref().filter(|i| !i.is_empty()) {
            let typed = match self.inner.input.typist(summary.session_id).await {
                Ok(typist) => typist.type_in(Some(input), &[], true).await,
                Err(e) => Err(e),
            };
            if let Err(e) = typed {
                tracing::warn!(session = %summary.session_id, "typing the initial input failed: {e}");
            }
        }
        Ok(summary)
    }

    /// Tracks an existing tmux session, reusing its old id if it had one.
    pub async fn adopt(
        &self,
        tmux_name: &str,
        session_id: Option<SessionId>,
    ) -> Result<SessionSummary, SupervisorError> {
        validate_session_name(tmux_name).map_err(|reason| SupervisorError::InvalidName {
            name: tmux_name.to_owned(),
            reason,
        })?;
        let max = self.inner.settings.max_sessions;
        let reservation = self
            .registry()
            .reserve_existing(tmux_name, None, Some(max))?;
        if let Some(wanted) = session_id.filter(|wanted| *wanted != reservation.id()) {
            return Err(SupervisorError::BadRequest(format!(
                "session_id {wanted} does not belong to tmux session {tmux_name:?}"
            )));
        }
        let (view, tagged) =
            match tags::view_tagging(self.tmux(), tmux_name, reservation.id()).await? {
                (Some(view), tagged) => (view, tagged),
                (None, _) => return Err(SupervisorError::NoSuchTmuxSession(tmux_name.to_owned())),
            };
        self.adopt_with_view(reservation, view, tagged, "api_adopt")
            .await
    }

    /// Takes the id and name of a session discovery found; a full
    /// registry refuses it (said once in the log).
    pub(super) fn reserve_discovered(
        &self,
        name: &str,
        tmux_id: Option<TmuxSessionId>,
    ) -> Option<Reservation> {
        let max = self.inner.settings.max_sessions;
        match self.registry().reserve_existing(name, tmux_id, Some(max)) {
            Ok(reservation) => Some(reservation),
            Err(SupervisorError::Capacity { max }) => {
                if self.inner.sightings.refuse(name) {
                    tracing::warn!(tmux_name = %name, "not adopting: {max} sessions tracked already");
                }
                None
            }
            Err(_) => None,
        }
    }

    /// tmux had the reservation's numeric name: it is noted, and the next
    /// free one taken.
    fn next_free_name(&self, reservation: Reservation) -> Reservation {
        let taken = reservation.tmux_name().to_owned();
        self.inner.sightings.note_name(taken);
        let names = self.inner.sightings.names();
        self.registry().rename_reservation(reservation, &names)
    }

    /// Lists a session discovery found and reserved as `starting` now, and
    /// adopts it in a task of its own (which a stopping daemon drops).
    pub(super) fn adopt_discovered(&self, reservation: Reservation, view: SessionView) {
        let attach = self.adoption(reservation, view, false);
        let announced = self.announce(&attach);
        let supervisor = self.clone();
        let cancel = self.inner.cancel.clone();
        self.inner.tasks.spawn(async move {
            let event =
                NewEvent::new(Payload::SessionAdopted(Adopted::default())).reason("discovered");
            let adopted = tokio::select! {
                _ = cancel.cancelled() => return,
                adopted = supervisor.attach_announced(attach, announced, event) => adopted,
            };
            if let Err(e) = adopted
                && !supervisor.registry().is_closing()
            {
                tracing::warn!("adopting a discovered session failed: {e}");
            }
        });
    }

    async fn adopt_with_view(
        &self,
        reservation: Reservation,
        view: SessionView,
        tagged: bool,
        reason: &str,
    ) -> Result<SessionSummary, SupervisorError> {
        let attach = self.adoption(reservation, view, tagged);
        self.attach(
            attach,
            NewEvent::new(Payload::SessionAdopted(Adopted::default())).reason(reason),
        )
        .await
    }

    /// What adopting an existing session takes over from a record of it
    /// kept while it was detached.
    fn adoption(&self, reservation: Reservation, view: SessionView, tagged: bool) -> Attach {
        let known = self.registry().detached(reservation.tmux_name());
        Attach {
            reservation,
            view,
            created_at: known.as_ref().map_or_else(Utc::now, |k| k.created_at),
            command: known.as_ref().and_then(|k| k.command.clone()),
            cwd: known.as_ref().and_then(|k| k.cwd.clone()),
            attention: known.as_ref().and_then(|k| k.attention.clone()),
            queue: known.map(|k| k.queued_inputs).unwrap_or_default(),
            tagged,
            kept_exit: false,
            previous_state: None,
        }
    }

    pub async fn delete(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        let name = match self.handle(id).await {
            Ok((_, name)) => name,
            // Its screens and history may hold secrets: gone on request.
            Err(SupervisorError::HasEnded(_)) => return self.remove_ended(id, mode).await,
            Err(e) => return Err(e),
        };
        match mode {
            DeleteMode::Detach => {
                let entry = self
                    .registry()
                    .detach(id)
                    .ok_or_else(|| SupervisorError::NotFound(id.to_string()))?;
                entry.handle().release().await;
                self.record(
                    NewEvent::new(Payload::SessionDetached).reason("api_delete"),
                    id,
                    entry.tmux_name(),
                );
                self.inner.restore.forget(id);
                let _ = self.persist().await;
            }
            DeleteMode::Kill => {
                self.registry().mark_ending(id).map_err(|e| match e {
                    MarkEnding::NotTracked => SupervisorError::NotFound(id.to_string()),
                    MarkEnding::AlreadyEnding => SupervisorError::Gone(id.to_string()),
                })?;
                let history = self.history_before_kill(&name).await;
                if let Err(e) = self.tmux().kill_session(&name).await
                    && !e.is_missing_session()
                {
                    // The session may still be running: keep tracking it.
                    self.registry().unmark_ending(id);
                    return Err(e.into());
                }
                self.inner
                    .ends
                    .end_with_history(id, None, EndReason::ApiKill, history)
                    .await;
            }
        }
        let tmux_alive = self.tmux().has_session(&name).await.unwrap_or(false);
        Ok(DeleteOutcome {
            session_id: id,
            mode,
            tmux_alive,
        })
    }

    /// Removes an ended session still kept: its record and history go,
    /// and a `session_removed` event says so. Nothing of it is served after.
    async fn remove_ended(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        let summary = self.inner.endings.discard(id).await?;
        let removed = NewEvent::new(Payload::SessionRemoved).reason("api_delete");
        self.record(removed, id, &summary.tmux_name);
        Ok(DeleteOutcome {
            session_id: id,
            mode,
            tmux_alive: false,
        })
    }

    /// The active pane's history, read before tmuxd kills the session, for
    /// its ended record; None when none is kept.
    async fn history_before_kill(&self, name: &str) -> Option<EndHistory> {
        let lines = self.inner.settings.actor.ended_scrollback_lines;
        if lines == 0 {
            return None;
        }
        let range = CaptureRange::History { lines };
        Some(match self.tmux().capture_pane(name, range).await {
            Ok(lines) => EndHistory::Captured(lines),
            Err(e) => EndHistory::Refused(e.to_string()),
        })
    }

    /// Starts the actor and commits the reservation as a tracked session.
    pub(super) async fn attach(
        &self,
        attach: Attach,
        event: NewEvent,
    ) -> Result<SessionSummary, SupervisorError> {
        let announced = self.announce(&attach);
        self.attach_announced(attach, announced, event).await
    }

    /// Lists the session as `starting` until the guard drops, so a session
    /// whose attach waits its turn (see `control::pace`) is listed at once.
    pub(super) fn announce(&self, attach: &Attach) -> Attaching {
        // Items whose typing had begun are reported, not queued (below).
        let queued = attach.queue.iter().filter(|i| !i.started).count();
        self.attaching(&attach.reservation, &attach.view, attach.created_at, queued)
    }

    /// `attach` for a session already listed as `starting` (`announce`).
    pub(super) async fn attach_announced(
        &self,
        attach: Attach,
        _announced: Attaching,
        event: NewEvent,
    ) -> Result<SessionSummary, SupervisorError> {
        let Attach {
            reservation,
            view,
            created_at,
            command,
            cwd,
            queue,
            tagged,
            attention,
            kept_exit,
            previous_state,
        } = attach;
        let attention: Option<Attention> = attention.as_ref().and_then(restore_attention);
        // An item whose typing began before tmuxd stopped may be partly
        // typed: it is reported, never typed again.
        let (interrupted, queue): (Vec<_>, Vec<_>) = queue.into_iter().partition(|i| i.started);
        let id = reservation.id();
        let actor_id = self.inner.next_actor_id.fetch_add(1, Ordering::Relaxed);
        let spawned = match self
            .spawn_actor(
                id,
                actor_id,
                &view.name,
                Carried {
                    attention,
                    state: previous_state,
                },
                !kept_exit,
            )
            .await
        {
            Ok(spawned) => spawned,
            Err(e) => {
                let name = reservation.tmux_name().to_owned();
                drop(reservation);
                let gone = matches!(
                    self.tmux().session_status(&view.name).await,
                    Ok(SessionStatus::Gone | SessionStatus::NoServer)
                );
                return match gone {
                    true => Ok(self
                        .ended_at_once(id, &name, &view, (created_at, kept_exit), event)
                        .await),
                    false => Err(e.into()),
                };
            }
        };
        let handle = spawned.handle;
        // Asked before the session is tracked: a session that ends at once
        // is reaped right away, and its creator still gets its summary.
        let actor = handle.summary().await.ok();
        let state = handle
            .watch_state()
            .await
            .unwrap_or_else(|_| state_unknown(attention));
        let name = reservation.tmux_name().to_owned();
        if !tagged {
            tags::tag_sessions(self.tmux(), vec![(name.clone(), id)]);
        }
        self.record(event, id, &name);
        for item in &interrupted {
            self.record(dropped_input(item, "interrupted"), id, &name);
        }
        let new = NewEntry {
            tmux_id: spawned.tmux_id,
            created_at,
            command,
            cwd,
            handle,
            actor_id,
            view: state,
            queue,
        };
        let gone = || SupervisorError::Gone(id.to_string());
        match self.registry().commit(reservation, new, actor) {
            Commit::Tracked { summary, renamed } => {
                // Adopted again under its old id: it is live, not ended
                // (and most often was never kept: nothing to discard).
                let _ = self.inner.endings.discard(id).await;
                if let Some((old, new)) = renamed {
                    self.record_rename(id, &old, &new);
                }
                let _ = self.persist().await;
                summary.map(|s| *s).ok_or_else(gone)
            }
            // The daemon is stopping and has let every other client go.
            Commit::Closing(handle) => {
                handle.shutdown().await;
                Err(gone())
            }
        }
    }

    /// Lists the session as `starting` until the guard drops (attached or not).
    fn attaching(
        &self,
        reservation: &Reservation,
        view: &SessionView,
        created_at: DateTime<Utc>,
        queued_inputs: usize,
    ) -> Attaching {
        let now = Utc::now();
        let summary = SessionSummary {
            session_id: reservation.id(),
            tmux_name: reservation.tmux_name().to_owned(),
            created_at,
            ended_at: None,
            queued_inputs,
            thought: None,
            actor: ActorSummary::without_client(
                SessionState::Starting,
                StateReason::Attaching,
                now,
                (view.cols, view.rows),
            ),
        };
        self.registry().begin_attach(summary);
        Attaching {
            supervisor: self.clone(),
            id: reservation.id(),
        }
    }

    /// A session whose program ended before a client could attach: its
    /// creation and its end are both recorded, it is kept as ended (without
    /// a screen: none was seen), and its creator still gets a summary.
    /// `kept_exit` is whether tmux keeps its dead pane (tmuxd made it): an
    /// adopted one that ends mid-attach says so, as it would attached.
    async fn ended_at_once(
        &self,
        id: SessionId,
        name: &str,
        view: &SessionView,
        (created_at, kept_exit): (DateTime<Utc>, bool),
        event: NewEvent,
    ) -> SessionSummary {
        let reason = EndReason::ProcessExit;
        let now = Utc::now();
        let end = StateView {
            state: SessionState::Exited,
            reason: StateReason::End(reason),
            since: now,
            attention: None,
            acknowledged_by: None,
        };
        let events = [
            event,
            super::queue::state_event(&end, Exit::default()),
            NewEvent::new(Payload::SessionDeleted(Deleted::default())).reason(reason.as_str()),
        ];
        for event in events {
            self.inner
                .persistence
                .record(event.session_id(id).tmux_name(name));
        }
        let summary = SessionSummary {
            session_id: id,
            tmux_name: name.to_owned(),
            created_at,
            ended_at: Some(now),
            queued_inputs: 0,
            thought: None,
            actor: ActorSummary {
                exit_unknown: ExitUnknown::judge(Some(reason), None, Some(kept_exit)),
                keeps_exit: Some(kept_exit),
                ..ActorSummary::without_client(end.state, end.reason, now, (view.cols, view.rows))
            },
        };
        let retained = super::endings::Retained {
            summary: summary.clone(),
            screens: None,
            ended_at: now,
            history: self.inner.endings.keep_history(id, None).await,
        };
        self.inner.endings.keep(id, retained).await;
        summary
    }

    /// Attaches a control client to tmux session `name` and starts its actor.
    /// With `wait_for_quiet`, attaches once the server has been quiet a
    /// moment (see `tmux::control::handshake`): a session tmuxd did not make
    /// with `remain-on-exit` may close during the handshake, and that
    /// notification must not meet it.
    pub(super) async fn spawn_actor(
        &self,
        id: SessionId,
        actor_id: u64,
        name: &str,
        carried: Carried,
        wait_for_quiet: bool,
    ) -> Result<Spawned, ControlError> {
        let spawned = crate::session::SessionHandle::spawn(ActorSpec {
            session_id: id,
            actor_id,
            tmux: self.tmux().clone(),
            tmux_name: name.to_owned(),
            control: ControlOptions {
                timeout: self.inner.settings.command_timeout,
                wait_for_quiet,
                ..ControlOptions::default()
            },
            config: self.inner.settings.actor.clone(),
            events: self.inner.events.clone(),
            sessions_changed: self.inner.sessions_changed.clone(),
            attention: carried.attention,
            previous_state: carried.state,
            // Past the heat budget, a session tmuxd did not make starts
            // cold: it would be let go within a second anyway.
            cold_start: wait_for_quiet
                && self.tmux().server_client().is_some_and(|c| {
                    self.registry().tracked_or_reserved_count() > c.live_clients()
                }),
        })
        .await?;
        self.inner.client_attached.notify_one();
        Ok(spawned)
    }

    pub(super) fn record(&self, event: NewEvent, id: SessionId, tmux_name: &str) {
        self.inner
            .persistence
            .record(event.session_id(id).tmux_name(tmux_name));
    }

    /// The current view of one session, or `None` if tmux does not have it.
    pub(super) async fn view_of(&self, name: &str) -> Result<Option<SessionView>, SupervisorError> {
        let panes = self.tmux().list_panes().await?;
        Ok(session_views(&panes).remove(name))
    }

    /// Follows tmux's rename of tracked session `id` (heard by its actor,
    /// or seen by discovery): recorded once, persisted.
    pub(super) fn follow_rename(&self, id: SessionId, name: &str) {
        let old = self.registry().rename(id, name);
        if let Some(old) = old {
            self.record_rename(id, &old, name);
        }
    }

    /// Records a rename already made in the registry, and persists it.
    pub(super) fn record_rename(&self, id: SessionId, old: &str, new: &str) {
        tracing::info!(session_id = %id, old_name = %old, new_name = %new, "session renamed in tmux");
        self.inner.persistence.record(
            NewEvent::new(Payload::SessionRenamed(Renamed {
                old_name: old.to_owned(),
                new_name: new.to_owned(),
            }))
            .session_id(id)
            .tmux_name(new),
        );
        // Queued; nothing waits for the write.
        drop(self.persist());
    }
}

/// A session listed as attaching; dropping it takes the listing away and
/// wakes requests waiting for the session (`Supervisor::handle`).
pub(super) struct Attaching {
    supervisor: Supervisor,
    id: SessionId,
}

impl Drop for Attaching {
    fn drop(&mut self) {
        self.supervisor.inner.find.attach_finished(self.id);
    }
}

fn validate_create(request: &CreateSession) -> Result<(), SupervisorError> {
    if let Some(name) = &request.name {
        validate_session_name(name).map_err(|reason| SupervisorError::InvalidName {
            name: name.clone(),
            reason,
        })?;
    }
    if let Some(cwd) = &request.cwd {
        let invalid = |reason: &str| SupervisorError::InvalidCwd {
            path: cwd.clone(),
            reason: reason.to_owned(),
        };
        let path = Path::new(cwd);
        if !path.is_absolute() {
            return Err(invalid("must be an absolute path"));
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(invalid("not a directory")),
            Err(e) => return Err(invalid(&e.to_string())),
        }
    }
    if let Some(command) = &request.command {
        if command.trim().is_empty() {
            return Err(SupervisorError::BadRequest("command is empty".into()));
        }
        if command.len() > MAX_COMMAND_BYTES {
            return Err(SupervisorError::TooLarge {
                what: "command",
                size: command.len(),
                max: MAX_COMMAND_BYTES,
            });
        }
    }
    if let Some(input) = &request.initial_input {
        check_input_size("initial_input", input.len())?;
    }
    if let Some(resume) = &request.resume_command {
        if resume.trim().is_empty() {
            return Err(SupervisorError::BadRequest(
                "resume_command is empty".into(),
            ));
        }
        if resume.len() > MAX_COMMAND_BYTES {
            return Err(SupervisorError::TooLarge {
                what: "resume_command",
                size: resume.len(),
                max: MAX_COMMAND_BYTES,
            });
        }
    }
    let fields = [
        &request.name,
        &request.cwd,
        &request.command,
        &request.initial_input,
        &request.resume_command,
    ];
    if fields
        .iter()
        .any(|f| f.as_deref().is_some_and(|s| s.contains('\0')))
    {
        return Err(SupervisorError::BadRequest(
            "a field contains a NUL byte".into(),
        ));
    }
    if let Some((cols, rows)) = request.size {
        check_size(cols, rows)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_requests_are_checked() {
        let ok = CreateSession::default();
        assert!(validate_create(&ok).is_ok());
        let bad = [
            CreateSession {
                name: Some("a:b".into()),
                ..Default::default()
            },
            CreateSession {
                cwd: Some("relative".into()),
                ..Default::default()
            },
            CreateSession {
                cwd: Some("/definitely/not/here".into()),
                ..Default::default()
            },
            CreateSession {
                cwd: Some("/etc/hostname".into()),
                ..Default::default()
            },
            CreateSession {
                command: Some("  ".into()),
                ..Default::default()
            },
            CreateSession {
                initial_input: Some("a\0b".into()),
                ..Default::default()
            },
            CreateSession {
                size: Some((1, 24)),
                ..Default::default()
            },
            CreateSession {
                size: Some((80, 1001)),
                ..Default::default()
            },
            CreateSession {
                resume_command: Some(" ".into()),
                ..Default::default()
            },
            CreateSession {
                resume_command: Some("x".repeat(MAX_COMMAND_BYTES + 1)),
                ..Default::default()
            },
        ];
        for request in bad {
            assert!(validate_create(&request).is_err(), "{request:?}");
        }
    }
}
