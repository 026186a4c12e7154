//! Pure planning: what discovery should adopt and update, and how the
//! persisted registry merges with the tmux sessions alive at startup.

use std::collections::{BTreeMap, BTreeSet};

use crate::store::{PersistedSession, RegistryFile};
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

/// What the registry looks like to discovery, borrowed for one planning step.
pub struct Known<'a> {
    pub tracked: BTreeMap<&'a str, u64>,
    pub detached: BTreeSet<&'a str>,
    pub reserved: BTreeSet<&'a str>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct DiscoveryPlan {
    /// New tmux sessions to adopt, by name.
    pub adopt: Vec<String>,
    /// Tracked sessions and their fresh view.
    pub update: Vec<(u64, SessionView)>,
    /// Detached names whose tmux session is gone: nothing left to protect.
    pub forget_detached: Vec<String>,
}

pub fn plan_discovery(
    live: &BTreeMap<String, SessionView>,
    known: &Known<'_>,
    filter: &NameFilter,
) -> DiscoveryPlan {
    let mut plan = DiscoveryPlan::default();
    for (name, view) in live {
        if let Some(&id) = known.tracked.get(name.as_str()) {
            plan.update.push((id, view.clone()));
        } else if !known.detached.contains(name.as_str())
            && !known.reserved.contains(name.as_str())
            && validate_session_name(name).is_ok()
            && filter.allows(name)
        {
            plan.adopt.push(name.clone());
        }
    }
    plan.forget_detached = known
        .detached
        .iter()
        .filter(|name| !live.contains_key(**name))
        .map(|name| (*name).to_owned())
        .collect();
    plan
}

#[derive(Debug, Default, PartialEq)]
pub struct StartupPlan {
    /// Persisted sessions alive in tmux: re-attach under their old ids.
    pub reattach: Vec<PersistedSession>,
    /// Live sessions the registry does not know that carry an id tmuxd gave
    /// them (`tmuxd_id`, e.g. after `registry.json` was lost): re-attach
    /// under that id, if discovery would adopt them at all.
    pub tagged: Vec<(String, u64)>,
    /// Detached sessions still alive in tmux: keep protecting them.
    pub detached: Vec<PersistedSession>,
    /// Persisted sessions whose tmux session is gone: record their end.
    pub missing: Vec<PersistedSession>,
    /// The counter: past the persisted one, every id on disk and every id
    /// on a live session.
    pub next_counter: u64,
}

/// Merges the persisted registry with the live tmux sessions and the ids
/// they carry (`tags`: tmux name -> id number).
pub fn plan_startup(
    file: &RegistryFile,
    live: &BTreeMap<String, SessionView>,
    tags: &BTreeMap<String, u64>,
    filter: &NameFilter,
) -> StartupPlan {
    let detached: BTreeSet<&str> = file.detached.iter().map(String::as_str).collect();
    let ids = file
        .sessions
        .iter()
        .filter_map(|s| super::registry::parse_id(&s.session_id));
    let highest_id = ids.chain(tags.values().copied()).max();
    let mut plan = StartupPlan {
        next_counter: file
            .next_session_counter
            .max(highest_id.map_or(1, |n| n.saturating_add(1))),
        tagged: plan_tagged(file, live, tags, filter),
        ..StartupPlan::default()
    };
    let mut seen_names = BTreeSet::new();
    for session in &file.sessions {
        // A hand-edited file could list a name twice; the first id wins.
        if !seen_names.insert(session.tmux_name.as_str())
            || super::registry::parse_id(&session.session_id).is_none()
        {
            continue;
        }
        let alive = live.contains_key(&session.tmux_name);
        match (alive, detached.contains(session.tmux_name.as_str())) {
            (true, true) => plan.detached.push(session.clone()),
            (true, false) => plan.reattach.push(session.clone()),
            (false, true) => {}
            (false, false) => plan.missing.push(session.clone()),
        }
    }
    plan
}

/// Tagged live sessions to re-attach under their tag: unknown to the
/// registry by name, their id claimed by no persisted session and by no
/// other live session, and adoptable by discovery's rules.
fn plan_tagged(
    file: &RegistryFile,
    live: &BTreeMap<String, SessionView>,
    tags: &BTreeMap<String, u64>,
    filter: &NameFilter,
) -> Vec<(String, u64)> {
    let known_names: BTreeSet<&str> = file
        .sessions
        .iter()
        .map(|s| s.tmux_name.as_str())
        .chain(file.detached.iter().map(String::as_str))
        .collect();
    let claimed: BTreeSet<u64> = file
        .sessions
        .iter()
        .filter_map(|s| super::registry::parse_id(&s.session_id))
        .collect();
    let mut carriers: BTreeMap<u64, usize> = BTreeMap::new();
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
            session_id: id.to_owned(),
            tmux_name: name.to_owned(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            command: None,
            cwd: None,
            queued_inputs: Vec::new(),
            attention: None,
        }
    }

    #[test]
    fn discovery_adopts_only_new_allowed_names() {
        let known = Known {
            tracked: BTreeMap::from([("a", 1)]),
            detached: BTreeSet::from(["d", "gone"]),
            reserved: BTreeSet::from(["r"]),
        };
        let filter = NameFilter::new(&["*".into()], &["skip*".into()]);
        let plan = plan_discovery(
            &live(&["a", "b", "d", "r", "skip-me", "bad\nname"]),
            &known,
            &filter,
        );
        assert_eq!(plan.adopt, vec!["b".to_owned()]);
        assert_eq!(plan.update, vec![(1, view("a"))]);
        assert_eq!(plan.forget_detached, vec!["gone".to_owned()]);
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
                persisted("garbage", "x"),
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
        let tags: BTreeMap<String, u64> = [
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
        .map(|(name, id)| (name.to_owned(), id))
        .collect();
        let names = [
            "known", "parked", "lost", "renamed", "twin-a", "twin-b", "skip-me", "bad:name",
            "untagged",
        ];
        let plan = plan_startup(&file, &live(&names), &tags, &all());
        assert_eq!(plan.reattach, vec![persisted("sess_1", "known")]);
        assert_eq!(plan.tagged, vec![("lost".to_owned(), 4)]);
        // Past every tag, alive or not, adopted or not.
        assert_eq!(plan.next_counter, 41);
    }
}
