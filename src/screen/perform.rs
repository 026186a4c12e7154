//! From `vte`'s parse to the terminal's edits, with tmux 3.3's tables
//! (`input.c`): which escape, control sequence and mode each byte
//! sequence means, and how missing or malformed parameters count.

use vte::{Params, Perform};

use super::sgr;
use super::term::Term;

/// What the program's bytes did besides drawing.
#[derive(Clone, Debug, Default)]
pub struct Events {
    /// The last title set with OSC 0 or 2.
    pub title: Option<String>,
    pub bells: u64,
}

/// tmux keeps at most 24 parameters; a sequence with more is ignored.
const MAX_PARAMS: usize = 24;

pub struct Performer<'a> {
    pub term: &'a mut Term,
    pub events: &'a mut Events,
    /// Inside `ESC k ... ESC \` (screen's window name), which tmux
    /// swallows up to the next escape.
    pub renaming: &'a mut bool,
}

/// The parameters as slices of colon-separated parts, on the stack.
struct Args<'p> {
    list: [&'p [u16]; MAX_PARAMS],
    len: usize,
}

impl<'p> Args<'p> {
    fn of(params: &'p Params) -> Option<Args<'p>> {
        let mut list: [&[u16]; MAX_PARAMS] = [&[]; MAX_PARAMS];
        let mut len = 0;
        for param in params.iter() {
            if len == MAX_PARAMS {
                return None;
            }
            list[len] = param;
            len += 1;
        }
        Some(Args { list, len })
    }

    fn all(&self) -> &[&'p [u16]] {
        &self.list[..self.len]
    }

    /// tmux's `input_get`: parameter `i`, `default` when absent or zero
    /// (vte reads a missing parameter as 0), at least `min`; `None` for a
    /// parameter with colons, which tmux refuses outside SGR.
    fn get(&self, i: usize, min: u16, default: u16) -> Option<u16> {
        match self.all().get(i) {
            None | Some([]) => Some(default),
            Some([0]) if default > min => Some(default),
            Some([n]) => Some((*n).max(min)),
            Some(_) => None,
        }
    }
}

impl Perform for Performer<'_> {
    fn print(&mut self, ch: char) {
        if *self.renaming || ch == '\x7f' {
            return;
        }
        self.term.print(ch);
    }

    fn execute(&mut self, byte: u8) {
        if *self.renaming {
            if matches!(byte, 0x18 | 0x1a) {
                *self.renaming = false;
            }
            return;
        }
        let term = &mut *self.term;
        match byte {
            0x07 => self.events.bells += 1,
            0x08 => term.backspace(),
            0x09 => term.tab(),
            0x0a..=0x0c => term.linefeed(false, term.pen.bg),
            0x0d => term.carriage_return(),
            0x0e => term.shift(true),
            0x0f => term.shift(false),
            _ => {}
        }
        term.last = None;
    }

    fn hook(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
        *self.renaming = false;
        // tmux forgets the character REP repeats when any string starts.
        self.term.last = None;
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        *self.renaming = false;
        self.term.last = None;
        let [which, rest @ ..] = params else {
            return;
        };
        if matches!(*which, b"0" | b"2") {
            let title = rest.join(&b';');
            self.events.title = Some(String::from_utf8_lossy(&title).into_owned());
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        *self.renaming = false;
        if ignore {
            return;
        }
        let term = &mut *self.term;
        match (intermediates, byte) {
            (b"(", b'0') => term.designate(false, true),
            (b")", b'0') => term.designate(true, true),
            (b"(", b'B') => term.designate(false, false),
            (b")", b'B') => term.designate(true, false),
            (b"", b'7') => term.save_cursor(),
            (b"", b'8') => term.restore_cursor(),
            (b"#", b'8') => term.alignment_test(),
            (b"", b'D') => term.linefeed(false, term.pen.bg),
            (b"", b'E') => {
                term.carriage_return();
                term.linefeed(false, term.pen.bg);
            }
            (b"", b'H') => term.set_tab(),
            (b"", b'M') => term.reverse_index(),
            (b"", b'c') => term.reset(),
            (b"", b'k') => *self.renaming = true,
            _ => {}
        }
        term.last = None;
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        *self.renaming = false;
        if !ignore && let Some(args) = Args::of(params) {
            csi(self.term, &args, intermediates, action);
        }
        self.term.last = None;
    }
}

fn csi(term: &mut Term, args: &Args, intermediates: &[u8], action: char) {
    if intermediates.is_empty()
        && let Some(n) = args.get(0, 1, 1)
        && counted(term, action, n)
    {
        return;
    }
    match (intermediates, action) {
        (b"", 'H' | 'f') => {
            if let (Some(n), Some(m)) = (args.get(0, 1, 1), args.get(1, 1, 1)) {
                term.cursor_move(Some(m - 1), Some(n - 1), true);
            }
        }
        (b"", 'J') => {
            if let Some(n) = args.get(0, 0, 0) {
                term.erase_in_display(n);
            }
        }
        (b"", 'K') => {
            if let Some(n) = args.get(0, 0, 0) {
                term.erase_in_line(n);
            }
        }
        (b"", 'g') => match args.get(0, 0, 0) {
            Some(0) => term.clear_tabs(false),
            Some(3) => term.clear_tabs(true),
            _ => {}
        },
        (b"", 'h' | 'l') => modes(term, args, action == 'h'),
        (b"?", 'h' | 'l') => private_modes(term, args, action == 'h'),
        (b"", 'm') => sgr::apply(&mut term.pen, args.all()),
        (b"", 'r') => {
            let rows = term.rows();
            if let (Some(n), Some(m)) = (args.get(0, 1, 1), args.get(1, 1, rows)) {
                term.scroll_region(n - 1, m - 1);
            }
        }
        (b"", 's') => term.save_cursor(),
        (b"", 'u') => term.restore_cursor(),
        _ => {}
    }
}

/// The sequences that take one count (at least 1); false for others.
fn counted(term: &mut Term, action: char, n: u16) -> bool {
    match action {
        '@' => term.insert_chars(n),
        'A' => term.cursor_up(n),
        'B' => term.cursor_down(n),
        'C' => term.cursor_right(n),
        'D' => term.cursor_left(n),
        'E' => {
            term.carriage_return();
            term.cursor_down(n);
        }
        'F' => {
            term.carriage_return();
            term.cursor_up(n);
        }
        'G' | '`' => term.cursor_move(Some(n - 1), None, true),
        'L' => term.insert_lines(n),
        'M' => term.delete_lines(n),
        'P' => term.delete_chars(n),
        'S' => term.scroll_up(n),
        'T' => term.scroll_down(n),
        'X' => term.erase_chars(n),
        'Z' => term.tab_backward(n),
        'b' => term.repeat(n),
        'd' => term.cursor_move(None, Some(n - 1), true),
        _ => return false,
    }
    true
}

fn modes(term: &mut Term, args: &Args, on: bool) {
    for i in 0..args.all().len() {
        if args.get(i, 0, 0) == Some(4) {
            term.modes.insert = on;
        }
    }
}

fn private_modes(term: &mut Term, args: &Args, on: bool) {
    for i in 0..args.all().len() {
        match args.get(i, 0, 0) {
            Some(3) => term.column_mode(),
            Some(6) => term.set_origin(on),
            Some(7) => term.modes.wrap = on,
            Some(25) => term.modes.cursor_visible = on,
            Some(47 | 1047) if on => term.alternate_on(false),
            Some(47 | 1047) => term.alternate_off(false),
            Some(1049) if on => term.alternate_on(true),
            Some(1049) => term.alternate_off(true),
            _ => {}
        }
    }
}
