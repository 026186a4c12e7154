//! How a session enters and leaves the registry: create, adopt, re-attach,
//! delete (detach or kill) and end. Every path reserves its id and name
//! first, runs tmux outside the lock, then commits in one locked section.

use std::path::Path;
use std::sync::Arc;

use chrono::Utc;

use super::attach::{Attach, Attacher, default_view};
use super::endings::Endings;
use super::ends::Ends;
use super::find::Finder;
use super::input::Inputs;
use super::persist::Persistence;
use super::registry::{MarkEnding, Registry, Reservation};
use super::restore::Restore;
use super::settings::Settings;
use super::sightings::Sightings;
use super::tags;
use super::types::{
    CreateSession, DeleteMode, DeleteOutcome, MAX_COMMAND_BYTES, SessionSummary, SupervisorError,
    check_input_size, check_size,
};
use crate::id::SessionId;
use crate::session::{EndHistory, EndReason};
use crate::store::NewEvent;
use crate::tmux::{
    CaptureRange, NewSession, SessionView, Tmux, session_views, validate_session_name,
};
use crate::wire::{Adopted, Payload};

/// Tries at picking a free numeric name when tmux has one we had not seen.
const AUTO_NAME_TRIES: usize = 5;

/// Creates, adopts and deletes sessions on request: each asks tmux,
/// gives the session its actor through the attacher (or ends its
/// tracking), and tells the owners whose state the change concerns.
#[derive(Clone)]
pub(super) struct Lifecycle {
    pub(super) tmux: Tmux,
    pub(super) settings: Arc<Settings>,
    pub(super) registry: Arc<Registry>,
    /// Names tmux has that a create must not take.
    pub(super) sightings: Arc<Sightings>,
    pub(super) attacher: Attacher,
    /// A created session's restore record; a detached one is forgotten.
    pub(super) restore: Arc<Restore>,
    /// A create's initial input.
    pub(super) input: Inputs,
    /// A delete waits out an attach, as every request does.
    pub(super) find: Finder,
    /// A delete of an ended session removes what its end kept.
    pub(super) endings: Arc<Endings>,
    pub(super) ends: Ends,
    pub(super) persistence: Arc<Persistence>,
}

impl Lifecycle {
    pub(super) async fn create(
        &self,
        request: CreateSession,
    ) -> Result<SessionSummary, SupervisorError> {
        validate_create(&request)?;
        let max = self.settings.max_sessions;
        let names = self.sightings.names();
        let mut reservation = self
            .registry
            .reserve_new(request.name.as_deref(), max, &names)?;
        let mut tries = 0;
        let made = loop {
            let tag = reservation.id().to_string();
            let new = NewSession {
                name: reservation.tmux_name(),
                cwd: Some(request.cwd.as_deref().unwrap_or(&self.settings.default_cwd)),
                size: request.size,
                command: request.command.as_deref(),
                keep_exit: true,
                tag: Some(&tag),
                env: &self.settings.session_env,
            };
            match self.tmux.new_session(&new).await {
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
            None => tags::view_tagging(&self.tmux, &name, reservation.id())
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
            .attacher
            .attach(
                attach,
                NewEvent::new(Payload::SessionCreated).reason("api_create"),
            )
            .await
        {
            Ok(summary) => summary,
            Err(e) => {
                // Nothing may be left behind by a failed create.
                let _ = self.tmux.kill_session(&name).await;
                return Err(e);
            }
        };
        self.restore.created(
            summary.session_id,
            &summary.tmux_name,
            request.restore,
            request.resume_command.clone(),
            request.command.clone(),
        );
        if let Some(input) = request.initial_input.as_deref().filter(|i| !i.is_empty()) {
            let typed = match self.input.typist(summary.session_id).await {
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
    pub(super) async fn adopt(
        &self,
        tmux_name: &str,
        session_id: Option<SessionId>,
    ) -> Result<SessionSummary, SupervisorError> {
        validate_session_name(tmux_name).map_err(|reason| SupervisorError::InvalidName {
            name: tmux_name.to_owned(),
            reason,
        })?;
        let max = self.settings.max_sessions;
        let reservation = self.registry.reserve_existing(tmux_name, None, Some(max))?;
        if let Some(wanted) = session_id.filter(|wanted| *wanted != reservation.id()) {
            return Err(SupervisorError::BadRequest(format!(
                "session_id {wanted} does not belong to tmux session {tmux_name:?}"
            )));
        }
        let (view, tagged) =
            match tags::view_tagging(&self.tmux, tmux_name, reservation.id()).await? {
                (Some(view), tagged) => (view, tagged),
                (None, _) => return Err(SupervisorError::NoSuchTmuxSession(tmux_name.to_owned())),
            };
        self.adopt_with_view(reservation, view, tagged, "api_adopt")
            .await
    }

    /// tmux had the reservation's numeric name: it is noted, and the next
    /// free one taken.
    fn next_free_name(&self, reservation: Reservation) -> Reservation {
        let taken = reservation.tmux_name().to_owned();
        self.sightings.note_name(taken);
        let names = self.sightings.names();
        self.registry.rename_reservation(reservation, &names)
    }

    async fn adopt_with_view(
        &self,
        reservation: Reservation,
        view: SessionView,
        tagged: bool,
        reason: &str,
    ) -> Result<SessionSummary, SupervisorError> {
        let attach = self.attacher.adoption(reservation, view, tagged);
        self.attacher
            .attach(
                attach,
                NewEvent::new(Payload::SessionAdopted(Adopted::default())).reason(reason),
            )
            .await
    }

    pub(super) async fn delete(
        &self,
        id: SessionId,
        mode: DeleteMode,
    ) -> Result<DeleteOutcome, SupervisorError> {
        let name = match self.find.handle(id).await {
            Ok((_, name)) => name,
            // Its screens and history may hold secrets: gone on request.
            Err(SupervisorError::HasEnded(_)) => return self.remove_ended(id, mode).await,
            Err(e) => return Err(e),
        };
        match mode {
            DeleteMode::Detach => {
                let entry = self
                    .registry
                    .detach(id)
                    .ok_or_else(|| SupervisorError::NotFound(id.to_string()))?;
                entry.handle().release().await;
                self.record(
                    NewEvent::new(Payload::SessionDetached).reason("api_delete"),
                    id,
                    entry.tmux_name(),
                );
                self.restore.forget(id);
                let _ = self.persistence.write_registry(&self.registry).await;
            }
            DeleteMode::Kill => {
                self.registry.mark_ending(id).map_err(|e| match e {
                    MarkEnding::NotTracked => SupervisorError::NotFound(id.to_string()),
                    MarkEnding::AlreadyEnding => SupervisorError::Gone(id.to_string()),
                })?;
                let history = self.history_before_kill(&name).await;
                if let Err(e) = self.tmux.kill_session(&name).await
                    && !e.is_missing_session()
                {
                    // The session may still be running: keep tracking it.
                    self.registry.unmark_ending(id);
                    return Err(e.into());
                }
                self.ends
                    .end_with_history(id, None, EndReason::ApiKill, history)
                    .await;
            }
        }
        let tmux_alive = self.tmux.has_session(&name).await.unwrap_or(false);
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
        let summary = self.endings.discard(id).await?;
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
        let lines = self.settings.actor.ended_scrollback_lines;
        if lines == 0 {
            return None;
        }
        let range = CaptureRange::History { lines };
        Some(match self.tmux.capture_pane(name, range).await {
            Ok(lines) => EndHistory::Captured(lines),
            Err(e) => EndHistory::Refused(e.to_string()),
        })
    }

    fn record(&self, event: NewEvent, id: SessionId, tmux_name: &str) {
        self.persistence
            .record(event.session_id(id).tmux_name(tmux_name));
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
