//! Bringing sessions back: re-attaching when tmuxd's client was dropped
//! but the session lives, and merging the persisted registry (and the ids
//! live sessions carry, see `tags`) with the live tmux sessions at startup.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{Attach, Attacher, Attaching, Carried, state_unknown};
use crate::id::SessionId;
use crate::session::{EndReason, SessionState, StateReason, StateView};
use crate::store::{NewEvent, PersistedSession, RegistryFile};
use crate::supervisor::queue::state_event;
use crate::supervisor::registry::restore_attention;
use crate::supervisor::{plan, tags};
use crate::tmux::SessionView;
use crate::wire::{Adopted, Deleted, Event, Exit, Payload, Renamed};

/// More re-attaches than this within the window and tmuxd lets the session go.
const REATTACH_LIMIT: usize = 3;
const REATTACH_WINDOW: Duration = Duration::from_secs(10);

impl Attacher {
    /// Each session's last recorded state and since when, from the retained
    /// events (a restart keeps `state_since` where the state is unchanged).
    fn last_states(&self) -> HashMap<SessionId, (SessionState, DateTime<Utc>)> {
        let mut states = HashMap::new();
        let mut since = 0;
        loop {
            let page = self.persistence.events_page(since, 10_000, usize::MAX);
            last_states_in(&page.events, &mut states);
            match page.events.last() {
                Some(last) if page.has_more && last.seq > since => since = last.seq,
                _ => return states,
            }
        }
    }

    /// tmuxd's client went away but the session lives: attach a new one.
    pub(in crate::supervisor) async fn reattach(&self, id: SessionId, actor_id: u64) {
        let noted = self.registry.note_reattach(
            id,
            actor_id,
            Instant::now(),
            REATTACH_WINDOW,
            REATTACH_LIMIT,
        );
        let Some((name, too_often, attention)) = noted else {
            return;
        };
        if too_often {
            tracing::warn!(tmux_name = %name, "tmuxd's client keeps being dropped; letting the session go");
            return self
                .ends
                .end(id, Some(actor_id), EndReason::AttachFailed)
                .await;
        }
        let new_actor_id = self.actor_ids.next();
        let handle = match self
            .spawn_actor(
                id,
                new_actor_id,
                &name,
                Carried {
                    attention,
                    state: None,
                },
                true,
            )
            .await
        {
            Ok(spawned) => spawned.handle,
            Err(e) => {
                tracing::warn!(tmux_name = %name, "re-attaching failed: {e}");
                return self
                    .ends
                    .end(id, Some(actor_id), EndReason::AttachFailed)
                    .await;
            }
        };
        let view = handle
            .watch_state()
            .await
            .unwrap_or_else(|_| state_unknown(attention));
        let old = (self.registry).replace_actor(id, actor_id, new_actor_id, handle.clone(), view);
        match old {
            Some(old) => old.shutdown().await,
            // Deleted meanwhile: the new client is not wanted either.
            None => handle.shutdown().await,
        }
        tracing::info!(tmux_name = %name, "re-attached after tmuxd's client was dropped");
    }

    /// Persisted sessions meet live tmux: re-attach (under the registry's id,
    /// or the id tmux carries for a session the registry lost), keep
    /// detached, or record that they ended while tmuxd was away. The counter
    /// moves past every id found on a live session first.
    pub(in crate::supervisor) async fn reattach_at_startup(
        &self,
        file: RegistryFile,
        live: &BTreeMap<String, SessionView>,
    ) {
        let tags = tags::unknown_session_tags(&self.tmux, &file, live).await;
        let mut plan = plan::plan_startup(&file, live, &tags, &self.settings.filter);
        self.registry
            .merge_startup(&mut plan.tagged, plan.next_counter, &plan.detached);
        for session in &plan.missing {
            let reason = EndReason::StartupMissingTmux;
            let view = StateView {
                state: SessionState::Exited,
                reason: StateReason::End(reason),
                since: chrono::Utc::now(),
                attention: session.attention.as_ref().and_then(restore_attention),
                acknowledged_by: None,
            };
            let events = [
                state_event(&view, Exit::default()),
                NewEvent::new(Payload::SessionDeleted(Deleted::default())).reason(reason.as_str()),
            ];
            for event in events {
                self.persistence.record(
                    event
                        .session_id(session.session_id)
                        .tmux_name(&session.tmux_name),
                );
            }
        }
        let found = plan.reattach.len() + plan.tagged.len();
        let tagged = plan.tagged.into_iter().map(|(tmux_name, id)| {
            let session = PersistedSession {
                session_id: id,
                tmux_name,
                created_at: Utc::now(),
                command: None,
                cwd: None,
                queued_inputs: Vec::new(),
                attention: None,
                tmux_id: None,
            };
            (session, "tmux")
        });
        let missing: Vec<SessionId> = plan.missing.iter().map(|s| s.session_id).collect();
        let persisted = plan.reattach.into_iter().map(|s| (s, "registry"));
        let last_states = self.last_states();
        let mut attaches = Vec::new();
        for (session, id_from) in persisted.chain(tagged) {
            let name = session.tmux_name.clone();
            let id = session.session_id;
            let adopted = Adopted {
                id_from: Some(id_from.to_owned()),
            };
            let event = NewEvent::new(Payload::SessionAdopted(adopted)).reason("startup_reattach");
            let previous = last_states.get(&id).copied();
            let attach = self.persisted_attach(session, &live[&name], previous);
            // Listed as `starting` from now on; attached below.
            let announced = self.announce(&attach);
            let mark = tags.get(&name) != Some(&id);
            attaches.push(StartupAttach {
                name,
                id,
                mark,
                attach,
                announced,
                event,
            });
        }
        for (session_id, old, new) in &plan.renamed {
            tracing::info!(%session_id, old_name = %old, new_name = %new, "session renamed in tmux while tmuxd was away");
            self.persistence.record(
                NewEvent::new(Payload::SessionRenamed(Renamed {
                    old_name: old.clone(),
                    new_name: new.clone(),
                }))
                .session_id(*session_id)
                .tmux_name(new),
            );
        }
        if found == 0 {
            // Nothing to attach: whether tmux was lost is known now.
            let _ = self.persistence.write_registry(&self.registry).await;
            self.lost_at_startup(&missing, found);
            return;
        }
        // The daemon serves while these attach (paced, see `control::pace`).
        let attacher = self.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                _ = attacher.cancel.cancelled() => {}
                _ = attacher.reattach_all(attaches) => attacher.lost_at_startup(&missing, found),
            }
        });
    }

    /// Attaches the persisted sessions found live, each in a task of its
    /// own; then marks those tmux did not know by id with one tmux call
    /// (the marks of sessions the registry knows were not read: setting
    /// them is cheaper than reading them; this also marks those an older
    /// tmuxd attached).
    async fn reattach_all(&self, attaches: Vec<StartupAttach>) {
        let mut running = tokio::task::JoinSet::new();
        for startup in attaches {
            let attacher = self.clone();
            running.spawn(async move {
                let (attach, announced, event) = (startup.attach, startup.announced, startup.event);
                match attacher.attach_announced(attach, announced, event).await {
                    Ok(_) => startup.mark.then_some((startup.name, startup.id)),
                    Err(e) => {
                        let name = &startup.name;
                        tracing::warn!(tmux_name = %name, "re-attaching after restart failed: {e}");
                        None
                    }
                }
            });
        }
        let mut marks = Vec::new();
        while let Some(done) = running.join_next().await {
            if let Ok(Some(mark)) = done {
                marks.push(mark);
            }
        }
        tags::tag_sessions(&self.tmux, marks);
        let _ = self.persistence.write_registry(&self.registry).await;
    }

    /// Startup found the persisted sessions in `missing` gone, and `found`
    /// alive: with none alive, tmux was lost while tmuxd was away (said
    /// once the notifier listens: `Supervisor::after_start`).
    fn lost_at_startup(&self, missing: &[SessionId], found: usize) {
        let tracked = self.registry.tracked_ids();
        (self.restore).after_startup(missing, found, |id| tracked.contains(&id), Utc::now());
    }

    /// What re-attaching a persisted session takes over from its record.
    fn persisted_attach(
        &self,
        session: PersistedSession,
        view: &SessionView,
        previous_state: Option<(SessionState, DateTime<Utc>)>,
    ) -> Attach {
        let reservation = (self.registry).reserve_persisted(session.session_id, &session.tmux_name);
        Attach {
            reservation,
            view: view.clone(),
            created_at: session.created_at,
            command: session.command,
            cwd: session.cwd,
            queue: session.queued_inputs,
            attention: session.attention,
            // Marked by `reattach_all`, all at once.
            tagged: true,
            kept_exit: false,
            previous_state,
        }
    }
}

/// A persisted session found live at startup, listed as `starting` and
/// waiting for its client.
struct StartupAttach {
    name: String,
    id: SessionId,
    /// tmux does not carry its id yet.
    mark: bool,
    attach: Attach,
    announced: Attaching,
    event: NewEvent,
}

/// Folds `session_state` events, oldest first, into each session's last
/// state and its `state_since`; an event cut to its kind is skipped.
fn last_states_in(
    events: &[Event],
    states: &mut HashMap<SessionId, (SessionState, DateTime<Utc>)>,
) {
    for event in events {
        let Some(Payload::SessionState(changed)) = event.payload() else {
            continue;
        };
        let Some(Ok(id)) = event.session_id.as_deref().map(str::parse::<SessionId>) else {
            continue;
        };
        states.insert(id, (changed.state.into(), changed.state_since));
    }
}

#[cfg(test)]
mod last_state_tests {
    use super::*;
    use crate::wire::{Body, EventKind, EventThought, StateChanged, Thought, ThoughtUpdated};

    #[test]
    fn the_last_state_event_of_each_session_wins() {
        let t = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        let (t1, t2) = (t("2026-01-01T00:00:01Z"), t("2026-01-01T00:00:02Z"));
        let state = |state, since| {
            Payload::SessionState(StateChanged {
                state,
                state_since: since,
                attention: None,
                acknowledged_by: None,
                exit: None,
            })
        };
        let thought = Payload::ThoughtUpdate(ThoughtUpdated {
            thought: EventThought {
                thought: Thought {
                    text: "working".into(),
                    state: None,
                    tokens_in: None,
                    tokens_out: None,
                    updated_at: t2,
                },
                text_truncated: false,
            },
        });
        let event = |seq: u64, id: &str, body| Event {
            seq,
            at: Utc::now(),
            session_id: Some(id.to_owned()),
            reason: None,
            tmux_name: None,
            body,
            from_peer: None,
        };
        use crate::wire::SessionState as S;
        let events = [
            event(1, "sess_1", Body::Whole(state(S::Working, t1))),
            event(2, "sess_2", Body::Whole(state(S::Idle, t1))),
            event(3, "sess_1", Body::Whole(state(S::Idle, t2))),
            event(4, "sess_1", Body::Whole(thought)),
            event(5, "sess_2", Body::KindOnly(EventKind::SessionState)),
            event(6, "sess_x", Body::Whole(state(S::Working, t2))),
        ];
        let mut states = HashMap::new();
        last_states_in(&events, &mut states);
        assert_eq!(states[&SessionId(1)], (SessionState::Idle, t2));
        assert_eq!(states[&SessionId(2)], (SessionState::Idle, t1));
        assert_eq!(states.len(), 2);
    }
}
