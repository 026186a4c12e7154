//! `match` waits on one session share one evaluation. A hub task per
//! session (while it has match waiters) asks its actor for the window's
//! text once per change and tests every waiter's regex against that one
//! copy on a blocking thread, each distinct pattern once. Before, each
//! waiter rendered its own snapshot on every change: 200 of them on a busy
//! 500x500 window held a core and pushed other requests to p50 1.3 s.
//!
//! An evaluation starts at most every `MATCH_EVERY`, and never sooner after
//! the last one than that one took: however many wait and however slow
//! their regexes, a session's hub keeps at most about half a core busy.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use regex::Regex;
use tokio::sync::{mpsc, oneshot, watch};

use super::lines::find_line;
use crate::id::SessionId;
use crate::session::{
    Region, ScreenSnapshot, SessionHandle, SessionState, SnapshotFormat, StateView,
};
use crate::supervisor::types::MatchedLine;

/// How often a session's screen is read at most while output flows.
const MATCH_EVERY: Duration = Duration::from_millis(50);

/// What a match waiter hears from its hub.
#[derive(Debug)]
pub enum Answer {
    /// A line of the window matched.
    Matched(MatchedLine),
    /// The session's actor went away or reports the session exited.
    Gone,
}

/// The hubs by session (the number in `sess_N`).
#[derive(Default)]
pub struct Hubs {
    map: Arc<Mutex<HashMap<SessionId, Entry>>>,
    serials: AtomicU64,
}

/// A running hub: where to send waiters, and the actor it watches.
struct Entry {
    tx: mpsc::UnboundedSender<Msg>,
    handle: SessionHandle,
    /// Tells this hub from a later one for the same session.
    serial: u64,
}

enum Msg {
    Join(Waiter),
    /// A waiter stopped listening (answered, timed out, or its client left).
    Left,
}

struct Waiter {
    regex: Arc<Regex>,
    reply: oneshot::Sender<Answer>,
}

/// A waiter's place at its hub; dropping it tells the hub.
pub struct Ticket {
    answer: oneshot::Receiver<Answer>,
    hub: mpsc::UnboundedSender<Msg>,
}

impl Ticket {
    pub async fn answer(&mut self) -> Answer {
        (&mut self.answer).await.unwrap_or(Answer::Gone)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.answer.close();
        let _ = self.hub.send(Msg::Left);
    }
}

impl Hubs {
    /// Joins the hub of session `id` (starting one for this actor if there
    /// is none), to hear when `regex` matches a line of its window.
    pub fn join(&self, id: SessionId, handle: &SessionHandle, regex: Arc<Regex>) -> Ticket {
        let (reply, answer) = oneshot::channel();
        let mut waiter = Waiter { regex, reply };
        // Joins go through this lock, and a hub retires under it only with
        // an empty inbox: no waiter can join a hub that has just gone.
        let mut map = self.map.lock().expect("hubs lock");
        if let Some(entry) = map.get(&id).filter(|e| e.handle.same_actor(handle)) {
            match entry.tx.send(Msg::Join(waiter)) {
                Ok(()) => {
                    return Ticket {
                        answer,
                        hub: entry.tx.clone(),
                    };
                }
                Err(mpsc::error::SendError(Msg::Join(back))) => waiter = back,
                Err(_) => unreachable!("a join was sent"),
            }
        }
        let (tx, inbox) = mpsc::unbounded_channel();
        let serial = self.serials.fetch_add(1, Ordering::Relaxed);
        let _ = tx.send(Msg::Join(waiter));
        map.insert(
            id,
            Entry {
                tx: tx.clone(),
                handle: handle.clone(),
                serial,
            },
        );
        let hub = Hub {
            id,
            serial,
            handle: handle.clone(),
            map: self.map.clone(),
            waiters: Vec::new(),
        };
        tokio::spawn(hub.run(inbox));
        Ticket { answer, hub: tx }
    }
}

/// One session's hub: its waiters and the actor it reads.
struct Hub {
    id: SessionId,
    serial: u64,
    handle: SessionHandle,
    map: Arc<Mutex<HashMap<SessionId, Entry>>>,
    waiters: Vec<Waiter>,
}

/// The session can no longer be read live.
struct Gone;

impl Hub {
    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Msg>) {
        if let Err(Gone) = self.serve(&mut inbox).await {
            self.retire_gone(&mut inbox);
        }
    }

    /// Evaluates while anyone waits; Ok once no one does (retired).
    async fn serve(&mut self, inbox: &mut mpsc::UnboundedReceiver<Msg>) -> Result<(), Gone> {
        let (Ok(mut states), Ok(mut outputs)) = (
            self.handle.watch_state().await,
            self.handle.watch_output().await,
        ) else {
            return Err(Gone);
        };
        // A waiter that joined since the last evaluation, or output since it.
        let mut due = true;
        let mut next = Instant::now();
        loop {
            if exited(&mut states) {
                return Err(Gone);
            }
            if self.waiters.is_empty() && self.retire(inbox) {
                return Ok(());
            }
            tokio::select! {
                msg = inbox.recv() => match msg {
                    Some(Msg::Join(waiter)) => {
                        self.waiters.push(waiter);
                        due = true;
                    }
                    Some(Msg::Left) => self.waiters.retain(|w| !w.reply.is_closed()),
                    None => return Err(Gone),
                },
                changed = outputs.changed() => {
                    changed.map_err(|_| Gone)?;
                    due = true;
                }
                changed = states.changed() => changed.map_err(|_| Gone)?,
                _ = tokio::time::sleep_until(next.into()), if due => {
                    due = false;
                    let started = Instant::now();
                    self.evaluate().await?;
                    next = Instant::now() + MATCH_EVERY.max(started.elapsed());
                }
            }
        }
    }

    /// Reads the window once and answers every waiter whose regex matches.
    /// Everyone is tested, not only who joined: the screen may change
    /// without output (a re-seed after a flood, a resize).
    async fn evaluate(&mut self) -> Result<(), Gone> {
        let snapshot = self
            .handle
            .snapshot(SnapshotFormat::Text, Region::Window)
            .await
            .map_err(|_| Gone)?;
        let screen = snapshot.screen;
        let regexes: Vec<Arc<Regex>> = self.waiters.iter().map(|w| w.regex.clone()).collect();
        let found = tokio::task::spawn_blocking(move || first_matches(&regexes, &screen))
            .await
            .expect("matching does not panic");
        let waiters = std::mem::take(&mut self.waiters);
        for (waiter, found) in waiters.into_iter().zip(found) {
            match found {
                Some(line) => {
                    let _ = waiter.reply.send(Answer::Matched(line));
                }
                None if !waiter.reply.is_closed() => self.waiters.push(waiter),
                None => {}
            }
        }
        Ok(())
    }

    /// With no waiter left: retires unless one is joining. Returns whether
    /// it did.
    fn retire(&mut self, inbox: &mut mpsc::UnboundedReceiver<Msg>) -> bool {
        let mut map = self.map.lock().expect("hubs lock");
        while let Ok(msg) = inbox.try_recv() {
            if let Msg::Join(waiter) = msg {
                self.waiters.push(waiter);
            }
        }
        if !self.waiters.is_empty() {
            return false;
        }
        self.leave_map(&mut map);
        true
    }

    /// The session went away: every waiter, and any still joining, hears so.
    fn retire_gone(&mut self, inbox: &mut mpsc::UnboundedReceiver<Msg>) {
        {
            let mut map = self.map.lock().expect("hubs lock");
            self.leave_map(&mut map);
            while let Ok(msg) = inbox.try_recv() {
                if let Msg::Join(waiter) = msg {
                    self.waiters.push(waiter);
                }
            }
        }
        for waiter in self.waiters.drain(..) {
            let _ = waiter.reply.send(Answer::Gone);
        }
    }

    fn leave_map(&self, map: &mut HashMap<SessionId, Entry>) {
        if map.get(&self.id).is_some_and(|e| e.serial == self.serial) {
            map.remove(&self.id);
        }
    }
}

fn exited(states: &mut watch::Receiver<StateView>) -> bool {
    states.borrow_and_update().state == SessionState::Exited
}

/// For each regex, the first line it matches; each distinct pattern is
/// tested once however many wait for it.
fn first_matches(regexes: &[Arc<Regex>], screen: &ScreenSnapshot) -> Vec<Option<MatchedLine>> {
    let mut seen: HashMap<&str, Option<MatchedLine>> = HashMap::new();
    regexes
        .iter()
        .map(|regex| {
            seen.entry(regex.as_str())
                .or_insert_with(|| find_line(regex, screen))
                .clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_regex_gets_its_first_matching_line() {
        let lines: Vec<String> = ["$ make", "error: bad", "ok"].map(String::from).to_vec();
        let regex = |p: &str| Arc::new(Regex::new(p).unwrap());
        let found = first_matches(
            &[
                regex("error: \\w+"),
                regex("zzzq"),
                regex("error: \\w+"),
                regex("^ok$"),
            ],
            &super::super::lines::screen_of(&lines, &[]),
        );
        let rows: Vec<Option<usize>> = found.iter().map(|f| f.as_ref().map(|m| m.row)).collect();
        assert_eq!(rows, [Some(1), None, Some(1), Some(2)]);
        assert_eq!(found[0].as_ref().unwrap().text, "error: bad");
    }
}
