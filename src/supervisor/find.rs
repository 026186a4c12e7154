//! Finding a session for a request: its actor, or its summary live or
//! ended. A session still attaching (listed `starting`) is waited for, and
//! so is one whose end is being recorded, so a request finds a session
//! live, ended and kept, or unknown: never between two of those.

use std::sync::Arc;

use tokio::sync::watch;

use super::endings::Endings;
use super::registry::{Lookup, Registry};
use super::types::{SessionSummary, SupervisorError};
use crate::id::SessionId;
use crate::session::SessionHandle;

#[derive(Clone)]
pub(super) struct Finder {
    registry: Arc<Registry>,
    endings: Arc<Endings>,
    /// Counts attaches that finished (either way); requests for a session
    /// still attaching watch it.
    attached: Arc<watch::Sender<u64>>,
}

impl Finder {
    pub(super) fn new(registry: Arc<Registry>, endings: Arc<Endings>) -> Finder {
        Finder {
            registry,
            endings,
            attached: Arc::new(watch::channel(0).0),
        }
    }

    /// The handle of a live session and its tmux name; `HasEnded` for an
    /// ended session still kept, else `NotFound`. A session still
    /// attaching is waited for (its attach has a deadline).
    pub(super) async fn handle(
        &self,
        id: SessionId,
    ) -> Result<(SessionHandle, String), SupervisorError> {
        let not_found = || SupervisorError::NotFound(id.to_string());
        let mut attached = self.attached.subscribe();
        loop {
            match self.registry.lookup(id) {
                Lookup::Live(handle, name) => return Ok((handle, name)),
                Lookup::Untracked => break,
                Lookup::Attaching => {}
            }
            if attached.changed().await.is_err() {
                return Err(not_found());
            }
        }
        self.until_retained(id).await;
        match self.endings.is_kept(id) {
            true => Err(SupervisorError::HasEnded(id.to_string())),
            false => Err(not_found()),
        }
    }

    /// A live session's summary, or the last one of an ended session
    /// still kept.
    pub(super) async fn summary(&self, id: SessionId) -> Result<SessionSummary, SupervisorError> {
        match self.live_summary(id).await {
            Err(
                SupervisorError::NotFound(_)
                | SupervisorError::Gone(_)
                | SupervisorError::HasEnded(_),
            ) => {
                self.until_retained(id).await;
                match self.endings.summary(id) {
                    Some(summary) => Ok(summary),
                    None => self.live_summary(id).await,
                }
            }
            answer => answer,
        }
    }

    async fn live_summary(&self, id: SessionId) -> Result<SessionSummary, SupervisorError> {
        if let Some(summary) = self.registry.attaching_summary(id) {
            return Ok(summary);
        }
        let (handle, _) = self.handle(id).await?;
        let actor = handle.summary().await.map_err(SupervisorError::gone(id))?;
        let summary = self.registry.summarize(id, actor);
        summary.ok_or_else(|| SupervisorError::Gone(id.to_string()))
    }

    /// Whether session `id`'s end is being recorded (no longer tracked,
    /// not yet kept).
    pub(super) fn is_finishing(&self, id: SessionId) -> bool {
        self.registry.is_finishing(id)
    }

    /// Returns once a session whose end is being recorded (no longer
    /// tracked, not yet retained) has been retained; at once otherwise. An
    /// end always finishes, so this does not wait long.
    pub(super) async fn until_retained(&self, id: SessionId) {
        let mut retained = self.endings.watch_settled();
        while self.registry.is_finishing(id) {
            if retained.changed().await.is_err() {
                return;
            }
        }
    }

    /// Session `id`'s attach finished, either way: it is no longer listed
    /// as attaching, and requests waiting for it look again.
    pub(super) fn attach_finished(&self, id: SessionId) {
        self.registry.end_attach(id);
        self.attached.send_modify(|n| *n += 1);
    }
}
