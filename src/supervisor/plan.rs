//! Pure planning: what discovery should adopt and update, and how the
//! persisted registry merges with the tmux sessions alive at startup.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::id::SessionId;
use crate::store::{PersistedSession, RegistryFile};
use crate::tmux::control::TmuxSessionId;
use crate::tmux::{SessionView, validate_session_name};

/// Which tmux session names discovery may adopt (`discovery.include` / `exclude`).
#[derive(Clone, Debug)]
pub struct NameFilter {
    include: Vec<glob::Pattern>,
    exclude: Vec<glob::Pattern>,
}

impl NameFilter {
    /// Patterns are validated with the config; an invalid one matches nothing.
    pub fn new(include: &[String], exclude: &[String]) -> Self {
        let compile = |patterns: &[String]| {
            patterns
                .iter()
                .filter_map(|p| glob::Pattern::new(p).ok())
                .collect()
        };
        NameFilter {
            include: compile(include),
            exclude: compile(exclude),
        }
    }

    pub fn allows(&self, name: &str) -> bool {
        self.include.iter().any(|p| p.matches(name))
            && !self.exclude.iter().any(|p| p.matches(name))
    }
}

/// A session tmux listed, as discovery plans with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Listed {
    /// tmux's id (`$N`), when the listing said (`list-sessions` does).
    pub tmux_id: Option<TmuxSessionId>,
    /// How long it has lived at least; `None` when unknown (taken as old
    /// enough: nothing better is known).
    pub age: Option<Duration>,
}

/// A tracked session, as discovery matches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackedRef<'a> {
    pub id: SessionId,
    pub name: &'a str,
    pub tmux_id: Option<TmuxSessionId>,
}

/// What the registry looks like to discovery, borrowed for one planning step.
#[derive(Default)]
pub struct Known<'a> {
    pub tracked: Vec<TrackedRef<'a>>,
    /// Deliberately detached sessions: name and tmux id when known.
    pub detached: BTreeMap<&'a str, Option<TmuxSessionId>>,
    /// Names with a create or adopt in flight (or that ended since tmux
    /// was asked).
    pub reserved: BTreeSet<&'a str>,
    /// tmux ids of sessions with an adoption in flight: renamed meanwhile,
    /// they are still the same session.
    pub reserved_ids: BTreeSet<TmuxSessionId>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct DiscoveryPlan {
    /// New tmux sessions to adopt, by name.
    pub adopt: Vec<String>,
    /// Tracked sessions tmux lists under another name: (id, new name).
    pub renamed: Vec<(SessionId, String)>,
    /// Detached sessions tmux lists under another name: (old, new).
    pub renamed_detached: Vec<(String, String)>,
    /// Detached names whose tmux session is gone: nothing left to protect.
    pub forget_detached: Vec<String>,
    /// Sessions too young to adopt yet: look again after this long.
    pub recheck_in: Option<Duration>,
}

/// Decides, for each session tmux listed, whether it is a tracked one
/// (followed by its tmux id through renames, by name where the id is not
/// known), a detached one, one in flight, or one to adopt once it has
/// lived `min_age`.
pub fn plan_discovery(
    live: &BTreeMap<String, Listed>,
    known: &Known<'_>,
    filter: &NameFilter,
    min_age: Duration,
) -> DiscoveryPlan {
    let mut plan = DiscoveryPlan::default();
    let detached_by_id: BTreeMap<TmuxSessionId, &str> = known
        .detached
        .iter()
        .filter_map(|(name, tmux_id)| Some(((*tmux_id)?, *name)))
        .collect();
    let live_ids: BTreeSet<TmuxSessionId> = live.values().filter_map(|l| l.tmux_id).collect();
    for (name, listed) in live {
        if let Some(tracked) = tracked_match(&known.tracked, name, listed) {
            if tracked.name != name {
                plan.renamed.push((tracked.id, name.clone()));
            }
            continue;
        }
        if let Some(old) = listed.tmux_id.and_then(|t| detached_by_id.get(&t)) {
            if *old != name {
                plan.renamed_detached
                    .push(((*old).to_owned(), name.clone()));
            }
            continue;
        }
        let in_flight = known.reserved.contains(name.as_str())
            || listed
                .tmux_id
                .is_some_and(|t| known.reserved_ids.contains(&t));
        if in_flight
            || known.detached.contains_key(name.as_str())
            || validate_session_name(name).is_err()
            || !filter.allows(name)
        {
            continue;
        }
        match listed.age {
            Some(age) if age < min_age => {
                let left = min_age - age;
                plan.recheck_in = Some(plan.recheck_in.map_or(left, |r| r.min(left)));
            }
            _ => plan.adopt.push(name.clone()),
        }
    }
    // Gone when neither its name nor its id is listed any more.
    plan.forget_detached = known
        .detached
        .iter()
        .filter(|(name, tmux_id)| {
            !live.contains_key(**name) && !tmux_id.is_some_and(|t| live_ids.contains(&t))
        })
        .map(|(name, _)| (*name).to_owned())
        .collect();
    plan
}

/// The tracked session a listed one is: the one with its tmux id, or,
/// where either id is unknown, the one with its name. A name held by a
/// tracked session with another id is a new session that took the name.
fn tracked_match<'a>(
    tracked: &[TrackedRef<'a>],
    name: &str,
    listed: &Listed,
) -> Option<TrackedRef<'a>> {
    if let Some(tmux_id) = listed.tmux_id
        && let Some(by_id) = tracked.iter().find(|t| t.tmux_id == Some(tmux_id))
    {
        return Some(*by_id);
    }
    tracked
        .iter()
        .find(|t| t.name == name && (t.tmux_id.is_none() || listed.tmux_id.is_none()))
        .copied()
}

/// How long a session has lived at least: since discovery first saw it,
/// or since tmux made it (`session_created` is in whole seconds, so one
/// second less than the difference is certain).
pub fn lived_at_least(seen_for: Duration, created: Option<u64>, now_epoch: u64) -> Duration {
    let by_tmux = created.map_or(0, |created| {
        now_epoch.saturating_sub(created).saturating_sub(1)
    });
    seen_for.max(Duration::from_secs(by_tmux))
}

#[derive(Debug, Default, PartialEq)]
pub struct StartupPlan {
    /// Persisted sessions alive in tmux: re-attach under their old ids.
    pub reattach: Vec<PersistedSession>,
    /// Live sessions the registry does not know that carry an id tmuxd gave
    /// them (`tmuxd_id`, e.g. after `registry.json` was lost): re-attach
    /// under that id, if discovery would adopt them at all.
    pub tagged: Vec<(String, SessionId)>,
    /// Detached sessions still alive in tmux: keep protecting them.
    pub detached: Vec<PersistedSession>,
    /// Persisted sessions whose tmux session is gone: record their end.
    pub missing: Vec<PersistedSession>,
    /// Persisted sessions renamed in tmux while tmuxd was away (found by
    /// the id they carry): (session id, old name, new name). Their entry
    /// in `reattach` or `detached` already has the new name.
    pub renamed: Vec<(SessionId, String, String)>,
    /// The counter: past the persisted one, every id on disk and every id
    /// on a live session.
    pub next_counter: u64,
}

/// Merges the persisted registry with the live tmux sessions and the ids
/// they carry (`tags`: tmux name -> id number).
pub fn plan_startup(
    file: &RegistryFile,
    live: &BTreeMap<String, SessionView>,
    tags: &BTreeMap<String, SessionId>,
    filter: &NameFilter,
) -> StartupPlan {
    let detached: BTreeSet<&str> = file.detached.iter().map(String::as_str).collect();
    let ids = file.sessions.iter().map(|s| s.session_id);
    let highest_id = ids.chain(tags.values().copied()).max();
    let mut plan = StartupPlan {
        next_counter: file
            .next_session_counter
            .max(highest_id.map_or(1, |n| n.0.saturating_add(1))),
        tagged: plan_tagged(file, live, tags, filter),
        ..StartupPlan::default()
    };
    let moved = renamed_while_away(file, live, tags);
    let mut seen_names = BTreeSet::new();
    for session in &file.sessions {
        // A hand-edited file could list a name twice; the first id wins.
        if !seen_names.insert(session.tmux_name.as_str()) {
            continue;
        }
        let mut session = session.clone();
        let is_detached = detached.contains(session.tmux_name.as_str());
        let mut alive = live.contains_key(&session.tmux_name);
        if !alive && let Some(new) = moved.get(&session.session_id) {
            let names = (session.tmux_name.clone(), (*new).to_owned());
            plan.renamed.push((session.session_id, names.0, names.1));
            session.tmux_name = (*new).to_owned();
            alive = true;
        }
        match (alive, is_detached) {
            (true, true) => plan.detached.push(session),
            (true, false) => plan.reattach.push(session),
            (false, true) => {}
            (false, false) => plan.missing.push(session),
        }
    }
    plan
}

/// Persisted sessions (by id) found alive under another name: the one live
/// session that carries the id, under a name the registry does not know.
fn renamed_while_away<'a>(
    file: &RegistryFile,
    live: &BTreeMap<String, SessionView>,
    tags: &'a BTreeMap<String, SessionId>,
) -> BTreeMap<SessionId, &'a str> {
    let known_names: BTreeSet<&str> = file
        .sessions
        .iter()
        .map(|s| s.tmux_name.as_str())
        .chain(file.detached.iter().map(String::as_str))
        .collect();
    let mut carriers: BTreeMap<SessionId, Vec<&str>> = BTreeMap::new();
    for (name, id) in tags {
        if live.contains_key(name) && !known_names.contains(name.as_str()) {
            carriers.entry(*id).or_default().push(name);
        }
    }
    carriers
        .into_iter()
        .filter_map(|(id, names)| match names[..] {
            [name] => Some((id, name)),
            _ => None,
        })
        .filter(|(_, name)| validate_session_name(name).is_ok())
        .collect()
}

/// Tagged live sessions to re-attach under their tag: unknown to the
/// registry by name, their id claimed by no persisted session and by no
/// other live session, and adoptable by discovery's rules.
fn plan_tagged(
    file: &RegistryFile,
    live: &BTreeMap<String, SessionView>,
    tags: &BTreeMap<String, SessionId>,
    filter: &NameFilter,
) -> Vec<(String, SessionId)> {
    let known_names: BTreeSet<&str> = file
        .sessions
        .iter()
        .map(|s| s.tmux_name.as_str())
        .chain(file.detached.iter().map(String::as_str))
        .collect();
    let claimed: BTreeSet<SessionId> = file.sessions.iter().map(|s| s.session_id).collect();
    let mut carriers: BTreeMap<SessionId, usize> = BTreeMap::new();
    for (name, id) in tags {
        if live.contains_key(name) {
            *carriers.entry(*id).or_default() += 1;
        }
    }
    tags.iter()
        .filter(|(name, id)| {
            live.contains_key(*name)
                && !known_names.contains(name.as_str())
                && !claimed.contains(id)
                && carriers.get(id) == Some(&1)
                && validate_session_name(name).is_ok()
                && filter.allows(name)
        })
        .map(|(name, id)| (name.clone(), *id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(name: &str) -> SessionView {
        SessionView {
            name: name.to_owned(),
            cols: 80,
            rows: 24,
            status_lines: 1,
            status_top: false,
            current_command: "bash".to_owned(),
            cwd: "/".to_owned(),
            title: String::new(),
            dead: false,
            alternate_on: false,
            pid: None,
            active_pane: None,
        }
    }

    fn live(names: &[&str]) -> BTreeMap<String, SessionView> {
        names.iter().map(|n| ((*n).to_owned(), view(n))).collect()
    }

    fn persisted(id: &str, name: &str) -> PersistedSession {
        PersistedSession {
            session_id: id.parse().expect("a session id"),
            tmux_name: name.to_owned(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            command: None,
            cwd: None,
            queued_inputs: Vec::new(),
            attention: None,
            tmux_id: None,
        }
    }

    fn listed(entries: &[(&str, Option<u32>, Option<u64>)]) -> BTreeMap<String, Listed> {
        entries
            .iter()
            .map(|(name, tmux_id, age_ms)| {
                let listed = Listed {
                    tmux_id: tmux_id.map(TmuxSessionId),
                    age: age_ms.map(Duration::from_millis),
                };
                ((*name).to_owned(), listed)
            })
            .collect()
    }

    fn tracked(id: u64, name: &str, tmux_id: Option<u32>) -> TrackedRef<'_> {
        TrackedRef {
            id: SessionId(id),
            name,
            tmux_id: tmux_id.map(TmuxSessionId),
        }
    }

    const MIN_AGE: Duration = Duration::from_millis(500);

    #[test]
    fn discovery_adopts_only_new_allowed_names() {
        let known = Known {
            tracked: vec![tracked(1, "a", None)],
            detached: BTreeMap::from([("d", None), ("gone", None)]),
            reserved: BTreeSet::from(["r"]),
            ..Known::default()
        };
        let filter = NameFilter::new(&["*".into()], &["skip*".into()]);
        let names = ["a", "b", "d", "r", "skip-me", "bad\nname"];
        let live = names.iter().map(|n| ((*n).to_owned(), Listed::default()));
        let plan = plan_discovery(&live.collect(), &known, &filter, MIN_AGE);
        assert_eq!(plan.adopt, vec!["b".to_owned()]);
        assert_eq!(plan.renamed, vec![]);
        assert_eq!(plan.forget_detached, vec!["gone".to_owned()]);
        assert_eq!(plan.recheck_in, None);
    }

    /// Each row: the tracked sessions (id, name, $N), what tmux lists
    /// (name, $N), and the plan's adoptions and renames.
    #[test]
    fn tracked_sessions_are_followed_by_tmux_id() {
        type Row<'a> = (
            &'a str,
            Vec<(u64, &'a str, Option<u32>)>,
            Vec<(&'a str, Option<u32>)>,
            Vec<&'a str>,
            Vec<(u64, &'a str)>,
        );
        let rows: Vec<Row> = vec![
            (
                "same name, same id",
                vec![(1, "a", Some(1))],
                vec![("a", Some(1))],
                vec![],
                vec![],
            ),
            (
                "renamed: followed, not adopted",
                vec![(1, "a", Some(1))],
                vec![("b", Some(1))],
                vec![],
                vec![(1, "b")],
            ),
            (
                "renamed, and a new session took the old name",
                vec![(1, "a", Some(1))],
                vec![("a", Some(5)), ("b", Some(1))],
                vec!["a"],
                vec![(1, "b")],
            ),
            (
                "two tracked sessions swap names",
                vec![(1, "a", Some(1)), (2, "b", Some(2))],
                vec![("a", Some(2)), ("b", Some(1))],
                vec![],
                vec![(2, "a"), (1, "b")],
            ),
            (
                "listing without ids: by name",
                vec![(1, "a", Some(1))],
                vec![("a", None)],
                vec![],
                vec![],
            ),
            (
                "tracked without id: by name",
                vec![(1, "a", None)],
                vec![("a", Some(3))],
                vec![],
                vec![],
            ),
            (
                "renamed, listing without ids: looks new",
                vec![(1, "a", Some(1))],
                vec![("b", None)],
                vec!["b"],
                vec![],
            ),
        ];
        for (what, tracked_rows, listing, adopt, renamed) in rows {
            let known = Known {
                tracked: tracked_rows
                    .iter()
                    .map(|(id, name, t)| tracked(*id, name, *t))
                    .collect(),
                ..Known::default()
            };
            let live: Vec<_> = listing.iter().map(|(n, t)| (*n, *t, None)).collect();
            let plan = plan_discovery(&listed(&live), &known, &all(), MIN_AGE);
            let renamed: Vec<(SessionId, String)> = renamed
                .into_iter()
                .map(|(id, n)| (SessionId(id), n.to_owned()))
                .collect();
            assert_eq!(plan.adopt, adopt, "{what}");
            assert_eq!(plan.renamed, renamed, "{what}");
        }
    }

    #[test]
    fn detached_and_in_flight_sessions_are_followed_by_tmux_id() {
        let known = Known {
            detached: BTreeMap::from([("parked", Some(TmuxSessionId(2))), ("old", None)]),
            reserved_ids: BTreeSet::from([TmuxSessionId(7)]),
            ..Known::default()
        };
        let live = listed(&[
            ("parked-renamed", Some(2), None),
            ("adopting-renamed", Some(7), None),
            ("old", Some(9), None),
        ]);
        let plan = plan_discovery(&live, &known, &all(), MIN_AGE);
        assert_eq!(plan.adopt, Vec::<String>::new());
        assert_eq!(
            plan.renamed_detached,
            vec![("parked".to_owned(), "parked-renamed".to_owned())]
        );
        // Its name is gone but its id is listed: still protected.
        assert_eq!(plan.forget_detached, Vec::<String>::new());
        let plan = plan_discovery(&listed(&[("x", Some(3), None)]), &known, &all(), MIN_AGE);
        assert_eq!(
            plan.forget_detached,
            vec!["old".to_owned(), "parked".to_owned()]
        );
    }

    #[test]
    fn young_sessions_wait_until_they_have_lived_min_age() {
        let live = listed(&[
            ("newborn", Some(1), Some(0)),
            ("young", Some(2), Some(380)),
            ("of-age", Some(3), Some(500)),
            ("old", Some(4), Some(90_000)),
            ("unknown-age", None, None),
        ]);
        let plan = plan_discovery(&live, &Known::default(), &all(), MIN_AGE);
        assert_eq!(plan.adopt, ["of-age", "old", "unknown-age"]);
        assert_eq!(plan.recheck_in, Some(Duration::from_millis(120)));
        let plan = plan_discovery(&live, &Known::default(), &all(), Duration::ZERO);
        assert_eq!(plan.adopt.len(), 5, "min_age 0 adopts at once");
        assert_eq!(plan.recheck_in, None);
    }

    #[test]
    fn age_is_the_longer_of_first_seen_and_tmux_created() {
        let ms = Duration::from_millis;
        let cases = [
            // seen for, created (s), now (s), lived at least
            (ms(0), None, 100, ms(0)),
            (ms(300), None, 100, ms(300)),
            // Same second or the one before: could be a millisecond old.
            (ms(0), Some(100), 100, ms(0)),
            (ms(0), Some(99), 100, ms(0)),
            (ms(0), Some(98), 100, ms(1000)),
            (ms(2500), Some(98), 100, ms(2500)),
            // A clock that went back says nothing.
            (ms(10), Some(200), 100, ms(10)),
        ];
        for (seen_for, created, now, expected) in cases {
            assert_eq!(
                lived_at_least(seen_for, created, now),
                expected,
                "{seen_for:?} {created:?} {now}"
            );
        }
    }

    #[test]
    fn include_patterns_narrow_adoption() {
        let filter = NameFilter::new(&["agent-*".into(), "job?".into()], &[]);
        let cases = [
            ("agent-1", true),
            ("job7", true),
            ("job77", false),
            ("other", false),
        ];
        for (name, allowed) in cases {
            assert_eq!(filter.allows(name), allowed, "{name}");
        }
    }

    #[test]
    fn startup_merges_disk_and_tmux() {
        let file = RegistryFile {
            version: 1,
            next_session_counter: 4,
            sessions: vec![
                persisted("sess_1", "alive"),
                persisted("sess_2", "gone"),
                persisted("sess_9", "kept-detached"),
                persisted("sess_3", "detached-gone"),
                persisted("sess_5", "alive"),
            ],
            detached: vec!["kept-detached".into(), "detached-gone".into()],
        };
        let plan = plan_startup(
            &file,
            &live(&["alive", "kept-detached", "x", "new"]),
            &BTreeMap::new(),
            &all(),
        );
        assert_eq!(plan.reattach, vec![persisted("sess_1", "alive")]);
        assert_eq!(plan.detached, vec![persisted("sess_9", "kept-detached")]);
        assert_eq!(plan.missing, vec![persisted("sess_2", "gone")]);
        assert_eq!(plan.tagged, vec![]);
        assert_eq!(plan.next_counter, 10);
    }

    #[test]
    fn sessions_renamed_while_away_are_found_by_the_id_they_carry() {
        let file = RegistryFile {
            version: 1,
            next_session_counter: 9,
            sessions: vec![
                persisted("sess_1", "work"),
                persisted("sess_2", "parked"),
                persisted("sess_3", "twin"),
                persisted("sess_4", "gone"),
                persisted("sess_5", "kept"),
            ],
            detached: vec!["parked".into()],
        };
        let tags: BTreeMap<String, SessionId> = [
            ("work-renamed", 1),   // renamed while away
            ("parked-renamed", 2), // detached, renamed while away
            ("twin-a", 3),         // two carriers: neither is trusted
            ("twin-b", 3),
            ("kept", 5),      // alive under its own name
            ("kept-copy", 5), // a copy carrying the id of a live one
        ]
        .into_iter()
        .map(|(name, id)| (name.to_owned(), SessionId(id)))
        .collect();
        let names = [
            "work-renamed",
            "parked-renamed",
            "twin-a",
            "twin-b",
            "kept",
            "kept-copy",
        ];
        let plan = plan_startup(&file, &live(&names), &tags, &all());
        assert_eq!(
            plan.reattach,
            vec![
                persisted("sess_1", "work-renamed"),
                persisted("sess_5", "kept")
            ]
        );
        assert_eq!(plan.detached, vec![persisted("sess_2", "parked-renamed")]);
        assert_eq!(
            plan.missing,
            vec![persisted("sess_3", "twin"), persisted("sess_4", "gone")]
        );
        let renamed: Vec<(u64, &str, &str)> = plan
            .renamed
            .iter()
            .map(|(id, old, new)| (id.0, old.as_str(), new.as_str()))
            .collect();
        assert_eq!(
            renamed,
            [(1, "work", "work-renamed"), (2, "parked", "parked-renamed")]
        );
        assert_eq!(plan.tagged, vec![], "ids held by the registry");
    }

    fn all() -> NameFilter {
        NameFilter::new(&["*".into()], &["skip*".into()])
    }

    #[test]
    fn tagged_sessions_keep_their_ids_unless_someone_else_has_them() {
        let file = RegistryFile {
            version: 1,
            next_session_counter: 3,
            sessions: vec![persisted("sess_1", "known"), persisted("sess_2", "parked")],
            detached: vec!["parked".into()],
        };
        let tags: BTreeMap<String, SessionId> = [
            ("known", 7),   // the registry's id wins for a name it knows
            ("parked", 8),  // detached: the registry decides
            ("lost", 4),    // registry.json lost it: keep the id
            ("renamed", 1), // id taken by a persisted session
            ("twin-a", 5),  // two live sessions claim one id: neither
            ("twin-b", 5),
            ("skip-me", 6),  // discovery would not adopt it
            ("dead", 40),    // not alive: nothing to attach
            ("bad:name", 9), // a name tmuxd refuses
        ]
        .into_iter()
        .map(|(name, id)| (name.to_owned(), SessionId(id)))
        .collect();
        let names = [
            "known", "parked", "lost", "renamed", "twin-a", "twin-b", "skip-me", "bad:name",
            "untagged",
        ];
        let plan = plan_startup(&file, &live(&names), &tags, &all());
        assert_eq!(plan.reattach, vec![persisted("sess_1", "known")]);
        assert_eq!(plan.tagged, vec![("lost".to_owned(), SessionId(4))]);
        // Past every tag, alive or not, adopted or not.
        assert_eq!(plan.next_counter, 41);
    }
}
