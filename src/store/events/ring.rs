//! The newest events, kept in memory for replay: bounded by count and by
//! their serialized size, so a burst of large events cannot grow the daemon
//! (10,000 events of 1 MiB each once took 1 GiB).

use std::collections::VecDeque;

use super::Event;

/// A retained event and the bytes its JSON takes.
#[derive(Debug)]
struct Retained {
    event: Event,
    bytes: usize,
}

/// Events oldest first, seq ascending; at most `max_count` of them and at
/// most `max_bytes` of JSON, except that the newest is always kept.
#[derive(Debug)]
pub(super) struct Ring {
    retained: VecDeque<Retained>,
    bytes: usize,
    max_count: usize,
    max_bytes: usize,
}

/// One page of retained events after a seq.
#[derive(Clone, Debug, PartialEq)]
pub struct EventPage {
    /// Oldest first.
    pub events: Vec<Event>,
    /// Some events after `since` are no longer retained.
    pub truncated: bool,
    /// The page stopped at its limit or byte cap: more retained events
    /// follow the last one in it.
    pub has_more: bool,
}

impl Ring {
    pub(super) fn new(max_count: usize, max_bytes: usize) -> Ring {
        Ring {
            retained: VecDeque::new(),
            bytes: 0,
            max_count,
            max_bytes,
        }
    }

    /// Keeps `event` (whose JSON is `bytes` long) and drops the oldest past
    /// the bounds.
    pub(super) fn push(&mut self, event: Event, bytes: usize) {
        if self.max_count == 0 {
            return;
        }
        self.bytes += bytes;
        self.retained.push_back(Retained { event, bytes });
        self.trim();
    }

    pub(super) fn set_max_bytes(&mut self, max_bytes: usize) {
        self.max_bytes = max_bytes;
        self.trim();
    }

    /// JSON bytes of the retained events.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(super) fn len(&self) -> usize {
        self.retained.len()
    }

    fn trim(&mut self) {
        while self.retained.len() > self.max_count
            || (self.bytes > self.max_bytes && self.retained.len() > 1)
        {
            let Some(dropped) = self.retained.pop_front() else {
                break;
            };
            self.bytes -= dropped.bytes;
        }
    }

    /// Whether events after `since` were dropped already; `next_seq` is the
    /// seq the next event will get (the oldest "retained" when none is).
    fn missed(&self, since: u64, next_seq: u64) -> bool {
        let oldest = self.retained.front().map_or(next_seq, |r| r.event.seq);
        since.saturating_add(1) < oldest
    }

    /// Every retained event after `since`, and whether some were missed.
    pub(super) fn since(&self, since: u64, next_seq: u64) -> (Vec<Event>, bool) {
        let start = self.retained.partition_point(|r| r.event.seq <= since);
        let events = self.retained.range(start..).map(|r| r.event.clone());
        (events.collect(), self.missed(since, next_seq))
    }

    /// At most `limit` events after `since` and at most `max_bytes` of
    /// their JSON (though always one, if there is one).
    pub(super) fn page(
        &self,
        since: u64,
        next_seq: u64,
        limit: usize,
        max_bytes: usize,
    ) -> EventPage {
        let start = self.retained.partition_point(|r| r.event.seq <= since);
        let mut events = Vec::new();
        let mut bytes = 0;
        let mut has_more = false;
        for retained in self.retained.range(start..) {
            let full =
                events.len() >= limit || (!events.is_empty() && bytes + retained.bytes > max_bytes);
            if full {
                has_more = true;
                break;
            }
            bytes += retained.bytes;
            events.push(retained.event.clone());
        }
        EventPage {
            events,
            truncated: self.missed(since, next_seq),
            has_more,
        }
    }
}
