//! `list-panes` in the discovery format: each session's name, size, status
//! line, current command, cwd and dead panes (every pane at startup, the
//! current window of a session discovery adopts after that).

use std::collections::BTreeMap;

use serde::Serialize;

use super::format::{free_text, read_free_text};

/// Fields are tab-separated, one pane a line; a tab is a control
/// character, which no session name tmuxd tracks may contain (see
/// `names`), and tmux escapes the free-text fields (process name, cwd,
/// title: `free_text!`), so a tab or newline in them cannot shift a field.
pub const LIST_PANES_FORMAT: &str = concat!(
    "#{session_name}\t#{window_active}\t#{pane_active}\t#{window_width}\t#{window_height}\t",
    free_text!("pane_current_command"),
    "\t",
    free_text!("pane_current_path"),
    "\t#{pane_dead}\t#{pane_pid}\t#{status}\t#{status-position}\t",
    free_text!("pane_title"),
    "\t#{alternate_on}\t#{pane_left}\t#{pane_top}\t#{pane_width}\t#{pane_height}"
);

/// One line of `list-panes` in `LIST_PANES_FORMAT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaneInfo {
    pub session_name: String,
    pub window_active: bool,
    pub pane_active: bool,
    pub window_width: u16,
    pub window_height: u16,
    pub current_command: String,
    pub current_path: String,
    pub dead: bool,
    pub pid: Option<u32>,
    /// Rows the session's status line takes (the `status` option: off, on, 2-5).
    pub status_lines: u16,
    /// Whether the status line is drawn above the window.
    pub status_top: bool,
    pub title: String,
    /// Whether the pane's program is on its alternate screen (vim, less, top).
    pub alternate_on: bool,
    /// Where the pane sits in its window; `None` when tmux did not say.
    pub rect: Option<PaneRect>,
}

/// A pane's place in its window, in cells (borders excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PaneRect {
    pub left: u16,
    pub top: u16,
    pub cols: u16,
    pub rows: u16,
}

/// What tmuxd needs to know about one session: its current window's active pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionView {
    pub name: String,
    /// Window size, which is what tmux draws for tmuxd's client.
    pub cols: u16,
    pub rows: u16,
    pub status_lines: u16,
    pub status_top: bool,
    pub current_command: String,
    pub cwd: String,
    pub title: String,
    /// Whether the active pane's process has ended (only with remain-on-exit).
    pub dead: bool,
    pub alternate_on: bool,
    /// The pane's first process (usually its shell), for foreground checks.
    pub pid: Option<u32>,
    /// The active pane's place in the window (for `?pane=active` snapshots).
    pub active_pane: Option<PaneRect>,
}

impl SessionView {
    /// Rows of the terminal tmuxd's client needs: the window plus its status line.
    pub fn client_rows(&self) -> u16 {
        self.rows.saturating_add(self.status_lines)
    }
}

/// Lines that do not parse (a name holding a tab, a future tmux) are skipped.
pub fn parse_list_panes(out: &str) -> Vec<PaneInfo> {
    out.lines().filter_map(parse_pane_line).collect()
}

fn parse_pane_line(line: &str) -> Option<PaneInfo> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [
        name,
        window_active,
        pane_active,
        width,
        height,
        command,
        path,
        dead,
        pid,
        status,
        position,
        title,
        alternate,
        left,
        top,
        pane_width,
        pane_height,
    ] = fields.as_slice()
    else {
        return None;
    };
    Some(PaneInfo {
        session_name: (*name).to_owned(),
        window_active: *window_active == "1",
        pane_active: *pane_active == "1",
        window_width: width.parse().ok()?,
        window_height: height.parse().ok()?,
        current_command: read_free_text(command)?,
        current_path: read_free_text(path)?,
        dead: *dead == "1",
        pid: pid.parse().ok(),
        status_lines: parse_status_lines(status),
        status_top: *position == "top",
        title: read_free_text(title)?,
        alternate_on: *alternate == "1",
        rect: parse_rect([left, top, pane_width, pane_height]),
    })
}

/// A fake or older tmux may print some geometry fields empty: a missing
/// offset is 0 (a lone pane), a missing size means the rect is unknown.
fn parse_rect([left, top, cols, rows]: [&str; 4]) -> Option<PaneRect> {
    let offset = |v: &str| {
        if v.is_empty() {
            Some(0)
        } else {
            v.parse().ok()
        }
    };
    Some(PaneRect {
        left: offset(left)?,
        top: offset(top)?,
        cols: cols.parse().ok()?,
        rows: rows.parse().ok()?,
    })
}

fn parse_status_lines(status: &str) -> u16 {
    match status {
        "off" | "0" | "" => 0,
        "on" => 1,
        n => n.parse().unwrap_or(1),
    }
}

/// One view per session, from the active pane of its active window.
pub fn session_views(panes: &[PaneInfo]) -> BTreeMap<String, SessionView> {
    panes
        .iter()
        .filter(|p| p.window_active && p.pane_active)
        .map(|p| {
            let view = SessionView {
                name: p.session_name.clone(),
                cols: p.window_width,
                rows: p.window_height,
                status_lines: p.status_lines,
                status_top: p.status_top,
                current_command: p.current_command.clone(),
                cwd: p.current_path.clone(),
                title: p.title.clone(),
                dead: p.dead,
                alternate_on: p.alternate_on,
                pid: p.pid,
                active_pane: p.rect,
            };
            (p.session_name.clone(), view)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_panes_and_picks_the_active_one() {
        let out = "build\t1\t0\t200\t50\tbash\t/src\t0\t11\ton\tbottom\thost\t0\t0\t0\t100\t50\n\
                   build\t1\t1\t200\t50\tcargo\t/src/x\t0\t12\ton\tbottom\thost\t0\t101\t0\t99\t50\n\
                   build\t0\t1\t200\t50\tvim\t/\t0\t13\ton\tbottom\thost\t1\t0\t0\t200\t50\n\
                   we ird\t1\t1\t80\t24\tbash\t/tmp\t1\t14\t2\ttop\tt\t1\t\t\t80\t24\n\
                   garbage line\n";
        let panes = parse_list_panes(out);
        assert_eq!(panes.len(), 4);
        let views = session_views(&panes);
        assert_eq!(views.len(), 2);
        let build = &views["build"];
        assert_eq!((build.cols, build.rows, build.client_rows()), (200, 50, 51));
        assert_eq!(build.current_command, "cargo");
        assert_eq!(build.cwd, "/src/x");
        let weird = &views["we ird"];
        assert!(weird.dead && weird.status_top && weird.alternate_on);
        assert!(!build.alternate_on);
        assert_eq!(weird.status_lines, 2);
        let rect = |left, top, cols, rows| PaneRect {
            left,
            top,
            cols,
            rows,
        };
        assert_eq!(build.active_pane, Some(rect(101, 0, 99, 50)));
        assert_eq!(weird.active_pane, Some(rect(0, 0, 80, 24)));
    }

    /// A process name, cwd or title holding a tab or newline arrives
    /// escaped (`free_text!`): the row reads, the text is as it was.
    #[test]
    fn escaped_fields_read_back_whole() {
        let out =
            "s\t1\t1\t80\t24\tsh\\tx\t/r/a\\tb\\nc\\\\\t0\t9\ton\tbottom\tt\\t\t0\t0\t0\t80\t24\n";
        let panes = parse_list_panes(out);
        assert_eq!(panes.len(), 1, "{out:?}");
        assert_eq!(panes[0].current_command, "sh\tx");
        assert_eq!(panes[0].current_path, "/r/a\tb\nc\\");
        assert_eq!(panes[0].title, "t\t");
        assert_eq!(panes[0].pid, Some(9));
    }

    #[test]
    fn pane_geometry_tolerates_empty_fields() {
        for (fields, rect) in [
            (["3", "4", "10", "5"], Some((3, 4, 10, 5))),
            (["", "", "10", "5"], Some((0, 0, 10, 5))),
            (["", "", "", ""], None),
            (["x", "0", "10", "5"], None),
            (["0", "0", "10", ""], None),
        ] {
            let want = rect.map(|(left, top, cols, rows)| PaneRect {
                left,
                top,
                cols,
                rows,
            });
            assert_eq!(parse_rect(fields), want, "{fields:?}");
        }
    }

    #[test]
    fn status_option_values() {
        for (value, lines) in [("off", 0), ("on", 1), ("2", 2), ("5", 5), ("", 0)] {
            assert_eq!(parse_status_lines(value), lines, "{value}");
        }
    }
}
