//! The rows of one screen (normal or alternate) and the edits tmux 3.3
//! makes to them (`grid.c`, `grid-view.c`): erases leave blank cells with
//! the current background only, inserted and deleted cells and lines are
//! filled with it, and each row remembers whether it wrapped into the next
//! (backspace at the start of a wrapped row goes up to the end of the one
//! above, as readline expects).

use super::cell::{Cell, Color};

#[derive(Clone, Debug)]
pub struct Line {
    pub cells: Vec<Cell>,
    /// The text ran on into the next row (tmux's `GRID_LINE_WRAPPED`).
    pub wrapped: bool,
    /// Cells up to the last one written or moved (tmux's `cellused`):
    /// `capture-pane` shows only these, so cells an erase coloured past
    /// them show as plain blanks there, and here.
    pub used: u16,
    /// Cells past this one are plain blanks: a reset need not touch them
    /// (a scrolling flood resets a row per line it writes).
    dirty: u16,
}

impl Line {
    fn blank(cols: u16, bg: Color) -> Line {
        Line {
            cells: vec![Cell::blank(bg); usize::from(cols)],
            wrapped: false,
            used: 0,
            dirty: if bg == Color::Default { 0 } else { cols },
        }
    }

    fn mark_used(&mut self, end: u16) {
        self.used = self.used.max(end);
        self.dirty = self.dirty.max(end);
    }

    /// Empties the row in place (tmux's `grid_empty_line`).
    fn reset(&mut self, bg: Color) {
        let end = match bg {
            Color::Default => usize::from(self.dirty),
            _ => self.cells.len(),
        };
        let end = end.min(self.cells.len());
        for cell in &mut self.cells[..end] {
            *cell = Cell::blank(bg);
        }
        self.wrapped = false;
        self.used = 0;
        self.dirty = if bg == Color::Default {
            0
        } else {
            self.cells.len() as u16
        };
    }
}

#[derive(Clone, Debug)]
pub struct Grid {
    cols: u16,
    lines: Vec<Line>,
    /// The normal screen keeps history (what scrolls off goes there, which
    /// changes how tmux treats the wrap flags); the alternate one does not.
    pub history: bool,
}

impl Grid {
    pub fn new(cols: u16, rows: u16, history: bool) -> Grid {
        Grid {
            cols,
            lines: (0..rows)
                .map(|_| Line::blank(cols, Color::Default))
                .collect(),
            history,
        }
    }

    pub fn cols(&self) -> u16 {
        self.cols
    }

    pub fn rows(&self) -> u16 {
        self.lines.len() as u16
    }

    pub fn line(&self, y: u16) -> Option<&Line> {
        self.lines.get(usize::from(y))
    }

    pub fn line_mut(&mut self, y: u16) -> &mut Line {
        &mut self.lines[usize::from(y)]
    }

    pub fn cell(&self, x: u16, y: u16) -> Option<&Cell> {
        self.line(y)?.cells.get(usize::from(x))
    }

    pub fn set(&mut self, x: u16, y: u16, cell: Cell) {
        if let Some(slot) = self
            .lines
            .get_mut(usize::from(y))
            .and_then(|l| l.cells.get_mut(usize::from(x)))
        {
            *slot = cell;
            self.lines[usize::from(y)].mark_used(x + 1);
        }
    }

    /// `grid_clear`: a rectangle to blank cells of background `bg`; whole
    /// rows are emptied, which also ends the wrap of the row above.
    pub fn clear(&mut self, x: u16, y: u16, nx: u16, ny: u16, bg: Color) {
        if nx == 0 || ny == 0 {
            return;
        }
        if x == 0 && nx >= self.cols {
            self.clear_lines(y, ny, bg);
            return;
        }
        let end_y = (u32::from(y) + u32::from(ny)).min(u32::from(self.rows())) as u16;
        let end_x = (u32::from(x) + u32::from(nx)).min(u32::from(self.cols)) as usize;
        for row in y..end_y {
            let line = &mut self.lines[usize::from(row)];
            for cell in &mut line.cells[usize::from(x).min(end_x)..end_x] {
                *cell = Cell::blank(bg);
            }
            if bg != Color::Default {
                line.dirty = line.dirty.max(end_x as u16);
            }
        }
    }

    fn clear_lines(&mut self, y: u16, ny: u16, bg: Color) {
        let end = (u32::from(y) + u32::from(ny)).min(u32::from(self.rows())) as u16;
        if y >= end {
            return;
        }
        for row in y..end {
            self.lines[usize::from(row)].reset(bg);
        }
        if y > 0 {
            self.lines[usize::from(y - 1)].wrapped = false;
        }
    }

    /// `grid_move_lines`: rows `py..py + ny` to `dy..`, rows left behind
    /// emptied with `bg`. Wrap flags end above each edge, as tmux's do.
    pub fn move_lines(&mut self, dy: u16, py: u16, ny: u16, bg: Color) {
        let rows = self.rows();
        if ny == 0 || py == dy || py + ny > rows || dy + ny > rows {
            return;
        }
        if dy > 0 {
            self.lines[usize::from(dy - 1)].wrapped = false;
        }
        let (dy, py, ny) = (usize::from(dy), usize::from(py), usize::from(ny));
        shift(&mut self.lines, dy, py, ny);
        for row in py..py + ny {
            if row < dy || row >= dy + ny {
                self.lines[row].reset(bg);
            }
        }
        if py != 0 && (py < dy || py >= dy + ny) {
            self.lines[py - 1].wrapped = false;
        }
    }

    /// `grid_view_scroll_region_up`: one row off the top of the region, a
    /// blank one of background `bg` at its bottom.
    pub fn scroll_up(&mut self, upper: u16, lower: u16, bg: Color) {
        if self.history {
            let (upper, lower) = (usize::from(upper), usize::from(lower));
            if lower >= self.lines.len() || upper >= lower {
                return;
            }
            self.lines[upper..=lower].rotate_left(1);
            self.lines[lower].reset(bg);
        } else {
            self.move_lines(upper, upper + 1, lower - upper, bg);
        }
    }

    /// `grid_view_scroll_region_down`.
    pub fn scroll_down(&mut self, upper: u16, lower: u16, bg: Color) {
        self.move_lines(upper + 1, upper, lower - upper, bg);
    }

    /// `grid_move_cells` on row `y`: cells `px..px + nx` to `dx..`, cells
    /// left behind blanked with `bg`.
    fn move_cells(&mut self, dx: u16, px: u16, y: u16, nx: u16, bg: Color) {
        if nx == 0 || px == dx {
            return;
        }
        let line = &mut self.lines[usize::from(y)];
        line.mark_used(dx + nx);
        if bg != Color::Default {
            line.dirty = line.dirty.max(px + nx);
        }
        let cells = &mut line.cells;
        let (dx, px, nx) = (usize::from(dx), usize::from(px), usize::from(nx));
        shift(cells, dx, px, nx);
        for (x, cell) in cells.iter_mut().enumerate().skip(px).take(nx) {
            if x < dx || x >= dx + nx {
                *cell = Cell::blank(bg);
            }
        }
    }

    /// `grid_view_insert_cells`: `nx` blanks of background `bg` at `x`, the
    /// rest of the row pushed right (off the edge).
    pub fn insert_cells(&mut self, x: u16, y: u16, nx: u16, bg: Color) {
        let cols = self.cols;
        if x >= cols.saturating_sub(1) {
            self.clear(x, y, 1, 1, bg);
        } else {
            self.move_cells(x + nx, x, y, cols - x - nx, bg);
        }
    }

    /// `grid_view_delete_cells`: `nx` cells at `x` gone, the rest of the row
    /// pulled left, blanks of background `bg` at its end.
    pub fn delete_cells(&mut self, x: u16, y: u16, nx: u16, bg: Color) {
        let cols = self.cols;
        self.move_cells(x, x + nx, y, cols - x - nx, bg);
        self.clear(cols - nx, y, nx, 1, bg);
    }

    /// Rows to `rows` and columns to `cols` without reflowing; tmux re-seeds
    /// a pane after its size changes, so this only has to keep what fits.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        for line in &mut self.lines {
            line.cells.resize(usize::from(cols), Cell::default());
            if cols < self.cols {
                line.wrapped = false;
            }
            line.used = line.used.min(cols);
            line.dirty = line.dirty.min(cols);
        }
        self.cols = cols;
        self.lines
            .resize_with(usize::from(rows), || Line::blank(cols, Color::Default));
    }

    /// Drops `n` rows off the top (their text scrolls away), adding none.
    pub fn remove_top(&mut self, n: u16) {
        let n = usize::from(n).min(self.lines.len());
        self.lines.drain(..n);
    }

    /// True when row `y` shows nothing at all.
    pub fn line_is_blank(&self, y: u16) -> bool {
        self.line(y)
            .is_some_and(|l| l.cells.iter().all(Cell::is_plain_blank))
    }
}

/// tmux's `memmove` of `n` items from `from` to `to`: only those items
/// move; items between the two ranges stay where they were (tmux leaves
/// them; the caller blanks the items left behind).
fn shift<T>(items: &mut [T], to: usize, from: usize, n: usize) {
    if from.abs_diff(to) <= n {
        // The ranges touch: rotating their union moves exactly these.
        match to < from {
            true => items[to..from + n].rotate_left(from - to),
            false => items[from..to + n].rotate_right(to - from),
        }
    } else {
        for i in 0..n {
            items.swap(from + i, to + i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::cell::Pen;

    fn grid_of(rows: &[&str]) -> Grid {
        let cols = rows.iter().map(|r| r.len()).max().unwrap_or(1) as u16;
        let mut grid = Grid::new(cols, rows.len() as u16, true);
        for (y, row) in rows.iter().enumerate() {
            for (x, ch) in row.chars().enumerate() {
                grid.set(x as u16, y as u16, Cell::new(ch, 1, Pen::default()));
            }
        }
        grid
    }

    fn text(grid: &Grid) -> Vec<String> {
        (0..grid.rows())
            .map(|y| grid.line(y).unwrap().cells.iter().map(Cell::text).collect())
            .collect()
    }

    #[test]
    fn cells_inserted_and_deleted_take_the_background() {
        let red = Color::Idx(1);
        let mut grid = grid_of(&["abcdef"]);
        grid.insert_cells(1, 0, 2, red);
        assert_eq!(text(&grid), ["a  bcd"]);
        assert_eq!(grid.cell(1, 0).unwrap().pen.bg, red);
        assert_eq!(grid.cell(3, 0).unwrap().pen.bg, Color::Default);
        grid.delete_cells(0, 0, 3, red);
        assert_eq!(text(&grid), ["bcd   "]);
        assert_eq!(grid.cell(5, 0).unwrap().pen.bg, red);
        assert_eq!(grid.cell(2, 0).unwrap().pen.bg, Color::Default);
    }

    #[test]
    fn lines_move_and_blanks_take_the_background() {
        let mut grid = grid_of(&["a", "b", "c", "d"]);
        grid.scroll_up(1, 3, Color::Idx(4));
        assert_eq!(text(&grid), ["a", "c", "d", " "]);
        assert_eq!(grid.cell(0, 3).unwrap().pen.bg, Color::Idx(4));
        grid.scroll_down(0, 2, Color::Default);
        assert_eq!(text(&grid), [" ", "a", "c", " "]);
        grid.move_lines(0, 1, 2, Color::Default);
        assert_eq!(text(&grid), ["a", "c", " ", " "]);
    }

    #[test]
    fn clearing_whole_rows_ends_the_wrap_above() {
        let mut grid = grid_of(&["ab", "cd", "ef"]);
        grid.line_mut(0).wrapped = true;
        grid.line_mut(1).wrapped = true;
        grid.clear(0, 1, 2, 1, Color::Default);
        assert!(!grid.line(0).unwrap().wrapped);
        grid.line_mut(0).wrapped = true;
        grid.clear(1, 1, 1, 1, Color::Default);
        assert!(grid.line(0).unwrap().wrapped);
    }
}
