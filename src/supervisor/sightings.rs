//! What discovery has seen of tmux's sessions: when each was first listed
//! (an untracked one lives `discovery.min_age_ms` before it is adopted),
//! when to look again at those too young yet, the names of the last look
//! (a new session's numeric name skips them), and the names left alone for
//! capacity (said once in the log, adopted when room frees up). Its lock
//! is its own, taken in short synchronous sections and never with the
//! registry's: discovery asks it, then the registry, then tells it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::tmux::control::TmuxSessionId;

#[derive(Debug, Default)]
pub struct Sightings {
    state: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// When each listed session (by tmux id) was first listed.
    first_seen: BTreeMap<TmuxSessionId, Instant>,
    /// When to look again at sessions too young to adopt.
    recheck_at: Option<Instant>,
    /// Session names tmux reported on the last look.
    names: BTreeSet<String>,
    /// Names left alone because `max_sessions` was reached.
    refused: BTreeSet<String>,
}

impl Sightings {
    fn lock(&self) -> MutexGuard<'_, Seen> {
        // Every change is one step: state a panic interrupted is whole.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A look at tmux's listing at `now`: keeps its `names`, and answers
    /// how long each `listed` session has been seen for (one no longer
    /// listed is forgotten, and seen anew if it comes back).
    pub fn look(
        &self,
        names: BTreeSet<String>,
        listed: impl IntoIterator<Item = TmuxSessionId>,
        now: Instant,
    ) -> BTreeMap<TmuxSessionId, Duration> {
        let mut state = self.lock();
        state.names = names;
        let mut seen = BTreeMap::new();
        for tmux_id in listed {
            let first = *state.first_seen.entry(tmux_id).or_insert(now);
            seen.insert(tmux_id, now.saturating_duration_since(first));
        }
        state
            .first_seen
            .retain(|tmux_id, _| seen.contains_key(tmux_id));
        seen
    }

    /// The planned look after this one, if some session is too young yet.
    pub fn recheck_at(&self) -> Option<Instant> {
        self.lock().recheck_at
    }

    /// After a look was planned: when to look again, and which names are
    /// still listed and untracked (a refusal of any other is forgotten, so
    /// one refused anew is said again).
    pub fn planned(&self, recheck_at: Option<Instant>, waiting: &BTreeSet<String>) {
        let mut state = self.lock();
        state.recheck_at = recheck_at;
        state.refused.retain(|name| waiting.contains(name));
    }

    /// A name tmux has, learned outside a look (a create found it taken).
    pub fn note_name(&self, name: String) {
        self.lock().names.insert(name);
    }

    /// The names of the last look, and those noted since.
    pub fn names(&self) -> BTreeSet<String> {
        self.lock().names.clone()
    }

    /// `name` was left alone for capacity; true the first time.
    pub fn refuse(&self, name: &str) -> bool {
        self.lock().refused.insert(name.to_owned())
    }

    pub fn is_refused(&self, name: &str) -> bool {
        self.lock().refused.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_seen_is_kept_while_listed_and_forgotten_after() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (one, two) = (TmuxSessionId(1), TmuxSessionId(2));
        // (time, listed, how long each has been seen for)
        let steps = [
            (0, vec![one], vec![(one, 0)]),
            (300, vec![one, two], vec![(one, 300), (two, 0)]),
            (400, vec![two], vec![(two, 100)]),
            (500, vec![one, two], vec![(one, 0), (two, 200)]),
        ];
        let sightings = Sightings::default();
        for (at, listed, want) in steps {
            let seen = sightings.look(BTreeSet::new(), listed, t0 + ms(at));
            let want: BTreeMap<_, _> = want.into_iter().map(|(id, d)| (id, ms(d))).collect();
            assert_eq!(seen, want, "at {at} ms");
        }
    }

    #[test]
    fn a_look_replaces_the_names_and_a_noted_name_joins_them() {
        let sightings = Sightings::default();
        let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect();
        sightings.look(names(&["1", "build"]), [], Instant::now());
        sightings.note_name("7".into());
        assert_eq!(sightings.names(), names(&["1", "7", "build"]));
        sightings.look(names(&["2"]), [], Instant::now());
        assert_eq!(sightings.names(), names(&["2"]));
    }

    #[test]
    fn a_refusal_is_said_once_while_the_session_waits() {
        let sightings = Sightings::default();
        let waiting = |list: &[&str]| list.iter().map(|n| n.to_string()).collect();
        let later = Instant::now();
        assert!(sightings.refuse("a"), "first refusal: said");
        sightings.planned(Some(later), &waiting(&["a", "b"]));
        assert!(!sightings.refuse("a"), "still waiting: not said again");
        assert!(sightings.is_refused("a"));
        assert_eq!(sightings.recheck_at(), Some(later));
        sightings.planned(None, &waiting(&["b"]));
        assert!(!sightings.is_refused("a"), "adopted or gone: forgotten");
        assert!(sightings.refuse("a"), "refused anew: said again");
        assert_eq!(sightings.recheck_at(), None);
    }
}
