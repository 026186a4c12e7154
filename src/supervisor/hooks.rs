//! Evidence from coding agents' hooks: the session that owns a tmux pane
//! (the hook's `$TMUX_PANE`) is asked of tmux, its detector is told what
//! the hook says, and what the agent said to its user becomes the
//! session's thought.

use super::Supervisor;
use super::types::{MAX_THOUGHT_BYTES, SupervisorError, ThoughtUpdate};
use crate::id::SessionId;
use crate::session::{HookEvent, SessionHandle, StateView};
use crate::store::cut_str;
use crate::tmux::command::{DisplayMessage, Target};
use crate::tmux::control::{PaneId, TmuxSessionId};

/// What a hook event did.
#[derive(Clone, Debug)]
pub struct HookOutcome {
    pub session_id: SessionId,
    /// The state the event led to; `None` for events that say no state.
    pub view: Option<StateView>,
}

impl Supervisor {
    /// Applies `event` to the session whose window holds `pane`.
    pub async fn hook(
        &self,
        pane: PaneId,
        event: HookEvent,
    ) -> Result<HookOutcome, SupervisorError> {
        let (id, handle) = self.session_of_pane(pane).await?;
        let view = match event.hook {
            Some(hook) => Some(handle.hook(hook).await.map_err(SupervisorError::gone(id))?),
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
            self.put_thought(id, update).await?;
        }
        Ok(HookOutcome {
            session_id: id,
            view,
        })
    }

    /// The tracked session that owns `pane`, asked of tmux over a live
    /// session's control client (no fork), or a forked tmux if none
    /// answers. tmux expands the format of a pane it does not have to
    /// nothing (3.3 does not fail), which reads as no session.
    async fn session_of_pane(
        &self,
        pane: PaneId,
    ) -> Result<(SessionId, SessionHandle), SupervisorError> {
        let not_found = || SupervisorError::NotFound(format!("with pane {pane}"));
        let any = self.registry().any_handle();
        let Some(any) = any else {
            return Err(not_found());
        };
        let ask = DisplayMessage {
            target: Some(Target::Pane(pane)),
            format: "#{session_id}".to_owned(),
        };
        let answer = match self.tmux().run_routed(&ask, Some(&any)).await {
            Ok(answer) => answer,
            Err(e) if e.is_missing_session() => return Err(not_found()),
            Err(e) => return Err(e.into()),
        };
        let tmux_id: TmuxSessionId = answer.trim().parse().map_err(|_| not_found())?;
        self.registry()
            .find_by_tmux_id(tmux_id)
            .ok_or_else(not_found)
    }
}
