//! The terminal a pane's program writes to, with tmux 3.3's semantics
//! (`screen-write.c`, `screen.c`): where the cursor goes, how text wraps,
//! combines and overwrites wide characters, what erases and scrolls leave,
//! and the alternate screen.

use unicode_width::UnicodeWidthChar;

use super::cell::{Attrs, Cell, Color, Pen};
use super::grid::Grid;

const ZWJ: char = '\u{200d}';

/// Mode bits tmux keeps per screen that change what writes do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modes {
    pub wrap: bool,
    pub insert: bool,
    pub origin: bool,
    pub cursor_visible: bool,
}

impl Default for Modes {
    fn default() -> Self {
        Modes {
            wrap: true,
            insert: false,
            origin: false,
            cursor_visible: true,
        }
    }
}

/// The pen and character sets DECSC saves, with the cursor.
#[derive(Clone, Copy, Debug, Default)]
struct Saved {
    pen: Pen,
    charsets: Charsets,
    cx: u16,
    cy: u16,
    origin: bool,
}

/// G0/G1 (`ESC ( 0`, `ESC ) 0`) and which one is shifted in (SO/SI).
#[derive(Clone, Copy, Debug, Default)]
struct Charsets {
    g0_drawing: bool,
    g1_drawing: bool,
    shifted_out: bool,
}

/// The normal screen kept while the alternate one shows.
#[derive(Clone, Debug)]
struct Behind {
    grid: Grid,
}

#[derive(Clone, Debug)]
pub struct Term {
    pub(super) grid: Grid,
    behind: Option<Behind>,
    /// The cursor and pen `CSI ? 1049 h` saved (tmux's `saved_cx`...).
    alt_saved: Option<(u16, u16, Pen)>,
    /// The cursor column may equal the width: a wrap is pending.
    pub(super) cx: u16,
    pub(super) cy: u16,
    pub(super) rupper: u16,
    pub(super) rlower: u16,
    pub(super) modes: Modes,
    pub(super) pen: Pen,
    charsets: Charsets,
    saved: Saved,
    tabs: Vec<bool>,
    /// The last ASCII character printed, for REP; anything else forgets it.
    pub(super) last: Option<char>,
    /// A zero-width joiner came: the next character joins the cell before.
    zwj: bool,
}

fn default_tabs(cols: u16) -> Vec<bool> {
    (0..cols).map(|x| x > 0 && x % 8 == 0).collect()
}

impl Term {
    pub fn new(cols: u16, rows: u16) -> Term {
        let (cols, rows) = (cols.max(1), rows.max(1));
        Term {
            grid: Grid::new(cols, rows, true),
            behind: None,
            alt_saved: None,
            cx: 0,
            cy: 0,
            rupper: 0,
            rlower: rows - 1,
            modes: Modes::default(),
            pen: Pen::default(),
            charsets: Charsets::default(),
            saved: Saved::default(),
            tabs: default_tabs(cols),
            last: None,
            zwj: false,
        }
    }

    pub fn cols(&self) -> u16 {
        self.grid.cols()
    }

    pub fn rows(&self) -> u16 {
        self.grid.rows()
    }

    pub fn on_alternate(&self) -> bool {
        self.behind.is_some()
    }

    /// The normal screen, whichever shows.
    pub fn normal_grid(&self) -> &Grid {
        self.behind.as_ref().map_or(&self.grid, |b| &b.grid)
    }

    fn set_cursor(&mut self, cx: Option<u16>, cy: Option<u16>) {
        if let Some(cx) = cx {
            self.cx = if cx > self.cols() {
                self.cols() - 1
            } else {
                cx
            };
        }
        if let Some(cy) = cy {
            self.cy = cy.min(self.rows() - 1);
        }
    }

    // ---- text -------------------------------------------------------------

    /// `input_print` / `screen_write_cell`: one character at the cursor.
    pub fn print(&mut self, ch: char) {
        let ascii = ch.is_ascii();
        if ch == ZWJ {
            self.zwj = true;
            self.last = None;
            return;
        }
        let width = match ch {
            ' '..='~' => 1,
            _ => match ch.width() {
                Some(w) => w as u16,
                // Control characters never reach here; be safe.
                None => return,
            },
        };
        let drawing = match self.charsets.shifted_out {
            true => self.charsets.g1_drawing,
            false => self.charsets.g0_drawing,
        };
        // tmux writes plain ASCII through a faster path that never looks
        // at a pending joiner, so the joiner waits for the next other
        // character (and joins it, whatever its width).
        let fast_path = ascii && !drawing && self.modes.wrap && !self.modes.insert;
        if self.zwj && !fast_path {
            self.combine(ZWJ);
        }
        if width == 0 || (self.zwj && !fast_path) {
            self.zwj = false;
            self.combine(ch);
            self.last = None;
            return;
        }
        self.last = ascii.then_some(ch);
        let mut pen = self.pen;
        if drawing && ascii {
            pen.attrs.insert(Attrs::CHARSET);
        }
        self.write_cell(ch, width, pen, fast_path);
    }

    fn write_cell(&mut self, ch: char, width: u16, pen: Pen, fast_path: bool) {
        let sx = self.cols();
        if !self.modes.wrap && width > 1 && (width > sx || (self.cx != sx && self.cx + width > sx))
        {
            return;
        }
        if self.modes.insert {
            self.grid
                .insert_cells(self.cx, self.cy, width, Color::Default);
        }
        if self.modes.wrap && self.cx + width > sx {
            self.linefeed(true, Color::Default);
            self.set_cursor(Some(0), None);
        }
        if self.cx + width > sx {
            return;
        }
        match fast_path {
            true => self.overwrite_fast(),
            false => self.overwrite(width),
        }
        for x in self.cx + 1..self.cx + width {
            self.grid.set(x, self.cy, Cell::padding());
        }
        self.grid
            .set(self.cx, self.cy, Cell::new(ch, width as u8, pen));
        let last = u16::from(!self.modes.wrap);
        if self.cx + last + width <= sx {
            self.set_cursor(Some(self.cx + width), None);
        } else {
            self.set_cursor(Some(sx - last), None);
        }
    }

    /// `screen_write_overwrite`: writing over part of a wide character
    /// blanks the rest of it.
    fn overwrite(&mut self, width: u16) {
        let (cx, cy, sx) = (self.cx, self.cy, self.cols());
        let Some(here) = self.grid.cell(cx, cy) else {
            return;
        };
        let (here_padding, here_width) = (here.is_padding(), here.width());
        if here_padding {
            let mut x = cx + 1;
            loop {
                x -= 1;
                if x == 0 {
                    break;
                }
                if !self.grid.cell(x, cy).is_some_and(Cell::is_padding) {
                    break;
                }
                self.grid.set(x, cy, Cell::default());
            }
            self.grid.set(x, cy, Cell::default());
        }
        if width != 1 || here_width != 1 {
            let mut x = cx + width;
            while x < sx && self.grid.cell(x, cy).is_some_and(Cell::is_padding) {
                self.grid.set(x, cy, Cell::default());
                x += 1;
            }
        }
    }

    /// `screen_write_collect_end`, tmux's path for plain ASCII: over the
    /// padding of a wide character it clears back to the character, but
    /// never looks at column 0, so a wide character there survives.
    fn overwrite_fast(&mut self) {
        let (cx, cy, sx) = (self.cx, self.cy, self.cols());
        let mut x = cx;
        let mut stopped_at = None;
        while x > 0 {
            match self.grid.cell(x, cy) {
                Some(cell) if cell.is_padding() => self.grid.set(x, cy, Cell::default()),
                Some(cell) => {
                    stopped_at = Some((x, cell.width()));
                    break;
                }
                None => break,
            }
            x -= 1;
        }
        if let Some((x, width)) = stopped_at
            && width > 1
        {
            self.grid.set(x, cy, Cell::default());
        }
        let mut x = cx + 1;
        while x < sx && self.grid.cell(x, cy).is_some_and(Cell::is_padding) {
            self.grid.set(x, cy, Cell::default());
            x += 1;
        }
    }

    /// `screen_write_combine`: a zero-width character joins the cell left
    /// of the cursor (skipping padding), whatever the cursor did since.
    fn combine(&mut self, ch: char) {
        let cy = self.cy;
        let mut x = self.cx.min(self.cols());
        while x > 0 {
            x -= 1;
            let Some(cell) = self.grid.cell(x, cy) else {
                return;
            };
            if !cell.is_padding() {
                let mut cell = cell.clone();
                if cell.combine(ch) {
                    self.grid.set(x, cy, cell);
                }
                return;
            }
        }
    }

    /// `CSI n b`: the last ASCII character again, at most to the line's end.
    pub fn repeat(&mut self, n: u16) {
        let Some(ch) = self.last else {
            return;
        };
        let n = n.min(self.cols().saturating_sub(self.cx));
        for _ in 0..n {
            self.print(ch);
        }
    }

    /// tmux starts each read of a pane's output with no joiner pending.
    pub fn begin_read(&mut self) {
        self.zwj = false;
    }

    // ---- C0 ---------------------------------------------------------------

    pub fn backspace(&mut self) {
        let (cx, cy) = (self.cx, self.cy);
        if cx == 0 {
            if cy == 0 {
                return;
            }
            if self.grid.line(cy - 1).is_some_and(|l| l.wrapped) {
                self.set_cursor(Some(self.cols() - 1), Some(cy - 1));
            }
        } else {
            self.set_cursor(Some(cx - 1), None);
        }
    }

    pub fn tab(&mut self) {
        let sx = self.cols();
        if self.cx >= sx - 1 {
            return;
        }
        loop {
            self.cx += 1;
            if self
                .tabs
                .get(usize::from(self.cx))
                .copied()
                .unwrap_or(false)
                || self.cx >= sx - 1
            {
                break;
            }
        }
    }

    /// `screen_write_linefeed`: down a row, scrolling the region at its
    /// bottom; a wrap marks the row it leaves.
    pub fn linefeed(&mut self, wrapped: bool, bg: Color) {
        if wrapped {
            self.grid.line_mut(self.cy).wrapped = true;
        }
        if self.cy == self.rlower {
            self.grid.scroll_up(self.rupper, self.rlower, bg);
        } else if self.cy < self.rows() - 1 {
            self.set_cursor(None, Some(self.cy + 1));
        }
    }

    pub fn carriage_return(&mut self) {
        self.set_cursor(Some(0), None);
    }

    pub fn shift(&mut self, out: bool) {
        self.charsets.shifted_out = out;
    }

    pub fn designate(&mut self, g1: bool, drawing: bool) {
        match g1 {
            true => self.charsets.g1_drawing = drawing,
            false => self.charsets.g0_drawing = drawing,
        }
    }

    // ---- cursor -----------------------------------------------------------

    pub fn cursor_up(&mut self, n: u16) {
        let (mut cx, mut cy) = (self.cx, self.cy);
        let mut n = n.max(1);
        let limit = if cy < self.rupper {
            cy
        } else {
            cy - self.rupper
        };
        n = n.min(limit);
        if cx == self.cols() {
            cx -= 1;
        }
        cy -= n;
        self.set_cursor(Some(cx), Some(cy));
    }

    pub fn cursor_down(&mut self, n: u16) {
        let (mut cx, mut cy) = (self.cx, self.cy);
        let mut n = n.max(1);
        let limit = if cy > self.rlower {
            self.rows() - 1 - cy
        } else {
            self.rlower - cy
        };
        n = n.min(limit);
        if cx == self.cols() {
            cx -= 1;
        } else if n == 0 {
            return;
        }
        cy += n;
        self.set_cursor(Some(cx), Some(cy));
    }

    pub fn cursor_right(&mut self, n: u16) {
        let n = n.max(1);
        // From a pending wrap (one past the last column) tmux's limit
        // underflows: the move lands on the last column.
        let n = match (self.cols() - 1).checked_sub(self.cx) {
            Some(room) => n.min(room),
            None => n,
        };
        if n > 0 {
            self.set_cursor(Some(self.cx.saturating_add(n)), None);
        }
    }

    pub fn cursor_left(&mut self, n: u16) {
        let n = n.max(1).min(self.cx);
        if n > 0 {
            self.set_cursor(Some(self.cx - n), None);
        }
    }

    /// `screen_write_cursormove`: an absolute move (`None` keeps that axis);
    /// with `origin`, rows count from the region's top when DECOM is on.
    pub fn cursor_move(&mut self, px: Option<u16>, py: Option<u16>, origin: bool) {
        let mut py = py;
        if origin && self.modes.origin {
            py = py.map(|y| match y > self.rlower - self.rupper {
                true => self.rlower,
                false => y + self.rupper,
            });
        }
        let px = px.map(|x| x.min(self.cols() - 1));
        let py = py.map(|y| y.min(self.rows() - 1));
        self.set_cursor(px, py);
    }

    pub fn tab_backward(&mut self, n: u16) {
        let mut cx = self.cx.min(self.cols() - 1);
        let mut n = n;
        while cx > 0 && n > 0 {
            n -= 1;
            loop {
                cx -= 1;
                if cx == 0 || self.tabs[usize::from(cx)] {
                    break;
                }
            }
        }
        self.cx = cx;
    }

    pub fn set_tab(&mut self) {
        if let Some(t) = self.tabs.get_mut(usize::from(self.cx)) {
            *t = true;
        }
    }

    pub fn clear_tabs(&mut self, all: bool) {
        match all {
            true => self.tabs.iter_mut().for_each(|t| *t = false),
            false => {
                if let Some(t) = self.tabs.get_mut(usize::from(self.cx)) {
                    *t = false;
                }
            }
        }
    }

    pub fn save_cursor(&mut self) {
        self.saved = Saved {
            pen: self.pen,
            charsets: self.charsets,
            cx: self.cx,
            cy: self.cy,
            origin: self.modes.origin,
        };
    }

    pub fn restore_cursor(&mut self) {
        let saved = self.saved;
        self.pen = saved.pen;
        self.charsets = saved.charsets;
        self.modes.origin = saved.origin;
        self.cursor_move(Some(saved.cx), Some(saved.cy), false);
    }

    pub fn reverse_index(&mut self) {
        if self.cy == self.rupper {
            self.grid.scroll_down(self.rupper, self.rlower, self.pen.bg);
        } else if self.cy > 0 {
            self.set_cursor(None, Some(self.cy - 1));
        }
    }

    pub fn scroll_region(&mut self, upper: u16, lower: u16) {
        let last = self.rows() - 1;
        let (upper, lower) = (upper.min(last), lower.min(last));
        if upper >= lower {
            return;
        }
        self.set_cursor(Some(0), Some(0));
        self.rupper = upper;
        self.rlower = lower;
    }

    // ---- erase, insert, delete -------------------------------------------

    /// How many of `n` cells fit from the cursor, when the cursor is on
    /// the screen (not past its last column).
    fn cells_from_cursor(&self, n: u16) -> Option<u16> {
        let n = n.max(1).min(self.cols().saturating_sub(self.cx));
        (n > 0 && self.cx < self.cols()).then_some(n)
    }

    pub fn insert_chars(&mut self, n: u16) {
        if let Some(n) = self.cells_from_cursor(n) {
            self.grid.insert_cells(self.cx, self.cy, n, self.pen.bg);
        }
    }

    pub fn delete_chars(&mut self, n: u16) {
        if let Some(n) = self.cells_from_cursor(n) {
            self.grid.delete_cells(self.cx, self.cy, n, self.pen.bg);
        }
    }

    pub fn erase_chars(&mut self, n: u16) {
        if let Some(n) = self.cells_from_cursor(n) {
            self.grid.clear(self.cx, self.cy, n, 1, self.pen.bg);
        }
    }

    pub fn insert_lines(&mut self, n: u16) {
        let (cy, rows, bg) = (self.cy, self.rows(), self.pen.bg);
        let n = n.max(1);
        if cy < self.rupper || cy > self.rlower {
            let n = n.min(rows - cy);
            // tmux moves the rows below down and clears nothing more, so
            // inserting as many rows as are left does nothing at all.
            self.grid.move_lines(cy + n, cy, rows - cy - n, bg);
            return;
        }
        let n = n.min(self.rlower + 1 - cy);
        let kept = self.rlower + 1 - cy - n;
        self.grid.move_lines(self.rlower + 1 - kept, cy, kept, bg);
        if n > kept {
            self.grid.clear(0, cy + kept, self.cols(), n - kept, bg);
        }
    }

    pub fn delete_lines(&mut self, n: u16) {
        let (cy, rows, bg) = (self.cy, self.rows(), self.pen.bg);
        let n = n.max(1);
        let bottom = if cy < self.rupper || cy > self.rlower {
            rows - 1
        } else {
            self.rlower
        };
        let n = n.min(bottom + 1 - cy);
        let kept = bottom + 1 - cy - n;
        self.grid.move_lines(cy, cy + n, kept, bg);
        if n > kept {
            self.grid.clear(0, cy + kept, self.cols(), n - kept, bg);
        }
    }

    pub fn erase_in_line(&mut self, mode: u16) {
        let (cx, cy, sx, bg) = (self.cx, self.cy, self.cols(), self.pen.bg);
        match mode {
            0 if cx < sx => self.grid.clear(cx, cy, sx - cx, 1, bg),
            1 => self.grid.clear(0, cy, (cx + 1).min(sx), 1, bg),
            2 => self.grid.clear(0, cy, sx, 1, bg),
            _ => {}
        }
    }

    pub fn erase_in_display(&mut self, mode: u16) {
        let (cx, cy, sx, sy, bg) = (self.cx, self.cy, self.cols(), self.rows(), self.pen.bg);
        match mode {
            0 => {
                if cx < sx {
                    self.grid.clear(cx, cy, sx - cx, 1, bg);
                }
                self.grid.clear(0, cy + 1, sx, sy - (cy + 1), bg);
            }
            1 => {
                if cy > 0 {
                    self.grid.clear(0, 0, sx, cy, bg);
                }
                self.grid.clear(0, cy, (cx + 1).min(sx), 1, bg);
            }
            2 => self.grid.clear(0, 0, sx, sy, bg),
            _ => {}
        }
    }

    pub fn scroll_up(&mut self, n: u16) {
        let n = n.max(1).min(self.rlower - self.rupper + 1);
        for _ in 0..n {
            self.grid.scroll_up(self.rupper, self.rlower, self.pen.bg);
        }
    }

    pub fn scroll_down(&mut self, n: u16) {
        let n = n.max(1).min(self.rlower - self.rupper + 1);
        for _ in 0..n {
            self.grid.scroll_down(self.rupper, self.rlower, self.pen.bg);
        }
    }

    /// `ESC # 8`: the screen full of `E`.
    pub fn alignment_test(&mut self) {
        let (sx, sy) = (self.cols(), self.rows());
        for y in 0..sy {
            for x in 0..sx {
                self.grid.set(x, y, Cell::new('E', 1, Pen::default()));
            }
        }
        self.set_cursor(Some(0), Some(0));
        self.rupper = 0;
        self.rlower = sy - 1;
    }

    /// `ESC c`.
    pub fn reset(&mut self) {
        self.pen = Pen::default();
        self.charsets = Charsets::default();
        self.saved = Saved::default();
        self.tabs = default_tabs(self.cols());
        self.scroll_region(0, self.rows() - 1);
        self.modes = Modes::default();
        self.grid
            .clear(0, 0, self.cols(), self.rows(), Color::Default);
        self.set_cursor(Some(0), Some(0));
    }

    // ---- modes ------------------------------------------------------------

    pub fn set_origin(&mut self, on: bool) {
        self.modes.origin = on;
        self.cursor_move(Some(0), Some(0), true);
    }

    /// `CSI ? 3 h/l` (DECCOLM): tmux only homes the cursor and clears.
    pub fn column_mode(&mut self) {
        self.cursor_move(Some(0), Some(0), true);
        self.grid.clear(0, 0, self.cols(), self.rows(), self.pen.bg);
    }

    /// `screen_alternate_on`: the normal screen kept aside, the grid cleared;
    /// the cursor stays (1049 also saves it and the pen).
    pub fn alternate_on(&mut self, save_cursor: bool) {
        if self.behind.is_some() {
            return;
        }
        if save_cursor {
            self.alt_saved = Some((self.cx, self.cy, self.pen));
        }
        let mut alternate = self.grid.clone();
        alternate.history = false;
        alternate.clear(0, 0, self.cols(), self.rows(), Color::Default);
        let normal = std::mem::replace(&mut self.grid, alternate);
        self.behind = Some(Behind { grid: normal });
    }

    /// `screen_alternate_off`: the normal screen back; 1049 restores the
    /// cursor and pen it saved, even when the alternate screen was off.
    pub fn alternate_off(&mut self, restore_cursor: bool) {
        if restore_cursor && let Some((cx, cy, pen)) = self.alt_saved {
            self.cx = cx;
            self.cy = cy;
            self.pen = pen;
        }
        if let Some(behind) = self.behind.take() {
            let (cols, rows) = (self.cols(), self.rows());
            self.grid = behind.grid;
            self.grid.history = true;
            if (self.grid.cols(), self.grid.rows()) != (cols, rows) {
                self.grid.resize(cols, rows);
            }
        }
        self.cx = self.cx.min(self.cols() - 1);
        self.cy = self.cy.min(self.rows() - 1);
    }

    /// A new size: rows kept from the top, unless the cursor would fall off
    /// the bottom, then from the bottom (tmux pushes the top into history).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = (cols.max(1), rows.max(1));
        if (cols, rows) == (self.cols(), self.rows()) {
            return;
        }
        if rows < self.rows() {
            let mut drop = self.rows() - rows;
            // Blank rows below the cursor go first, as in `screen_resize_y`.
            let mut y = self.rows();
            while drop > 0 && y > self.cy + 1 {
                y -= 1;
                if !self.grid.line_is_blank(y) {
                    break;
                }
                drop -= 1;
            }
            self.grid.remove_top(drop);
            self.cy = self.cy.saturating_sub(drop);
        }
        self.grid.resize(cols, rows);
        if let Some(behind) = &mut self.behind {
            behind.grid.resize(cols, rows);
        }
        self.tabs = default_tabs(cols);
        self.rupper = 0;
        self.rlower = rows - 1;
        self.cx = self.cx.min(cols - 1);
        self.cy = self.cy.min(rows - 1);
    }
}
