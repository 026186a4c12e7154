//! How a pane's program exited, on the sessions tmuxd created: tmux keeps
//! their dead panes (`remain-on-exit`, set with the session, which carries
//! the `@tmuxd-keep-exit` option), the actor reads `#{pane_dead_status}` /
//! `#{pane_dead_signal}` over its control client, then kills the pane (the
//! session ends with its last pane). A death is noticed at once through a
//! pidfd on the process of every pane of the session (listed at attach and
//! whenever a window or layout changes), and from `list-panes` for a pane
//! already dead.
//!
//! No control-mode subscription is used for this: tmux before 3.7 crashes
//! when a client's session is destroyed and its subscription timer fires
//! before the client is gone (tmux GitHub issue 4916), which an outside
//! `kill-session` or a server shutdown can stage.
//!
//! tmux marks a pane dead (`#{pane_dead}`) as soon as it reads the end of
//! its terminal, but sets `#{pane_dead_status}` / `#{pane_dead_signal}`
//! only when it reaps the child, which may come a moment later (tmux 3.3a:
//! `server_destroy_pane` waits for `PANE_STATUSREADY` before it draws the
//! dead pane). A dead pane with neither is looked at again, a bounded
//! number of times, before its exit is taken as unknown.

use std::collections::BTreeSet;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use super::{Purpose, SessionActor};
use crate::session::state::Signal;
use crate::session::{ActorEvent, Captured, EndHistory, EndReason, PaneState};
use crate::tmux::command::restore::{PANE_PLAN_FORMAT, PanePlanRow, parse_plan_row};
use crate::tmux::command::{
    CaptureSeed, DisplayMessage, ListPanes, OptionScope, PaneScope, SetOption, Target, WindowPanes,
};
use crate::tmux::control::{ControlClient, PaneId};
use crate::tmux::{CaptureRange, Tmux};

pub use crate::tmux::KEEP_EXIT_OPTION;
/// Looks at a pane whose process exited before tmux has noticed: this many
/// times, this far apart, then every `EXIT_LOOK_LATER` for as long as the
/// pane lives undead (a background child can hold its terminal open).
const EXIT_LOOKS: u8 = 10;
const EXIT_LOOK_EVERY: Duration = Duration::from_millis(20);
pub(super) const EXIT_LOOK_LATER: Duration = Duration::from_secs(1);
/// Looks at a dead pane whose status tmux has not set yet, before its exit
/// is taken as unknown: `EXIT_LOOKS` soon, then every `STATUS_LOOK_LATER`
/// (~5 s in all). tmux reaps within milliseconds of the exit on an idle
/// machine, later on a loaded one; the last looks are for a program that
/// closed its terminal and lived on.
const STATUS_LOOKS: u8 = EXIT_LOOKS + 50;
const STATUS_LOOK_LATER: Duration = Duration::from_millis(100);

/// `PANE PID DEAD` for each pane of a session, to watch their processes,
/// then (after a space) what it takes to restore the pane
/// (`PANE_PLAN_FORMAT`), so one `list-panes` serves both.
const PIDS_FORMAT: &str = "#{pane_id} #{pane_pid} #{pane_dead}";

/// `KEEP:DEAD:STATUS:SIGNAL:LIVE`, for `display-message`; LIVE has an `x`
/// for each pane of the session still alive.
fn exit_format() -> String {
    format!(
        "#{{{KEEP_EXIT_OPTION}}}:#{{pane_dead}}:#{{pane_dead_status}}:#{{pane_dead_signal}}:\
         #{{W:#{{P:#{{?pane_dead,,x}}}}}}"
    )
}

/// Whether session `name` carries `KEEP_EXIT_OPTION` (tmuxd created it).
pub(super) async fn keeps_exit(name: &str, client: &mut ControlClient) -> bool {
    let marker = DisplayMessage {
        target: Some(Target::Session(name.to_owned())),
        format: format!("#{{{KEEP_EXIT_OPTION}}}"),
    };
    client.run(&marker).await.ok().as_deref() == Some("1")
}

/// A pane process's exit, as a pidfd tells it; the task ends when dropped.
pub(super) struct PidWatch {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PidWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Sends `pane` on `exited` once process `pid` has exited. None when the
/// kernel has no pidfds (before 5.3) or the process is already gone (then
/// `exited` hears at once).
pub(super) fn watch_pid(
    pid: u32,
    pane: u32,
    exited: &mpsc::UnboundedSender<(u32, u8)>,
) -> Option<PidWatch> {
    let fd = match pidfd_open(pid) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {
            let _ = exited.send((pane, 0));
            return None;
        }
        Err(_) => return None,
    };
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open, the same
    // descriptor, until the AsyncFd drops it.
    let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()?;
    let exited = exited.clone();
    let task = tokio::spawn(async move {
        if fd.readable().await.is_ok() {
            let _ = exited.send((pane, 0));
        }
    });
    Some(PidWatch { task })
}

fn pidfd_open(pid: u32) -> std::io::Result<OwnedFd> {
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| std::io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just returned to us and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// How long after a new pane process is seen its panes are listed again.
const PANES_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

impl SessionActor {
    /// Asks tmux for every pane of the session and its process.
    pub(super) async fn ask_pids(&mut self, client: &mut ControlClient) {
        let pids = self.pids_query();
        self.send(client, &pids, Purpose::Pids).await;
    }

    /// Every pane of the session with its process (see `watch_pids`), and
    /// what it takes to restore it (`report_panes`).
    pub(super) fn pids_query(&self) -> ListPanes {
        ListPanes {
            scope: PaneScope::Session(Target::Session(self.tmux_name.clone())),
            format: format!("{PIDS_FORMAT} {PANE_PLAN_FORMAT}"),
        }
    }

    /// Tells the supervisor the session's windows and panes (the part of
    /// each `ask_pids` row after `PIDS_FORMAT`), to keep what it takes to
    /// restore the session. A reply with a row that does not read (a fake
    /// tmux) tells nothing.
    pub(super) fn report_panes(&self, rows: &[Vec<u8>]) {
        let plan: Option<Vec<PanePlanRow>> = rows
            .iter()
            .map(|row| {
                let row = String::from_utf8_lossy(row);
                let mut fields = row.splitn(4, ' ');
                parse_plan_row(fields.nth(3)?)
            })
            .collect();
        if let Some(rows) = plan.filter(|rows| !rows.is_empty()) {
            let _ = self.events.send(ActorEvent::Panes {
                session_id: self.session_id,
                actor_id: self.actor_id,
                rows,
            });
        }
    }

    /// Watches the process of every pane of the session from `PIDS_FORMAT`
    /// rows: a new pane or a respawned one gets a pidfd, a pane gone loses
    /// its watch, a pane already dead is looked at.
    pub(super) fn watch_pids(&mut self, rows: &[Vec<u8>]) {
        let mut seen = BTreeSet::new();
        let mut new_process = false;
        for row in rows {
            let row = String::from_utf8_lossy(row);
            let mut fields = row.split(' ');
            let (Some(pane), Some(pid), Some(dead)) = (
                fields.next().and_then(|p| p.parse::<PaneId>().ok()),
                fields.next().and_then(|p| p.parse::<u32>().ok()),
                fields.next(),
            ) else {
                continue;
            };
            seen.insert(pane.0);
            if dead == "1" {
                let _ = self.exits_tx.send((pane.0, 0));
            }
            if self.watches.get(&pane.0).is_some_and(|w| w.0 == pid) {
                continue;
            }
            self.exited.remove(&pane.0);
            let watch = watch_pid(pid, pane.0, &self.exits_tx);
            self.watches.insert(pane.0, (pid, watch));
            new_process = true;
        }
        self.watches.retain(|pane, _| seen.contains(pane));
        self.exited.retain(|pane| seen.contains(pane));
        // A process this young may not have entered its working directory
        // yet: what `report_panes` kept for restore is read again shortly.
        if new_process && self.panes_again_at.is_none() {
            self.panes_again_at = Some(std::time::Instant::now() + PANES_AGAIN_AFTER);
        }
    }

    /// Undoes what tmuxd set on a session it made (`remain-on-exit`, its
    /// format, the marker) on every window, so once tmuxd lets go of it a
    /// program's exit ends its pane as tmux does by default. A session
    /// without the marker is left as it is.
    pub(super) async fn release_exits(&mut self, client: &mut ControlClient) {
        let session = Target::Session(self.tmux_name.clone());
        if !keeps_exit(&self.tmux_name, client).await {
            return;
        }
        let windows = ListPanes {
            scope: PaneScope::Session(session.clone()),
            format: "#{window_id}".to_owned(),
        };
        let mut windows = client.run(&windows).await.unwrap_or_default();
        windows.dedup();
        for window in windows.iter().filter_map(|w| w.parse().ok()) {
            for name in ["remain-on-exit", "remain-on-exit-format"] {
                let unset = SetOption {
                    scope: OptionScope::Window(Target::Window(window)),
                    name,
                    value: None,
                };
                let _ = client.run(&unset).await;
            }
        }
        let unmark = SetOption {
            scope: OptionScope::Session(session),
            name: KEEP_EXIT_OPTION,
            value: None,
        };
        let _ = client.run(&unmark).await;
    }

    /// A pane's process has exited (or its pane is dead at attach): ask
    /// tmux how, unless that is known already.
    pub(super) async fn look_at_exit(&mut self, pane: u32, looks: u8, client: &mut ControlClient) {
        if self.reaped.contains(&pane) {
            return;
        }
        let ask = DisplayMessage {
            target: Some(Target::Pane(PaneId(pane))),
            format: exit_format(),
        };
        self.send(client, &ask, Purpose::Exit { pane, looks }).await;
    }

    /// What tmux said of a pane's end: keep it and kill the pane if it is
    /// dead on a session tmuxd keeps the exit of; look again shortly if
    /// tmux has not noticed the death yet. The session's last pane dying is
    /// its end: it is reported exited at once (freeing its capacity slot),
    /// before the kill and the reap that follow.
    pub(super) fn on_exit_facts(&mut self, pane: u32, value: &[u8], looks: u8) {
        let zombie = || {
            let (pid, _) = self.watches.get(&pane)?;
            crate::session::foreground::zombie_exit(*pid)
        };
        match judge_exit(with_zombie(parse_exit(value), zombie), looks) {
            Exit::Dead { exit, last } if self.reaped.insert(pane) => {
                tracing::debug!(session_id = %self.session_id, pane, ?exit, last, "pane exited");
                self.exit = Some(exit);
                if last {
                    self.signal(Signal::End(EndReason::ProcessExit));
                }
                // What the last pane shows goes with it: read it first,
                // for the ended session's record.
                let look = last.then(|| {
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    self.last_look = Some(rx);
                    let ask = LastAsk {
                        pane: PaneId(pane),
                        history_lines: self.config.ended_scrollback_lines,
                        session: self.tmux_name.clone(),
                    };
                    (tx, ask)
                });
                // Forked under the handshake turn, not sent on the client:
                // the last pane's end closes the session, a notification
                // that must not meet another client's handshake (tmux < 3.7).
                let tmux = self.tmux.clone();
                tokio::spawn(async move {
                    if let Some((tx, ask)) = look {
                        let _ = tx.send(ask.read(&tmux).await);
                    }
                    if let Err(e) = tmux.kill_pane(PaneId(pane), last).await {
                        tracing::debug!(pane, "killing a dead pane: {e}");
                    }
                });
            }
            Exit::NotYet => self.look_at_exit_later(pane, looks, EXIT_LOOK_LATER),
            Exit::Unreaped => self.look_at_exit_later(pane, looks, STATUS_LOOK_LATER),
            Exit::NotOurs => self.keeps_exit = Some(false),
            Exit::Dead { .. } => {}
        }
    }

    /// Once the last pane has been read: seeds the screens with what tmux
    /// showed last, and gives the history (at once if nothing is being
    /// read).
    pub(super) async fn take_last_look(&mut self) -> Option<EndHistory> {
        let look = self.last_look.take()?.await.ok()?;
        for (pane, state, captured) in &look.screens {
            if let Some(slot) = self.panes.get_mut(pane) {
                slot.screen.seed(state, captured);
            }
        }
        look.history
    }

    /// Asks again how `pane` ended: soon for the first looks, then every
    /// `later`.
    pub(super) fn look_at_exit_later(&self, pane: u32, looks: u8, later: Duration) {
        let again = self.exits_tx.clone();
        let pause = if looks < EXIT_LOOKS {
            EXIT_LOOK_EVERY
        } else {
            later
        };
        tokio::spawn(async move {
            tokio::time::sleep(pause).await;
            let _ = again.send((pane, looks.saturating_add(1)));
        });
    }
}

/// What to read of a session's last pane before it is closed.
struct LastAsk {
    pane: PaneId,
    /// History lines to keep (0: none).
    history_lines: usize,
    /// The session whose current window's screens to read: tmuxd's own
    /// may be behind tmux's (a flood's output skipped, a re-seed raced by
    /// output or not answered yet, output not read yet), and no later
    /// redraw will set them right.
    session: String,
}

/// What was read of a session's last pane before it was closed.
pub(super) struct LastLook {
    history: Option<EndHistory>,
    /// Seeds for the current window's panes: (pane, its state, its screen).
    screens: Vec<(u32, PaneState, Captured)>,
}

impl LastAsk {
    async fn read(self, tmux: &Tmux) -> LastLook {
        let history = match self.history_lines {
            0 => None,
            lines => {
                let range = CaptureRange::History { lines };
                Some(match tmux.capture_pane_by_id(self.pane, range).await {
                    Ok(lines) => EndHistory::Captured(lines),
                    Err(e) => EndHistory::Refused(e.to_string()),
                })
            }
        };
        let screens = window_seeds(tmux, &self.session).await;
        LastLook { history, screens }
    }
}

/// The current window's panes as tmux shows them, read as the actor's
/// seeds are (`CaptureSeed`), but forked: the session is closing.
async fn window_seeds(tmux: &Tmux, session: &str) -> Vec<(u32, PaneState, Captured)> {
    let window = WindowPanes {
        session: session.to_owned(),
    };
    let Ok(rows) = tmux.run_cmd(&window).await else {
        return Vec::new();
    };
    let mut seeds = Vec::new();
    for row in rows {
        let state = row.state.clone();
        let capture = |alternate| CaptureSeed {
            pane: row.pane,
            alternate,
        };
        let text = |lines: Result<Vec<Vec<u8>>, _>| {
            lines
                .map(|l: Vec<Vec<u8>>| l.join(&b'\n'))
                .unwrap_or_default()
        };
        let shown = text(tmux.run_cmd(&capture(false)).await);
        // With the alternate screen on, the plain capture is what shows
        // and `-a` captures the normal screen behind it.
        let captured = match state.alternate_on {
            true => Captured {
                normal: text(tmux.run_cmd(&capture(true)).await),
                alternate: Some(shown),
            },
            false => Captured {
                normal: shown,
                alternate: None,
            },
        };
        seeds.push((row.pane.0, state, captured));
    }
    seeds
}

/// What tmux says of a pane.
#[derive(Debug, PartialEq, Eq)]
enum Exit {
    /// Dead, on a session tmuxd keeps the exit of: (status, signal), and
    /// whether it was the session's last live pane.
    Dead {
        exit: (Option<i32>, Option<i32>),
        last: bool,
    },
    /// Ours, but tmux has not noticed the death yet.
    NotYet,
    /// Dead, but tmux has not reaped the program yet: no status nor signal
    /// (decided by `judge_exit`).
    Unreaped,
    /// Not a session tmuxd keeps the exit of, or unreadable.
    NotOurs,
}

/// What to make of what tmux says after `looks` looks: a dead pane with
/// neither status nor signal is not yet reaped by tmux (see the module
/// comment) until `STATUS_LOOKS` looks have passed.
fn judge_exit(facts: Exit, looks: u8) -> Exit {
    match facts {
        Exit::Dead {
            exit: (None, None), ..
        } if looks < STATUS_LOOKS => Exit::Unreaped,
        facts => facts,
    }
}

/// A dead pane tmux has not reaped yet (neither status nor signal): its
/// program is a zombie, whose own exit code says how it ended (tmux 3.3a
/// was seen leaving one unreaped for over 5 s: 1 in 40 typed exits).
fn with_zombie(facts: Exit, zombie: impl FnOnce() -> Option<(Option<i32>, Option<i32>)>) -> Exit {
    match facts {
        Exit::Dead {
            exit: (None, None),
            last,
        } => match zombie() {
            Some(exit) => Exit::Dead { exit, last },
            None => facts,
        },
        facts => facts,
    }
}

/// `KEEP:DEAD:STATUS:SIGNAL:LIVE`.
fn parse_exit(value: &[u8]) -> Exit {
    let Ok(text) = std::str::from_utf8(value) else {
        return Exit::NotOurs;
    };
    let mut parts = text.trim().split(':');
    if parts.next() != Some("1") {
        return Exit::NotOurs;
    }
    if parts.next() != Some("1") {
        return Exit::NotYet;
    }
    let number = |p: Option<&str>| p.and_then(|p| p.parse().ok());
    let exit = (number(parts.next()), number(parts.next()));
    let last = parts.next().is_some_and(str::is_empty);
    Exit::Dead { exit, last }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_values() {
        let dead = |exit, last| Exit::Dead { exit, last };
        assert_eq!(parse_exit(b"1:1:7::"), dead((Some(7), None), true));
        assert_eq!(parse_exit(b"1:1::9:x"), dead((None, Some(9)), false));
        assert_eq!(parse_exit(b"1:1:::xx"), dead((None, None), false));
        // Without the live count (an older reply), never taken for the last.
        assert_eq!(parse_exit(b"1:1::"), dead((None, None), false));
        assert_eq!(parse_exit(b"1:0:::"), Exit::NotYet);
        assert_eq!(parse_exit(b":1:0:"), Exit::NotOurs);
        assert_eq!(parse_exit(b""), Exit::NotOurs);
    }

    /// Finding 1: a pane tmux has marked dead but not reaped yet is looked
    /// at again, not read as an unknown exit, within the bound.
    #[test]
    fn a_dead_pane_without_status_is_looked_at_again() {
        let dead = |exit| Exit::Dead { exit, last: true };
        let cases = [
            (dead((None, None)), 0, Exit::Unreaped),
            (dead((None, None)), STATUS_LOOKS - 1, Exit::Unreaped),
            (dead((None, None)), STATUS_LOOKS, dead((None, None))),
            (dead((Some(0), None)), 0, dead((Some(0), None))),
            (dead((None, Some(15))), 0, dead((None, Some(15)))),
            (Exit::NotYet, 0, Exit::NotYet),
            (Exit::NotOurs, 0, Exit::NotOurs),
        ];
        for (facts, looks, want) in cases {
            assert_eq!(judge_exit(facts, looks), want, "after {looks} looks");
        }
    }

    #[test]
    fn an_unreaped_pane_takes_its_zombies_exit() {
        let dead = |exit| Exit::Dead { exit, last: true };
        assert_eq!(
            with_zombie(dead((None, None)), || Some((Some(5), None))),
            dead((Some(5), None))
        );
        assert_eq!(with_zombie(dead((None, None)), || None), dead((None, None)));
        // What tmux says wins; the zombie is not even asked.
        assert_eq!(
            with_zombie(dead((Some(1), None)), || unreachable!()),
            dead((Some(1), None))
        );
        assert_eq!(with_zombie(Exit::NotYet, || unreachable!()), Exit::NotYet);
    }

    #[tokio::test]
    async fn a_pidfd_tells_when_a_process_exits() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut child = std::process::Command::new("sleep")
            .arg("0.1")
            .spawn()
            .unwrap();
        let _watch = watch_pid(child.id(), 7, &tx).expect("pidfds on this kernel");
        let pane = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
        assert_eq!(pane.unwrap(), Some((7, 0)));
        child.wait().unwrap();
        assert!(watch_pid(u32::MAX, 8, &tx).is_none());
    }
}
