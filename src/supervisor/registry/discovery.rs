//! What discovery and startup change in the registry: the registry file
//! merged at startup, and each look at tmux's sessions (names seen, renames
//! followed, detached sessions forgotten, what to adopt).

use super::*;

/// A discovery step decided and applied: the plan, the tracked sessions it
/// renamed (id, old name, new name), tmux's id of each listed session, and
/// the listed names not tracked.
pub struct Planned {
    pub plan: DiscoveryPlan,
    pub renamed: Vec<(SessionId, String, String)>,
    pub tmux_ids: BTreeMap<String, TmuxSessionId>,
    pub untracked: BTreeSet<String>,
}

/// What discovery saw of one session: tmux's id and when it was made
/// (seconds since the epoch), when tmux said.
#[derive(Clone, Copy, Debug)]
pub struct Birth {
    pub tmux_id: TmuxSessionId,
    pub created: u64,
}

impl Registry {
    /// The registry file read at startup, until it is merged.
    pub fn restore_pending(&self) -> bool {
        self.lock().restore_pending.is_some()
    }

    pub fn take_restore_pending(&self) -> Option<RegistryFile> {
        self.lock().restore_pending.take()
    }

    /// Startup's merge: drops tagged sessions whose id was taken meanwhile,
    /// moves the counter past `next_counter`, and keeps the detached
    /// sessions still alive.
    pub fn merge_startup(
        &self,
        tagged: &mut Vec<(String, SessionId)>,
        next_counter: u64,
        detached: &[PersistedSession],
    ) {
        let mut state = self.lock();
        // Created while tmux did not answer yet: that session keeps it.
        tagged.retain(|(_, id)| !state.is_id_in_use(*id));
        state.advance_past(SessionId(next_counter.saturating_sub(1)));
        for session in detached {
            // An id on disk may name another tmux server's session:
            // discovery learns the live one by name.
            let session = PersistedSession {
                tmux_id: None,
                ..session.clone()
            };
            state.detached.insert(session.tmux_name.clone(), session);
        }
    }

    /// One discovery step over tmux's `listing` (made at `looked_at`; each
    /// session seen for `seen_for`, by tmux id): follows renames, forgets
    /// detached sessions that are gone, and plans which to adopt (and when
    /// to look again at those too young yet).
    pub fn plan_discovery(
        &self,
        listing: &BTreeMap<String, Option<Birth>>,
        seen_for: &BTreeMap<TmuxSessionId, Duration>,
        looked_at: Instant,
        now_epoch: u64,
        filter: &NameFilter,
        min_age: Duration,
    ) -> Planned {
        let mut state = self.lock();
        let live: BTreeMap<String, Listed> = listing
            .iter()
            .map(|(name, birth)| {
                let listed = match birth {
                    Some(birth) => Listed {
                        tmux_id: Some(birth.tmux_id),
                        age: seen_for
                            .get(&birth.tmux_id)
                            .map(|seen| lived_at_least(*seen, Some(birth.created), now_epoch)),
                    },
                    None => Listed::default(),
                };
                (name.clone(), listed)
            })
            .collect();
        state.learn_detached_ids(&live);
        let plan = crate::supervisor::plan::plan_discovery(
            &live,
            &state.known(looked_at),
            filter,
            min_age,
        );
        for name in &plan.forget_detached {
            state.detached.remove(name);
        }
        for (old, new) in &plan.renamed_detached {
            state.rename_detached(old, new);
        }
        // Before any adoption is reserved: a new session may have taken
        // the old name.
        let renamed = plan
            .renamed
            .iter()
            .filter_map(|(id, new)| Some((*id, state.rename(*id, new)?, new.clone())))
            .collect();
        let tracked: BTreeSet<&str> = state
            .sessions
            .values()
            .map(|e| e.tmux_name.as_str())
            .collect();
        let untracked = (live.keys())
            .filter(|name| !tracked.contains(name.as_str()))
            .cloned()
            .collect();
        state.ended.retain(|_, at| *at >= looked_at);
        let tmux_ids = live
            .iter()
            .filter_map(|(name, l)| Some((name.clone(), l.tmux_id?)))
            .collect();
        Planned {
            plan,
            renamed,
            tmux_ids,
            untracked,
        }
    }
}

impl State {
    /// Moves a detached session to the name tmux now lists it under.
    pub(super) fn rename_detached(&mut self, old: &str, new: &str) {
        if self.detached.contains_key(new) {
            return;
        }
        if let Some(mut session) = self.detached.remove(old) {
            session.tmux_name = new.to_owned();
            self.detached.insert(new.to_owned(), session);
        }
    }

    /// Detached sessions whose id is not known (read from disk) learn it
    /// from the listing, by name.
    fn learn_detached_ids(&mut self, live: &BTreeMap<String, Listed>) {
        for (name, session) in self.detached.iter_mut() {
            if session.tmux_id.is_none()
                && let Some(tmux_id) = live.get(name).and_then(|l| l.tmux_id)
            {
                session.tmux_id = Some(tmux_id.to_string());
            }
        }
    }

    /// What the registry looks like to discovery planning at `looked_at`.
    fn known(&self, looked_at: Instant) -> Known<'_> {
        Known {
            tracked: self
                .sessions
                .values()
                .map(|e| TrackedRef {
                    id: e.id,
                    name: e.tmux_name.as_str(),
                    tmux_id: Some(e.tmux_id),
                })
                .collect(),
            detached: self
                .detached
                .iter()
                .map(|(name, s)| {
                    (
                        name.as_str(),
                        s.tmux_id.as_deref().and_then(|t| t.parse().ok()),
                    )
                })
                .collect(),
            // A session that ended since tmux was asked is listed, but gone.
            reserved: self
                .reserved
                .keys()
                .chain(
                    self.ended
                        .iter()
                        .filter(|(_, at)| **at >= looked_at)
                        .map(|(name, _)| name),
                )
                .map(String::as_str)
                .collect(),
            reserved_ids: self.reserved_tmux_ids.clone(),
        }
    }
}
