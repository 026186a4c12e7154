//! The parsed screen of tmuxd's client: a `vt100` parser fed with what tmux
//! draws, cropped to the window (the status line is never part of it).

mod ansi;

use std::num::NonZeroU16;

use serde::Serialize;

use crate::tmux::PaneRect;

/// How the client terminal is laid out: the window plus tmux's status line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub cols: u16,
    /// Window rows, without the status line.
    pub rows: u16,
    pub status_lines: u16,
    pub status_top: bool,
}

impl Layout {
    pub fn client_rows(&self) -> u16 {
        self.rows.saturating_add(self.status_lines).max(1)
    }

    /// First client row that belongs to the window.
    fn first_window_row(&self) -> u16 {
        if self.status_top {
            self.status_lines
        } else {
            0
        }
    }
}

/// What tmux reports about the pane that the client's output does not show.
#[derive(Clone, Debug, Default)]
pub struct PaneFacts {
    pub title: String,
    pub alternate_on: bool,
    /// Where the active pane sits in the window, when tmux said.
    pub active_pane: Option<PaneRect>,
}

/// Which part of the window a snapshot shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Region {
    /// The whole window, pane borders included.
    #[default]
    Window,
    /// The active pane alone, as `capture-pane` shows it.
    ActivePane,
}

/// Text only, or with SGR sequences for colors and attributes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SnapshotFormat {
    #[default]
    Text,
    Ansi,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}

/// The window as tmux drew it, from memory.
#[derive(Clone, Debug, Serialize)]
pub struct ScreenSnapshot {
    pub cols: u16,
    pub rows: u16,
    /// The pane this snapshot is cropped to (`?pane=active`), in window cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<PaneRect>,
    /// Relative to the snapshot's own top-left cell.
    pub cursor: Cursor,
    pub alternate_screen: bool,
    pub title: String,
    pub lines: Vec<String>,
}

/// Terminal events the parser reports besides screen contents.
#[derive(Default)]
struct TermEvents {
    title: String,
}

impl vt100::Callbacks for TermEvents {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = String::from_utf8_lossy(title).into_owned();
    }
}

pub struct Screen {
    parser: vt100::Parser<TermEvents>,
    layout: Layout,
}

impl Screen {
    pub fn new(layout: Layout) -> Self {
        let (rows, cols) = parser_size(layout);
        Screen {
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, TermEvents::default()),
            layout,
        }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn process(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    pub fn set_layout(&mut self, layout: Layout) {
        if layout != self.layout {
            let (rows, cols) = parser_size(layout);
            self.parser.set_size(rows, cols);
            self.layout = layout;
        }
    }

    /// A hash of the window's text: changes when what a person would read
    /// changes, not when tmux only redraws the status line or moves the cursor.
    pub fn content_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let first = usize::from(self.layout.first_window_row());
        for row in self
            .parser
            .screen()
            .rows(0, self.layout.cols)
            .skip(first)
            .take(usize::from(self.layout.rows))
        {
            row.hash(&mut hasher);
        }
        hasher.finish()
    }

    /// The window's rows, or the active pane's. tmux's client always draws
    /// on the outer terminal's alternate screen, so whether the pane's program
    /// is on its own comes from tmux (`pane`), as does the title when the
    /// client set none.
    pub fn snapshot(
        &self,
        format: SnapshotFormat,
        region: Region,
        pane: &PaneFacts,
    ) -> ScreenSnapshot {
        let screen = self.parser.screen();
        let layout = self.layout;
        let window = PaneRect {
            left: 0,
            top: 0,
            cols: layout.cols,
            rows: layout.rows,
        };
        let (crop, cropped_to) = match (region, pane.active_pane) {
            (Region::ActivePane, Some(rect)) => (clamp_rect(rect, window), Some(rect)),
            _ => (window, None),
        };
        let first = usize::from(layout.first_window_row() + crop.top);
        let rows = usize::from(crop.rows);
        let lines: Vec<String> = match format {
            SnapshotFormat::Text => screen
                .rows(crop.left, crop.cols)
                .skip(first)
                .take(rows)
                .map(|line| line.trim_end().to_owned())
                .collect(),
            SnapshotFormat::Ansi => (first..first + rows)
                .map(|row| ansi::ansi_row(screen, row as u16, crop.left, crop.cols))
                .collect(),
        };
        let (cursor_row, cursor_col) = screen.cursor_position();
        let cursor_row = cursor_row.saturating_sub(layout.first_window_row());
        // After the last column is written vt100 keeps the cursor one past it
        // (a wrap is pending); a terminal shows it on the last column.
        let cursor_col = cursor_col.min(layout.cols.saturating_sub(1));
        let inside = (crop.top..crop.top + crop.rows).contains(&cursor_row)
            && (crop.left..crop.left + crop.cols).contains(&cursor_col);
        let title = &self.parser.callbacks().title;
        ScreenSnapshot {
            cols: crop.cols,
            rows: crop.rows,
            pane: cropped_to,
            cursor: Cursor {
                row: cursor_row.saturating_sub(crop.top),
                col: cursor_col.saturating_sub(crop.left),
                visible: inside && !screen.hide_cursor(),
            },
            alternate_screen: pane.alternate_on,
            title: if title.is_empty() {
                pane.title.clone()
            } else {
                title.clone()
            },
            lines,
        }
    }
}

/// `rect` cut to fit `window`: tmux's pane geometry and the client's layout
/// come from different moments and may briefly disagree.
fn clamp_rect(rect: PaneRect, window: PaneRect) -> PaneRect {
    let left = rect.left.min(window.cols);
    let top = rect.top.min(window.rows);
    PaneRect {
        left,
        top,
        cols: rect.cols.min(window.cols - left),
        rows: rect.rows.min(window.rows - top),
    }
}

fn parser_size(layout: Layout) -> (NonZeroU16, NonZeroU16) {
    let rows = NonZeroU16::new(layout.client_rows()).unwrap_or(NonZeroU16::MIN);
    let cols = NonZeroU16::new(layout.cols).unwrap_or(NonZeroU16::MIN);
    (rows, cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(status_top: bool) -> Layout {
        Layout {
            cols: 10,
            rows: 3,
            status_lines: 1,
            status_top,
        }
    }

    fn facts(title: &str) -> PaneFacts {
        PaneFacts {
            title: title.to_owned(),
            alternate_on: false,
            active_pane: None,
        }
    }

    #[test]
    fn status_line_is_cropped_at_the_bottom() {
        let mut screen = Screen::new(layout(false));
        screen.process(b"one\r\ntwo\r\nthree\r\n\x1b[7mSTATUS\x1b[m\x1b[2;2H");
        let snap = screen.snapshot(SnapshotFormat::Text, Region::Window, &facts("t"));
        assert_eq!(snap.lines, vec!["one", "two", "three"]);
        assert_eq!((snap.cursor.row, snap.cursor.col), (1, 1));
        assert_eq!(snap.title, "t");
    }

    #[test]
    fn a_pending_wrap_shows_the_cursor_on_the_last_column() {
        let mut screen = Screen::new(layout(false));
        screen.process(b"0123456789");
        let snap = screen.snapshot(SnapshotFormat::Text, Region::Window, &facts(""));
        assert_eq!((snap.cursor.row, snap.cursor.col), (0, 9));
        assert_eq!(snap.lines[0], "0123456789");
    }

    #[test]
    fn status_line_is_cropped_at_the_top() {
        let mut screen = Screen::new(layout(true));
        screen.process(b"STATUS\r\none\r\ntwo\r\nthree\x1b]2;hello\x07");
        let snap = screen.snapshot(SnapshotFormat::Text, Region::Window, &facts("t"));
        assert_eq!(snap.lines, vec!["one", "two", "three"]);
        assert_eq!(snap.cursor.row, 2);
        assert_eq!(snap.title, "hello");
    }

    #[test]
    fn ansi_keeps_colors() {
        let mut screen = Screen::new(layout(false));
        screen.process(b"\x1b[31mred\x1b[m plain\r\n\x1b[1mbold");
        let snap = screen.snapshot(SnapshotFormat::Ansi, Region::Window, &facts(""));
        // Each line is self-contained: it sets what it uses and resets after.
        assert_eq!(snap.lines[0], "\x1b[0;31mred\x1b[0m plain");
        assert_eq!(snap.lines[1], "\x1b[0;1mbold\x1b[m");
    }

    #[test]
    fn resize() {
        let mut screen = Screen::new(layout(false));
        screen.set_layout(Layout {
            cols: 20,
            rows: 5,
            status_lines: 0,
            status_top: false,
        });
        let snap = screen.snapshot(SnapshotFormat::Text, Region::Window, &facts(""));
        assert_eq!((snap.cols, snap.rows, snap.lines.len()), (20, 5, 5));
    }

    #[test]
    fn active_pane_crop() {
        let mut screen = Screen::new(Layout {
            cols: 11,
            rows: 3,
            status_lines: 1,
            status_top: true,
        });
        screen.process(b"STATUS\r\nleft \xe2\x94\x82right\r\nl2   \xe2\x94\x82r2\x1b[3;9H");
        let rect = |left, top, cols, rows| PaneRect {
            left,
            top,
            cols,
            rows,
        };
        let pane = |r| PaneFacts {
            active_pane: Some(r),
            ..facts("")
        };
        let snap = screen.snapshot(
            SnapshotFormat::Text,
            Region::ActivePane,
            &pane(rect(6, 0, 5, 3)),
        );
        assert_eq!(snap.lines, vec!["right", "r2", ""]);
        assert_eq!((snap.cols, snap.rows), (5, 3));
        assert_eq!(
            (snap.cursor.row, snap.cursor.col, snap.cursor.visible),
            (1, 2, true)
        );
        let snap = screen.snapshot(
            SnapshotFormat::Text,
            Region::ActivePane,
            &pane(rect(0, 0, 5, 3)),
        );
        assert_eq!(snap.lines, vec!["left", "l2", ""]);
        assert!(!snap.cursor.visible, "the cursor is in the other pane");
        // A stale rect larger than the window is cut to it.
        let snap = screen.snapshot(
            SnapshotFormat::Text,
            Region::ActivePane,
            &pane(rect(6, 1, 50, 50)),
        );
        assert_eq!((snap.cols, snap.rows), (5, 2));
        // Unknown geometry: the whole window.
        let snap = screen.snapshot(SnapshotFormat::Text, Region::ActivePane, &facts(""));
        assert_eq!(snap.lines[0], "left \u{2502}right");
    }
}
