//! The tmux sessions tmuxd does not track, and why each is left alone:
//! what `GET /v1/sessions/untracked` lists for the dashboard's adopt list
//! and for `tmuxd adopt` without a name.

use std::collections::{BTreeMap, BTreeSet};

use super::plan::NameFilter;
use crate::id::SessionId;
use crate::tmux::command::SessionSummary as TmuxSessionInfo;
use crate::tmux::control::TmuxSessionId;
use crate::tmux::validate_session_name;

/// Why tmuxd does not track a session tmux lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UntrackedWhy {
    /// Detached from tmuxd on purpose; adopting it gives back its old id.
    Detached,
    /// `discovery.include`/`exclude` keep it out of discovery.
    Excluded,
    /// A name tmuxd refuses (it cannot round-trip through tmux): adopt
    /// would fail, so it is listed only to explain why.
    InvalidName,
    /// Not adopted yet: younger than `discovery.min_age_ms`, or refused
    /// while `max_sessions` was reached.
    Pending,
}

/// One session tmux lists that tmuxd does not track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Untracked {
    pub tmux_name: String,
    pub windows: u32,
    /// Clients attached to it (tmuxd has none on an untracked session).
    pub attached_clients: u32,
    /// Seconds since the epoch, as tmux says.
    pub created: u64,
    /// The id it keeps when adopted again (a detached session).
    pub session_id: Option<SessionId>,
    pub why: UntrackedWhy,
}

/// What tmuxd tracks or is taking on, to tell tracked sessions from the rest.
#[derive(Debug, Default)]
pub struct Tracked {
    pub names: BTreeSet<String>,
    pub tmux_ids: BTreeSet<TmuxSessionId>,
    /// Detached sessions by name, with the id each keeps.
    pub detached: BTreeMap<String, SessionId>,
}

/// The sessions of `listing` tmuxd does not track (by name or by tmux's
/// id, which a rename keeps), in tmux's order, each with why.
pub fn plan_untracked(
    listing: &[TmuxSessionInfo],
    tracked: &Tracked,
    filter: &NameFilter,
) -> Vec<Untracked> {
    listing
        .iter()
        .filter(|s| !tracked.names.contains(&s.name) && !tracked.tmux_ids.contains(&s.id))
        .map(|s| {
            let session_id = tracked.detached.get(&s.name).copied();
            let why = if validate_session_name(&s.name).is_err() {
                UntrackedWhy::InvalidName
            } else if session_id.is_some() {
                UntrackedWhy::Detached
            } else if !filter.allows(&s.name) {
                UntrackedWhy::Excluded
            } else {
                UntrackedWhy::Pending
            };
            Untracked {
                tmux_name: s.name.clone(),
                windows: s.windows,
                attached_clients: s.attached,
                created: s.created,
                session_id,
                why,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: u32, name: &str) -> TmuxSessionInfo {
        TmuxSessionInfo {
            id: format!("${id}").parse().unwrap(),
            name: name.to_owned(),
            attached: 1,
            windows: 2,
            created: 1_700_000_000,
        }
    }

    fn why_of(plan: &[Untracked]) -> Vec<(&str, UntrackedWhy)> {
        plan.iter().map(|u| (u.tmux_name.as_str(), u.why)).collect()
    }

    #[test]
    fn tracked_sessions_are_left_out_by_name_or_by_tmux_id() {
        let tracked = Tracked {
            names: ["work".to_owned()].into(),
            // `$2` was renamed outside tmuxd; the registry has its old name.
            tmux_ids: ["$2".parse().unwrap()].into(),
            detached: BTreeMap::new(),
        };
        let filter = NameFilter::new(&["*".into()], &[]);
        let listing = [listed(1, "work"), listed(2, "renamed"), listed(3, "fresh")];
        let plan = plan_untracked(&listing, &tracked, &filter);
        assert_eq!(why_of(&plan), [("fresh", UntrackedWhy::Pending)]);
        assert_eq!(plan[0].windows, 2);
        assert_eq!(plan[0].attached_clients, 1);
        assert_eq!(plan[0].created, 1_700_000_000);
        assert_eq!(plan[0].session_id, None);
    }

    #[test]
    fn each_untracked_session_says_why() {
        let tracked = Tracked {
            detached: [("gone-away".to_owned(), SessionId(7))].into(),
            ..Tracked::default()
        };
        let filter = NameFilter::new(&["*".into()], &["scratch*".into()]);
        let listing = [
            listed(1, "gone-away"),
            listed(2, "scratch-1"),
            listed(3, "a.b"),
            listed(4, "new"),
        ];
        let plan = plan_untracked(&listing, &tracked, &filter);
        assert_eq!(
            why_of(&plan),
            [
                ("gone-away", UntrackedWhy::Detached),
                ("scratch-1", UntrackedWhy::Excluded),
                ("a.b", UntrackedWhy::InvalidName),
                ("new", UntrackedWhy::Pending),
            ]
        );
        assert_eq!(plan[0].session_id, Some(SessionId(7)));
    }
}
