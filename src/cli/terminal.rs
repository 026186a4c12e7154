//! What `watch` does to the user's terminal and must undo: the session's
//! output may set a scroll region, hide the cursor, switch to the alternate
//! screen or turn on mouse reporting; all of it is reset on exit.

use crate::wire::Snapshot;

/// Sequences that enter (`h`) or leave (`l`) the alternate screen.
const ALT_MODES: [&[u8]; 3] = [b"\x1b[?1049", b"\x1b[?1047", b"\x1b[?47"];
/// Longest sequence looked for, so one split across two chunks is still seen.
const CARRY: usize = 9;

/// Tracks the modes the output stream switches, to undo them.
#[derive(Debug, Default)]
pub struct Modes {
    alternate_screen: bool,
    carry: Vec<u8>,
}

impl Modes {
    /// Follows the alternate-screen switches in a chunk of output.
    pub fn observe(&mut self, bytes: &[u8]) {
        let mut seen = std::mem::take(&mut self.carry);
        seen.extend_from_slice(bytes);
        for start in 0..seen.len() {
            let rest = &seen[start..];
            for mode in ALT_MODES {
                if let Some(&switch) = rest.strip_prefix(mode).and_then(|r| r.first()) {
                    match switch {
                        b'h' => self.alternate_screen = true,
                        b'l' => self.alternate_screen = false,
                        _ => {}
                    }
                }
            }
        }
        // A sequence cut at the chunk's end is completed by the next chunk;
        // one seen whole is harmlessly seen again, in order.
        let tail = seen.len().saturating_sub(CARRY);
        self.carry = match seen[tail..].iter().rposition(|&b| b == 0x1b) {
            Some(escape) => seen[tail + escape..].to_vec(),
            None => Vec::new(),
        };
    }

    /// What puts the terminal back as a shell expects it: scroll region
    /// reset (cursor kept), the main screen, default colours, a visible
    /// cursor, no mouse reporting, no bracketed paste, normal cursor keys.
    pub fn restore_sequence(&self) -> Vec<u8> {
        let mut out = b"\x1b7\x1b[r\x1b8".to_vec();
        if self.alternate_screen {
            out.extend_from_slice(b"\x1b[?1049l");
        }
        out.extend_from_slice(b"\x1b[0m\x1b[?25h");
        out.extend_from_slice(b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l");
        out.extend_from_slice(b"\x1b[?1l\x1b>\r\n");
        out
    }
}

/// Draws a snapshot (`?format=ansi`) on a terminal: the alternate screen if
/// the session is on it, every line in place, the cursor where it is.
pub fn draw_snapshot(snapshot: &Snapshot, modes: &mut Modes) -> Vec<u8> {
    let mut out = Vec::new();
    if snapshot.alternate_screen {
        out.extend_from_slice(b"\x1b[?1049h");
        modes.alternate_screen = true;
    }
    out.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
    for (row, line) in snapshot.lines.iter().enumerate() {
        out.extend_from_slice(format!("\x1b[{};1H{line}\x1b[0m", row + 1).as_bytes());
    }
    let cursor = &snapshot.cursor;
    let (row, col) = (u32::from(cursor.row), u32::from(cursor.col));
    out.extend_from_slice(format!("\x1b[{};{}H", row + 1, col + 1).as_bytes());
    if !cursor.visible {
        out.extend_from_slice(b"\x1b[?25l");
    }
    out
}

/// A snapshot for a pipe or file: its lines, as they are.
pub fn plain_snapshot(snapshot: &Snapshot) -> Vec<u8> {
    snapshot
        .lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_screen_switches_are_followed_across_chunks() {
        let mut modes = Modes::default();
        modes.observe(b"hello \x1b[?10");
        assert!(!modes.alternate_screen);
        modes.observe(b"49h vim");
        assert!(modes.alternate_screen);
        modes.observe(b"\x1b[?47l");
        assert!(!modes.alternate_screen);
        modes.observe(b"\x1b[?1047h and lots of output after it");
        assert!(modes.alternate_screen);
        modes.observe(b"\x1b[?1049");
        modes.observe(b"l");
        assert!(!modes.alternate_screen);
    }

    #[test]
    fn restore_leaves_the_alternate_screen_only_if_entered() {
        let mut modes = Modes::default();
        let plain = modes.restore_sequence();
        assert!(!plain.windows(8).any(|w| w == b"\x1b[?1049l"));
        for needed in [&b"\x1b[r"[..], b"\x1b[0m", b"\x1b[?25h", b"\x1b[?1000l"] {
            assert!(plain.windows(needed.len()).any(|w| w == needed));
        }
        modes.observe(b"\x1b[?1049h");
        assert!(
            modes
                .restore_sequence()
                .windows(8)
                .any(|w| w == b"\x1b[?1049l")
        );
    }

    #[test]
    fn snapshots_draw_in_place() {
        let mut modes = Modes::default();
        let snapshot = Snapshot {
            session_id: "sess_1".parse().unwrap(),
            seq: 0,
            cols: 2,
            rows: 2,
            pane: None,
            cursor: crate::wire::Cursor {
                row: 1,
                col: 4,
                visible: false,
            },
            alternate_screen: true,
            title: String::new(),
            lines: vec!["a".into(), "b".into()],
            ended: false,
            copy_mode: None,
        };
        let drawn = String::from_utf8(draw_snapshot(&snapshot, &mut modes)).unwrap();
        assert!(drawn.starts_with("\x1b[?1049h"));
        assert!(drawn.contains("\x1b[1;1Ha\x1b[0m\x1b[2;1Hb"));
        assert!(drawn.ends_with("\x1b[2;5H\x1b[?25l"));
        assert!(modes.alternate_screen);
        assert_eq!(plain_snapshot(&snapshot), b"a\nb\n");
    }
}
