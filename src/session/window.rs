//! A window's snapshot, composed from its panes' screens at the places
//! tmux's layout gives them, with pane borders between them; or one pane
//! alone (`?pane=active`), as `capture-pane` shows it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::ansi;
use super::pane::PaneScreen;
use crate::tmux::PaneRect;
use crate::tmux::control::PaneId;

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

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
}

/// The window as its panes show it, from memory.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ScreenSnapshot {
    pub cols: u16,
    pub rows: u16,
    /// The pane this snapshot is cropped to (`?pane=active`), in window cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<PaneRect>,
    /// Relative to the snapshot's own top-left cell.
    pub cursor: Cursor,
    pub alternate_screen: bool,
    pub title: String,
    pub lines: Vec<String>,
    /// The rows whose text goes on in the next row (the program wrote past
    /// the pane's width): where a row belongs to a pane as wide as the
    /// snapshot. `wait --match` reads lines as the program printed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wrapped: Vec<u16>,
    /// A person has a pane of the window in copy mode (or another mode).
    /// The snapshot still shows the live screen, as `capture-pane` does;
    /// this says where they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_mode: Option<CopyMode>,
}

/// Where a person is in a pane's copy mode (tmux's `[N/M]`).
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct CopyMode {
    /// The pane (`%N` without the `%`).
    pub pane: u32,
    /// tmux's name of the mode: `copy-mode`, `view-mode`, `tree-mode`...
    pub mode: String,
    /// How many lines above the live screen the view's top row is (N).
    pub position: u32,
    /// Lines of history the pane keeps (M).
    pub history: u32,
}

/// A window's size and where each of its panes sits (tmux's layout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowGeometry {
    pub cols: u16,
    pub rows: u16,
    /// Each pane and its place.
    pub panes: Vec<(PaneId, PaneRect)>,
    pub active: PaneId,
}

/// No panes yet (before tmux's first layout), `%0` named active.
impl Default for WindowGeometry {
    fn default() -> Self {
        WindowGeometry {
            cols: 0,
            rows: 0,
            panes: Vec::new(),
            active: PaneId(0),
        }
    }
}

impl WindowGeometry {
    /// A window of `cols` x `rows` holding one pane, `%0`, over all of it.
    pub fn single_pane(cols: u16, rows: u16) -> Self {
        let rect = PaneRect {
            left: 0,
            top: 0,
            cols,
            rows,
        };
        WindowGeometry {
            cols,
            rows,
            panes: vec![(PaneId(0), rect)],
            active: PaneId(0),
        }
    }

    pub fn rect_of(&self, pane: PaneId) -> Option<PaneRect> {
        self.panes
            .iter()
            .find(|(id, _)| *id == pane)
            .map(|(_, r)| *r)
    }
}

/// The window's rows (or the active pane's) from the panes' screens.
pub fn snapshot(
    geometry: &WindowGeometry,
    panes: &BTreeMap<PaneId, &PaneScreen>,
    format: SnapshotFormat,
    region: Region,
) -> ScreenSnapshot {
    let active = panes.get(&geometry.active).copied();
    let active_rect = geometry.rect_of(geometry.active).unwrap_or(PaneRect {
        left: 0,
        top: 0,
        cols: geometry.cols,
        rows: geometry.rows,
    });
    let (lines, crop, wrapped) = match region {
        Region::ActivePane => {
            let lines = match active {
                Some(pane) => pane_rows(pane, active_rect, format),
                None => vec![String::new(); usize::from(active_rect.rows)],
            };
            let rect = PaneRect {
                top: 0,
                left: 0,
                ..active_rect
            };
            let wrapped = active.map_or_else(Vec::new, |pane| wrapped_rows(pane, rect));
            (lines, Some(active_rect), wrapped)
        }
        Region::Window => {
            let wrapped: Vec<u16> = geometry
                .panes
                .iter()
                .filter(|(_, rect)| rect.left == 0 && rect.cols == geometry.cols)
                .filter_map(|(id, rect)| Some(wrapped_rows(panes.get(id)?, *rect)))
                .flatten()
                .collect();
            (
                window_rows(geometry, panes, format, &wrapped),
                None,
                wrapped,
            )
        }
    };
    let origin = crop.map_or((0, 0), |r| (r.top, r.left));
    let cursor = match active {
        Some(pane) => {
            let screen = pane.screen();
            let (row, col) = screen.cursor_position();
            // After the last column is written the cursor is one past it
            // (a wrap is pending); a terminal shows it on the last.
            let col = col.min(active_rect.cols.saturating_sub(1));
            Cursor {
                row: row + active_rect.top - origin.0,
                col: col + active_rect.left - origin.1,
                visible: !screen.hide_cursor(),
            }
        }
        None => Cursor {
            row: 0,
            col: 0,
            visible: false,
        },
    };
    let (cols, rows) = crop.map_or((geometry.cols, geometry.rows), |r| (r.cols, r.rows));
    ScreenSnapshot {
        cols,
        rows,
        pane: crop,
        cursor,
        alternate_screen: active.is_some_and(|p| p.screen().alternate_screen()),
        title: active.map(|p| p.title().to_owned()).unwrap_or_default(),
        lines,
        wrapped,
        copy_mode: None,
    }
}

/// The rows of `pane`, placed at `rect`, that wrap into the next one.
fn wrapped_rows(pane: &PaneScreen, rect: PaneRect) -> Vec<u16> {
    let screen = pane.screen();
    (0..rect.rows.saturating_sub(1))
        .filter(|&row| screen.row_wrapped(row))
        .map(|row| rect.top + row)
        .collect()
}

/// One pane's rows, the size of its place in the window; a row that wraps
/// keeps its trailing blanks (they are part of the line it goes on in).
fn pane_rows(pane: &PaneScreen, rect: PaneRect, format: SnapshotFormat) -> Vec<String> {
    let screen = pane.screen();
    (0..rect.rows)
        .map(|row| {
            let trim = !screen.row_wrapped(row);
            match format {
                SnapshotFormat::Text => ansi::text_row(screen, row, 0, rect.cols, trim),
                SnapshotFormat::Ansi => ansi::ansi_row(screen, row, 0, rect.cols, trim),
            }
        })
        .collect()
}

/// Every row of the window: each pane's slice where it sits, borders where
/// none does.
fn window_rows(
    geometry: &WindowGeometry,
    panes: &BTreeMap<PaneId, &PaneScreen>,
    format: SnapshotFormat,
    wrapped: &[u16],
) -> Vec<String> {
    if let [(id, rect)] = geometry.panes.as_slice()
        && let Some(pane) = panes.get(id)
    {
        return pane_rows(pane, *rect, format);
    }
    (0..geometry.rows)
        .map(|y| {
            let mut line = String::new();
            let mut x = 0;
            while x < geometry.cols {
                let covering = geometry.panes.iter().find(|(_, r)| {
                    (r.top..r.top + r.rows).contains(&y) && (r.left..r.left + r.cols).contains(&x)
                });
                match covering {
                    Some((id, rect)) => {
                        let row = y - rect.top;
                        let width = rect.cols - (x - rect.left);
                        let slice = match (panes.get(id), format) {
                            (Some(p), SnapshotFormat::Text) => {
                                ansi::text_row(p.screen(), row, x - rect.left, width, false)
                            }
                            (Some(p), SnapshotFormat::Ansi) => {
                                ansi::ansi_row(p.screen(), row, x - rect.left, width, false)
                            }
                            (None, _) => " ".repeat(usize::from(width)),
                        };
                        line.push_str(&slice);
                        x += width;
                    }
                    None => {
                        line.push(border_at(geometry, x, y));
                        x += 1;
                    }
                }
            }
            if !wrapped.contains(&y) {
                let trimmed = line.trim_end_matches(' ').len();
                line.truncate(trimmed);
            }
            line
        })
        .collect()
}

/// The border character tmux draws in a cell no pane covers.
fn border_at(geometry: &WindowGeometry, x: u16, y: u16) -> char {
    let beside = |r: &PaneRect| {
        (r.top..r.top + r.rows).contains(&y) && (x + 1 == r.left || x == r.left + r.cols)
    };
    let above_or_below = |r: &PaneRect| {
        (r.left..r.left + r.cols).contains(&x) && (y + 1 == r.top || y == r.top + r.rows)
    };
    let vertical = geometry.panes.iter().any(|(_, r)| beside(r));
    let horizontal = geometry.panes.iter().any(|(_, r)| above_or_below(r));
    match (vertical, horizontal) {
        (true, true) => '┼',
        (true, false) => '│',
        (false, true) => '─',
        (false, false) => {
            // A corner where borders meet without touching a pane.
            if geometry.panes.is_empty() {
                ' '
            } else {
                '┼'
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::pane::PaneScreen;

    fn rect(left: u16, top: u16, cols: u16, rows: u16) -> PaneRect {
        PaneRect {
            left,
            top,
            cols,
            rows,
        }
    }

    fn pane(cols: u16, rows: u16, bytes: &[u8]) -> PaneScreen {
        let mut pane = PaneScreen::new(cols, rows);
        pane.process(bytes);
        pane
    }

    fn by_id(panes: &[(u32, PaneScreen)]) -> BTreeMap<PaneId, &PaneScreen> {
        panes.iter().map(|(id, p)| (PaneId(*id), p)).collect()
    }

    #[test]
    fn one_pane_is_the_window() {
        let geometry = WindowGeometry {
            cols: 10,
            rows: 3,
            panes: vec![(PaneId(0), rect(0, 0, 10, 3))],
            active: PaneId(0),
        };
        let owned = [(0, pane(10, 3, b"one\r\ntwo\x1b]2;t\x07"))];
        let panes = by_id(&owned);
        let snap = snapshot(&geometry, &panes, SnapshotFormat::Text, Region::Window);
        assert_eq!(snap.lines, ["one", "two", ""]);
        assert_eq!((snap.cursor.row, snap.cursor.col), (1, 3));
        assert_eq!(snap.title, "t");
        let ansi = snapshot(&geometry, &panes, SnapshotFormat::Ansi, Region::Window);
        assert_eq!(ansi.lines, ["one", "two", ""]);
    }

    #[test]
    fn two_panes_side_by_side_with_a_border() {
        let geometry = WindowGeometry {
            cols: 11,
            rows: 2,
            panes: vec![(PaneId(1), rect(0, 0, 5, 2)), (PaneId(2), rect(6, 0, 5, 2))],
            active: PaneId(2),
        };
        let owned = [
            (1, pane(5, 2, b"left\r\nl2")),
            (2, pane(5, 2, b"right\r\nr2")),
        ];
        let panes = by_id(&owned);
        let snap = snapshot(&geometry, &panes, SnapshotFormat::Text, Region::Window);
        assert_eq!(snap.lines, ["left \u{2502}right", "l2   \u{2502}r2"]);
        assert_eq!((snap.cursor.row, snap.cursor.col), (1, 8));
        let pane = snapshot(&geometry, &panes, SnapshotFormat::Text, Region::ActivePane);
        assert_eq!(pane.lines, ["right", "r2"]);
        assert_eq!((pane.cols, pane.rows), (5, 2));
        assert_eq!((pane.cursor.row, pane.cursor.col), (1, 2));
        let ansi = snapshot(&geometry, &panes, SnapshotFormat::Ansi, Region::Window);
        assert_eq!(ansi.lines[0], "left \u{2502}right");
    }

    #[test]
    fn stacked_panes_and_a_pending_wrap() {
        let geometry = WindowGeometry {
            cols: 4,
            rows: 3,
            panes: vec![(PaneId(1), rect(0, 0, 4, 1)), (PaneId(2), rect(0, 2, 4, 1))],
            active: PaneId(1),
        };
        let owned = [(1, pane(4, 1, b"abcd")), (2, pane(4, 1, b"x"))];
        let panes = by_id(&owned);
        let snap = snapshot(&geometry, &panes, SnapshotFormat::Text, Region::Window);
        assert_eq!(snap.lines, ["abcd", "\u{2500}".repeat(4).as_str(), "x"]);
        assert_eq!((snap.cursor.row, snap.cursor.col), (0, 3));
    }
}
