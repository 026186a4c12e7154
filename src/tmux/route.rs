//! Where a command runs: over a control client tmuxd already has, lent by
//! its owner (a forked tmux costs 15-40 ms with 200 control clients
//! attached), else in a child tmux. Decided here, for every asker.

use std::time::Duration;

use super::command::{Carried, HasSession, ListPaneInfo, PaneScope, Target, TmuxCommand};
use super::control::ControlError;
use super::{PaneInfo, Refusal, SessionStatus, Tmux, TmuxError};

/// How long a lent client may take to answer before the command is forked.
const LENT_ANSWERS: Duration = Duration::from_secs(1);

/// What a lender answers: the reply's lines, or tmux's refusal or the
/// client's failure; None when the owner or its client has gone.
pub type LentAnswer = Option<Result<Vec<Vec<u8>>, ControlError>>;

/// A control client its owner runs a command over on request (a session's
/// actor, in order with its own commands).
pub trait Lender {
    fn run_lent(&self, command: Carried) -> impl Future<Output = LentAnswer> + Send;
}

/// No client to lend: every command forks.
pub struct NoLender;

impl Lender for NoLender {
    async fn run_lent(&self, _: Carried) -> LentAnswer {
        None
    }
}

/// What a lent client's answer settles: the command's output, or nothing
/// (fork then). A failure there may be that client's rather than tmux's
/// answer (its session may be ending): only `refused` says which of
/// tmux's refusals answer the question all the same.
fn settle<T>(
    answer: Option<Result<T, ControlError>>,
    refused: impl Fn(Refusal) -> Option<T>,
) -> Option<T> {
    match answer? {
        Ok(output) => Some(output),
        Err(e) => e.refusal().and_then(refused),
    }
}

impl Tmux {
    /// Runs `command` over `lender`'s client, when it answers well in
    /// time, else in a child tmux.
    pub async fn run_routed<C: TmuxCommand>(
        &self,
        command: &C,
        lender: Option<&impl Lender>,
    ) -> Result<C::Output, TmuxError> {
        match settle(ask(command, lender).await, |_| None) {
            Some(output) => Ok(output),
            None => self.run_cmd(command).await,
        }
    }

    /// `session_status`, asked over `lender`'s client when there is one
    /// (a fork also tells a server that is gone).
    pub async fn session_status_routed(
        &self,
        name: &str,
        lender: Option<&impl Lender>,
    ) -> Result<SessionStatus, TmuxError> {
        let has = HasSession {
            target: Target::Session(name.to_owned()),
        };
        let answer = ask(&has, lender).await;
        let answer = answer.map(|a| a.map(|()| SessionStatus::Alive));
        let gone = |r| (r == Refusal::NoTarget).then_some(SessionStatus::Gone);
        match settle(answer, gone) {
            Some(status) => Ok(status),
            None => self.session_status(name).await,
        }
    }

    /// `list_panes`, asked over `lender`'s client when there is one.
    pub async fn list_panes_routed(
        &self,
        lender: Option<&impl Lender>,
    ) -> Result<Vec<PaneInfo>, TmuxError> {
        let all = ListPaneInfo {
            scope: PaneScope::All,
        };
        match settle(ask(&all, lender).await, |_| None) {
            Some(panes) => Ok(panes),
            None => self.list_panes().await,
        }
    }
}

/// `command` over `lender`'s client, parsed; None when there is no lender
/// or it did not answer in time.
async fn ask<C: TmuxCommand>(
    command: &C,
    lender: Option<&impl Lender>,
) -> Option<Result<C::Output, ControlError>> {
    let asked = lender?.run_lent(Carried::of(command));
    let lines = tokio::time::timeout(LENT_ANSWERS, asked).await.ok()??;
    Some(lines.and_then(|lines| Ok(command.parse(&lines)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(refusal: Refusal) -> ControlError {
        ControlError::Command {
            command: "has-session -t =a:".to_owned(),
            message: "tmux's words".to_owned(),
            refusal,
        }
    }

    #[test]
    fn a_lent_answer_settles_only_what_it_can() {
        let gone = |r| (r == Refusal::NoTarget).then_some("gone");
        // (answer, what has-session settles, what any other command settles)
        let table = [
            (None, None, None),
            (Some(Ok("alive")), Some("alive"), Some("alive")),
            (Some(Err(refused(Refusal::NoTarget))), Some("gone"), None),
            (Some(Err(refused(Refusal::Other))), None, None),
            (
                Some(Err(ControlError::Closed {
                    command: "has-session".to_owned(),
                })),
                None,
                None,
            ),
        ];
        for (answer, status, other) in table {
            let described = format!("{answer:?}");
            let again = answer.as_ref().map(|a| match a {
                Ok(v) => Ok(*v),
                Err(ControlError::Command { refusal, .. }) => Err(refused(*refusal)),
                Err(_) => Err(ControlError::Closed {
                    command: String::new(),
                }),
            });
            assert_eq!(settle(answer, gone), status, "{described}");
            assert_eq!(settle(again, |_| None), other, "{described}");
        }
    }

    /// A lender that answers every command alike, and counts them.
    struct Answers {
        answer: fn() -> LentAnswer,
        asked: std::sync::atomic::AtomicUsize,
    }

    impl Lender for Answers {
        async fn run_lent(&self, _: Carried) -> LentAnswer {
            self.asked
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (self.answer)()
        }
    }

    fn lender(answer: fn() -> LentAnswer) -> Answers {
        Answers {
            answer,
            asked: Default::default(),
        }
    }

    /// A tmux that cannot be run: whatever forks fails with `Spawn`.
    fn unrunnable() -> Tmux {
        let bin = std::path::PathBuf::from("/nonexistent/tmuxd-test/tmux");
        Tmux::new(bin, super::super::Socket::Default, None, LENT_ANSWERS)
    }

    #[tokio::test]
    async fn a_lent_client_spares_the_fork_unless_it_cannot_answer() {
        let tmux = unrunnable();
        let forked =
            |r: &Result<SessionStatus, TmuxError>| matches!(r, Err(TmuxError::Spawn { .. }));
        let alive = lender(|| Some(Ok(Vec::new())));
        let status = tmux.session_status_routed("a", Some(&alive)).await;
        assert_eq!(status.unwrap(), SessionStatus::Alive);
        let gone = lender(|| Some(Err(refused(Refusal::NoTarget))));
        let status = tmux.session_status_routed("a", Some(&gone)).await;
        assert_eq!(status.unwrap(), SessionStatus::Gone);
        let other = lender(|| Some(Err(refused(Refusal::Other))));
        assert!(forked(&tmux.session_status_routed("a", Some(&other)).await));
        let left = lender(|| None);
        assert!(forked(&tmux.session_status_routed("a", Some(&left)).await));
        assert!(forked(
            &tmux.session_status_routed("a", None::<&NoLender>).await
        ));
        assert_eq!(left.asked.load(std::sync::atomic::Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_command_runs_over_the_lent_client_and_parses_there() {
        let tmux = unrunnable();
        let listing = lender(|| Some(Ok(vec![b"$1\t0\t1\t1700000000\twork".to_vec()])));
        let sessions = tmux
            .run_routed(&super::super::command::ListSessions, Some(&listing))
            .await;
        assert!(sessions.is_ok(), "{sessions:?}");
        let garbled = lender(|| Some(Ok(vec![b"not a session".to_vec()])));
        let sessions = tmux
            .run_routed(&super::super::command::ListSessions, Some(&garbled))
            .await;
        assert!(
            matches!(sessions, Err(TmuxError::Spawn { .. })),
            "{sessions:?}"
        );
    }
}
