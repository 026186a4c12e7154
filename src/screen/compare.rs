//! Whether two screens show the same: tmuxd's model of a pane against one
//! drawn from tmux's `capture-pane` of it (the settled-screen check), and
//! if not, the first kind of difference a reader would notice. Compared as
//! `capture-pane` shows a screen: each row's cells up to the last one that
//! shows anything, a blank by what paints it only (its background, the
//! lines drawn through it), the cursor where tmux has it.

use super::Screen;
use super::cell::{Attrs, Cell, Color, Pen};

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

/// What one cell shows: its text and the pen a reader can tell.
#[derive(Debug, PartialEq, Eq)]
struct Shown {
    text: String,
    pen: Pen,
}

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

fn shown(cell: &Cell) -> Shown {
    let text = cell.text();
    let pen = cell.pen.shown();
    let pen = if text == " " { blank_pen(pen) } else { pen };
    Shown { text, pen }
}

/// Row `row` as shown, trailing cells that show nothing left out.
fn shown_row(screen: &Screen, row: u16) -> Vec<Shown> {
    let (_, cols) = screen.size();
    let mut cells: Vec<Shown> = (0..cols)
        .filter_map(|col| screen.cell(row, col))
        .filter(|cell| !cell.is_padding())
        .map(shown)
        .collect();
    let plain = |c: &Shown| c.text == " " && c.pen == Pen::default();
    while cells.last().is_some_and(plain) {
        cells.pop();
    }
    cells
}

/// A row's text without the blanks that end it (coloured or not).
fn row_text(cells: &[Shown]) -> String {
    let text: String = cells.iter().map(|c| c.text.as_str()).collect();
    text.trim_end_matches(' ').to_owned()
}

/// How `model` differs from `tmux` (a screen drawn from tmux's capture of
/// the same pane), or None when a reader could not tell them apart. The
/// screens must be of one size; of another, the difference is `Mode`.
pub fn compare(model: &Screen, tmux: &Screen) -> Option<DriftCause> {
    if model.size() != tmux.size()
        || model.alternate_screen() != tmux.alternate_screen()
        || model.hide_cursor() != tmux.hide_cursor()
    {
        return Some(DriftCause::Mode);
    }
    let (rows, _) = model.size();
    let mine: Vec<Vec<Shown>> = (0..rows).map(|r| shown_row(model, r)).collect();
    let theirs: Vec<Vec<Shown>> = (0..rows).map(|r| shown_row(tmux, r)).collect();
    if mine != theirs {
        let text = |rows: &[Vec<Shown>]| rows.iter().map(|r| row_text(r)).collect::<Vec<_>>();
        let (a, b) = (text(&mine), text(&theirs));
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
    (model.cursor_position() != tmux.cursor_position()).then_some(DriftCause::Cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(bytes: &[u8]) -> Screen {
        let mut screen = Screen::new(10, 3);
        screen.process(bytes);
        screen
    }

    #[test]
    fn differences_by_what_a_reader_notices_first() {
        for (model, tmux, want) in [
            (&b"hello"[..], &b"hello"[..], None),
            // Spelling of the same pen does not matter.
            (b"\x1b[31mred", b"\x1b[38;5;1mred", None),
            // A blank shows its background only.
            (b"a\x1b[31;1m \x1b[m", b"a\x1b[32m \x1b[m", None),
            (b"a\x1b[41m \x1b[m", b"a ", Some(DriftCause::Attr)),
            (
                b"a\x1b[7;31m \x1b[m",
                b"a\x1b[7;32m \x1b[m",
                Some(DriftCause::Attr),
            ),
            // Trailing blanks written or not show the same.
            (b"ab   ", b"ab", Some(DriftCause::Cursor)),
            (b"ab   \x1b[1;3H", b"ab", None),
            (b"\x1b[1mbold", b"bold", Some(DriftCause::Attr)),
            (b"abc", b"abd", Some(DriftCause::Text)),
            (b"abcdefghij", b"abcdefghij", None),
            (b"abcdefghijk", b"abcdefghij\r\nk", None),
            (
                b"abcdefgh\r\nij\x1b[H",
                b"abcdefghij\x1b[H",
                Some(DriftCause::Wrap),
            ),
            (b"x\x1b[?25l", b"x", Some(DriftCause::Mode)),
            (b"x\x1b[?1049h", b"x", Some(DriftCause::Mode)),
            (b"x\r\n", b"x", Some(DriftCause::Cursor)),
        ] {
            assert_eq!(
                compare(&screen(model), &screen(tmux)),
                want,
                "{model:?} against {tmux:?}"
            );
        }
        let mut other_size = Screen::new(11, 3);
        other_size.process(b"hello");
        assert_eq!(
            compare(&screen(b"hello"), &other_size),
            Some(DriftCause::Mode)
        );
    }
}
