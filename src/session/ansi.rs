//! One window row as text with SGR sequences and nothing else. vt100's own
//! `rows_formatted` skips blank cells with cursor movements (`ESC [ n C`),
//! which a client rendering a line on its own (HTML, a log) cannot follow;
//! here blanks are spaces, so columns line up as tmux's `capture-pane -e`.

use std::fmt::Write;

use vt100::Color;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pen {
    fg: Color,
    bg: Color,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
}

impl Pen {
    fn of(cell: &vt100::Cell) -> Pen {
        Pen {
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }

    /// A full SGR that sets this pen from any previous one.
    fn sgr(self) -> String {
        let mut params = vec!["0".to_owned()];
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.inverse, "7"),
        ] {
            if on {
                params.push(code.to_owned());
            }
        }
        push_color(&mut params, self.fg, 30);
        push_color(&mut params, self.bg, 40);
        format!("\x1b[{}m", params.join(";"))
    }
}

fn push_color(params: &mut Vec<String>, color: Color, base: u8) {
    match color {
        Color::Default => {}
        Color::Idx(n) if n < 8 => params.push((base + n).to_string()),
        Color::Idx(n) if n < 16 => params.push((base + 60 + n - 8).to_string()),
        Color::Idx(n) => params.push(format!("{};5;{n}", base + 8)),
        Color::Rgb(r, g, b) => params.push(format!("{};2;{r};{g};{b}", base + 8)),
    }
}

/// The cells of columns `left..left + cols` of `row`, a wide character
/// once (its continuation cell left out).
fn cells(
    screen: &vt100::Screen,
    row: u16,
    left: u16,
    cols: u16,
) -> impl Iterator<Item = &vt100::Cell> {
    (left..left.saturating_add(cols))
        .filter_map(move |col| screen.cell(row, col))
        .filter(|cell| !cell.is_wide_continuation())
}

/// What a cell shows: its text, or a space when blank.
fn shown(cell: &vt100::Cell) -> &str {
    match cell.has_contents() {
        true => cell.contents(),
        false => " ",
    }
}

/// Columns `left..left + cols` of `row` as plain text; with `trim`,
/// trailing blanks are left out, else the slice keeps its full width.
pub(super) fn text_row(
    screen: &vt100::Screen,
    row: u16,
    left: u16,
    cols: u16,
    trim: bool,
) -> String {
    let mut line = String::with_capacity(usize::from(cols));
    for cell in cells(screen, row, left, cols) {
        line.push_str(shown(cell));
    }
    if trim {
        line.truncate(line.trim_end_matches(' ').len());
    }
    line
}

/// Columns `left..left + cols` of `row`. With `trim`, trailing cells that
/// show nothing (blank, default colours) are left out; the line ends with a
/// reset when it set any attribute.
pub(super) fn ansi_row(
    screen: &vt100::Screen,
    row: u16,
    left: u16,
    cols: u16,
    trim: bool,
) -> String {
    let cells: Vec<(Pen, &str)> = cells(screen, row, left, cols)
        .map(|cell| (Pen::of(cell), shown(cell)))
        .collect();
    let visible = match trim {
        true => cells
            .iter()
            .rposition(|(pen, text)| *pen != Pen::default() || *text != " ")
            .map_or(0, |last| last + 1),
        false => cells.len(),
    };
    let mut line = String::with_capacity(usize::from(cols));
    let mut pen = Pen::default();
    for (cell_pen, text) in &cells[..visible] {
        if *cell_pen != pen {
            line.push_str(&cell_pen.sgr());
            pen = *cell_pen;
        }
        line.push_str(text);
    }
    if pen != Pen::default() {
        let _ = write!(line, "\x1b[m");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_of(bytes: &[u8], left: u16, cols: u16) -> String {
        let size = |n| std::num::NonZeroU16::new(n).unwrap();
        let mut parser = vt100::Parser::new(size(2), size(20), 0);
        parser.process(bytes);
        ansi_row(parser.screen(), 0, left, cols, true)
    }

    #[test]
    fn rows_as_sgr_and_spaces() {
        for (bytes, left, cols, want) in [
            (&b"plain"[..], 0, 20, "plain"),
            (b"a\x1b[5Cb", 0, 20, "a     b"),
            (b"\x1b[31mred\x1b[m x", 0, 20, "\x1b[0;31mred\x1b[0m x"),
            (b"\x1b[1;4;7mA\x1b[m", 0, 20, "\x1b[0;1;4;7mA\x1b[m"),
            (
                b"\x1b[38;5;208;48;5;9mo",
                0,
                20,
                "\x1b[0;38;5;208;101mo\x1b[m",
            ),
            (b"\x1b[38;2;1;2;3mt", 0, 20, "\x1b[0;38;2;1;2;3mt\x1b[m"),
            (b"\x1b[42m  \x1b[m", 0, 20, "\x1b[0;42m  \x1b[m"),
            (b"ab\xe4\xbd\xa0cd", 0, 20, "ab\u{4f60}cd"),
            (b"ab\xe4\xbd\xa0cd", 2, 3, "\u{4f60}c"),
            (b"0123456789", 3, 4, "3456"),
            (b"e\xcc\x81!", 0, 20, "e\u{301}!"),
        ] {
            assert_eq!(row_of(bytes, left, cols), want, "{bytes:?}");
        }
    }
}
