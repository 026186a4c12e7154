//! Which connections a listener has open, and which to close to make room.
//!
//! Every connection is a stranger's until a request on it shows a
//! credential ([`Standing`]). Strangers have a cap of their own below the
//! listener's: when a new connection would pass either, the oldest
//! stranger is shed (an idle one before one with a request in progress),
//! never a connection that showed a credential and never the newcomer. So
//! however many connections strangers open, the next one (which may be the
//! owner's) is accepted at once and has time to send its request; only
//! when credentialed connections hold every slot does a newcomer wait in
//! the kernel's backlog. Pure bookkeeping: the accept loop acts on it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::api::Standing;

/// How many connections shed but not yet closed may be outstanding before
/// the listener waits for them: each still holds its descriptor.
const MAX_SHEDDING: usize = 64;

/// How many connections a listener keeps open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Open connections at most.
    pub open: usize,
    /// Of those, at most this many that showed no credential yet.
    pub strangers: usize,
}

/// Whether a connection has a request in progress, set by its service.
#[derive(Clone, Debug, Default)]
pub struct Busy(Arc<AtomicBool>);

impl Busy {
    pub fn set(&self, busy: bool) {
        self.0.store(busy, Ordering::Relaxed);
    }

    fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The open connections, oldest first; `S` is how to reach a connection's
/// socket (its descriptor, or a name in tests).
#[derive(Debug)]
pub struct Table<S> {
    caps: Caps,
    open: BTreeMap<u64, Slot<S>>,
    next: u64,
}

#[derive(Debug)]
struct Slot<S> {
    standing: Standing,
    busy: Busy,
    socket: S,
    /// Told to close; it still holds its descriptor until it has.
    shed: bool,
}

impl<S: Copy> Table<S> {
    pub fn new(caps: Caps) -> Self {
        Table {
            caps,
            open: BTreeMap::new(),
            next: 0,
        }
    }

    /// Whether a new connection may be accepted now: under the cap, or a
    /// stranger can be shed for it.
    pub fn has_room(&self) -> bool {
        let shedding = self.open.values().filter(|s| s.shed).count();
        self.open.len() < self.caps.open || (shedding < MAX_SHEDDING && self.victim(None).is_some())
    }

    /// Records an accepted connection; returns its id and the sockets of
    /// the strangers to shed to stay within the caps.
    pub fn open(&mut self, standing: Standing, busy: Busy, socket: S) -> (u64, Vec<S>) {
        let id = self.next;
        self.next += 1;
        let slot = Slot {
            standing,
            busy,
            socket,
            shed: false,
        };
        self.open.insert(id, slot);
        let mut shed = Vec::new();
        while self.over_caps()
            && let Some(victim) = self.victim(Some(id))
        {
            let slot = self.open.get_mut(&victim).expect("a victim is open");
            slot.shed = true;
            shed.push(slot.socket);
        }
        (id, shed)
    }

    /// Forgets a connection that closed.
    pub fn close(&mut self, id: u64) {
        self.open.remove(&id);
    }

    /// The sockets of every open connection not shed yet, oldest first.
    fn live(&self) -> impl Iterator<Item = (&u64, &Slot<S>)> {
        self.open.iter().filter(|(_, s)| !s.shed)
    }

    fn over_caps(&self) -> bool {
        let strangers = self.live().filter(|(_, s)| !s.standing.is_vouched());
        self.live().count() > self.caps.open || strangers.count() > self.caps.strangers
    }

    /// The stranger to shed: the oldest idle one, else the oldest.
    fn victim(&self, sparing: Option<u64>) -> Option<u64> {
        let strangers: Vec<(u64, bool)> = self
            .live()
            .filter(|(id, s)| Some(**id) != sparing && !s.standing.is_vouched())
            .map(|(id, s)| (*id, s.busy.get()))
            .collect();
        let idle = strangers.iter().find(|(_, busy)| !busy);
        idle.or(strangers.first()).map(|(id, _)| *id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table whose sockets are names, and the handles of each connection.
    struct Transcript {
        table: Table<&'static str>,
        ids: BTreeMap<&'static str, (u64, Standing, Busy)>,
    }

    impl Transcript {
        fn new(open: usize, strangers: usize) -> Self {
            Transcript {
                table: Table::new(Caps { open, strangers }),
                ids: BTreeMap::new(),
            }
        }

        /// Accepts `name`; the names shed for it.
        fn accept(&mut self, name: &'static str) -> Vec<&'static str> {
            let (standing, busy) = (Standing::default(), Busy::default());
            let (id, shed) = self.table.open(standing.clone(), busy.clone(), name);
            self.ids.insert(name, (id, standing, busy));
            shed
        }

        fn vouch(&self, name: &str) {
            self.ids[name].1.vouch();
        }

        fn busy(&self, name: &str) {
            self.ids[name].2.set(true);
        }

        fn close(&mut self, name: &str) {
            self.table.close(self.ids[name].0);
        }
    }

    #[test]
    fn the_oldest_stranger_makes_room_for_a_newcomer() {
        let mut t = Transcript::new(4, 2);
        assert_eq!(t.accept("a"), Vec::<&str>::new());
        assert_eq!(t.accept("b"), Vec::<&str>::new());
        assert_eq!(t.accept("c"), ["a"], "past the strangers' cap");
        assert!(t.table.has_room());
        // A shed connection holds its slot until it has closed.
        t.close("a");
        assert_eq!(t.accept("d"), ["b"]);
        t.close("b");
    }

    #[test]
    fn a_credentialed_connection_is_never_shed() {
        let mut t = Transcript::new(3, 2);
        t.accept("owner");
        t.vouch("owner");
        t.accept("x");
        assert_eq!(t.accept("y"), Vec::<&str>::new());
        assert_eq!(
            t.accept("z"),
            ["x"],
            "the owner stays, the oldest stranger goes"
        );
        t.close("x");
        t.vouch("y");
        t.vouch("z");
        assert!(
            !t.table.has_room(),
            "all three slots hold credentials: wait"
        );
        t.close("owner");
        assert!(t.table.has_room());
        assert_eq!(t.accept("w"), Vec::<&str>::new());
    }

    #[test]
    fn an_idle_stranger_goes_before_one_with_a_request_in_progress() {
        let mut t = Transcript::new(8, 2);
        t.accept("busy");
        t.busy("busy");
        t.accept("idle");
        assert_eq!(t.accept("new"), ["idle"]);
        t.close("idle");
        t.busy("new");
        assert_eq!(t.accept("newer"), ["busy"], "all busy: the oldest");
    }

    #[test]
    fn the_total_cap_sheds_strangers_too() {
        let mut t = Transcript::new(3, 3);
        t.accept("a");
        t.vouch("a");
        t.accept("b");
        t.accept("c");
        assert!(t.table.has_room(), "a stranger can be shed");
        assert_eq!(t.accept("d"), ["b"]);
        // With a lone newcomer as the only stranger there is nothing to shed.
        let mut t = Transcript::new(2, 2);
        t.accept("a");
        t.vouch("a");
        t.accept("b");
        t.vouch("b");
        assert!(!t.table.has_room());
    }

    #[test]
    fn shedding_is_bounded_while_the_shed_are_closing() {
        let mut t = Transcript::new(1, 1);
        let names: Vec<&'static str> = (0..=MAX_SHEDDING)
            .map(|i| &*Box::leak(format!("s{i}").into_boxed_str()))
            .collect();
        t.accept(names[0]);
        for name in &names[1..] {
            assert!(t.table.has_room());
            assert_eq!(t.accept(name).len(), 1);
        }
        assert!(!t.table.has_room(), "{MAX_SHEDDING} still closing");
        t.close(names[0]);
        assert!(t.table.has_room());
    }
}
