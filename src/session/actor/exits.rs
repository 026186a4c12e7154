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

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, oneshot};

use crate::session::{Captured, EndHistory, PaneState};
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
struct PidWatch {
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
fn watch_pid(pid: u32, pane: PaneId, exited: &mpsc::UnboundedSender<Exited>) -> Option<PidWatch> {
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

/// A pane whose process exited, and how many times tmux was asked about it.
pub(super) type Exited = (PaneId, u8);

/// The session's panes' processes and how they ended: the pidfd watches,
/// which panes' processes exited and which dead panes were reaped, the last
/// exit, and the last pane's look being read before the session closes.
pub(super) struct Exits {
    /// Panes whose process exited (a pidfd, tmux, or a look asked again).
    tx: mpsc::UnboundedSender<Exited>,
    /// Each pane of the session: its process and the watch on it.
    watches: BTreeMap<PaneId, (u32, Option<PidWatch>)>,
    /// Panes whose process has exited, until a new process runs in them.
    exited: BTreeSet<PaneId>,
    /// Dead panes whose exit status was read and which were killed.
    reaped: BTreeSet<PaneId>,
    /// How the last pane that died exited: status, signal.
    exit: Option<(Option<i32>, Option<i32>)>,
    /// Whether tmux keeps the session's dead panes for tmuxd to read
    /// (`KEEP_EXIT_OPTION`, on the sessions tmuxd created); None until asked.
    keeps_exit: Option<bool>,
    /// When to list the session's panes once more: a new pane's process
    /// sets its working directory just after tmux forks it, so the listing
    /// a layout change brings may still show tmux's own (see `watch_pids`).
    panes_again_at: Option<std::time::Instant>,
    /// What the session's last pane shows, being read before the dead
    /// pane is closed; the end's record waits for it.
    last_look: Option<oneshot::Receiver<LastLook>>,
}

/// A dead pane just reaped: how it exited, and whether it was the
/// session's last live pane.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Reaped {
    pub(super) exit: (Option<i32>, Option<i32>),
    pub(super) last: bool,
}

impl Exits {
    /// The owner, and where the panes whose process exited are heard.
    pub(super) fn new() -> (Exits, mpsc::UnboundedReceiver<Exited>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let exits = Exits {
            tx,
            watches: BTreeMap::new(),
            exited: BTreeSet::new(),
            reaped: BTreeSet::new(),
            exit: None,
            keeps_exit: None,
            panes_again_at: None,
            last_look: None,
        };
        (exits, rx)
    }

    /// `pane`'s process has exited; true when how it ended is still to be
    /// asked (it was not reaped already).
    pub(super) fn process_exited(&mut self, pane: PaneId) -> bool {
        self.exited.insert(pane);
        !self.reaped.contains(&pane)
    }

    /// Whether `pane`'s process has exited (and no new one runs in it).
    pub(super) fn has_exited(&self, pane: PaneId) -> bool {
        self.exited.contains(&pane)
    }

    /// How the last pane that died exited: status, signal.
    pub(super) fn exit(&self) -> Option<(Option<i32>, Option<i32>)> {
        self.exit
    }

    pub(super) fn keeps_exit(&self) -> Option<bool> {
        self.keeps_exit
    }

    pub(super) fn set_keeps_exit(&mut self, keeps_exit: bool) {
        self.keeps_exit = Some(keeps_exit);
    }

    /// When the session's panes are to be listed again.
    pub(super) fn panes_again_at(&self) -> Option<std::time::Instant> {
        self.panes_again_at
    }

    /// The panes are being listed again (see `panes_again_at`).
    pub(super) fn panes_asked_again(&mut self) {
        self.panes_again_at = None;
    }

    /// Whether the last pane's look is still being read.
    pub(super) fn reading_last_look(&self) -> bool {
        self.last_look.is_some()
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
            seen.insert(pane);
            if dead == "1" {
                let _ = self.tx.send((pane, 0));
            }
            if self.watches.get(&pane).is_some_and(|w| w.0 == pid) {
                continue;
            }
            self.exited.remove(&pane);
            let watch = watch_pid(pid, pane, &self.tx);
            self.watches.insert(pane, (pid, watch));
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

    /// What tmux said of a pane's end after `looks` looks: a dead pane on
    /// a session tmuxd keeps the exit of is reaped (once); one tmux has not
    /// noticed or reaped yet is looked at again shortly.
    pub(super) fn judge(&mut self, pane: PaneId, value: &[u8], looks: u8) -> Option<Reaped> {
        let zombie = || {
            let (pid, _) = self.watches.get(&pane)?;
            crate::session::foreground::zombie_exit(*pid)
        };
        match judge_exit(with_zombie(parse_exit(value), zombie), looks) {
            Exit::Dead { exit, last } if self.reaped.insert(pane) => {
                self.exit = Some(exit);
                Some(Reaped { exit, last })
            }
            Exit::NotYet => {
                self.look_later(pane, looks, EXIT_LOOK_LATER);
                None
            }
            Exit::Unreaped => {
                self.look_later(pane, looks, STATUS_LOOK_LATER);
                None
            }
            Exit::NotOurs => {
                self.keeps_exit = Some(false);
                None
            }
            Exit::Dead { .. } => None,
        }
    }

    /// The last pane's look is to be read; the end's record waits for
    /// what is sent here.
    pub(super) fn read_last_look(&mut self) -> oneshot::Sender<LastLook> {
        let (tx, rx) = oneshot::channel();
        self.last_look = Some(rx);
        tx
    }

    /// What the last pane showed, once read (at once if nothing is being read).
    pub(super) async fn take_last_look(&mut self) -> Option<LastLook> {
        self.last_look.take()?.await.ok()
    }

    /// Asks again how `pane` ended: soon for the first looks, then every
    /// `later`.
    pub(super) fn look_later(&self, pane: PaneId, looks: u8, later: Duration) {
        let again = self.tx.clone();
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

/// Every pane of session `name` with its process (see `Exits::watch_pids`),
/// and what it takes to restore it (`plan_rows`).
pub(super) fn pids_query(name: &str) -> ListPanes {
    ListPanes {
        scope: PaneScope::Session(Target::Session(name.to_owned())),
        format: format!("{PIDS_FORMAT} {PANE_PLAN_FORMAT}"),
    }
}

/// The session's windows and panes (the part of each `pids_query` row
/// after `PIDS_FORMAT`), to keep what it takes to restore the session. A
/// reply with a row that does not read (a fake tmux) tells nothing.
pub(super) fn plan_rows(rows: &[Vec<u8>]) -> Option<Vec<PanePlanRow>> {
    let plan: Option<Vec<PanePlanRow>> = rows
        .iter()
        .map(|row| {
            let row = String::from_utf8_lossy(row);
            let mut fields = row.splitn(4, ' ');
            parse_plan_row(fields.nth(3)?)
        })
        .collect();
    plan.filter(|rows| !rows.is_empty())
}

/// Undoes what tmuxd set on session `name` if it made it
/// (`remain-on-exit`, its format, the marker) on every window, so once
/// tmuxd lets go of it a program's exit ends its pane as tmux does by
/// default. A session without the marker is left as it is.
pub(super) async fn release(name: &str, client: &mut ControlClient) {
    let session = Target::Session(name.to_owned());
    if !keeps_exit(name, client).await {
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

/// How tmux is asked how `pane` ended (`parse_exit` reads the answer).
pub(super) fn exit_query(pane: PaneId) -> DisplayMessage {
    DisplayMessage {
        target: Some(Target::Pane(pane)),
        format: exit_format(),
    }
}

/// What to read of a session's last pane before it is closed.
pub(super) struct LastAsk {
    pub(super) pane: PaneId,
    /// History lines to keep (0: none).
    pub(super) history_lines: usize,
    /// The session whose current window's screens to read: tmuxd's own
    /// may be behind tmux's (a flood's output skipped, a re-seed raced by
    /// output or not answered yet, output not read yet), and no later
    /// redraw will set them right.
    pub(super) session: String,
}

/// What was read of a session's last pane before it was closed.
pub(super) struct LastLook {
    pub(super) history: Option<EndHistory>,
    /// Seeds for the current window's panes: (pane, its state, its screen).
    pub(super) screens: Vec<(PaneId, PaneState, Captured)>,
}

impl LastAsk {
    pub(super) async fn read(self, tmux: &Tmux) -> LastLook {
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
async fn window_seeds(tmux: &Tmux, session: &str) -> Vec<(PaneId, PaneState, Captured)> {
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
        seeds.push((row.pane, state, captured));
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
    async fn a_dead_pane_is_reaped_once_and_a_pane_not_dead_yet_is_asked_again() {
        let (mut exits, mut again) = Exits::new();
        let pane = PaneId(3);
        assert!(exits.process_exited(pane));
        assert!(exits.has_exited(pane));
        // tmux has not noticed: asked again soon, nothing known yet.
        assert_eq!(exits.judge(pane, b"1:0:::", 0), None);
        let asked = tokio::time::timeout(Duration::from_secs(60), again.recv()).await;
        assert_eq!(asked.unwrap(), Some((pane, 1)));
        assert_eq!(exits.exit(), None);
        // Dead with a status: reaped, once; its exit is the session's.
        let reaped = Reaped {
            exit: (Some(7), None),
            last: true,
        };
        assert_eq!(exits.judge(pane, b"1:1:7::", 1), Some(reaped));
        assert_eq!(exits.judge(pane, b"1:1:7::", 2), None);
        assert_eq!(exits.exit(), Some((Some(7), None)));
        assert!(
            !exits.process_exited(pane),
            "a reaped pane is not asked about again"
        );
        // A session tmuxd did not make: its exits are not kept.
        assert_eq!(exits.judge(PaneId(4), b":1:0:", 0), None);
        assert_eq!(exits.keeps_exit(), Some(false));
    }

    #[tokio::test]
    async fn pane_listings_watch_new_processes_and_forget_gone_panes() {
        let (mut exits, mut heard) = Exits::new();
        let me = std::process::id();
        exits.watch_pids(&[format!("%1 {me} 0").into_bytes(), b"not a row".to_vec()]);
        assert!(exits.watches.contains_key(&PaneId(1)));
        assert!(
            exits.panes_again_at().is_some(),
            "a new process is listed again"
        );
        exits.panes_asked_again();
        exits.process_exited(PaneId(1));
        // The same process again: nothing new; a dead pane is heard at once.
        exits.watch_pids(&[
            format!("%1 {me} 0").into_bytes(),
            format!("%2 {me} 1").into_bytes(),
        ]);
        assert!(
            exits.has_exited(PaneId(1)),
            "the same process keeps its exit"
        );
        assert_eq!(heard.try_recv(), Ok((PaneId(2), 0)));
        // A new process in pane 1 clears its exit; pane 2 gone is forgotten.
        exits.watch_pids(&[b"%1 1 0".to_vec()]);
        assert!(!exits.has_exited(PaneId(1)));
        assert_eq!(exits.watches.keys().collect::<Vec<_>>(), [&PaneId(1)]);
    }

    #[tokio::test]
    async fn a_pidfd_tells_when_a_process_exits() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut child = std::process::Command::new("sleep")
            .arg("0.1")
            .spawn()
            .unwrap();
        let _watch = watch_pid(child.id(), PaneId(7), &tx).expect("pidfds on this kernel");
        let pane = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
        assert_eq!(pane.unwrap(), Some((PaneId(7), 0)));
        child.wait().unwrap();
        assert!(watch_pid(u32::MAX, PaneId(8), &tx).is_none());
    }
}
