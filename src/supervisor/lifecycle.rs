//! How a session enters and leaves the registry: create, adopt, re-attach,
//! delete (detach or kill) and end. Every path reserves its id and name
//! first, runs tmux outside the lock, then commits in one locked section.

use std::path::Path;
use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};

use super::queue::dropped_input;
use super::registry::restore_attention;
use super::registry::{Ending, Entry, Reservation};
use super::{
    CreateSession, DeleteMode, DeleteOutcome, MAX_COMMAND_BYTES, SessionSummary, Supervisor,
    SupervisorError, check_input_size, check_size,
};
use crate::id::SessionId;
use crate::session::{ActorSpec, ActorSummary, Attention, EndHistory, SessionState, Spawned};
use crate::session::{StateReason, StateView};
use crate::store::{EventKind, NewEvent, PersistedAttention, QueuedInput};
use crate::tmux::control::{ControlError, ControlOptions, TmuxSessionId};
use crate::tmux::{
    CaptureRange, NewSession, SessionStatus, SessionView, session_views, validate_session_name,
};

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
        let mut reservation = self.reserve_new(request.name.as_deref())?;
        let mut tries = 0;
        let made = loop {
            let tag = reservation.id.to_string();
            let new = NewSession {
                name: &reservation.tmux_name,
                cwd: request.cwd.as_deref().map(Path::new),
                size: request.size,
                command: request.command.as_deref(),
                keep_exit: true,
                tag: Some(&tag),
            };
            match self.tmux().new_session(&new).await {
                Ok(made) => break made,
                Err(e)
                    if e.is_duplicate_session()
                        && request.name.is_none()
                        && tries < AUTO_NAME_TRIES =>
                {
                    tries += 1;
                    reservation = self.rename_reservation(reservation);
                }
                Err(e) => {
                    self.release(&reservation);
                    return Err(match e.is_duplicate_session() {
                        true => SupervisorError::NameTaken(reservation.tmux_name),
                        false => e.into(),
                    });
                }
            }
        };
        let name = reservation.tmux_name.clone();
        let (view, tagged) = match made.tagged_panes {
            Some(panes) => (session_views(&panes).remove(&name), true),
            None => self
                .view_tagging(&name, reservation.id)
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
                NewEvent::new(EventKind::SessionCreated).reason("api_create"),
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
        self.book().created(
            summary.session_id,
            &summary.tmux_name,
            request.restore,
            request.resume_command.clone(),
            request.command.clone(),
        );
        self.persist_restore();
        if let Some(input) = request.initial_input.as_deref().filter(|i| !i.is_empty()) {
            let typed = match self.typist(summary.session_id) {
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
        let reservation = self.reserve_existing(tmux_name, None, true)?;
        if let Some(wanted) = session_id.filter(|wanted| *wanted != reservation.id) {
            self.release(&reservation);
            return Err(SupervisorError::BadRequest(format!(
                "session_id {wanted} does not belong to tmux session {tmux_name:?}"
            )));
        }
        let (view, tagged) = match self.view_tagging(tmux_name, reservation.id).await {
            Ok((Some(view), tagged)) => (view, tagged),
            Ok((None, _)) => {
                self.release(&reservation);
                return Err(SupervisorError::NoSuchTmuxSession(tmux_name.to_owned()));
            }
            Err(e) => {
                self.release(&reservation);
                return Err(e);
            }
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
        match self.reserve_existing(name, tmux_id, true) {
            Ok(reservation) => Some(reservation),
            Err(SupervisorError::Capacity { max }) => {
                if self.registry().refused.insert(name.to_owned()) {
                    tracing::warn!(tmux_name = %name, "not adopting: {max} sessions tracked already");
                }
                None
            }
            Err(_) => None,
        }
    }

    /// Adopts a session discovery found and reserved.
    pub(super) async fn adopt_discovered(&self, reservation: Reservation, view: SessionView) {
        let adopted = self
            .adopt_with_view(reservation, view, false, "discovered")
            .await;
        if let Err(e) = adopted
            && !self.registry().closing
        {
            tracing::warn!("adopting a discovered session failed: {e}");
        }
    }

    async fn adopt_with_view(
        &self,
        reservation: Reservation,
        view: SessionView,
        tagged: bool,
        reason: &str,
    ) -> Result<SessionSummary, SupervisorError> {
        let known = self
            .registry()
            .detached
            .get(&reservation.tmux_name)
            .cloned();
        let attach = Attach {
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
        };
        self.attach(
            attach,
            NewEvent::new(EventKind::SessionAdopted).reason(reason),
        )
        .await
    }

    pub async fn delete(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        let (_, name) = self.handle(id).await?;
        match mode {
            DeleteMode::Detach => {
                let entry = {
                    let mut registry = self.registry();
                    let entry = registry
                        .sessions
                        .remove(&id)
                        .ok_or_else(|| SupervisorError::NotFound(id.to_string()))?;
                    registry
                        .detached
                        .insert(entry.tmux_name.clone(), entry.persisted());
                    entry
                };
                entry.handle.release().await;
                self.record(
                    NewEvent::new(EventKind::SessionDetached).reason("api_delete"),
                    &entry,
                );
                self.forget_restore(id);
                let _ = self.persist().await;
            }
            DeleteMode::Kill => {
                self.mark_ending(id)?;
                let history = self.history_before_kill(&name).await;
                if let Err(e) = self.tmux().kill_session(&name).await
                    && !e.is_missing_session()
                {
                    // The session may still be running: keep tracking it.
                    if let Some(entry) = self.registry().sessions.get_mut(&id) {
                        entry.ending = None;
                    }
                    return Err(e.into());
                }
                self.end_with_history(id, None, EndReason::ApiKill, history)
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

    fn mark_ending(&self, id: SessionId) -> Result<(), SupervisorError> {
        let mut registry = self.registry();
        let entry = registry
            .sessions
            .get_mut(&id)
            .ok_or_else(|| SupervisorError::NotFound(id.to_string()))?;
        if entry.ending.is_some() {
            return Err(SupervisorError::Gone(id.to_string()));
        }
        entry.ending = Some(Ending::Kill);
        Ok(())
    }

    /// Starts the actor and commits the reservation as a tracked session.
    pub(super) async fn attach(
        &self,
        attach: Attach,
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
        let _attaching = self.attaching(&reservation, &view, created_at, queue.len());
        let actor_id = self.inner.next_actor_id.fetch_add(1, Ordering::Relaxed);
        let spawned = match self
            .spawn_actor(
                reservation.id,
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
                self.release(&reservation);
                let gone = matches!(
                    self.tmux().session_status(&view.name).await,
                    Ok(SessionStatus::Gone | SessionStatus::NoServer)
                );
                return match gone {
                    true => Ok(self
                        .ended_at_once(&reservation, &view, created_at, event)
                        .await),
                    false => Err(e.into()),
                };
            }
        };
        let entry = Entry {
            id: reservation.id,
            tmux_name: reservation.tmux_name.clone(),
            tmux_id: spawned.tmux_id,
            created_at,
            command,
            cwd,
            handle: spawned.handle,
            actor_id,
            ending: None,
            last_summary: None,
            reattaches: Vec::new(),
            state: SessionState::Starting,
            attention,
            queue: queue.into(),
            delivering: false,
            typing: Default::default(),
        };
        // Asked before the entry is visible: a session that ends at once is
        // reaped right away, and its creator still gets its summary.
        let actor = entry.handle.summary().await;
        if !tagged {
            self.tag_sessions(vec![(reservation.tmux_name.clone(), reservation.id)]);
        }
        self.record(event, &entry);
        for item in &interrupted {
            self.record(dropped_input(item, "interrupted"), &entry);
        }
        let mut entry = entry;
        if let Ok(actor) = &actor {
            // A program that already ended no longer holds capacity.
            entry.state = actor.state;
        }
        let (summary, renamed) = {
            let mut registry = self.registry();
            registry.unreserve(&reservation);
            let renamed = registry
                .take_rename_while_attaching(reservation.id)
                .map(|name| (entry.tmux_name.clone(), name));
            if registry.closing {
                (Err(entry.handle), None)
            } else {
                registry.detached.remove(&reservation.tmux_name);
                // Adopted again under its old id: it is live, not ended.
                registry.retained.remove(&reservation.id);
                registry.sessions.insert(reservation.id, entry);
                let renamed = renamed.and_then(|(old, new)| {
                    let _ = registry.rename(reservation.id, &new)?;
                    Some((old, new))
                });
                let summary = actor
                    .ok()
                    .and_then(|actor| registry.summarize(reservation.id, actor));
                (Ok(summary), renamed)
            }
        };
        if let Some((old, new)) = renamed {
            self.record_rename(reservation.id, &old, &new);
        }
        let gone = || SupervisorError::Gone(reservation.id.to_string());
        match summary {
            Ok(summary) => {
                let _ = self.persist().await;
                summary.ok_or_else(gone)
            }
            // The daemon is stopping and has let every other client go.
            Err(handle) => {
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
            session_id: reservation.id,
            tmux_name: reservation.tmux_name.clone(),
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
        self.registry().attaching.insert(reservation.id, summary);
        Attaching {
            supervisor: self.clone(),
            id: reservation.id,
        }
    }

    /// A session whose program ended before a client could attach: its
    /// creation and its end are both recorded, it is kept as ended (without
    /// a screen: none was seen), and its creator still gets a summary.
    async fn ended_at_once(
        &self,
        reservation: &Reservation,
        view: &SessionView,
        created_at: DateTime<Utc>,
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
            super::queue::state_event(&end, (None, None)),
            NewEvent::new(EventKind::SessionDeleted).reason(reason.as_str()),
        ];
        for event in events {
            self.inner.persistence.record(
                event
                    .session_id(reservation.id)
                    .tmux_name(&reservation.tmux_name),
            );
        }
        let summary = SessionSummary {
            session_id: reservation.id,
            tmux_name: reservation.tmux_name.clone(),
            created_at,
            ended_at: Some(now),
            queued_inputs: 0,
            thought: None,
            actor: ActorSummary::without_client(end.state, end.reason, now, (view.cols, view.rows)),
        };
        let retained = super::ended::Retained {
            summary: summary.clone(),
            screens: None,
            ended_at: now,
            history: self.keep_history(reservation.id, None).await,
        };
        self.retain(reservation.id, retained).await;
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
        })
        .await?;
        self.inner.client_attached.notify_one();
        Ok(spawned)
    }

    pub(super) fn record(&self, event: NewEvent, entry: &Entry) {
        self.inner
            .persistence
            .record(event.session_id(entry.id).tmux_name(&entry.tmux_name));
    }

    /// The current view of one session, or `None` if tmux does not have it.
    pub(super) async fn view_of(&self, name: &str) -> Result<Option<SessionView>, SupervisorError> {
        let panes = self.tmux().list_panes().await?;
        Ok(session_views(&panes).remove(name))
    }

    fn reserve_new(&self, name: Option<&str>) -> Result<Reservation, SupervisorError> {
        let mut registry = self.registry();
        let max = self.inner.settings.max_sessions;
        if registry.occupancy() >= max {
            return Err(SupervisorError::Capacity { max });
        }
        let tmux_name = match name {
            Some(name) if registry.is_name_in_use(name) => {
                return Err(SupervisorError::NameTaken(name.to_owned()));
            }
            Some(name) => name.to_owned(),
            None => registry.next_free_number(),
        };
        let id = registry.allocate_id();
        let reservation = Reservation {
            id,
            tmux_name,
            tmux_id: None,
        };
        registry.reserve(&reservation);
        Ok(reservation)
    }

    /// A numeric name tmux already had: note it and take the next one.
    fn rename_reservation(&self, old: Reservation) -> Reservation {
        let mut registry = self.registry();
        registry.unreserve(&old);
        registry.seen_names.insert(old.tmux_name);
        let reservation = Reservation {
            id: old.id,
            tmux_name: registry.next_free_number(),
            tmux_id: None,
        };
        registry.reserve(&reservation);
        reservation
    }

    fn reserve_existing(
        &self,
        name: &str,
        tmux_id: Option<TmuxSessionId>,
        check_capacity: bool,
    ) -> Result<Reservation, SupervisorError> {
        let mut registry = self.registry();
        if let Some(entry) = registry.find_by_name(name) {
            return Err(SupervisorError::AlreadyTracked {
                name: name.to_owned(),
                session_id: entry.id.to_string(),
            });
        }
        if let Some(&id) = registry.reserved.get(name) {
            return Err(SupervisorError::AlreadyTracked {
                name: name.to_owned(),
                session_id: id.to_string(),
            });
        }
        let max = self.inner.settings.max_sessions;
        if check_capacity && registry.occupancy() >= max {
            return Err(SupervisorError::Capacity { max });
        }
        let known_id = registry.detached.get(name).map(|s| s.session_id);
        let id = known_id.unwrap_or_else(|| registry.allocate_id());
        let reservation = Reservation {
            id,
            tmux_name: name.to_owned(),
            tmux_id,
        };
        registry.reserve(&reservation);
        Ok(reservation)
    }

    fn release(&self, reservation: &Reservation) {
        self.registry().unreserve(reservation);
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
            NewEvent::new(EventKind::SessionRenamed)
                .session_id(id)
                .tmux_name(new)
                .detail("old_name", old)
                .detail("new_name", new),
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
        self.supervisor.registry().attaching.remove(&self.id);
        self.supervisor.inner.attached.send_modify(|n| *n += 1);
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
