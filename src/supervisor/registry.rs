//! The registry: which tmux sessions tmuxd tracks, which it was told to let
//! go of, and the id counter. Plain data, touched only in short synchronous
//! sections under the supervisor's mutex.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use chrono::{DateTime, Utc};

use super::SessionSummary;
use super::ended::Retained;
use crate::id::SessionId;
use crate::session::{ActorSummary, Attention, SessionHandle, SessionState};
use crate::store::{
    PersistedAttention, PersistedSession, QueuedInput, RegistryFile, Thought, ThoughtsFile,
};
use crate::tmux::control::TmuxSessionId;

/// Why tracking of a session is ending, once it is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Kill,
}

/// A tracked session.
pub struct Entry {
    pub id: SessionId,
    /// The session's current name: followed through renames (`rename`).
    pub tmux_name: String,
    /// tmux's id of the session, which a rename keeps.
    pub tmux_id: TmuxSessionId,
    pub created_at: DateTime<Utc>,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub handle: SessionHandle,
    /// The current actor; exits of older actors are ignored.
    pub actor_id: u64,
    pub ending: Option<Ending>,
    /// The last summary the actor gave, served when it does not answer in time.
    pub last_summary: Option<SessionSummary>,
    /// Recent re-attaches, to stop re-attaching to a session that keeps dropping us.
    pub reattaches: Vec<Instant>,
    /// The state the actor last reported.
    pub state: SessionState,
    /// The attention flag the actor last reported (persisted).
    pub attention: Option<Attention>,
    /// Input waiting for the session to be ready for it, oldest first.
    pub queue: VecDeque<QueuedInput>,
    /// A queued input is being typed; the next waits for the next idle.
    pub delivering: bool,
    /// Taken while input is typed, so requests reach the pane whole and in order.
    pub typing: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl Entry {
    pub fn persisted(&self) -> PersistedSession {
        PersistedSession {
            session_id: self.id,
            tmux_name: self.tmux_name.clone(),
            created_at: self.created_at,
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            queued_inputs: self.queue.iter().cloned().collect(),
            attention: self.attention.map(persist_attention),
            tmux_id: Some(self.tmux_id.to_string()),
        }
    }

    /// The number the next queued input gets: above every one queued.
    pub fn next_queue_id(&self) -> u64 {
        self.queue.iter().map(|q| q.id + 1).max().unwrap_or(1)
    }
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

/// A session being created or adopted: its id and name are taken.
#[derive(Clone, Debug)]
pub struct Reservation {
    pub id: SessionId,
    pub tmux_name: String,
    /// tmux's id of the session, when discovery listed it.
    pub tmux_id: Option<TmuxSessionId>,
}

#[derive(Default)]
pub struct Registry {
    pub sessions: BTreeMap<SessionId, Entry>,
    /// Deliberately detached sessions, by tmux name, with the id they keep.
    pub detached: BTreeMap<String, PersistedSession>,
    /// Names with a create or adopt in flight, and the id each will get.
    pub reserved: BTreeMap<String, SessionId>,
    /// tmux ids of the sessions in `reserved` discovery listed: renamed
    /// while they attach, they are not adopted a second time.
    reserved_tmux_ids: BTreeSet<TmuxSessionId>,
    /// Renames heard while the session's attach was not committed yet,
    /// by session id: applied at the commit.
    renamed_while_attaching: BTreeMap<SessionId, String>,
    /// When discovery first listed each untracked session (by tmux id),
    /// to let it live `discovery.min_age_ms` before adopting it.
    first_seen: BTreeMap<TmuxSessionId, Instant>,
    /// When discovery should look again at sessions too young to adopt.
    pub recheck_at: Option<Instant>,
    /// Session names tmux reported on the last look, for picking free numbers.
    pub seen_names: BTreeSet<String>,
    /// The registry read at startup, until tmux answers and it is merged.
    pub restore_pending: Option<RegistryFile>,
    /// The latest published status per session id.
    pub thoughts: BTreeMap<SessionId, Thought>,
    /// When tracking of each name last ended: a discovery that listed tmux's
    /// sessions before then saw it alive and must not adopt it anew.
    pub ended: BTreeMap<String, Instant>,
    /// Sessions that ended, kept readable for the retention window.
    pub retained: BTreeMap<SessionId, Retained>,
    /// Sessions whose end is being recorded: no longer tracked, not yet retained.
    pub finishing: BTreeSet<SessionId>,
    /// Names discovery left alone because `max_sessions` was reached (said
    /// once in the log, adopted when room frees up).
    pub refused: BTreeSet<String>,
    /// Sessions whose control client is attaching, listed as `starting`
    /// meanwhile (an adoption may wait seconds for a quiet tmux server).
    pub attaching: BTreeMap<SessionId, SessionSummary>,
    /// Shutting down: an attach that completes now is let go at once.
    pub closing: bool,
    next_counter: u64,
}

impl Registry {
    pub fn new(next_counter: u64) -> Self {
        Registry {
            next_counter: next_counter.max(1),
            ..Registry::default()
        }
    }

    /// Moves the counter past `id`, so ids found on disk or on a tmux
    /// session are never reissued.
    pub fn advance_past(&mut self, id: SessionId) {
        self.next_counter = self.next_counter.max(id.0.saturating_add(1));
    }

    /// The next id; the counter never goes back. (Sources that could push it
    /// near the top of u64 are capped at 2^53 when read, see
    /// `store::floors::MAX_TRUSTED`.)
    pub fn allocate_id(&mut self) -> SessionId {
        let id = SessionId(self.next_counter);
        self.next_counter = self.next_counter.saturating_add(1);
        id
    }

    /// Whether a tracked, detached or in-flight session has this id.
    pub fn is_id_in_use(&self, id: SessionId) -> bool {
        self.sessions.contains_key(&id)
            || self.reserved.values().any(|&r| r == id)
            || self.detached.values().any(|d| d.session_id == id)
    }

    /// Sessions tracked plus those in flight, which all count against
    /// capacity; a session whose program has exited no longer does, though
    /// its end may not be recorded yet.
    pub fn occupancy(&self) -> usize {
        let live = self
            .sessions
            .values()
            .filter(|e| e.state != SessionState::Exited)
            .count();
        live + self.reserved.len()
    }

    pub fn find_by_name(&self, name: &str) -> Option<&Entry> {
        self.sessions.values().find(|e| e.tmux_name == name)
    }

    /// Takes a name (and tmux id, if known) for a session being created or
    /// adopted.
    pub fn reserve(&mut self, reservation: &Reservation) {
        self.reserved
            .insert(reservation.tmux_name.clone(), reservation.id);
        self.reserved_tmux_ids.extend(reservation.tmux_id);
    }

    /// Gives a reservation back (its session is committed, or failed).
    pub fn unreserve(&mut self, reservation: &Reservation) {
        self.reserved.remove(&reservation.tmux_name);
        if let Some(tmux_id) = &reservation.tmux_id {
            self.reserved_tmux_ids.remove(tmux_id);
        }
    }

    pub fn reserved_tmux_ids(&self) -> &BTreeSet<TmuxSessionId> {
        &self.reserved_tmux_ids
    }

    /// Follows tmux's rename of session `id`: the old name when the name
    /// changed. A session still attaching is renamed when it is committed
    /// (`take_rename_while_attaching`).
    pub fn rename(&mut self, id: SessionId, name: &str) -> Option<String> {
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

    /// The name session `id` was renamed to while it attached, if it was.
    pub fn take_rename_while_attaching(&mut self, id: SessionId) -> Option<String> {
        self.renamed_while_attaching.remove(&id)
    }

    /// Moves a detached session to the name tmux now lists it under.
    pub fn rename_detached(&mut self, old: &str, new: &str) {
        if self.detached.contains_key(new) {
            return;
        }
        if let Some(mut session) = self.detached.remove(old) {
            session.tmux_name = new.to_owned();
            self.detached.insert(new.to_owned(), session);
        }
    }

    /// Notes when each listed session was first seen (forgetting those no
    /// longer listed) and answers how long each has been seen for.
    pub fn seen_for(
        &mut self,
        listed: impl IntoIterator<Item = TmuxSessionId>,
        now: Instant,
    ) -> BTreeMap<TmuxSessionId, std::time::Duration> {
        let mut seen = BTreeMap::new();
        for tmux_id in listed {
            let first = *self.first_seen.entry(tmux_id).or_insert(now);
            seen.insert(tmux_id, now.saturating_duration_since(first));
        }
        self.first_seen
            .retain(|tmux_id, _| seen.contains_key(tmux_id));
        seen
    }

    pub fn is_name_in_use(&self, name: &str) -> bool {
        self.reserved.contains_key(name) || self.find_by_name(name).is_some()
    }

    /// The next free numeric name: one above the highest number in use.
    pub fn next_free_number(&self) -> String {
        let names = self
            .sessions
            .values()
            .map(|e| e.tmux_name.as_str())
            .chain(self.detached.keys().map(String::as_str))
            .chain(self.reserved.keys().map(String::as_str))
            .chain(self.seen_names.iter().map(String::as_str));
        let highest = names.filter_map(|n| n.parse::<u64>().ok()).max();
        highest.map_or(0, |n| n + 1).to_string()
    }

    /// The client-facing summary of a session from its actor's answer;
    /// remembered for when the actor is too slow to answer a list.
    pub fn summarize(&mut self, id: SessionId, actor: ActorSummary) -> Option<SessionSummary> {
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

    pub fn to_thoughts_file(&self) -> ThoughtsFile {
        ThoughtsFile {
            version: 1,
            thoughts: self
                .thoughts
                .iter()
                .map(|(id, thought)| (id.to_string(), thought.clone()))
                .collect(),
        }
    }

    pub fn to_file(&self) -> RegistryFile {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_never_goes_back() {
        let mut r = Registry::new(5);
        r.advance_past(SessionId(3));
        assert_eq!(r.allocate_id(), SessionId(5));
        r.advance_past(SessionId(10));
        assert_eq!(r.allocate_id(), SessionId(11));
        assert_eq!(Registry::new(0).allocate_id(), SessionId(1));
        r.advance_past(SessionId(u64::MAX));
        assert_eq!(
            r.allocate_id(),
            SessionId(u64::MAX),
            "saturates, never wraps to 0"
        );
    }

    #[test]
    fn ids_in_use_include_reserved_and_detached() {
        let mut r = Registry::new(1);
        r.reserved.insert("new".to_owned(), SessionId(4));
        r.detached.insert(
            "parked".to_owned(),
            PersistedSession {
                session_id: SessionId(2),
                tmux_name: "parked".to_owned(),
                created_at: DateTime::UNIX_EPOCH,
                command: None,
                cwd: None,
                queued_inputs: Vec::new(),
                attention: None,
                tmux_id: None,
            },
        );
        let in_use: Vec<u64> = (0..6).filter(|&id| r.is_id_in_use(SessionId(id))).collect();
        assert_eq!(in_use, [2, 4]);
    }

    #[test]
    fn reservations_hold_names_and_tmux_ids_until_given_back() {
        let mut r = Registry::new(1);
        let adopting = Reservation {
            id: SessionId(3),
            tmux_name: "x".to_owned(),
            tmux_id: Some(TmuxSessionId(9)),
        };
        r.reserve(&adopting);
        assert!(r.is_name_in_use("x"));
        assert!(r.reserved_tmux_ids().contains(&TmuxSessionId(9)));
        r.unreserve(&adopting);
        assert!(!r.is_name_in_use("x"));
        assert!(r.reserved_tmux_ids().is_empty());
    }

    #[test]
    fn renames_while_attaching_wait_for_the_commit() {
        let mut r = Registry::new(1);
        let id = SessionId(4);
        assert_eq!(r.rename(id, "new"), None, "unknown: nothing kept");
        assert_eq!(r.take_rename_while_attaching(id), None);
        r.attaching.insert(id, summary("old"));
        assert_eq!(r.rename(id, "new"), None);
        assert_eq!(r.take_rename_while_attaching(id), Some("new".to_owned()));
        assert_eq!(r.take_rename_while_attaching(id), None);
    }

    #[test]
    fn detached_sessions_move_to_their_new_name_unless_it_is_taken() {
        let mut r = Registry::new(1);
        for name in ["parked", "other"] {
            r.detached.insert(name.to_owned(), parked(name));
        }
        r.rename_detached("parked", "other");
        assert_eq!(r.detached["parked"].tmux_name, "parked");
        r.rename_detached("parked", "moved");
        assert_eq!(r.detached.keys().collect::<Vec<_>>(), ["moved", "other"]);
        assert_eq!(r.detached["moved"].tmux_name, "moved");
    }

    #[test]
    fn first_seen_is_kept_while_listed_and_forgotten_after() {
        let mut r = Registry::new(1);
        let t0 = Instant::now();
        let ms = std::time::Duration::from_millis;
        let seen = r.seen_for([TmuxSessionId(1)], t0);
        assert_eq!(seen[&TmuxSessionId(1)], ms(0));
        let seen = r.seen_for([TmuxSessionId(1), TmuxSessionId(2)], t0 + ms(300));
        assert_eq!(seen[&TmuxSessionId(1)], ms(300));
        assert_eq!(seen[&TmuxSessionId(2)], ms(0));
        r.seen_for([TmuxSessionId(2)], t0 + ms(400));
        let seen = r.seen_for([TmuxSessionId(1)], t0 + ms(500));
        assert_eq!(seen[&TmuxSessionId(1)], ms(0), "gone in between: seen anew");
    }

    fn parked(name: &str) -> PersistedSession {
        PersistedSession {
            session_id: SessionId(2),
            tmux_name: name.to_owned(),
            created_at: DateTime::UNIX_EPOCH,
            command: None,
            cwd: None,
            queued_inputs: Vec::new(),
            attention: None,
            tmux_id: None,
        }
    }

    fn summary(name: &str) -> SessionSummary {
        SessionSummary {
            session_id: SessionId(4),
            tmux_name: name.to_owned(),
            created_at: DateTime::UNIX_EPOCH,
            ended_at: None,
            queued_inputs: 0,
            thought: None,
            actor: ActorSummary::without_client(
                SessionState::Starting,
                crate::session::StateReason::Attaching,
                Utc::now(),
                (80, 24),
            ),
        }
    }

    #[test]
    fn free_number_is_above_every_numeric_name() {
        let mut r = Registry::new(1);
        assert_eq!(r.next_free_number(), "0");
        r.seen_names.extend(["3".to_owned(), "build".to_owned()]);
        r.reserved.insert("7".to_owned(), SessionId(1));
        assert_eq!(r.next_free_number(), "8");
    }
}
