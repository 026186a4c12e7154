//! Whether tmuxd's screen of a pane shows what tmux's `capture-pane -e`
//! of it shows (the settled-screen check), and if not, the first kind of
//! difference a reader would notice. Compared as a reader sees both: each
//! row's characters with their colours and attributes up to the last one
//! that shows anything, a blank by what paints it only (its background,
//! the lines drawn through it), SGR spellings aside; the cursor where tmux
//! has it. The capture is read as text, not replayed through a terminal:
//! a grapheme tmux's grid holds (a joiner after ASCII, a mark on a wide
//! character) would be joined differently if parsed again.

use super::Screen;
use super::cell::{Attrs, Color, Pen, line_drawing};
use super::sgr;

/// What differs between tmuxd's screen and tmux's, the first that applies
/// in this order. Its name is the `cause` label of `tmuxd_screen_drift_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DriftCause {
    /// The alternate screen or the cursor's visibility.
    Mode,
    /// The same text, broken into rows in other places (a wrap or a
    /// backspace over one went elsewhere).
    Wrap,
    /// Other text.
    Text,
    /// The same text with other colours or attributes.
    Attr,
    /// Only the cursor's position.
    Cursor,
}

impl DriftCause {
    pub const ALL: [DriftCause; 5] = [
        DriftCause::Mode,
        DriftCause::Wrap,
        DriftCause::Text,
        DriftCause::Attr,
        DriftCause::Cursor,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DriftCause::Mode => "mode",
            DriftCause::Wrap => "wrap",
            DriftCause::Text => "text",
            DriftCause::Attr => "attr",
            DriftCause::Cursor => "cursor",
        }
    }
}

/// What tmux had of the pane besides its rows, as the check read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmuxCursor {
    /// `(row, col)`; the column equals the width while a wrap is pending.
    pub position: (u16, u16),
    pub visible: bool,
    pub alternate: bool,
}

/// One character as a reader sees it: the pen it shows with.
type Shown = (Pen, char);

/// The pen of a blank as far as it shows: a background (or a foreground
/// that reverse turns into one) and what is drawn through the cell.
fn blank_pen(pen: Pen) -> Pen {
    let reverse = pen.attrs.contains(Attrs::REVERSE);
    let mut attrs = Attrs::default();
    for kept in [Attrs::REVERSE, Attrs::STRIKETHROUGH, Attrs::OVERLINE] {
        if pen.attrs.contains(kept) {
            attrs.insert(kept);
        }
    }
    Pen {
        fg: if reverse { pen.fg } else { Color::Default },
        bg: pen.bg,
        us: if pen.underline == Default::default() {
            Color::Default
        } else {
            pen.us
        },
        attrs,
        underline: pen.underline,
    }
}

fn push(row: &mut Vec<Shown>, pen: Pen, c: char) {
    let pen = pen.shown();
    row.push((if c == ' ' { blank_pen(pen) } else { pen }, c));
}

/// Drops what shows nothing at the end of a row.
fn trimmed(mut row: Vec<Shown>) -> Vec<Shown> {
    while row
        .last()
        .is_some_and(|(pen, c)| *c == ' ' && *pen == Pen::default())
    {
        row.pop();
    }
    row
}

/// Row `row` of tmuxd's screen as shown (a wide character once).
fn model_row(screen: &Screen, row: u16) -> Vec<Shown> {
    let (cols, _) = screen.size();
    let mut out = Vec::new();
    let mut text = String::new();
    for cell in (0..cols).filter_map(|col| screen.cell(row, col)) {
        if cell.is_padding() {
            continue;
        }
        text.clear();
        cell.push_text(&mut text);
        for c in text.chars() {
            push(&mut out, cell.pen, c);
        }
    }
    trimmed(out)
}

/// The rows of `capture-pane -e`: SGR sequences set the pen (carried from
/// row to row, as tmux writes them only when they change), shift out and
/// in bracket line-drawing characters.
fn capture_rows(lines: &[Vec<u8>]) -> Vec<Vec<Shown>> {
    let mut pen = Pen::default();
    let mut drawing = false;
    lines
        .iter()
        .map(|line| {
            let line = String::from_utf8_lossy(line);
            let mut out = Vec::new();
            let mut chars = line.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\x0e' | '\x0f' => drawing = c == '\x0e',
                    '\x1b' => match chars.next() {
                        Some('[') => {
                            let mut params = String::new();
                            for p in chars.by_ref() {
                                if ('\x40'..='\x7e').contains(&p) {
                                    if p == 'm' {
                                        apply_captured_sgr(&mut pen, &params);
                                    }
                                    break;
                                }
                                params.push(p);
                            }
                        }
                        Some('(' | ')') => {
                            chars.next();
                        }
                        _ => {}
                    },
                    c if drawing => push(&mut out, pen, line_drawing(c)),
                    c => push(&mut out, pen, c),
                }
            }
            trimmed(out)
        })
        .collect()
}

/// An SGR as `capture-pane -e` spells it: as a program would, except that
/// tmux 3.3 writes overline (53) as `5:3`.
fn apply_captured_sgr(pen: &mut Pen, params: &str) {
    let parsed: Vec<Vec<u16>> = params
        .split(';')
        .map(|p| if p == "5:3" { "53" } else { p })
        .map(|p| p.split(':').map(|n| n.parse().unwrap_or(0)).collect())
        .collect();
    let slices: Vec<&[u16]> = parsed.iter().map(Vec::as_slice).collect();
    sgr::apply(pen, &slices);
}

/// A row's characters without the blanks that end it (coloured or not).
fn row_text(row: &[Shown]) -> String {
    let text: String = row.iter().map(|(_, c)| *c).collect();
    text.trim_end_matches(' ').to_owned()
}

/// How `model` differs from what tmux showed of the same pane (`rows`:
/// its `capture-pane -p -e -N` lines, `cursor`: its cursor and modes), or
/// None when a reader could not tell them apart.
pub fn compare(model: &Screen, rows: &[Vec<u8>], cursor: TmuxCursor) -> Option<DriftCause> {
    if model.alternate_screen() != cursor.alternate || model.hide_cursor() == cursor.visible {
        return Some(DriftCause::Mode);
    }
    let (_, height) = model.size();
    let mut mine: Vec<Vec<Shown>> = (0..height).map(|r| model_row(model, r)).collect();
    let mut theirs = capture_rows(rows);
    for rows in [&mut mine, &mut theirs] {
        while rows.last().is_some_and(Vec::is_empty) {
            rows.pop();
        }
    }
    if mine != theirs {
        let text =
            |rows: &[Vec<Shown>]| -> Vec<String> { rows.iter().map(|r| row_text(r)).collect() };
        let (mut a, mut b) = (text(&mine), text(&theirs));
        for rows in [&mut a, &mut b] {
            while rows.last().is_some_and(String::is_empty) {
                rows.pop();
            }
        }
        if a == b {
            return Some(DriftCause::Attr);
        }
        // The same characters in the same order, only cut into rows
        // elsewhere. (Blanks at row ends are not text: a wrap leaves them.)
        let joined = |rows: &[String]| -> String {
            rows.iter()
                .flat_map(|r| r.chars().filter(|c| *c != ' '))
                .collect()
        };
        return Some(if joined(&a) == joined(&b) {
            DriftCause::Wrap
        } else {
            DriftCause::Text
        });
    }
    (model.cursor_position() != cursor.position).then_some(DriftCause::Cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(bytes: &[u8]) -> Screen {
        let mut screen = Screen::new(10, 3);
        screen.process(bytes);
        screen
    }

    fn cursor(row: u16, col: u16) -> TmuxCursor {
        TmuxCursor {
            position: (row, col),
            visible: true,
            alternate: false,
        }
    }

    fn lines(capture: &str) -> Vec<Vec<u8>> {
        capture.split('\n').map(|l| l.as_bytes().to_vec()).collect()
    }

    #[test]
    fn differences_by_what_a_reader_notices_first() {
        for (model, capture, at, want) in [
            (&b"hello"[..], "hello\n\n", (0, 5), None),
            // Spelling of the same pen does not matter, nor its carrying
            // from row to row.
            (
                b"\x1b[31mred\r\nred",
                "\x1b[38;5;1mred\nred\x1b[0m\n",
                (1, 3),
                None,
            ),
            // tmux writes overline as `5:3`.
            (b"\x1b[53mo", "\x1b[5:3mo", (0, 1), None),
            // A blank shows its background only.
            (b"a\x1b[31;1m \x1b[m", "a\x1b[32m ", (0, 2), None),
            (b"a\x1b[41m \x1b[m", "a ", (0, 2), Some(DriftCause::Attr)),
            (
                b"a\x1b[7;31m \x1b[m",
                "a\x1b[7;32m ",
                (0, 2),
                Some(DriftCause::Attr),
            ),
            // Trailing blanks written or not show the same.
            (b"ab   ", "ab", (0, 5), None),
            (b"ab   ", "ab", (0, 2), Some(DriftCause::Cursor)),
            (b"\x1b[1mbold", "bold", (0, 4), Some(DriftCause::Attr)),
            (b"abc", "abd", (0, 3), Some(DriftCause::Text)),
            // A pending wrap is a cursor past the last column, as tmux says.
            (b"abcdefghij", "abcdefghij", (0, 10), None),
            (
                b"abcdefgh\r\nij",
                "abcdefghij\n\n",
                (1, 2),
                Some(DriftCause::Wrap),
            ),
            // Graphemes compare as text: combining marks, and a joiner
            // that tmux's ASCII fast path never joined (the model drops it
            // as tmux does).
            (b"a\xcc\x88\xcc\x81!", "a\u{308}\u{301}!", (0, 2), None),
            (b"ab\xe2\x80\x8dcd", "abcd", (0, 4), None),
            (
                b"ab\xe2\x80\x8dcd",
                "ab\u{200d}cd",
                (0, 4),
                Some(DriftCause::Text),
            ),
            (b"\x1b(0lqk", "\x0elqk\x0f", (0, 3), None),
            (b"x\x1b[?25l", "x", (0, 1), Some(DriftCause::Mode)),
        ] {
            assert_eq!(
                compare(&screen(model), &lines(capture), cursor(at.0, at.1)),
                want,
                "{model:?} against {capture:?}"
            );
        }
        let alternate = TmuxCursor {
            alternate: true,
            ..cursor(0, 1)
        };
        assert_eq!(
            compare(&screen(b"x"), &lines("x"), alternate),
            Some(DriftCause::Mode)
        );
    }
}
