//! When tmux is lost anyway: keeping each tracked session's blueprint
//! fresh from what its actor reports (see `Restore`), noticing the loss
//! (a warning, `tmux_lost` in health and in the event log, which notifies),
//! and restoring the lost sessions under their names and ids.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio_util::task::TaskTracker;

use super::Restore;
use super::book::BookError;
use crate::id::SessionId;
use crate::session::EndReason;
use crate::store::{NewEvent, Origin, RestoreMode, RestoreRecord};
use crate::supervisor::attach::{Attach, Attacher, default_view};
use crate::supervisor::persist::Persistence;
use crate::supervisor::registry::Registry;
use crate::supervisor::settings::Settings;
use crate::supervisor::types::{SessionSummary, SupervisorError};
use crate::tmux::command::restore::{Launch, first_pane, rebuild_commands};
use crate::tmux::command::{DisplayMessage, Target};
use crate::tmux::{NewSession, Tmux, session_views};
use crate::wire::{Payload, Restored};

/// Why a restore happens, as its events say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestoreCause {
    /// `POST /v1/sessions/restore`, `tmuxd restore`, the dashboard.
    Api,
    /// `restore.on_start`, after tmuxd found its server lost at startup.
    Startup,
}

impl RestoreCause {
    fn as_str(self) -> &'static str {
        match self {
            RestoreCause::Api => "api_restore",
            RestoreCause::Startup => "startup_restore",
        }
    }
}

/// What a restore did: each session brought back, or why not.
#[derive(Debug, Default)]
pub struct RestoreOutcome {
    pub restored: Vec<SessionSummary>,
    pub failed: Vec<RestoreFailure>,
}

#[derive(Debug)]
pub struct RestoreFailure {
    pub session_id: SessionId,
    pub tmux_name: String,
    pub error: SupervisorError,
}

/// The tmux server is lost: since when, and how many sessions can be restored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmuxLost {
    pub since: DateTime<Utc>,
    pub restorable: usize,
}

/// Brings lost sessions back (see the module's doc): the restore book
/// says what each was, tmux makes it again, the attacher gives it an actor.
#[derive(Clone)]
pub struct Revive {
    pub(in crate::supervisor) restore: Arc<Restore>,
    pub(in crate::supervisor) attacher: Attacher,
    pub(in crate::supervisor) tmux: Tmux,
    pub(in crate::supervisor) registry: Arc<Registry>,
    pub(in crate::supervisor) persistence: Arc<Persistence>,
    pub(in crate::supervisor) settings: Arc<Settings>,
    /// A restore at startup runs in one of the daemon's tasks.
    pub(in crate::supervisor) tasks: TaskTracker,
}

impl Revive {
    /// Whether the tmux server was lost with sessions still to restore.
    pub fn tmux_lost(&self) -> Option<TmuxLost> {
        self.restore
            .lost()
            .map(|(since, restorable)| TmuxLost { since, restorable })
    }

    /// Once the daemon is up (the notifier listening): says that tmux was
    /// found lost at startup, and with `restore_now` (`restore.on_start`)
    /// restores the lost sessions in the background.
    pub fn after_start(&self, restore_now: bool) {
        let events = &self.persistence;
        (self.restore).announce_loss(events, EndReason::StartupMissingTmux, 0);
        if restore_now && self.tmux_lost().is_some() {
            let revive = self.clone();
            self.tasks.spawn(async move {
                match revive.restore_lost(None, RestoreCause::Startup).await {
                    Ok(outcome) => tracing::info!(
                        restored = outcome.restored.len(),
                        failed = outcome.failed.len(),
                        "restored the sessions lost with the tmux server (restore.on_start)"
                    ),
                    Err(e) => tracing::warn!("restoring at startup failed: {e}"),
                }
            });
        }
    }

    /// Restores the lost sessions named in `ids` (every lost one when
    /// `None`), one by one: an unknown or not-lost id refuses the request
    /// before anything is made; a session that cannot be made is reported
    /// and the others still are.
    pub async fn restore_lost(
        &self,
        ids: Option<&[SessionId]>,
        cause: RestoreCause,
    ) -> Result<RestoreOutcome, SupervisorError> {
        if ids.is_some_and(<[SessionId]>::is_empty) {
            return Err(SupervisorError::BadRequest(
                "session_ids is empty; leave it out to restore every lost session".into(),
            ));
        }
        let wanted = self.restore.to_restore(ids).map_err(|e| match e {
            BookError::NotLost(id) => SupervisorError::NotRestorable(id),
        })?;
        let mut outcome = RestoreOutcome::default();
        for (id, record) in wanted {
            match self.restore_one(id, &record, cause).await {
                Ok(summary) => outcome.restored.push(summary),
                Err(error) => {
                    tracing::warn!(session = %id, tmux_name = %record.tmux_name, "restoring failed: {error}");
                    outcome.failed.push(RestoreFailure {
                        session_id: id,
                        tmux_name: record.tmux_name.clone(),
                        error,
                    });
                }
            }
        }
        let _ = self.restore.write_now().await;
        Ok(outcome)
    }

    async fn restore_one(
        &self,
        id: SessionId,
        record: &RestoreRecord,
        cause: RestoreCause,
    ) -> Result<SessionSummary, SupervisorError> {
        let name = record.tmux_name.clone();
        let max = self.settings.max_sessions;
        let reservation = self.registry.reserve_restore(id, &name, max)?;
        let launches = launches(record);
        let first = record.blueprint.as_ref().map(|b| first_pane(b, &launches));
        let first_command = first
            .as_ref()
            .and_then(|f| f.launch.as_deref())
            .map(shell_line);
        let tag = id.to_string();
        let new = NewSession {
            name: &name,
            cwd: first
                .as_ref()
                .map(|f| f.cwd)
                .filter(|cwd| Path::new(cwd).is_dir())
                .or(Some(&self.settings.default_cwd)),
            size: first.as_ref().map(|f| (f.cols, f.rows)),
            command: first_command.as_deref(),
            keep_exit: true,
            tag: Some(&tag),
            env: &self.settings.session_env,
        };
        let made = match self.tmux.new_session(&new).await {
            Ok(made) => made,
            Err(e) => {
                return Err(match e.is_duplicate_session() {
                    true => SupervisorError::NameTaken(name),
                    false => e.into(),
                });
            }
        };
        if let Some(blueprint) = &record.blueprint {
            let probe = DisplayMessage {
                target: Some(Target::Session(name.clone())),
                format: "#{window_index}".to_owned(),
            };
            let made_at = self.tmux.run_cmd(&probe).await.ok();
            let made_at = made_at.and_then(|i| i.trim().parse().ok());
            let made_at = made_at.unwrap_or(blueprint.windows[0].index);
            let commands = rebuild_commands(&name, blueprint, &launches, made_at);
            if let Err(e) = self.tmux.run_in_one(&commands).await {
                // The session is there, with what tmux made before the error.
                tracing::warn!(tmux_name = %name, "restoring the windows and layouts stopped: {e}");
            }
        }
        // Looked at after the rebuild: the current window may have changed.
        let panes = self.tmux.list_panes().await.ok();
        let view = panes.and_then(|panes| session_views(&panes).remove(&name));
        let attach = Attach {
            reservation,
            view: view.unwrap_or_else(|| default_view(&name)),
            created_at: Utc::now(),
            command: record.command.clone(),
            cwd: None,
            queue: Vec::new(),
            tagged: made.tagged_panes.is_some(),
            attention: None,
            kept_exit: made.kept_exit,
            previous_state: None,
        };
        let restored = Restored {
            restore: record.mode.into(),
            resumed: record.resume_command.is_some(),
        };
        let event = NewEvent::new(Payload::SessionRestored(restored)).reason(cause.as_str());
        match self.attacher.attach(attach, event).await {
            Ok(summary) => {
                self.restore.restored(id);
                Ok(summary)
            }
            Err(e) => {
                let _ = self.tmux.kill_session(&name).await;
                Err(e)
            }
        }
    }
}

/// What each pane of a restored session runs (`[window][pane]`, in the
/// blueprint's order): a shell, except where the session's creator said
/// so. `resume_command` runs in the first pane; with `rerun`, the first
/// pane runs the session's command and every other pane its own start
/// command. An adopted session gets shells: nobody said its commands may
/// run twice.
pub fn launches(record: &RestoreRecord) -> Vec<Vec<Launch>> {
    let Some(blueprint) = &record.blueprint else {
        let first = match record.origin {
            Origin::Adopted => None,
            Origin::Created => first_launch(record, None),
        };
        return vec![vec![first]];
    };
    blueprint
        .windows
        .iter()
        .enumerate()
        .map(|(w, window)| {
            window
                .panes
                .iter()
                .enumerate()
                .map(|(p, pane)| match (record.origin, w == 0 && p == 0) {
                    (Origin::Adopted, _) => None,
                    (Origin::Created, true) => first_launch(record, pane.start_argv.as_ref()),
                    (Origin::Created, false) => match record.mode {
                        RestoreMode::Rerun => pane.start_argv.clone(),
                        RestoreMode::Shell => None,
                    },
                })
                .collect()
        })
        .collect()
}

/// The first pane of a created session: its resume command, or with
/// `rerun` the command it was created with (else its start command).
fn first_launch(record: &RestoreRecord, start_argv: Option<&Vec<String>>) -> Launch {
    if let Some(resume) = &record.resume_command {
        return Some(vec![resume.clone()]);
    }
    match record.mode {
        RestoreMode::Shell => None,
        RestoreMode::Rerun => match &record.command {
            Some(command) => Some(vec![command.clone()]),
            None => start_argv.cloned(),
        },
    }
}

/// One shell command line from an argv: a single word is a shell command
/// already (as tmux runs it); several are quoted for `sh`.
fn shell_line(words: &[String]) -> String {
    match words {
        [one] => one.clone(),
        _ => words
            .iter()
            .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tmux::{Blueprint, PaneBlueprint, WindowBlueprint};

    fn record(origin: Origin, mode: RestoreMode, resume: Option<&str>) -> RestoreRecord {
        let pane = |start: Option<&[&str]>| PaneBlueprint {
            index: 0,
            cwd: "/".into(),
            command_line: start.map_or("bash".to_owned(), |w| w.join(" ")),
            start_argv: start.map(|w| w.iter().map(|s| s.to_string()).collect()),
            legacy_start_command: None,
            active: false,
        };
        let window = |panes| WindowBlueprint {
            index: 0,
            name: "w".into(),
            layout: String::new(),
            cols: 80,
            rows: 24,
            active: true,
            panes,
        };
        RestoreRecord {
            tmux_name: "s".into(),
            origin,
            mode,
            resume_command: resume.map(str::to_owned),
            command: Some("make deploy".into()),
            blueprint: Some(Blueprint {
                windows: vec![
                    window(vec![
                        pane(Some(&["make deploy"])),
                        pane(None),
                        pane(Some(&["htop"])),
                    ]),
                    window(vec![pane(Some(&["tail", "-f", "log"]))]),
                ],
            }),
            lost: true,
        }
    }

    #[test]
    fn commands_run_again_only_where_the_creator_said_so() {
        let words = |w: &[&str]| Some(w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let cases = [
            (
                record(Origin::Created, RestoreMode::Shell, None),
                vec![vec![None, None, None], vec![None]],
            ),
            (
                record(
                    Origin::Created,
                    RestoreMode::Shell,
                    Some("claude --continue"),
                ),
                vec![vec![words(&["claude --continue"]), None, None], vec![None]],
            ),
            (
                record(Origin::Created, RestoreMode::Rerun, None),
                vec![
                    vec![words(&["make deploy"]), None, words(&["htop"])],
                    vec![words(&["tail", "-f", "log"])],
                ],
            ),
            (
                record(Origin::Created, RestoreMode::Rerun, Some("resume")),
                vec![
                    vec![words(&["resume"]), None, words(&["htop"])],
                    vec![words(&["tail", "-f", "log"])],
                ],
            ),
            (
                record(Origin::Adopted, RestoreMode::Rerun, Some("resume")),
                vec![vec![None, None, None], vec![None]],
            ),
        ];
        for (record, expected) in cases {
            assert_eq!(launches(&record), expected, "{record:?}");
        }
        let mut bare = record(Origin::Created, RestoreMode::Shell, Some("resume"));
        bare.blueprint = None;
        assert_eq!(launches(&bare), vec![vec![words(&["resume"])]]);
    }

    #[test]
    fn several_words_are_quoted_for_the_shell() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(shell_line(&words(&["make deploy"])), "make deploy");
        assert_eq!(shell_line(&words(&["echo", "it's"])), "'echo' 'it'\\''s'");
    }
}
