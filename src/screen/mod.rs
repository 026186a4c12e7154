//! tmuxd's own terminal screen: the `vte` parser driving a grid with tmux
//! 3.3's semantics, so a pane's screen in memory is the one tmux keeps —
//! every attribute tmux holds, its erase and insert rules, wide characters
//! cut as tmux cuts them, and the wrap flags backspace follows.
//! (docs/fidelity.md says why not `vt100`.)

mod cell;
mod compare;
mod grid;
mod perform;
mod sgr;
mod term;

pub use cell::{Attrs, Cell, Color, Pen, Underline};
pub use compare::{DriftCause, TmuxCursor, compare};

use perform::{Events, Performer};
use term::Term;

/// A terminal screen fed with a program's bytes.
pub struct Screen {
    parser: vte::Parser,
    term: Term,
    events: Events,
    renaming: bool,
}

impl Screen {
    pub fn new(cols: u16, rows: u16) -> Screen {
        Screen {
            parser: vte::Parser::new(),
            term: Term::new(cols, rows),
            events: Events::default(),
            renaming: false,
        }
    }

    /// Feeds one read of the program's output (a `%output` chunk).
    pub fn process(&mut self, bytes: &[u8]) {
        self.term.begin_read();
        let mut performer = Performer {
            term: &mut self.term,
            events: &mut self.events,
            renaming: &mut self.renaming,
        };
        self.parser.advance(&mut performer, bytes);
    }

    /// `(cols, rows)`, as `new` and `resize` take them.
    pub fn size(&self) -> (u16, u16) {
        (self.term.cols(), self.term.rows())
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.term.resize(cols, rows);
    }

    /// `(row, col)`; the column equals the width while a wrap is pending.
    pub fn cursor_position(&self) -> (u16, u16) {
        (self.term.cy, self.term.cx)
    }

    pub fn hide_cursor(&self) -> bool {
        !self.term.modes.cursor_visible
    }

    pub fn alternate_screen(&self) -> bool {
        self.term.on_alternate()
    }

    /// The cell at `row`, `col` of the screen that shows, as `capture-pane`
    /// shows it: past the last cell written on the row, a plain blank.
    pub fn cell(&self, row: u16, col: u16) -> Option<&Cell> {
        shown_cell(&self.term.grid, row, col)
    }

    /// The same, of the normal screen, even while the alternate one shows.
    pub fn normal_cell(&self, row: u16, col: u16) -> Option<&Cell> {
        shown_cell(self.term.normal_grid(), row, col)
    }

    /// Each row's text from column `start`, `width` columns wide, trailing
    /// blanks left out (padding of wide characters skipped, as tmux does).
    pub fn rows(&self, start: u16, width: u16) -> impl Iterator<Item = String> + '_ {
        (0..self.term.rows()).map(move |row| {
            let mut line = String::new();
            for col in start..start.saturating_add(width) {
                match self.cell(row, col) {
                    Some(cell) if !cell.is_padding() => cell.push_text(&mut line),
                    _ => {}
                }
            }
            line.truncate(line.trim_end_matches(' ').len());
            line
        })
    }

    /// Whether the text of `row` (of the screen that shows) goes on in the
    /// next row: the program wrote past the last column.
    pub fn row_wrapped(&self, row: u16) -> bool {
        self.term.grid.line(row).is_some_and(|line| line.wrapped)
    }

    /// Marks whether `row` (of the screen that shows) wrapped into the
    /// next: a seed drawn row by row from `capture-pane` learns it apart.
    pub fn set_wrapped(&mut self, row: u16, wrapped: bool) {
        if row < self.term.rows() {
            self.term.grid.line_mut(row).wrapped = wrapped;
        }
    }

    /// The title the program set (OSC 0 or 2), if any.
    pub fn title(&self) -> Option<&str> {
        self.events.title.as_deref()
    }

    /// Bells rung since the screen was made.
    pub fn bells(&self) -> u64 {
        self.events.bells
    }
}

/// What a cell past a row's last written one shows in `capture-pane`.
static UNUSED: std::sync::LazyLock<Cell> = std::sync::LazyLock::new(Cell::default);

fn shown_cell(grid: &grid::Grid, row: u16, col: u16) -> Option<&Cell> {
    let line = grid.line(row)?;
    match col < line.used {
        true => line.cells.get(usize::from(col)),
        false => (col < grid.cols()).then(|| &*UNUSED),
    }
}

#[cfg(test)]
mod tests;
