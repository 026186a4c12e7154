//! What discovery has seen of tmux's sessions: when each was first listed
//! (an untracked one lives `discovery.min_age_ms` before it is adopted),
//! when to look again at those too young yet, the names of the last look
//! (a new session's numeric name skips them), and the names left alone for
//! capacity (said once in the log, adopted when room frees up). The
//! registry holds it under its lock; nothing else reaches its state.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::tmux::control::TmuxSessionId;

#[derive(Debug, Default)]
pub(super) struct Sightings {
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
    /// A look at tmux's listing at `now`: keeps its `names`, and answers
    /// how long each `listed` session has been seen for (one no longer
    /// listed is forgotten, and seen anew if it comes back).
    pub(super) fn look(
        &mut self,
        names: BTreeSet<String>,
        listed: impl IntoIterator<Item = TmuxSessionId>,
        now: Instant,
    ) -> BTreeMap<TmuxSessionId, Duration> {
        self.names = names;
        let mut seen = BTreeMap::new();
        for tmux_id in listed {
            let first = *self.first_seen.entry(tmux_id).or_insert(now);
            seen.insert(tmux_id, now.saturating_duration_since(first));
        }
        self.first_seen
            .retain(|tmux_id, _| seen.contains_key(tmux_id));
        seen
    }

    /// The planned look after this one, if some session is too young yet.
    pub(super) fn recheck_at(&self) -> Option<Instant> {
        self.recheck_at
    }

    pub(super) fn set_recheck_at(&mut self, at: Option<Instant>) {
        self.recheck_at = at;
    }

    /// A name tmux has, learned outside a look (a create found it taken).
    pub(super) fn note_name(&mut self, name: String) {
        self.names.insert(name);
    }

    /// The names of the last look, and those noted since.
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// `name` was left alone for capacity; true the first time.
    pub(super) fn refuse(&mut self, name: &str) -> bool {
        self.refused.insert(name.to_owned())
    }

    pub(super) fn is_refused(&self, name: &str) -> bool {
        self.refused.contains(name)
    }

    /// Keeps the refusals of names `still_waiting` says are listed and
    /// untracked; one adopted or gone is said again if refused anew.
    pub(super) fn keep_refused(&mut self, still_waiting: impl Fn(&str) -> bool) {
        self.refused.retain(|name| still_waiting(name));
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
        let mut sightings = Sightings::default();
        for (at, listed, want) in steps {
            let seen = sightings.look(BTreeSet::new(), listed, t0 + ms(at));
            let want: BTreeMap<_, _> = want.into_iter().map(|(id, d)| (id, ms(d))).collect();
            assert_eq!(seen, want, "at {at} ms");
        }
    }

    #[test]
    fn a_look_replaces_the_names_and_a_noted_name_joins_them() {
        let mut sightings = Sightings::default();
        let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect();
        sightings.look(names(&["1", "build"]), [], Instant::now());
        sightings.note_name("7".into());
        assert_eq!(sightings.names().collect::<Vec<_>>(), ["1", "7", "build"]);
        sightings.look(names(&["2"]), [], Instant::now());
        assert_eq!(sightings.names().collect::<Vec<_>>(), ["2"]);
    }

    #[test]
    fn a_refusal_is_said_once_while_the_session_waits() {
        let mut sightings = Sightings::default();
        assert!(sightings.refuse("a"), "first refusal: said");
        sightings.keep_refused(|_| true);
        assert!(!sightings.refuse("a"), "still waiting: not said again");
        assert!(sightings.is_refused("a"));
        sightings.keep_refused(|name| name != "a");
        assert!(!sightings.is_refused("a"), "adopted or gone: forgotten");
        assert!(sightings.refuse("a"), "refused anew: said again");
    }
}
