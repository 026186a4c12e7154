//! One window row as text with SGR sequences and nothing else: blanks are
//! spaces, so columns line up as in tmux's `capture-pane -e`, and every
//! attribute the screen holds (tmux 3.3's set) is written out.

use std::fmt::Write;

use crate::screen::{Attrs, Cell, Color, Pen, Screen, Underline};

/// A full SGR that sets `pen` from any previous one.
fn sgr(pen: Pen) -> String {
    let mut params = vec!["0".to_owned()];
    let underline = match pen.underline {
        Underline::None => None,
        Underline::Single => Some("4"),
        Underline::Double => Some("4:2"),
        Underline::Curly => Some("4:3"),
        Underline::Dotted => Some("4:4"),
        Underline::Dashed => Some("4:5"),
    };
    for (on, code) in [
        (pen.attrs.contains(Attrs::BOLD), "1"),
        (pen.attrs.contains(Attrs::DIM), "2"),
        (pen.attrs.contains(Attrs::ITALIC), "3"),
        (underline.is_some(), underline.unwrap_or_default()),
        (pen.attrs.contains(Attrs::BLINK), "5"),
        (pen.attrs.contains(Attrs::REVERSE), "7"),
        (pen.attrs.contains(Attrs::HIDDEN), "8"),
        (pen.attrs.contains(Attrs::STRIKETHROUGH), "9"),
        (pen.attrs.contains(Attrs::OVERLINE), "53"),
    ] {
        if on {
            params.push(code.to_owned());
        }
    }
    push_color(&mut params, pen.fg, 30);
    push_color(&mut params, pen.bg, 40);
    match pen.us {
        Color::Default => {}
        Color::Idx(n) => params.push(format!("58:5:{n}")),
        Color::Rgb(r, g, b) => params.push(format!("58:2::{r}:{g}:{b}")),
    }
    format!("\x1b[{}m", params.join(";"))
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
/// once (its padding left out, as `capture-pane` leaves it out).
fn cells(screen: &Screen, row: u16, left: u16, cols: u16) -> impl Iterator<Item = &Cell> {
    (left..left.saturating_add(cols))
        .filter_map(move |col| screen.cell(row, col))
        .filter(|cell| !cell.is_padding())
}

/// Columns `left..left + cols` of `row` as plain text; with `trim`,
/// trailing blanks are left out, else the slice keeps its full width.
pub(super) fn text_row(screen: &Screen, row: u16, left: u16, cols: u16, trim: bool) -> String {
    let mut line = String::with_capacity(usize::from(cols));
    for cell in cells(screen, row, left, cols) {
        cell.push_text(&mut line);
    }
    if trim {
        line.truncate(line.trim_end_matches(' ').len());
    }
    line
}

/// Columns `left..left + cols` of `row`. With `trim`, trailing cells that
/// show nothing (blank, default colours) are left out; the line ends with a
/// reset when it set any attribute.
pub(super) fn ansi_row(screen: &Screen, row: u16, left: u16, cols: u16, trim: bool) -> String {
    let cells: Vec<&Cell> = cells(screen, row, left, cols).collect();
    let visible = match trim {
        true => cells
            .iter()
            .rposition(|cell| !cell.is_plain_blank())
            .map_or(0, |last| last + 1),
        false => cells.len(),
    };
    let mut line = String::with_capacity(usize::from(cols));
    let mut pen = Pen::default();
    for cell in &cells[..visible] {
        if cell.pen.shown() != pen {
            pen = cell.pen.shown();
            line.push_str(&sgr(pen));
        }
        cell.push_text(&mut line);
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
        let mut screen = Screen::new(20, 2);
        screen.process(bytes);
        ansi_row(&screen, 0, left, cols, true)
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
            (
                b"\x1b[1;2;9;53;5;8;3mA\x1b[0;21mB",
                0,
                20,
                "\x1b[0;1;2;3;5;8;9;53mA\x1b[0;4:2mB\x1b[m",
            ),
            (
                b"\x1b[4:3;58:5:9mc\x1b[58:2::1:2:3mu",
                0,
                20,
                "\x1b[0;4:3;58:5:9mc\x1b[0;4:3;58:2::1:2:3mu\x1b[m",
            ),
            (b"\x1b(0lqk", 0, 20, "\u{250c}\u{2500}\u{2510}"),
        ] {
            assert_eq!(row_of(bytes, left, cols), want, "{bytes:?}");
        }
    }
}
