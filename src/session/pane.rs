//! One pane's screen: tmuxd's own terminal (`crate::screen`, tmux's
//! semantics) the size of the pane, fed with the bytes the pane's program
//! wrote (`%output`), and re-seeded from tmux's own state when tmuxd
//! attaches or after output was skipped (a pause).

use std::io::Write;

use crate::screen::Screen;

pub use crate::tmux::command::PaneState;

/// The text tmux captured for a seed: `capture-pane -p -e -N`, one line per
/// row with SGR sequences that carry over from line to line.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    /// The normal screen (when the alternate one is on, `capture-pane -a`).
    pub normal: Vec<u8>,
    /// The alternate screen, when a program is on it.
    pub alternate: Option<Vec<u8>>,
}

pub struct PaneScreen {
    screen: Screen,
    /// The title tmux had when the pane was seeded; the program's own OSC
    /// title replaces it.
    seeded_title: String,
}

impl PaneScreen {
    pub fn new(cols: u16, rows: u16) -> Self {
        PaneScreen {
            screen: Screen::new(cols, rows),
            seeded_title: String::new(),
        }
    }

    /// Feeds the program's bytes; returns how many bells rang in them.
    pub fn process(&mut self, bytes: &[u8]) -> u64 {
        let before = self.screen.bells();
        self.screen.process(bytes);
        self.screen.bells() - before
    }

    /// `(cols, rows)`.
    pub fn size(&self) -> (u16, u16) {
        self.screen.size()
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.screen.resize(cols, rows);
    }

    /// Starts over from what tmux shows: its captured rows, cursor and modes.
    pub fn seed(&mut self, state: &PaneState, captured: &Captured) {
        self.screen = Screen::new(state.cols, state.rows);
        self.screen.process(&seed_bytes(state, captured));
        self.seeded_title = state.title.clone();
    }

    /// Takes which rows wrapped from `capture-pane -e -J` of the same
    /// moment as the seed (`joined`: one line per logical line, wrapped rows
    /// joined): the lines are drawn again on a blank screen of the pane's
    /// size, where they wrap as they did in tmux. Only when that screen
    /// shows the seed's text row for row are its wrap flags taken (output
    /// between the captures, or a capture that failed, leaves none).
    /// Returns whether they were.
    pub fn seed_wraps(&mut self, joined: &[Vec<u8>]) -> bool {
        let (cols, rows) = self.size();
        let mut drawn = Screen::new(cols, rows);
        // Line-drawing cells come between shift out and in, as in a seed.
        drawn.process(b"\x1b)0");
        for (i, line) in joined.iter().enumerate() {
            if i > 0 {
                // Empty lines past the last row: nothing more to draw.
                if drawn.cursor_position().0 + 1 >= rows {
                    break;
                }
                drawn.process(b"\r\n");
            }
            drawn.process(line);
        }
        if !self.screen.rows(0, cols).eq(drawn.rows(0, cols)) {
            return false;
        }
        for row in 0..rows {
            self.screen.set_wrapped(row, drawn.row_wrapped(row));
        }
        true
    }

    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    pub fn title(&self) -> &str {
        self.screen.title().unwrap_or(&self.seeded_title)
    }

    /// A hash of the pane's text: changes when what a person would read
    /// changes, not when only the cursor moves.
    pub fn content_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let (cols, _) = self.size();
        for row in self.screen.rows(0, cols) {
            row.hash(&mut hasher);
        }
        hasher.finish()
    }
}

/// The bytes that draw `captured` on a fresh terminal of the pane's size and
/// put the cursor, scroll region and modes where tmux has them. Each row is
/// placed with a cursor move, so a full-width row cannot wrap into the next;
/// attributes carry across rows, as `capture-pane -e` writes them.
pub fn seed_bytes(state: &PaneState, captured: &Captured) -> Vec<u8> {
    // `capture-pane -e` marks line-drawing cells with shift out / shift in:
    // G1 is the line-drawing set while the rows are drawn.
    let mut out = b"\x1b)0".to_vec();
    draw_rows(&mut out, &captured.normal, state.rows);
    if let Some(alternate) = &captured.alternate {
        out.extend_from_slice(b"\x1b[0m\x1b[?1049h\x1b[H\x1b[2J");
        draw_rows(&mut out, alternate, state.rows);
    }
    out.extend_from_slice(b"\x1b[0m\x0f\x1b)B");
    let full_region = state.scroll_upper == 0 && state.scroll_lower + 1 >= state.rows;
    if !full_region && state.scroll_lower > state.scroll_upper {
        let _ = write!(
            out,
            "\x1b[{};{}r",
            state.scroll_upper + 1,
            state.scroll_lower + 1
        );
    }
    let mut row = state.cursor_y;
    if state.origin_mode {
        out.extend_from_slice(b"\x1b[?6h");
        row = row.saturating_sub(state.scroll_upper);
    }
    let _ = write!(out, "\x1b[{};{}H", row + 1, state.cursor_x + 1);
    if !state.cursor_visible {
        out.extend_from_slice(b"\x1b[?25l");
    }
    out
}

fn draw_rows(out: &mut Vec<u8>, text: &[u8], rows: u16) {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    for (row, line) in text
        .split(|&b| b == b'\n')
        .take(usize::from(rows))
        .enumerate()
    {
        let _ = write!(out, "\x1b[{};1H", row + 1);
        push_captured(out, line);
    }
}

/// Appends a captured row, with tmux 3.3's spelling of overline in
/// `capture-pane -e` (`5:3`, which a program's SGR would not mean) as `53`.
fn push_captured(out: &mut Vec<u8>, line: &[u8]) {
    let mut rest = line;
    while let Some(start) = rest.windows(2).position(|w| w == b"\x1b[") {
        let params_at = start + 2;
        let Some(len) = rest[params_at..]
            .iter()
            .position(|b| (0x40..=0x7e).contains(b))
        else {
            break;
        };
        let end = params_at + len;
        out.extend_from_slice(&rest[..params_at]);
        let params = &rest[params_at..end];
        if rest[end] == b'm' {
            for (i, param) in params.split(|&b| b == b';').enumerate() {
                if i > 0 {
                    out.push(b';');
                }
                out.extend_from_slice(if param == b"5:3" { b"53" } else { param });
            }
        } else {
            out.extend_from_slice(params);
        }
        out.push(rest[end]);
        rest = &rest[end + 1..];
    }
    out.extend_from_slice(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::{Attrs, Color};

    fn state(cols: u16, rows: u16) -> PaneState {
        PaneState {
            cols,
            rows,
            cursor_visible: true,
            scroll_lower: rows - 1,
            ..PaneState::default()
        }
    }

    fn text(pane: &PaneScreen) -> Vec<String> {
        let (cols, _) = pane.size();
        pane.screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_owned())
            .collect()
    }

    #[test]
    fn seed_draws_rows_cursor_and_carried_attributes() {
        let mut pane = PaneScreen::new(80, 24);
        let captured = Captured {
            normal: b"\x1b[31mred red\nstill red\x1b[0m plain\n0123456789\n".to_vec(),
            alternate: None,
        };
        let mut at = state(10, 4);
        (at.cursor_x, at.cursor_y) = (3, 2);
        pane.seed(&at, &captured);
        assert_eq!(text(&pane), ["red red", "still red", "0123456789", ""]);
        let screen = pane.screen();
        assert_eq!(screen.cell(1, 0).unwrap().pen.fg, Color::Idx(1));
        assert_eq!(screen.cell(1, 10).map(|c| c.pen.fg), None);
        assert_eq!(screen.cursor_position(), (2, 3));
        assert!(!screen.hide_cursor());
    }

    #[test]
    fn seed_reads_overline_as_capture_pane_spells_it() {
        let mut pane = PaneScreen::new(10, 2);
        let captured = Captured {
            normal: b"\x1b[5:3mo\x1b[0;5;31mb\x1b[0m\x1b[Cx\n".to_vec(),
            alternate: None,
        };
        pane.seed(&state(10, 2), &captured);
        let screen = pane.screen();
        let pen = |col| screen.cell(0, col).unwrap().pen;
        assert!(pen(0).attrs.contains(Attrs::OVERLINE));
        assert!(!pen(0).attrs.contains(Attrs::BLINK));
        assert!(pen(1).attrs.contains(Attrs::BLINK) && !pen(1).attrs.contains(Attrs::OVERLINE));
        assert_eq!(pen(1).fg, Color::Idx(1));
        assert_eq!(text(&pane), ["ob x", ""], "other sequences pass unchanged");
    }

    #[test]
    fn seed_takes_wrapped_rows_from_the_joined_capture() {
        let mut pane = PaneScreen::new(10, 4);
        let captured = Captured {
            normal: b"$ echo abc\ndefghijklm\nnop\n$\n".to_vec(),
            alternate: None,
        };
        let mut at = state(10, 4);
        (at.cursor_x, at.cursor_y) = (2, 3);
        pane.seed(&at, &captured);
        assert!(!pane.screen().row_wrapped(0), "a seed alone knows no wraps");
        let joined: Vec<Vec<u8>> = ["$ echo abcdefghijklmnop", "$ ", ""]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        assert!(pane.seed_wraps(&joined));
        let wrapped: Vec<bool> = (0..4).map(|r| pane.screen().row_wrapped(r)).collect();
        assert_eq!(wrapped, [true, true, false, false]);
        assert_eq!(text(&pane)[1], "defghijklm", "the rows stay as seeded");
        // A joined capture that shows other text (the pane wrote between
        // the captures) is not taken.
        let mut other = PaneScreen::new(10, 4);
        other.seed(&at, &captured);
        let stale = [b"$ echo abcdefghij".to_vec(), b"$ ".to_vec()];
        assert!(!other.seed_wraps(&stale));
        assert!(!other.screen().row_wrapped(0));
    }

    #[test]
    fn seed_restores_the_alternate_screen_and_its_exit() {
        let mut pane = PaneScreen::new(10, 3);
        let captured = Captured {
            normal: b"$ vim\n".to_vec(),
            alternate: Some(b"~\n~ editing\n".to_vec()),
        };
        let mut at = state(10, 3);
        at.alternate_on = true;
        at.cursor_visible = false;
        pane.seed(&at, &captured);
        assert!(pane.screen().alternate_screen());
        assert!(pane.screen().hide_cursor());
        assert_eq!(text(&pane), ["~", "~ editing", ""]);
        pane.process(b"\x1b[?1049l");
        assert_eq!(text(&pane), ["$ vim", "", ""]);
    }

    #[test]
    fn seed_keeps_the_scroll_region() {
        let mut pane = PaneScreen::new(10, 4);
        let mut at = state(10, 4);
        (at.scroll_upper, at.scroll_lower, at.cursor_y) = (1, 2, 2);
        let captured = Captured {
            normal: b"top\na\nb\nbottom\n".to_vec(),
            alternate: None,
        };
        pane.seed(&at, &captured);
        pane.process(b"\nc");
        assert_eq!(text(&pane), ["top", "b", "c", "bottom"]);
    }

    #[test]
    fn the_alternate_screen_keeps_the_cursor_where_it_was() {
        let mut pane = PaneScreen::new(20, 5);
        pane.process(b"$ one\r\n$ two\r\n$ \x1b[?1049hon alt");
        assert!(pane.screen().alternate_screen());
        assert_eq!(text(&pane), ["", "", "  on alt", "", ""]);
        pane.process(b"\x1b[?1049l");
        assert_eq!(text(&pane)[..3], ["$ one", "$ two", "$"]);
    }

    #[test]
    fn titles_and_bells() {
        let mut pane = PaneScreen::new(10, 2);
        let mut at = state(10, 2);
        at.title = "host".into();
        pane.seed(&at, &Captured::default());
        assert_eq!(pane.title(), "host");
        assert_eq!(pane.process(b"\x07x\x07\x1b]2;mine\x07"), 2);
        assert_eq!(pane.title(), "mine");
    }
}
