//! `list-panes` of a session's current window, with everything a session
//! actor needs to lay the window out and seed each pane's screen.

use super::terminal::{PANE_STATE_FIELDS, PaneState, flag, number, pane_state_format};
use super::{PaneScope, ParseError, Target, TmuxCommand, owned, text_lines};
use crate::tmux::PaneRect;
use crate::tmux::control::{PaneId, WindowId};

/// Tab-separated; the pane's terminal state (with the title) comes last.
const FORMAT: &str = concat!(
    "#{window_id}\t#{window_width}\t#{window_height}\t#{pane_id}\t#{pane_active}\t#{pane_pid}\t#{pane_dead}\t#{pane_left}\t#{pane_top}\t",
    pane_state_format!()
);

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
    /// Its terminal: size (as in `rect`), cursor, modes, title.
    pub state: PaneState,
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
        WindowPanes::rows(lines)
    }
}

impl WindowPanes {
    /// Reads a reply to this command (whichever session it named).
    pub fn rows(lines: &[Vec<u8>]) -> Result<Vec<PaneRow>, ParseError> {
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
    let fields: Vec<&str> = line.splitn(9 + PANE_STATE_FIELDS, '\t').collect();
    let [
        window,
        window_cols,
        window_rows,
        pane,
        active,
        pid,
        dead,
        left,
        top,
        state @ ..,
    ] = fields.as_slice()
    else {
        return None;
    };
    let state = PaneState::parse(state)?;
    Some(PaneRow {
        window: window.parse().ok()?,
        window_cols: window_cols.parse().ok()?,
        window_rows: window_rows.parse().ok()?,
        pane: pane.parse().ok()?,
        active: flag(active),
        rect: PaneRect {
            left: number(left)?,
            top: number(top)?,
            cols: state.cols,
            rows: state.rows,
        },
        pid: pid.parse().ok(),
        dead: flag(dead),
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_titles_keep_their_tabs() {
        let line =
            "@3\t200\t50\t%7\t1\t4242\t0\t101\t0\t99\t50\t5\t9\t1\t1\t0\t49\t0\thost\twith tab";
        let row = parse_row(line).unwrap();
        assert_eq!(row.window, WindowId(3));
        assert_eq!((row.window_cols, row.window_rows), (200, 50));
        assert_eq!(row.pane, PaneId(7));
        assert!(row.active && row.state.cursor_visible && row.state.alternate_on && !row.dead);
        assert_eq!(
            row.rect,
            PaneRect {
                left: 101,
                top: 0,
                cols: 99,
                rows: 50
            }
        );
        assert_eq!(
            (row.state.cursor_x, row.state.cursor_y, row.pid),
            (5, 9, Some(4242))
        );
        assert_eq!(row.state.title, "host\twith tab");
        assert!(parse_row("@3\t200").is_none());
        let command = WindowPanes {
            session: "a b".into(),
        };
        assert_eq!(command.args()[..3], ["list-panes", "-t", "=a b:"]);
        assert!(command.parse(&[b"junk".to_vec()]).is_err());
    }
}
