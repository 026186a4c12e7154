//! The session's output as streams see it: the replay ring, each stream
//! subscriber's queue, and the sequence number watchers follow. Output is
//! kept whatever the screens' state; a subscriber too slow to take it is
//! dropped as overflowed, never waited on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

use crate::session::replay::{Replay, ReplayRing};
use crate::session::{Chunk, LiveOutput};
use crate::tmux::control::PaneId;

/// A stream subscriber: its pane, its queue, the bytes in it, and the flag
/// set when it overflowed.
struct Subscriber {
    pane: PaneId,
    tx: mpsc::UnboundedSender<Chunk>,
    queued: Arc<AtomicUsize>,
    overflowed: Arc<AtomicBool>,
}

/// A new subscriber's side: what it missed, and its live feed.
pub(super) struct Subscribed {
    pub(super) replay: Replay,
    pub(super) live: LiveOutput,
    pub(super) overflowed: Arc<AtomicBool>,
    pub(super) latest_seq: u64,
}

pub(super) struct Streams {
    ring: ReplayRing,
    subscribers: Vec<Subscriber>,
    /// Bytes a subscriber's queue may hold before it is dropped.
    queue_limit: usize,
    /// The latest sequence number, for watchers of output.
    output_tx: watch::Sender<u64>,
    /// The latest output before the last cold stretch: a replay from
    /// before it has a gap (output while cold was never seen).
    cold_after_seq: Option<u64>,
    /// The client has gone: no one subscribes any more.
    closed: bool,
}

impl Streams {
    pub(super) fn new(replay_bytes: usize, queue_limit: usize) -> Streams {
        Streams {
            ring: ReplayRing::new(replay_bytes),
            subscribers: Vec::new(),
            queue_limit,
            output_tx: watch::channel(0).0,
            cold_after_seq: None,
            closed: false,
        }
    }

    pub(super) fn latest_seq(&self) -> u64 {
        self.ring.latest_seq()
    }

    /// Keeps `pane`'s output and hands it to the pane's subscribers.
    pub(super) fn publish(&mut self, pane: PaneId, data: Vec<u8>) {
        let chunk = self.ring.push(pane.0, Bytes::from(data));
        self.output_tx.send_replace(chunk.seq);
        let limit = self.queue_limit;
        let size = chunk.bytes.len();
        self.subscribers.retain(|s| {
            if s.pane != pane {
                return !s.tx.is_closed();
            }
            if s.queued.fetch_add(size, Ordering::Relaxed) + size > limit {
                s.overflowed.store(true, Ordering::Relaxed);
                return false;
            }
            s.tx.send(chunk.clone()).is_ok()
        });
    }

    /// Output of `pane` was skipped (tmux paused it): its subscribers are
    /// closed as overflowed, so they reconnect and learn of the gap.
    pub(super) fn gap(&mut self, pane: PaneId) {
        self.subscribers.retain(|s| {
            if s.pane == pane {
                s.overflowed.store(true, Ordering::Relaxed);
                return false;
            }
            true
        });
    }

    /// Output from now on is not seen until the session is hot again.
    pub(super) fn went_cold(&mut self) {
        self.cold_after_seq = Some(self.ring.latest_seq());
    }

    /// The client has gone: every subscriber ends, and none is taken on.
    pub(super) fn close(&mut self) {
        self.closed = true;
        self.subscribers.clear();
    }

    /// A subscriber of `pane`'s output, with what it missed since `since`.
    pub(super) fn subscribe(&mut self, since: Option<u64>, pane: PaneId) -> Subscribed {
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let overflowed = Arc::new(AtomicBool::new(false));
        let live = LiveOutput::new(rx, queued.clone());
        // Output from before a cold stretch, and after it, is not the
        // whole of what the pane wrote: said as a gap, never silently.
        let across_cold = |since: u64| self.cold_after_seq.is_some_and(|cold| since <= cold);
        let replay = match since {
            Some(since) => match self.ring.since(since) {
                Replay::Complete(c) if across_cold(since) => Replay::Truncated(only_pane(c, pane)),
                Replay::Complete(c) => Replay::Complete(only_pane(c, pane)),
                Replay::Truncated(c) => Replay::Truncated(only_pane(c, pane)),
            },
            None => Replay::Complete(Vec::new()),
        };
        if !self.closed {
            self.subscribers.push(Subscriber {
                pane,
                tx,
                queued,
                overflowed: overflowed.clone(),
            });
        }
        Subscribed {
            replay,
            live,
            overflowed,
            latest_seq: self.ring.latest_seq(),
        }
    }

    /// A watch on the latest sequence number.
    pub(super) fn watch_output(&self) -> watch::Receiver<u64> {
        self.output_tx.subscribe()
    }

    /// Stream subscribers still listening.
    pub(super) fn subscribers(&self) -> usize {
        self.subscribers
            .iter()
            .filter(|s| !s.tx.is_closed())
            .count()
    }

    /// Someone follows the output live (a stream or a watcher).
    pub(super) fn watched(&self) -> bool {
        self.subscribers() > 0 || self.output_tx.receiver_count() > 0
    }
}

fn only_pane(chunks: Vec<Chunk>, pane: PaneId) -> Vec<Chunk> {
    chunks.into_iter().filter(|c| c.pane == pane.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(replay: &Replay) -> (bool, Vec<u64>) {
        match replay {
            Replay::Complete(c) => (true, c.iter().map(|c| c.seq).collect()),
            Replay::Truncated(c) => (false, c.iter().map(|c| c.seq).collect()),
        }
    }

    #[test]
    fn a_subscriber_gets_its_panes_output_and_a_replay_of_it() {
        let mut streams = Streams::new(1024, 1024);
        streams.publish(PaneId(1), b"one".to_vec());
        streams.publish(PaneId(2), b"two".to_vec());
        let mut sub = streams.subscribe(Some(0), PaneId(1));
        assert_eq!(seqs(&sub.replay), (true, vec![1]));
        assert_eq!(sub.latest_seq, 2);
        streams.publish(PaneId(2), b"other".to_vec());
        streams.publish(PaneId(1), b"mine".to_vec());
        let chunk = sub.live.try_recv().expect("the pane's output");
        assert_eq!((chunk.seq, &chunk.bytes[..]), (4, &b"mine"[..]));
        assert!(sub.live.try_recv().is_none());
        assert_eq!(streams.subscribers(), 1);
        assert!(streams.watched());
    }

    #[test]
    fn a_replay_across_a_cold_stretch_is_truncated() {
        let mut streams = Streams::new(1024, 1024);
        streams.publish(PaneId(1), b"before".to_vec());
        streams.went_cold();
        streams.publish(PaneId(1), b"after".to_vec());
        // (since, complete, chunks)
        let cases = [
            (0, false, vec![1, 2]),
            (1, false, vec![2]),
            (2, true, vec![]),
        ];
        for (since, complete, want) in cases {
            let sub = streams.subscribe(Some(since), PaneId(1));
            assert_eq!(seqs(&sub.replay), (complete, want), "since {since}");
        }
    }

    #[test]
    fn a_full_queue_or_a_gap_drops_the_subscriber_as_overflowed() {
        let mut streams = Streams::new(1024, 8);
        let slow = streams.subscribe(None, PaneId(1));
        let paused = streams.subscribe(None, PaneId(2));
        streams.publish(PaneId(1), b"12345".to_vec());
        assert!(!slow.overflowed.load(Ordering::Relaxed));
        streams.publish(PaneId(1), b"6789".to_vec());
        assert!(
            slow.overflowed.load(Ordering::Relaxed),
            "9 bytes queued > 8"
        );
        streams.gap(PaneId(2));
        assert!(paused.overflowed.load(Ordering::Relaxed));
        assert_eq!(streams.subscribers(), 0);
        // Once the client is gone, no one is taken on.
        streams.close();
        let _late = streams.subscribe(None, PaneId(1));
        assert_eq!(streams.subscribers(), 0);
    }
}
