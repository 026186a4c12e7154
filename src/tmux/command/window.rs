//! `list-panes` of a session's current window, with everything a session
//! actor needs to lay the window out and seed each pane's screen.

use super::{PaneScope, ParseError, Target, TmuxCommand, owned, text_lines};
use crate::tmux::PaneRect;
use crate::tmux::control::{PaneId, WindowId};

/// Tab-separated; the title comes last, as it alone may hold a tab.
const FORMAT: &str = "#{window_id}\t#{window_width}\t#{window_height}\t#{pane_id}\t#{pane_active}\t#{pane_left}\t#{pane_top}\t#{pane_width}\t#{pane_height}\t#{pane_pid}\t#{pane_dead}\t#{cursor_x}\t#{cursor_y}\t#{cursor_flag}\t#{alternate_on}\t#{scroll_region_upper}\t#{scroll_region_lower}\t#{origin_flag}\t#{pane_title}";

/// The panes of the current window of session `=NAME`.
#[derive(Clone, Debug)]
pub struct WindowPanes {
    pub session: String,
}

/// One pane of the window, as tmux has it now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaneRow {
    pub window: WindowId,
    pub window_cols: u16,
    pub window_rows: u16,
    pub pane: PaneId,
    pub active: bool,
    pub rect: PaneRect,
    pub pid: Option<u32>,
    pub dead: bool,
    pub cursor_x: u16,
    pub cursor_y: u16,
    pub cursor_visible: bool,
    pub alternate_on: bool,
    pub scroll_upper: u16,
    pub scroll_lower: u16,
    pub origin_mode: bool,
    pub title: String,
}

impl TmuxCommand for WindowPanes {
    type Output = Vec<PaneRow>;

    fn args(&self) -> Vec<String> {
        let mut args = owned(&["list-panes"]);
        args.extend(PaneScope::Window(Target::Session(self.session.clone())).args());
        args.extend(["-F".to_owned(), FORMAT.to_owned()]);
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Vec<PaneRow>, ParseError> {
        text_lines(lines)
            .iter()
            .map(|line| {
                parse_row(line).ok_or_else(|| {
                    ParseError::new("list-panes", format!("cannot read pane line {line:?}"))
                })
            })
            .collect()
    }
}

fn parse_row(line: &str) -> Option<PaneRow> {
    let fields: Vec<&str> = line.splitn(19, '\t').collect();
    let [
        window,
        window_cols,
        window_rows,
        pane,
        active,
        left,
        top,
        cols,
        rows,
        pid,
        dead,
        cursor_x,
        cursor_y,
        cursor_flag,
        alternate,
        upper,
        lower,
        origin,
        title,
    ] = fields.as_slice()
    else {
        return None;
    };
    let flag = |v: &str| v == "1";
    // An empty number (a fake or older tmux) reads as 0.
    let num = |v: &str| -> Option<u16> {
        if v.is_empty() {
            Some(0)
        } else {
            v.parse().ok()
        }
    };
    Some(PaneRow {
        window: window.parse().ok()?,
        window_cols: window_cols.parse().ok()?,
        window_rows: window_rows.parse().ok()?,
        pane: pane.parse().ok()?,
        active: flag(active),
        rect: PaneRect {
            left: num(left)?,
            top: num(top)?,
            cols: cols.parse().ok()?,
            rows: rows.parse().ok()?,
        },
        pid: pid.parse().ok(),
        dead: flag(dead),
        cursor_x: num(cursor_x)?,
        cursor_y: num(cursor_y)?,
        cursor_visible: flag(cursor_flag),
        alternate_on: flag(alternate),
        scroll_upper: num(upper)?,
        scroll_lower: num(lower)?,
        origin_mode: flag(origin),
        title: (*title).to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_titles_keep_their_tabs() {
        let line =
            "@3\t200\t50\t%7\t1\t101\t0\t99\t50\t4242\t0\t5\t9\t1\t1\t0\t49\t0\thost\twith tab";
        let row = parse_row(line).unwrap();
        assert_eq!(row.window, WindowId(3));
        assert_eq!((row.window_cols, row.window_rows), (200, 50));
        assert_eq!(row.pane, PaneId(7));
        assert!(row.active && row.cursor_visible && row.alternate_on && !row.dead);
        assert_eq!(
            row.rect,
            PaneRect {
                left: 101,
                top: 0,
                cols: 99,
                rows: 50
            }
        );
        assert_eq!((row.cursor_x, row.cursor_y, row.pid), (5, 9, Some(4242)));
        assert_eq!(row.title, "host\twith tab");
        assert!(parse_row("@3\t200").is_none());
        let command = WindowPanes {
            session: "a b".into(),
        };
        assert_eq!(command.args()[..3], ["list-panes", "-t", "=a b:"]);
        assert!(command.parse(&[b"junk".to_vec()]).is_err());
    }
}
