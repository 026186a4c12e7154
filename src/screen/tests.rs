//! Byte streams and what tmux 3.3a showed for them (each checked against
//! `capture-pane` by hand or by the differential fuzzer).

use super::*;

fn screen(cols: u16, rows: u16, bytes: &[u8]) -> Screen {
    let mut screen = Screen::new(cols, rows);
    screen.process(bytes);
    screen
}

fn text(screen: &Screen) -> Vec<String> {
    let (cols, _) = screen.size();
    screen.rows(0, cols).collect()
}

#[test]
fn backspace_goes_up_a_wrapped_line_as_readline_expects() {
    // 65 columns of text in a 61-column pane, then six backspaces and a B.
    let mut bytes = "w".repeat(65).into_bytes();
    bytes.extend_from_slice(b"\x08\x08\x08\x08\x08\x08B\r\n");
    let s = screen(61, 4, &bytes);
    let mut first = "w".repeat(59);
    first.push('B');
    first.push('w');
    assert_eq!(
        text(&s),
        [first, "wwww".to_owned(), String::new(), String::new()]
    );
    // An unwrapped line does not go up.
    let s = screen(10, 3, b"abc\r\n\x08\x08x");
    assert_eq!(text(&s), ["abc", "x", ""]);
}

#[test]
fn erases_leave_the_background_only() {
    let s = screen(10, 2, b"abcdef\r\x1b[7;1;41;9m\x1b[3X");
    let cell = s.cell(0, 0).unwrap();
    assert_eq!(cell.pen, Pen::erased(Color::Idx(1)));
    assert_eq!(cell.text(), " ");
    assert_eq!(text(&s)[0], "   def");
    let s = screen(10, 2, b"abcdef\r\x1b[44m\x1b[2@");
    assert_eq!(text(&s)[0], "  abcdef");
    assert_eq!(s.cell(0, 1).unwrap().pen.bg, Color::Idx(4));
    assert_eq!(s.cell(0, 2).unwrap().pen.bg, Color::Default);
    let s = screen(10, 2, b"abcdef\r\x1b[44m\x1b[2P");
    assert_eq!(text(&s)[0], "cdef");
    assert_eq!(s.cell(0, 3).unwrap().pen.bg, Color::Default);
    // The cells opened at the end take the background, but they lie past
    // the last cell tmux counts as used, so `capture-pane` shows them plain.
    assert_eq!(s.term.grid.cell(9, 0).unwrap().pen.bg, Color::Idx(4));
    assert_eq!(s.cell(0, 9).unwrap().pen.bg, Color::Default);
}

#[test]
fn attributes_tmux_keeps() {
    let s = screen(
        20,
        1,
        b"\x1b[1;2;9;53;5;8mA\x1b[0;21mB\x1b[4:3;58:5:9mC\x1b[m",
    );
    let a = s.cell(0, 0).unwrap().pen.attrs;
    for attr in [
        Attrs::BOLD,
        Attrs::DIM,
        Attrs::STRIKETHROUGH,
        Attrs::OVERLINE,
        Attrs::BLINK,
        Attrs::HIDDEN,
    ] {
        assert!(a.contains(attr), "{attr:?}");
    }
    assert_eq!(s.cell(0, 1).unwrap().pen.underline, Underline::Double);
    let c = s.cell(0, 2).unwrap().pen;
    assert_eq!((c.underline, c.us), (Underline::Curly, Color::Idx(9)));
}

#[test]
fn wide_characters_cut_as_tmux_cuts_them() {
    // Erasing the right half leaves the left half's character (tmux's
    // capture then shows it followed by a blank); erasing the left half
    // leaves the padding, which shows nothing.
    let s = screen(10, 2, "a你b\x1b[3G\x1b[X\r\n中c\x1b[1G\x1b[X".as_bytes());
    assert_eq!(text(&s), ["a你 b", " c"]);
    // Overwriting either half clears the whole character.
    let s = screen(10, 2, "a你b\x1b[3Gx\r\n中c\x1b[1Gy".as_bytes());
    assert_eq!(text(&s), ["a xb", "y c"]);
}

#[test]
fn wide_character_at_the_margin_wraps_whole() {
    let s = screen(5, 2, "abcd你".as_bytes());
    assert_eq!(text(&s), ["abcd", "你"]);
    assert_eq!(s.cursor_position(), (1, 2));
}

#[test]
fn joiners_and_combining_marks_join_the_cell_before() {
    let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
    let s = screen(10, 1, format!("{family}!e\u{301}").as_bytes());
    assert_eq!(s.cell(0, 0).unwrap().text(), family);
    assert_eq!(text(&s), [format!("{family}!e\u{301}")]);
    assert_eq!(s.cursor_position(), (0, 4));
}

#[test]
fn pending_wrap_and_cursor_moves() {
    let s = screen(4, 2, b"abcd");
    assert_eq!(s.cursor_position(), (0, 4));
    let s = screen(4, 2, b"abcd\x1b[A");
    assert_eq!(s.cursor_position(), (0, 3));
    let s = screen(4, 2, b"abcde");
    assert_eq!(text(&s), ["abcd", "e"]);
    let s = screen(4, 2, b"\x1b[?7labcdef");
    assert_eq!(text(&s), ["abcf", ""]);
}

#[test]
fn scroll_regions_and_lines() {
    let s = screen(3, 4, b"1\r\n2\r\n3\r\n4\x1b[2;3r\x1b[3;1H\n\x1b[41m\nx");
    assert_eq!(text(&s), ["1", "", "x", "4"]);
    assert_eq!(s.term.grid.cell(1, 1).unwrap().pen.bg, Color::Default);
    assert_eq!(s.term.grid.cell(1, 2).unwrap().pen.bg, Color::Idx(1));
    let s = screen(3, 4, b"1\r\n2\r\n3\r\n4\x1b[2;1H\x1b[L");
    assert_eq!(text(&s), ["1", "", "2", "3"]);
    let s = screen(3, 4, b"1\r\n2\r\n3\r\n4\x1b[2;1H\x1b[2M");
    assert_eq!(text(&s), ["1", "4", "", ""]);
}

#[test]
fn the_alternate_screen_keeps_the_cursor_and_restores_the_normal_one() {
    let s = screen(10, 3, b"one\r\ntwo\x1b[?1049h\x1b[31malt");
    assert!(s.alternate_screen());
    assert_eq!(text(&s), ["", "   alt", ""]);
    let mut s = s;
    s.process(b"\x1b[?1049lX");
    assert_eq!(text(&s), ["one", "twoX", ""]);
    assert_eq!(s.cell(1, 3).unwrap().pen.fg, Color::Default);
}

#[test]
fn line_drawing_and_titles() {
    let s = screen(10, 1, b"\x1b(0lqk\x1b(Bq\x1b]2;hello\x07\x07");
    assert_eq!(text(&s), ["┌─┐q"]);
    assert_eq!(s.title(), Some("hello"));
    assert_eq!(s.bells(), 1);
    let s = screen(10, 1, b"a\x1bkname\x1b\\b");
    assert_eq!(text(&s), ["ab"]);
}

#[test]
fn repeat_repeats_the_last_ascii_character_once() {
    let s = screen(10, 1, b"a\x1b[3b\x1b[3b");
    assert_eq!(text(&s), ["aaaa"]);
    // Found by the fuzzer (seed 7, case 2940): a string (OSC, DCS) between
    // makes tmux forget the character.
    let s = screen(10, 1, b"x\x1b]52;t\x07\x1b[2b");
    assert_eq!(text(&s), ["x"]);
}

/// Found by the differential fuzzer (seed 20261126, case 1327): inserting
/// lines below the scroll region moves only the rows that fit and blanks
/// only the rows they left; rows in between keep their text in tmux.
#[test]
fn insert_lines_outside_the_region_leave_the_rows_between() {
    let s = screen(4, 6, b"a\r\nb\r\nc\r\nd\r\ne\r\nf\x1b[1;2r\x1b[3;1H\x1b[3L");
    assert_eq!(text(&s), ["a", "b", "", "d", "e", "c"]);
}

/// The same in a row: inserting more than half of what is left moves the
/// tail only, the cells between keep theirs.
#[test]
fn insert_chars_past_half_the_row_leave_the_cells_between() {
    let s = screen(10, 1, b"abcdefghij\x1b[3G\x1b[5@");
    assert_eq!(text(&s), ["ab     cde".replacen("     ", "   fg", 1)]);
}
