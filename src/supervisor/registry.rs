//! The registry: which tmux sessions tmuxd tracks, which it was told to let
//! go of, which are being taken on or ended, their input queues and
//! thoughts, and the id counter. Its state is private; every transition is
//! one method that keeps the registry's rules in one short locked section
//! (a std mutex, never held across an `.await`: it would block other tasks'
//! threads, and the guard is not `Send` anyway). The async code around it
//! only orchestrates.
//!
//! A session's state and attention are the actor's: an entry reads them
//! from the actor's watch, it keeps no copy. The input queue and its
//! delivery are the registry's alone.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use super::plan::{DiscoveryPlan, Known, Listed, NameFilter, TrackedRef, lived_at_least};
use super::types::{MAX_QUEUED_INPUTS, SessionSummary, SupervisorError};
use super::untracked::Tracked;
use crate::id::SessionId;
use crate::session::{ActorSummary, Attention, SessionHandle, SessionState, StateView};
use crate::store::{
    InputWhen, PersistedAttention, PersistedSession, QueuedInput, RegistryFile, Thought,
    ThoughtsFile,
};
use crate::tmux::control::TmuxSessionId;

mod discovery;
mod queue;

#[cfg(test)]
mod tests;

pub use discovery::{Birth, Planned};
pub use queue::{QueueRefusal, Typist, ready};

/// A tracked session.
pub struct Entry {
    id: SessionId,
    /// The session's current name: followed through renames (`rename`).
    tmux_name: String,
    /// tmux's id of the session, which a rename keeps.
    tmux_id: TmuxSessionId,
    created_at: DateTime<Utc>,
    command: Option<String>,
    cwd: Option<String>,
    handle: SessionHandle,
    /// The current actor; exits of older actors are ignored.
    actor_id: u64,
    /// tmuxd is killing it: its exit is tmuxd's doing, not the program's.
    ending: bool,
    /// The last summary the actor gave, served when it does not answer in time.
    last_summary: Option<SessionSummary>,
    /// Its actor held a control client at the heat owner's last look
    /// (the heat owner): a command lent to a cold one would be forked.
    live: bool,
    /// Recent re-attaches, to stop re-attaching to a session that keeps dropping us.
    reattaches: Vec<Instant>,
    /// The current actor's state and attention, as it publishes them.
    view: watch::Receiver<StateView>,
    /// The attention flag as the registry file has it (or will at the
    /// next write): a change rewrites the file.
    attention_saved: Option<PersistedAttention>,
    /// Input waiting for the session to be ready for it, oldest first.
    queue: VecDeque<QueuedInput>,
    /// A queued input is being typed.
    delivering: bool,
    /// Input was typed: the next waits until the actor reports a state
    /// again (the input it reacts to has not reached its screen yet).
    awaiting_report: bool,
    /// Taken while input is typed, so requests reach the pane whole and in order.
    typing: Arc<tokio::sync::Mutex<()>>,
}

impl Entry {
    pub fn id(&self) -> SessionId {
        self.id
    }

    pub fn tmux_name(&self) -> &str {
        &self.tmux_name
    }

    pub fn created_at(&self) -> DateTime<Utc> {
        self.created_at
    }

    pub fn handle(&self) -> &SessionHandle {
        &self.handle
    }

    pub fn last_summary(&self) -> Option<&SessionSummary> {
        self.last_summary.as_ref()
    }

    /// Input still queued, oldest first.
    pub fn queue(&self) -> impl Iterator<Item = &QueuedInput> {
        self.queue.iter()
    }

    fn state(&self) -> SessionState {
        self.view.borrow().state
    }

    fn persisted(&self) -> PersistedSession {
        PersistedSession {
            session_id: self.id,
            tmux_name: self.tmux_name.clone(),
            created_at: self.created_at,
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            queued_inputs: self.queue.iter().cloned().collect(),
            attention: self.attention_saved.clone(),
            tmux_id: Some(self.tmux_id.to_string()),
        }
    }

    /// The number the next queued input gets: above every one queued.
    fn next_queue_id(&self) -> u64 {
        self.queue.iter().map(|q| q.id + 1).max().unwrap_or(1)
    }

    /// Whether the oldest queued input can be typed now.
    fn front_ready(&self) -> bool {
        let state = self.state();
        !self.delivering
            && !self.awaiting_report
            && self.queue.front().is_some_and(|f| ready(state, f.when))
    }
}

/// What a committed session starts with, besides its reservation.
pub struct NewEntry {
    pub tmux_id: TmuxSessionId,
    pub created_at: DateTime<Utc>,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub handle: SessionHandle,
    pub actor_id: u64,
    /// The actor's state watch (`SessionHandle::watch_state`).
    pub view: watch::Receiver<StateView>,
    pub queue: Vec<QueuedInput>,
}

pub fn persist_attention(attention: Attention) -> PersistedAttention {
    PersistedAttention {
        reason: serde_json::to_value(attention.reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        since: attention.since,
        text: attention.text.map(|t| t.as_str().to_owned()),
    }
}

/// The attention flag read back; a reason this build does not know is dropped.
pub fn restore_attention(persisted: &PersistedAttention) -> Option<Attention> {
    let reason =
        serde_json::from_value(serde_json::Value::String(persisted.reason.clone())).ok()?;
    Some(Attention {
        reason,
        since: persisted.since,
        text: persisted.text.as_deref().map(crate::session::Note::new),
    })
}

/// A session being created or adopted: its id and name are taken until it
/// is committed, or until this is dropped (any failure on the way gives
/// them back without a hand release on each error path).
pub struct Reservation {
    registry: Arc<Registry>,
    id: SessionId,
    tmux_name: String,
    /// tmux's id of the session, when discovery listed it.
    tmux_id: Option<TmuxSessionId>,
    /// Still holding the name (not committed or given back yet).
    held: bool,
}

impl Reservation {
    pub fn id(&self) -> SessionId {
        self.id
    }

    pub fn tmux_name(&self) -> &str {
        &self.tmux_name
    }
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation")
            .field("id", &self.id)
            .field("tmux_name", &self.tmux_name)
            .field("tmux_id", &self.tmux_id)
            .finish()
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.held {
            self.registry
                .lock()
                .unreserve(&self.tmux_name, self.tmux_id);
        }
    }
}

/// How a reservation ended up.
pub enum Commit {
    /// Tracked. The summary, if the actor answered; the rename heard while
    /// it attached, applied now (old name, new name).
    Tracked {
        summary: Option<Box<SessionSummary>>,
        renamed: Option<(String, String)>,
    },
    /// The daemon is closing: the session is let go, its client too.
    Closing(SessionHandle),
}

/// Where a session is, for a request about it.
pub enum Lookup {
    Live(SessionHandle, String),
    /// Its control client is attaching: ask again once attaches change.
    Attaching,
    /// Not tracked (maybe ended and kept: the endings owner knows).
    Untracked,
}

/// Why a kill could not be marked.
#[derive(Debug, PartialEq, Eq)]
pub enum MarkEnding {
    NotTracked,
    /// Another kill is under way.
    AlreadyEnding,
}

/// What an exit of an actor's client meets in the registry.
#[derive(Debug, PartialEq, Eq)]
pub enum ExitMeets {
    /// The current actor of a tracked session: find out why (its name).
    Current(String),
    /// The session is still being attached: ask again in a moment.
    Attaching,
    /// An old actor, an ending session, or none: nothing to do.
    Nothing,
}

/// A session taken out of the registry, and what goes with it.
pub struct Untracked<W> {
    pub entry: Entry,
    pub thought: Option<Thought>,
    /// The thoughts file's write, when the session had a thought.
    pub thoughts_written: Option<W>,
}

#[derive(Default)]
pub struct Registry {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    sessions: BTreeMap<SessionId, Entry>,
    /// Deliberately detached sessions, by tmux name, with the id they keep.
    detached: BTreeMap<String, PersistedSession>,
    /// Names with a create or adopt in flight, and the id each will get.
    reserved: BTreeMap<String, SessionId>,
    /// tmux ids of the sessions in `reserved` discovery listed: renamed
    /// while they attach, they are not adopted a second time.
    reserved_tmux_ids: BTreeSet<TmuxSessionId>,
    /// Renames heard while the session's attach was not committed yet,
    /// by session id: applied at the commit.
    renamed_while_attaching: BTreeMap<SessionId, String>,
    /// The registry read at startup, until tmux answers and it is merged.
    restore_pending: Option<RegistryFile>,
    /// The latest published status per session.
    thoughts: BTreeMap<SessionId, Thought>,
    /// When tracking of each name last ended: a discovery that listed tmux's
    /// sessions before then saw it alive and must not adopt it anew.
    ended: BTreeMap<String, Instant>,
    /// Sessions whose end is being recorded: no longer tracked, not yet retained.
    finishing: BTreeSet<SessionId>,
    /// Sessions whose control client is attaching, listed as `starting`
    /// meanwhile (an adoption may wait seconds for a quiet tmux server).
    attaching: BTreeMap<SessionId, SessionSummary>,
    /// Shutting down: an attach that completes now is let go at once.
    closing: bool,
    next_counter: u64,
}

impl Registry {
    pub fn new(next_counter: u64) -> Self {
        Registry {
            state: Mutex::new(State {
                next_counter: next_counter.max(1),
                ..State::default()
            }),
        }
    }

    /// As startup found the data dir: the registry file to merge once tmux
    /// answers, the thoughts, and the ids of the ended sessions still kept
    /// (never issued again).
    pub fn restored(
        pending: RegistryFile,
        thoughts: BTreeMap<SessionId, Thought>,
        ended: impl IntoIterator<Item = SessionId>,
    ) -> Self {
        let registry = Registry::new(pending.next_session_counter);
        {
            let mut state = registry.lock();
            state.restore_pending = Some(pending);
            state.thoughts = thoughts;
            for id in ended {
                state.advance_past(id);
            }
        }
        registry
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("registry lock poisoned")
    }

    // Reservations.

    /// An id and name for a session tmuxd creates: `name`, or the next free
    /// number.
    pub fn reserve_new(
        self: &Arc<Self>,
        name: Option<&str>,
        max: usize,
        tmux_names: &BTreeSet<String>,
    ) -> Result<Reservation, SupervisorError> {
        let mut state = self.lock();
        if state.occupancy() >= max {
            return Err(SupervisorError::Capacity { max });
        }
        let tmux_name = match name {
            Some(name) if state.is_name_in_use(name) => {
                return Err(SupervisorError::NameTaken(name.to_owned()));
            }
            Some(name) => name.to_owned(),
            None => state.next_free_number(tmux_names),
        };
        let id = state.allocate_id();
        Ok(state.reserve(self, id, tmux_name, None))
    }

    /// A numeric name tmux already had (noted in `tmux_names`): take the
    /// next one.
    pub fn rename_reservation(
        self: &Arc<Self>,
        mut old: Reservation,
        tmux_names: &BTreeSet<String>,
    ) -> Reservation {
        let mut state = self.lock();
        state.unreserve(&old.tmux_name, old.tmux_id);
        old.held = false;
        let name = state.next_free_number(tmux_names);
        state.reserve(self, old.id, name, None)
    }

    /// The id and name of a tmux session to take on: the id it had if it
    /// was detached, else a new one. Capacity is checked when `max` is given.
    pub fn reserve_existing(
        self: &Arc<Self>,
        name: &str,
        tmux_id: Option<TmuxSessionId>,
        max: Option<usize>,
    ) -> Result<Reservation, SupervisorError> {
        let mut state = self.lock();
        let holder = state.find_by_name(name).map(|e| e.id);
        if let Some(id) = holder.or_else(|| state.reserved.get(name).copied()) {
            return Err(SupervisorError::AlreadyTracked {
                name: name.to_owned(),
                session_id: id.to_string(),
            });
        }
        if let Some(max) = max.filter(|&max| state.occupancy() >= max) {
            return Err(SupervisorError::Capacity { max });
        }
        let known_id = state.detached.get(name).map(|s| s.session_id);
        let id = known_id.unwrap_or_else(|| state.allocate_id());
        Ok(state.reserve(self, id, name.to_owned(), tmux_id))
    }

    /// A session lost with its tmux server, taken back under the id and
    /// name it had.
    pub fn reserve_restore(
        self: &Arc<Self>,
        id: SessionId,
        name: &str,
        max: usize,
    ) -> Result<Reservation, SupervisorError> {
        let mut state = self.lock();
        if let Some(entry) = state.find_by_name(name) {
            return Err(SupervisorError::AlreadyTracked {
                name: name.to_owned(),
                session_id: entry.id.to_string(),
            });
        }
        if state.reserved.contains_key(name) {
            return Err(SupervisorError::NameTaken(name.to_owned()));
        }
        if state.sessions.contains_key(&id) {
            return Err(SupervisorError::Conflict(format!(
                "{id} is tracked already"
            )));
        }
        if state.occupancy() >= max {
            return Err(SupervisorError::Capacity { max });
        }
        Ok(state.reserve(self, id, name.to_owned(), None))
    }

    /// A persisted session re-attached at startup, under its id and name.
    pub fn reserve_persisted(self: &Arc<Self>, id: SessionId, name: &str) -> Reservation {
        self.lock().reserve(self, id, name.to_owned(), None)
    }

    /// Lists a session as `starting` while its client attaches.
    pub fn begin_attach(&self, summary: SessionSummary) {
        self.lock().attaching.insert(summary.session_id, summary);
    }

    /// The attach is over, either way.
    pub fn end_attach(&self, id: SessionId) {
        self.lock().attaching.remove(&id);
    }

    /// Tracks the reserved session: the attach is done. A rename heard
    /// meanwhile is applied; a detached or ended record of it is dropped.
    pub fn commit(
        &self,
        mut reservation: Reservation,
        new: NewEntry,
        actor: Option<ActorSummary>,
    ) -> Commit {
        let mut state = self.lock();
        state.unreserve(&reservation.tmux_name, reservation.tmux_id);
        reservation.held = false;
        let id = reservation.id;
        let renamed = state.renamed_while_attaching.remove(&id);
        if state.closing {
            return Commit::Closing(new.handle);
        }
        let name = std::mem::take(&mut reservation.tmux_name);
        state.detached.remove(&name);
        let attention_saved = new.view.borrow().attention.map(persist_attention);
        let entry = Entry {
            id,
            tmux_name: name.clone(),
            tmux_id: new.tmux_id,
            created_at: new.created_at,
            command: new.command,
            cwd: new.cwd,
            handle: new.handle,
            actor_id: new.actor_id,
            ending: false,
            last_summary: None,
            live: true,
            reattaches: Vec::new(),
            view: new.view,
            attention_saved,
            queue: new.queue.into(),
            delivering: false,
            awaiting_report: false,
            typing: Arc::default(),
        };
        state.sessions.insert(id, entry);
        let renamed = renamed.and_then(|new| Some((state.rename(id, &new)?, new)));
        let summary = actor.and_then(|actor| state.summarize(id, actor));
        Commit::Tracked {
            summary: summary.map(Box::new),
            renamed,
        }
    }

    // Lookups.

    pub fn tracked_count(&self) -> usize {
        self.lock().sessions.len()
    }

    /// Sessions tracked, and those reserved and attaching: how many the
    /// registry is about to hold (the heat budget's count at adoption).
    pub fn tracked_or_reserved_count(&self) -> usize {
        let state = self.lock();
        state.sessions.len() + state.reserved.len()
    }

    pub fn lookup(&self, id: SessionId) -> Lookup {
        let state = self.lock();
        match state.sessions.get(&id) {
            Some(e) => Lookup::Live(e.handle.clone(), e.tmux_name.clone()),
            None if state.attaching.contains_key(&id) => Lookup::Attaching,
            None => Lookup::Untracked,
        }
    }

    /// The summary of a session still attaching (and not tracked yet).
    pub fn attaching_summary(&self, id: SessionId) -> Option<SessionSummary> {
        let state = self.lock();
        if state.sessions.contains_key(&id) {
            return None;
        }
        state.attaching_summary(id)
    }

    /// Every tracked session's actor, to ask for summaries.
    pub fn handles(&self) -> Vec<(SessionId, SessionHandle)> {
        let state = self.lock();
        state
            .sessions
            .values()
            .map(|e| (e.id, e.handle.clone()))
            .collect()
    }

    /// Up to `n` sessions not being killed, to ask tmux through.
    pub fn some_live(&self, n: usize) -> Vec<(SessionHandle, String)> {
        let state = self.lock();
        state
            .sessions
            .values()
            .filter(|e| !e.ending)
            .take(n)
            .map(|e| (e.handle.clone(), e.tmux_name.clone()))
            .collect()
    }

    /// A session's actor to ask tmux through, not `except`'s, nor one being
    /// killed.
    pub fn any_handle_except(&self, except: Option<SessionId>) -> Option<SessionHandle> {
        let state = self.lock();
        let lenders = || {
            state
                .sessions
                .values()
                .filter(|e| Some(e.id) != except && !e.ending)
        };
        lenders()
            .find(|e| e.live)
            .or_else(|| lenders().next())
            .map(|e| e.handle.clone())
    }

    /// Which sessions' actors hold a client, as the heat owner found them.
    pub fn note_live(&self, live: &BTreeMap<SessionId, bool>) {
        let mut state = self.lock();
        for (id, live) in live {
            if let Some(entry) = state.sessions.get_mut(id) {
                entry.live = *live;
            }
        }
    }

    /// Whether some tracked session's actor holds a client (and so hears
    /// tmux's `%sessions-changed`).
    pub fn any_live(&self) -> bool {
        self.lock().sessions.values().any(|e| e.live)
    }

    /// Any tracked session's actor.
    pub fn any_handle(&self) -> Option<SessionHandle> {
        let state = self.lock();
        state.sessions.values().next().map(|e| e.handle.clone())
    }

    /// The tracked session tmux knows as `tmux_id`.
    pub fn find_by_tmux_id(&self, tmux_id: TmuxSessionId) -> Option<(SessionId, SessionHandle)> {
        let state = self.lock();
        let entry = state.sessions.values().find(|e| e.tmux_id == tmux_id)?;
        Some((entry.id, entry.handle.clone()))
    }

    /// The name of session `id` if `actor_id` is its current actor and it
    /// is not being killed.
    pub fn current_name(&self, id: SessionId, actor_id: u64) -> Option<String> {
        let state = self.lock();
        let entry = state.sessions.get(&id)?;
        (entry.actor_id == actor_id && !entry.ending).then(|| entry.tmux_name.clone())
    }

    /// What the exit of `actor_id`'s client means for session `id`.
    pub fn exit_meets(&self, id: SessionId, actor_id: u64) -> ExitMeets {
        let state = self.lock();
        match state.sessions.get(&id) {
            Some(e) if e.actor_id == actor_id && !e.ending => {
                ExitMeets::Current(e.tmux_name.clone())
            }
            None if state.reserved.values().any(|&r| r == id) => ExitMeets::Attaching,
            _ => ExitMeets::Nothing,
        }
    }

    pub fn detached(&self, name: &str) -> Option<PersistedSession> {
        self.lock().detached.get(name).cloned()
    }

    pub fn is_closing(&self) -> bool {
        self.lock().closing
    }

    pub fn tracked_ids(&self) -> BTreeSet<SessionId> {
        self.lock().sessions.keys().copied().collect()
    }

    /// Names and tmux ids tmuxd tracks or is taking on, and the detached.
    pub fn tracked(&self) -> Tracked {
        let state = self.lock();
        let entries = state.sessions.values();
        let attaching = state.attaching.values().map(|s| s.tmux_name.clone());
        Tracked {
            names: entries
                .clone()
                .map(|e| e.tmux_name.clone())
                .chain(state.reserved.keys().cloned())
                .chain(attaching)
                .collect(),
            tmux_ids: entries
                .map(|e| e.tmux_id)
                .chain(state.reserved_tmux_ids.iter().copied())
                .collect(),
            detached: state
                .detached
                .iter()
                .map(|(name, s)| (name.clone(), s.session_id))
                .collect(),
        }
    }

    // Summaries.

    /// The client-facing summary of a session from its actor's answer;
    /// remembered for a list served before the actor published one.
    pub fn summarize(&self, id: SessionId, actor: ActorSummary) -> Option<SessionSummary> {
        self.lock().summarize(id, actor)
    }

    /// The list of sessions from the actors' published summaries (`None`:
    /// none yet, the last one known here is served): tracked and attaching;
    /// by id.
    pub fn list(&self, answers: Vec<(SessionId, Option<ActorSummary>)>) -> Vec<SessionSummary> {
        let mut state = self.lock();
        let mut sessions: BTreeMap<SessionId, SessionSummary> = answers
            .into_iter()
            .filter_map(|(id, answer)| match answer {
                Some(actor) => state.summarize(id, actor),
                None => state.sessions.get(&id)?.last_summary.clone(),
            })
            .map(|s| (s.session_id, s))
            .collect();
        for &id in state.attaching.keys() {
            if !sessions.contains_key(&id)
                && let Some(summary) = state.attaching_summary(id)
            {
                sessions.insert(id, summary);
            }
        }
        // Attached while the actors were asked: neither asked nor still
        // attaching, listed with the summary its commit left.
        for (id, entry) in &state.sessions {
            if !sessions.contains_key(id)
                && let Some(summary) = &entry.last_summary
            {
                sessions.insert(*id, summary.clone());
            }
        }
        sessions.into_values().collect()
    }

    // Changes to tracked sessions.

    /// Follows tmux's rename of session `id`: the old name when the name
    /// changed. A session still attaching is renamed when it is committed.
    pub fn rename(&self, id: SessionId, name: &str) -> Option<String> {
        self.lock().rename(id, name)
    }

    /// Stops tracking a session deliberately, keeping its record so
    /// discovery leaves it alone and a later adopt reuses its id.
    pub fn detach(&self, id: SessionId) -> Option<Entry> {
        let mut state = self.lock();
        let entry = state.sessions.remove(&id)?;
        state
            .detached
            .insert(entry.tmux_name.clone(), entry.persisted());
        Some(entry)
    }

    /// Marks a session as being killed by tmuxd: one kill at a time.
    pub fn mark_ending(&self, id: SessionId) -> Result<(), MarkEnding> {
        let mut state = self.lock();
        let entry = state.sessions.get_mut(&id).ok_or(MarkEnding::NotTracked)?;
        if entry.ending {
            return Err(MarkEnding::AlreadyEnding);
        }
        entry.ending = true;
        Ok(())
    }

    /// The kill failed and the session may live on: it is tracked as before.
    pub fn unmark_ending(&self, id: SessionId) {
        if let Some(entry) = self.lock().sessions.get_mut(&id) {
            entry.ending = false;
        }
    }

    /// Notes a re-attach of session `id` (its current actor `actor_id`):
    /// its name, whether it re-attached too often within `window`, and
    /// the attention to carry to the new actor.
    pub fn note_reattach(
        &self,
        id: SessionId,
        actor_id: u64,
        now: Instant,
        window: Duration,
        limit: usize,
    ) -> Option<(String, bool, Option<Attention>)> {
        let mut state = self.lock();
        let entry = state
            .sessions
            .get_mut(&id)
            .filter(|e| e.actor_id == actor_id && !e.ending)?;
        entry
            .reattaches
            .retain(|at| now.duration_since(*at) < window);
        entry.reattaches.push(now);
        let attention = entry.view.borrow().attention;
        Some((
            entry.tmux_name.clone(),
            entry.reattaches.len() > limit,
            attention,
        ))
    }

    /// The new actor takes over from `old_actor`; the old handle, or none
    /// when the session went meanwhile.
    pub fn replace_actor(
        &self,
        id: SessionId,
        old_actor: u64,
        actor_id: u64,
        handle: SessionHandle,
        view: watch::Receiver<StateView>,
    ) -> Option<SessionHandle> {
        let mut state = self.lock();
        let entry = state
            .sessions
            .get_mut(&id)
            .filter(|e| e.actor_id == old_actor)?;
        entry.actor_id = actor_id;
        entry.view = view;
        Some(std::mem::replace(&mut entry.handle, handle))
    }

    /// Takes a session whose end is decided out of the registry (when
    /// `actor_id`, if given, is still current), marked as finishing until
    /// its end is retained. With `keep_detached` its record stays, so
    /// discovery does not adopt it again in a loop; else its thought goes,
    /// and the thoughts file is rewritten through `write`.
    pub fn untrack<W>(
        &self,
        id: SessionId,
        actor_id: Option<u64>,
        keep_detached: bool,
        now: Instant,
        write: impl FnOnce(ThoughtsFile) -> W,
    ) -> Option<Untracked<W>> {
        let mut state = self.lock();
        let current = state
            .sessions
            .get(&id)
            .is_some_and(|e| actor_id.is_none_or(|a| a == e.actor_id));
        if !current {
            return None;
        }
        let entry = state.sessions.remove(&id)?;
        state.finishing.insert(id);
        state.ended.insert(entry.tmux_name.clone(), now);
        if keep_detached {
            state
                .detached
                .insert(entry.tmux_name.clone(), entry.persisted());
        }
        let thought = state.thoughts.get(&id).cloned();
        // thoughts.json is rewritten only if this session had a thought.
        let thoughts_written = (!keep_detached && state.thoughts.remove(&id).is_some())
            .then(|| write(state.to_thoughts_file()));
        Some(Untracked {
            entry,
            thought,
            thoughts_written,
        })
    }

    /// The end of `id` is recorded; true when no session is tracked or
    /// finishing any more.
    pub fn finish(&self, id: SessionId) -> bool {
        let mut state = self.lock();
        state.finishing.remove(&id);
        state.sessions.is_empty() && state.finishing.is_empty()
    }

    pub fn is_finishing(&self, id: SessionId) -> bool {
        self.lock().finishing.contains(&id)
    }

    /// Shutting down: attaches that complete now are let go; the actors
    /// to stop.
    pub fn close(&self) -> Vec<SessionHandle> {
        let mut state = self.lock();
        state.closing = true;
        state.sessions.values().map(|e| e.handle.clone()).collect()
    }

    // Thoughts.

    /// Stores a thought unless `keeps` says the one stored stays (it is
    /// newer); the thought in force, whether this one was applied, and
    /// the thoughts file's write through `write` when it was.
    pub fn put_thought<W>(
        &self,
        id: SessionId,
        thought: Thought,
        keeps: impl FnOnce(&Thought) -> bool,
        write: impl FnOnce(ThoughtsFile) -> W,
    ) -> (Thought, bool, Option<W>) {
        let mut state = self.lock();
        if let Some(current) = state.thoughts.get(&id).filter(|t| keeps(t)) {
            return (current.clone(), false, None);
        }
        state.thoughts.insert(id, thought.clone());
        let written = write(state.to_thoughts_file());
        (thought, true, Some(written))
    }

    // Files.

    /// Builds `registry.json` and hands it to `write` in one locked
    /// section, so writes queue in the order the states existed.
    pub fn write_file<W>(&self, write: impl FnOnce(RegistryFile) -> W) -> W {
        write(self.lock().to_file())
    }
}

impl State {
    /// Moves the counter past `id`, so ids found on disk or on a tmux
    /// session are never reissued.
    fn advance_past(&mut self, id: SessionId) {
        self.next_counter = self.next_counter.max(id.0.saturating_add(1));
    }

    /// The next id; the counter never goes back. (Sources that could push it
    /// near the top of u64 are capped at 2^53 when read, see
    /// `store::floors::MAX_TRUSTED`.)
    fn allocate_id(&mut self) -> SessionId {
        let id = SessionId(self.next_counter);
        self.next_counter = self.next_counter.saturating_add(1);
        id
    }

    /// Whether a tracked, detached or in-flight session has this id.
    fn is_id_in_use(&self, id: SessionId) -> bool {
        self.sessions.contains_key(&id)
            || self.reserved.values().any(|&r| r == id)
            || self.detached.values().any(|d| d.session_id == id)
    }

    /// Sessions tracked plus those in flight, which all count against
    /// capacity; a session whose program has exited no longer does, though
    /// its end may not be recorded yet.
    fn occupancy(&self) -> usize {
        let live = self
            .sessions
            .values()
            .filter(|e| e.state() != SessionState::Exited)
            .count();
        live + self.reserved.len()
    }

    fn find_by_name(&self, name: &str) -> Option<&Entry> {
        self.sessions.values().find(|e| e.tmux_name == name)
    }

    fn is_name_in_use(&self, name: &str) -> bool {
        self.reserved.contains_key(name) || self.find_by_name(name).is_some()
    }

    /// The next free numeric name: one above the highest number in use
    /// here or in `tmux_names` (what tmux has, as discovery saw it).
    fn next_free_number(&self, tmux_names: &BTreeSet<String>) -> String {
        let names = self
            .sessions
            .values()
            .map(|e| e.tmux_name.as_str())
            .chain(self.detached.keys().map(String::as_str))
            .chain(self.reserved.keys().map(String::as_str))
            .chain(tmux_names.iter().map(String::as_str));
        let highest = names.filter_map(|n| n.parse::<u64>().ok()).max();
        highest.map_or(0, |n| n + 1).to_string()
    }

    /// Takes a name (and tmux id, if known) for a session being created or
    /// adopted.
    fn reserve(
        &mut self,
        registry: &Arc<Registry>,
        id: SessionId,
        tmux_name: String,
        tmux_id: Option<TmuxSessionId>,
    ) -> Reservation {
        self.reserved.insert(tmux_name.clone(), id);
        self.reserved_tmux_ids.extend(tmux_id);
        Reservation {
            registry: registry.clone(),
            id,
            tmux_name,
            tmux_id,
            held: true,
        }
    }

    fn unreserve(&mut self, name: &str, tmux_id: Option<TmuxSessionId>) {
        self.reserved.remove(name);
        if let Some(tmux_id) = &tmux_id {
            self.reserved_tmux_ids.remove(tmux_id);
        }
    }

    fn rename(&mut self, id: SessionId, name: &str) -> Option<String> {
        let Some(entry) = self.sessions.get_mut(&id) else {
            if self.attaching.contains_key(&id) {
                self.renamed_while_attaching.insert(id, name.to_owned());
            }
            return None;
        };
        if entry.tmux_name == name {
            return None;
        }
        let old = std::mem::replace(&mut entry.tmux_name, name.to_owned());
        if let Some(summary) = &mut entry.last_summary {
            summary.tmux_name = name.to_owned();
        }
        Some(old)
    }

    fn summarize(&mut self, id: SessionId, actor: ActorSummary) -> Option<SessionSummary> {
        let thought = self.thoughts.get(&id).cloned();
        let entry = self.sessions.get_mut(&id)?;
        let summary = SessionSummary {
            session_id: id,
            tmux_name: entry.tmux_name.clone(),
            created_at: entry.created_at,
            ended_at: None,
            queued_inputs: entry.queue.len(),
            thought,
            actor,
        };
        entry.last_summary = Some(summary.clone());
        Some(summary)
    }

    fn attaching_summary(&self, id: SessionId) -> Option<SessionSummary> {
        let mut summary = self.attaching.get(&id)?.clone();
        summary.thought = self.thoughts.get(&id).cloned();
        Some(summary)
    }

    fn to_thoughts_file(&self) -> ThoughtsFile {
        ThoughtsFile {
            version: 1,
            thoughts: self
                .thoughts
                .iter()
                .map(|(id, thought)| (id.to_string(), thought.clone()))
                .collect(),
        }
    }

    fn to_file(&self) -> RegistryFile {
        let mut sessions: Vec<PersistedSession> =
            self.sessions.values().map(Entry::persisted).collect();
        sessions.extend(self.detached.values().cloned());
        let mut detached: Vec<String> = self.detached.keys().cloned().collect();
        // Not yet restored: keep it on disk exactly as it was.
        if let Some(pending) = &self.restore_pending {
            sessions.extend(pending.sessions.iter().cloned());
            detached.extend(pending.detached.iter().cloned());
        }
        sessions.sort_by_key(|s| s.session_id);
        RegistryFile {
            version: 1,
            next_session_counter: self.next_counter,
            sessions,
            detached,
        }
    }
}
