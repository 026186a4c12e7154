//! Spots tmux redrawing much of its client's screen, which it does when the
//! window's geometry changes (a resize by another client or `resize-window`,
//! another window selected, a split, the status line moved). The geometry
//! itself is not in the bytes, so such a redraw is the actor's cue to ask
//! for an early discovery tick instead of waiting up to a whole interval.
//!
//! The test is deliberately cheap and loose: a burst of output (reads less
//! than `BURST_GAP` apart, since tmux's writes may reach us in pieces) that
//! moves the cursor to many rows (line feeds, absolute or vertical moves). Programs
//! that repaint the screen (top, a pager, a scrolling log) pass it too; the
//! discovery loop spaces early ticks, so that costs at most one
//! `list-panes -a` per gap for all sessions together. tmux hides the cursor
//! around most of its updates, but not while the pane's own cursor is hidden
//! (top), so that alone cannot tell a redraw.

use std::time::{Duration, Instant};

/// Reads closer together than this belong to one burst.
const BURST_GAP: Duration = Duration::from_millis(30);

/// Counts row moves over a burst of reads.
#[derive(Debug, Default)]
pub struct RedrawWatch {
    moves: usize,
    last_read: Option<Instant>,
}

impl RedrawWatch {
    /// Feeds one read that arrived at `now`; true once its burst has moved
    /// to `min_rows` rows (then counting starts over).
    pub fn feed(&mut self, bytes: &[u8], min_rows: usize, now: Instant) -> bool {
        if self
            .last_read
            .is_none_or(|last| now.saturating_duration_since(last) > BURST_GAP)
        {
            self.moves = 0;
        }
        self.last_read = Some(now);
        self.moves += row_moves(bytes, min_rows);
        if self.moves >= min_rows {
            self.moves = 0;
            return true;
        }
        false
    }
}

/// Row moves in `bytes`, counted up to `enough`.
fn row_moves(bytes: &[u8], enough: usize) -> usize {
    let mut moves = 0;
    let mut i = 0;
    while i < bytes.len() && moves < enough {
        match bytes[i] {
            b'\n' => moves += 1,
            0x1b if bytes.get(i + 1) == Some(&b'[') => {
                if let Some((len, last)) = csi_end(&bytes[i + 2..]) {
                    if matches!(last, b'H' | b'f' | b'd' | b'A' | b'B') {
                        moves += 1;
                    }
                    i += 2 + len;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    moves
}

/// Length through the final byte of a CSI's parameters, and that byte.
fn csi_end(body: &[u8]) -> Option<(usize, u8)> {
    for (n, &b) in body.iter().enumerate() {
        if (0x40..=0x7e).contains(&b) {
            return Some((n + 1, b));
        }
        if !(0x20..=0x3f).contains(&b) {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_redraws_from_ordinary_output() {
        let full = &b"\x1b[?25l\x1b[H$ \x1b[K\r\n\x1b[K\r\n\x1b[K\r\n\x1b[25;1Hstatus\x1b[?25h"[..];
        let moves = &b"\x1b[1;61Ha\x1b[2;61Hb\x1b[3;61Hc\x1b[21;1Hd"[..];
        let relative = &b"\x1b[12B--\x1b[A--\x1b[16d--\x1b[2B"[..];
        for (name, bytes, min_rows, want) in [
            ("full redraw", full, 5, true),
            ("full redraw, larger client", full, 6, false),
            ("absolute moves", moves, 4, true),
            ("relative moves", relative, 4, true),
            ("echo", &b"echo hi\r\nhi\r\n$ "[..], 3, false),
            (
                "status clock",
                &b"\x1b[?25l\x1b[25;1H[a] 0:bash*\x1b[?25h\x1b[3;3H"[..],
                3,
                false,
            ),
            ("cut escape", &b"\r\n\x1b[1;"[..], 2, false),
            (
                "other escapes",
                &b"\x1bM\x1b(B\x1b]0;t\x07\x1b[2J\x1b[K"[..],
                1,
                false,
            ),
        ] {
            let mut watch = RedrawWatch::default();
            assert_eq!(watch.feed(bytes, min_rows, Instant::now()), want, "{name}");
        }
    }

    #[test]
    fn a_burst_may_come_in_pieces() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let row = &b"\x1b[5;1Hrow"[..];
        for (name, reads, want) in [
            (
                "one burst",
                vec![(0, row), (10, row), (20, row)],
                vec![false, false, true],
            ),
            (
                "apart",
                vec![(0, row), (100, row), (200, row)],
                vec![false, false, false],
            ),
            (
                "starts over",
                vec![(0, row), (5, row), (10, row), (15, row)],
                vec![false, false, true, false],
            ),
        ] {
            let mut watch = RedrawWatch::default();
            let got: Vec<bool> = reads
                .iter()
                .map(|(ms, b)| watch.feed(b, 3, at(*ms)))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }
}
