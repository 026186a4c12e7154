//! The registry's input queues: what is queued per session, when its
//! oldest item may be typed (the session ready for it, nothing being typed,
//! and the actor heard from since the last item).

use super::*;

/// Whether a session in `state` is ready for input queued `when`.
pub fn ready(state: SessionState, when: InputWhen) -> bool {
    matches!(
        (state, when),
        (SessionState::Idle, InputWhen::Idle) | (SessionState::Waiting, InputWhen::Waiting)
    )
}

/// A state report of a session's current actor, as the registry took it.
pub struct Reported {
    pub tmux_name: String,
    /// The attention flag differs from the file's: rewrite it.
    pub attention_changed: bool,
}

/// A queue change that was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum QueueRefusal {
    /// No such session tracked (it may have ended: the endings owner
    /// knows).
    Untracked,
    Full,
    NoSuchItem,
    /// Its typing has begun.
    Started,
}

impl Registry {
    /// Queues input for session `id`; true when the session is ready for
    /// the oldest item now (no state change will come to deliver it).
    pub fn enqueue(
        &self,
        id: SessionId,
        text: &str,
        submit: bool,
        when: InputWhen,
        now: DateTime<Utc>,
    ) -> Result<bool, QueueRefusal> {
        let mut state = self.lock();
        let entry = state.sessions.get_mut(&id).ok_or(QueueRefusal::Untracked)?;
        if entry.queue.len() >= MAX_QUEUED_INPUTS {
            return Err(QueueRefusal::Full);
        }
        let item = QueuedInput {
            id: entry.next_queue_id(),
            when,
            text: text.to_owned(),
            submit,
            queued_at: now,
            started: false,
        };
        entry.queue.push_back(item);
        Ok(entry.front_ready())
    }

    /// The items queued for a tracked session, oldest first.
    pub fn queued(&self, id: SessionId) -> Option<Vec<QueuedInput>> {
        let state = self.lock();
        let entry = state.sessions.get(&id)?;
        Some(entry.queue.iter().cloned().collect())
    }

    /// Takes item `n` out of the queue, unless its typing has begun; with
    /// the session's name.
    pub fn cancel_queued(
        &self,
        id: SessionId,
        n: u64,
    ) -> Result<(QueuedInput, String), QueueRefusal> {
        let mut state = self.lock();
        let entry = state.sessions.get_mut(&id).ok_or(QueueRefusal::Untracked)?;
        let at = entry
            .queue
            .iter()
            .position(|q| q.id == n)
            .ok_or(QueueRefusal::NoSuchItem)?;
        if entry.queue[at].started {
            return Err(QueueRefusal::Started);
        }
        let item = entry.queue.remove(at).expect("position is in the queue");
        Ok((item, entry.tmux_name.clone()))
    }

    /// The oldest queued input, marked started, if the session is ready for
    /// it and nothing is being typed; the next waits for a new report.
    pub fn take_next(&self, id: SessionId) -> Option<QueuedInput> {
        let mut state = self.lock();
        let entry = state.sessions.get_mut(&id)?;
        if !entry.front_ready() {
            return None;
        }
        let item = entry.queue.front_mut()?;
        item.started = true;
        let item = item.clone();
        entry.delivering = true;
        entry.awaiting_report = true;
        Some(item)
    }

    /// The item taken could not be started (its mark not saved, or the
    /// session not typeable): it waits, not started, for the next time.
    pub fn delivery_postponed(&self, id: SessionId) {
        if let Some(entry) = self.lock().sessions.get_mut(&id) {
            entry.delivering = false;
            if let Some(front) = entry.queue.front_mut() {
                front.started = false;
            }
        }
    }

    /// The item taken was typed (or failed while typed): it leaves the queue.
    pub fn delivered(&self, id: SessionId) {
        if let Some(entry) = self.lock().sessions.get_mut(&id) {
            entry.delivering = false;
            if entry.queue.front().is_some_and(|front| front.started) {
                entry.queue.pop_front();
            }
        }
    }

    /// A state report of `actor_id` for session `id`: `None` when the
    /// actor is not the current one. The next queued input may go once a
    /// report came.
    pub fn reported(&self, id: SessionId, actor_id: u64, view: &StateView) -> Option<Reported> {
        let mut state = self.lock();
        let entry = state
            .sessions
            .get_mut(&id)
            .filter(|e| e.actor_id == actor_id)?;
        entry.awaiting_report = false;
        let attention = view.attention.map(persist_attention);
        let attention_changed = entry.attention_saved != attention;
        entry.attention_saved = attention;
        Some(Reported {
            tmux_name: entry.tmux_name.clone(),
            attention_changed,
        })
    }

    /// At shutdown, once the actors stopped: the attention `id`'s actor
    /// showed last, for `registry.json`. Its last report may not have been
    /// applied (`reported`), since the event loop stops with the daemon.
    pub fn keep_last_attention(&self, id: SessionId, attention: Option<Attention>) {
        if let Some(entry) = self.lock().sessions.get_mut(&id) {
            entry.attention_saved = attention.map(persist_attention);
        }
    }

    /// Who types into session `id`: its name, actor and turn lock.
    pub fn typist(&self, id: SessionId) -> Result<Typist, SupervisorError> {
        let state = self.lock();
        let entry = state
            .sessions
            .get(&id)
            .ok_or_else(|| SupervisorError::NotFound(id.to_string()))?;
        Ok(Typist {
            session_id: id,
            tmux_name: entry.tmux_name.clone(),
            handle: entry.handle.clone(),
            turn: entry.typing.clone(),
        })
    }
}

/// What typing into one session needs: its actor (which types over its
/// control client, in order with everything else it sends) and a turn lock.
/// Its typing is in `supervisor/input.rs`.
pub struct Typist {
    pub(in crate::supervisor) session_id: SessionId,
    pub(in crate::supervisor) tmux_name: String,
    pub(in crate::supervisor) handle: SessionHandle,
    /// Held while one request is typed, so a queued item's text and its
    /// Enter are never split by another request.
    pub(in crate::supervisor) turn: Arc<tokio::sync::Mutex<()>>,
}
