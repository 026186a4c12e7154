//! The replay ring: the most recent output, in sequenced chunks, so a stream
//! subscriber can resume from the last sequence number it saw.

use std::collections::VecDeque;

use bytes::Bytes;

/// Bytes one pane wrote, as one `%output` brought them. `seq` counts chunks
/// of the whole session from 1 and never repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub seq: u64,
    /// The pane (`%N`) that wrote them.
    pub pane: u32,
    pub bytes: Bytes,
}

/// What a resume from `since` gets.
#[derive(Debug, PartialEq, Eq)]
pub enum Replay {
    /// Every chunk after `since`, in order (possibly none).
    Complete(Vec<Chunk>),
    /// Some chunks after `since` were already evicted; these are the ones left.
    Truncated(Vec<Chunk>),
}

#[derive(Debug)]
pub struct ReplayRing {
    chunks: VecDeque<Chunk>,
    bytes: usize,
    capacity: usize,
    latest_seq: u64,
}

impl ReplayRing {
    pub fn new(capacity: usize) -> Self {
        ReplayRing {
            chunks: VecDeque::new(),
            bytes: 0,
            capacity,
            latest_seq: 0,
        }
    }

    pub fn latest_seq(&self) -> u64 {
        self.latest_seq
    }

    /// Appends a chunk, evicting the oldest ones past capacity (the newest
    /// chunk is always kept, even if it alone is larger).
    pub fn push(&mut self, pane: u32, bytes: Bytes) -> Chunk {
        self.latest_seq += 1;
        let chunk = Chunk {
            seq: self.latest_seq,
            pane,
            bytes,
        };
        self.bytes += chunk.bytes.len();
        self.chunks.push_back(chunk.clone());
        while self.bytes > self.capacity && self.chunks.len() > 1 {
            if let Some(old) = self.chunks.pop_front() {
                self.bytes -= old.bytes.len();
            }
        }
        chunk
    }

    /// Chunks with a sequence number above `since`.
    pub fn since(&self, since: u64) -> Replay {
        let kept: Vec<Chunk> = self
            .chunks
            .iter()
            .filter(|c| c.seq > since)
            .cloned()
            .collect();
        let oldest = self.chunks.front().map_or(self.latest_seq + 1, |c| c.seq);
        if since + 1 < oldest && since < self.latest_seq {
            Replay::Truncated(kept)
        } else {
            Replay::Complete(kept)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(chunks: &[Chunk]) -> Vec<u64> {
        chunks.iter().map(|c| c.seq).collect()
    }

    #[test]
    fn resumes_and_truncates() {
        let mut ring = ReplayRing::new(10);
        for text in ["abcd", "efgh", "ijkl"] {
            ring.push(0, Bytes::from(text));
        }
        // 12 bytes > 10: chunk 1 evicted.
        assert_eq!(ring.latest_seq(), 3);
        match ring.since(1) {
            Replay::Complete(c) => assert_eq!(seqs(&c), vec![2, 3]),
            other => panic!("{other:?}"),
        }
        match ring.since(0) {
            Replay::Truncated(c) => assert_eq!(seqs(&c), vec![2, 3]),
            other => panic!("{other:?}"),
        }
        assert_eq!(ring.since(3), Replay::Complete(vec![]));
        // A resume from the future gets nothing rather than an error.
        assert_eq!(ring.since(9), Replay::Complete(vec![]));
    }

    #[test]
    fn oversized_chunk_is_kept_alone() {
        let mut ring = ReplayRing::new(4);
        ring.push(0, Bytes::from("ab"));
        ring.push(0, Bytes::from("0123456789"));
        assert_eq!(
            ring.since(1),
            Replay::Complete(vec![Chunk {
                seq: 2,
                pane: 0,
                bytes: Bytes::from("0123456789")
            }])
        );
    }

    #[test]
    fn empty_ring() {
        let ring = ReplayRing::new(4);
        assert_eq!(ring.since(0), Replay::Complete(vec![]));
    }
}
