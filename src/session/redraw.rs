//! Spots tmux redrawing much of its client's screen, which it does when the
//! window's geometry changes (a resize by another client or `resize-window`,
//! another window selected, a split, the status line moved). The geometry
//! itself is not in the bytes, so such a redraw is the actor's cue to ask
//! for an early discovery tick instead of waiting up to a whole interval.
//!
//! The test is deliberately cheap and loose: one read that moves the cursor
//! to many rows (line feeds, absolute or vertical cursor moves). Programs
//! that repaint the screen (top, a pager, a scrolling log) pass it too; the
//! discovery loop spaces early ticks, so that costs at most one
//! `list-panes -a` per gap for all sessions together. tmux hides the cursor
//! around most of its updates, but not while the pane's own cursor is hidden
//! (top), so that alone cannot tell a redraw.

/// Whether one read of client output moves to at least `min_rows` rows.
pub fn is_redraw(bytes: &[u8], min_rows: usize) -> bool {
    let mut moves = 0;
    let mut i = 0;
    while i < bytes.len() && moves < min_rows {
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
    moves >= min_rows
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
            assert_eq!(is_redraw(bytes, min_rows), want, "{name}");
        }
    }
}
