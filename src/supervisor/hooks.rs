//! Evidence from coding agents' hooks: the session that owns a tmux pane
//! (the hook's `$TMUX_PANE`) is found in tmux's own list of panes, its
//! detector is told what the hook says, and what the agent said to its
//! user becomes the session's thought.

use super::{
    MAX_THOUGHT_BYTES, Supervisor, SupervisorError, ThoughtUpdate, format_id, tmux_refused,
};
use crate::session::{HookEvent, SessionHandle, StateView};
use crate::store::cut_str;
use crate::tmux::command::{ListPanes, PaneScope};

/// `list-panes -a` format: a pane's id and its session's.
const PANE_SESSION_FORMAT: &str = "#{pane_id}\t#{session_id}";

/// What a hook event did.
#[derive(Clone, Debug)]
pub struct HookOutcome {
    pub session_id: String,
    /// The state the event led to; `None` for events that say no state.
    pub view: Option<StateView>,
}

impl Supervisor {
    /// Applies `event` to the session whose window holds `pane` (`%N`).
    pub async fn hook(&self, pane: &str, event: HookEvent) -> Result<HookOutcome, SupervisorError> {
        let (session_id, handle) = self.session_of_pane(pane).await?;
        let view = match event.hook {
            Some(hook) => Some(
                handle
                    .hook(hook)
                    .await
                    .map_err(SupervisorError::gone(&session_id))?,
            ),
            None => None,
        };
        if let Some(mut text) = event.message {
            cut_str(&mut text, MAX_THOUGHT_BYTES);
            let update = ThoughtUpdate {
                text,
                state: Some(event.name.chars().take(64).collect()),
                tokens_in: None,
                tokens_out: None,
                updated_at: None,
            };
            self.put_thought(&session_id, update).await?;
        }
        Ok(HookOutcome { session_id, view })
    }

    /// The tracked session that owns `pane`, asked of tmux over a live
    /// session's control client (no fork), or a forked tmux if none answers.
    async fn session_of_pane(
        &self,
        pane: &str,
    ) -> Result<(String, SessionHandle), SupervisorError> {
        let not_found = || SupervisorError::NotFound(format!("with pane {pane}"));
        let any = {
            let registry = self.registry();
            registry.sessions.values().next().map(|e| e.handle.clone())
        };
        let Some(any) = any else {
            return Err(not_found());
        };
        let list = ListPanes {
            scope: PaneScope::All,
            format: PANE_SESSION_FORMAT.to_owned(),
        };
        let rows = match any.ask_tmux(&list).await {
            Ok(answer) => answer.map_err(|e| tmux_refused("", "list-panes", e))?,
            Err(_) => self.tmux().run_cmd(&list).await?,
        };
        let tmux_id = rows
            .iter()
            .filter_map(|row| row.split_once('\t'))
            .find(|(id, _)| *id == pane)
            .map(|(_, session)| session.to_owned())
            .ok_or_else(not_found)?;
        let registry = self.registry();
        let entry = registry
            .sessions
            .values()
            .find(|e| e.tmux_id.to_string() == tmux_id)
            .ok_or_else(not_found)?;
        Ok((format_id(entry.id), entry.handle.clone()))
    }
}
