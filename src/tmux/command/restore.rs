//! What it takes to bring a session back after its tmux server is lost:
//! reading a session's windows and panes (one `list-panes -s`, the same
//! one a session actor sends to watch its panes' processes), and the tmux
//! commands that make them again: windows at their indices and sizes,
//! panes in their cwds, then each window's saved layout.

use std::collections::BTreeMap;

use super::{ParseError, TmuxCommand, expect_empty, owned};
use crate::tmux::control::parse_layout;
use crate::tmux::format::{Literal, free_text, read_free_text};
use crate::tmux::{Blueprint, PaneBlueprint, WindowBlueprint};

/// One row a pane, fields tab-separated; the free-text ones (cwd, window
/// name, start command) escaped by tmux so that no tab or newline in them
/// reaches the row (`free_text!`).
pub const PANE_PLAN_FORMAT: &str = concat!(
    "#{window_index}\t#{window_active}\t#{window_width}\t#{window_height}\t#{window_layout}\t#{pane_index}\t#{pane_id}\t#{pane_active}\t#{pane_pid}\t",
    free_text!("pane_current_path"),
    "\t",
    free_text!("window_name"),
    "\t",
    free_text!("pane_start_command")
);

/// One pane as `PANE_PLAN_FORMAT` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PanePlanRow {
    pub window_index: u32,
    pub window_active: bool,
    pub cols: u16,
    pub rows: u16,
    pub layout: String,
    pub pane_index: u32,
    /// `%N` without the `%`.
    pub pane_id: u32,
    pub pane_active: bool,
    pub pid: Option<u32>,
    pub cwd: String,
    pub window_name: String,
    /// The argv the pane was started with (`read_start_command`); `None`
    /// when tmux started its default shell, or printed what does not read.
    pub start_argv: Option<Vec<String>>,
}

/// A row, or `None` when it does not read (a fake tmux leaves fields empty).
pub fn parse_plan_row(line: &str) -> Option<PanePlanRow> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [
        window,
        window_active,
        cols,
        rows,
        layout,
        pane_index,
        pane_id,
        pane_active,
        pid,
        cwd,
        name,
        start,
    ] = fields.as_slice()
    else {
        return None;
    };
    Some(PanePlanRow {
        window_index: window.parse().ok()?,
        window_active: *window_active == "1",
        cols: cols.parse().ok()?,
        rows: rows.parse().ok()?,
        layout: (*layout).to_owned(),
        pane_index: pane_index.parse().ok()?,
        pane_id: pane_id.strip_prefix('%')?.parse().ok()?,
        pane_active: *pane_active == "1",
        pid: pid.parse().ok(),
        cwd: read_free_text(cwd)?,
        window_name: read_window_name(&read_free_text(name)?),
        start_argv: read_start_command(&read_free_text(start)?),
    })
}

/// The session's blueprint from its rows; `command_line_of(pid)` reads a
/// process's command line (`/proc/PID/cmdline`) for a pane tmux started
/// without a command. `None` when there are no rows.
pub fn blueprint_of(
    rows: &[PanePlanRow],
    command_line_of: impl Fn(u32) -> Option<String>,
) -> Option<Blueprint> {
    let mut windows: BTreeMap<u32, Vec<&PanePlanRow>> = BTreeMap::new();
    for row in rows {
        windows.entry(row.window_index).or_default().push(row);
    }
    let windows: Vec<WindowBlueprint> = windows
        .into_values()
        .map(|mut panes| {
            let first = panes[0];
            sort_in_layout_order(&mut panes, &first.layout);
            WindowBlueprint {
                index: first.window_index,
                name: first.window_name.clone(),
                layout: first.layout.clone(),
                cols: first.cols,
                rows: first.rows,
                active: first.window_active,
                panes: panes
                    .iter()
                    .map(|row| {
                        let command_line = row
                            .start_argv
                            .as_ref()
                            .map(|argv| argv.join(" "))
                            .or_else(|| row.pid.and_then(&command_line_of))
                            .unwrap_or_default();
                        PaneBlueprint {
                            index: row.pane_index,
                            cwd: row.cwd.clone(),
                            command_line,
                            start_argv: row.start_argv.clone(),
                            legacy_start_command: None,
                            active: row.pane_active,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    (!windows.is_empty()).then_some(Blueprint { windows })
}

/// `select-layout` gives a window's panes the layout's cells in the order
/// the layout lists them: the saved panes are kept in that order, so each
/// lands in its own cell. An unreadable layout keeps tmux's pane order.
fn sort_in_layout_order(panes: &mut [&PanePlanRow], layout: &str) {
    panes.sort_by_key(|p| p.pane_index);
    if let Ok(cell) = parse_layout(layout) {
        let order: Vec<u32> = cell.panes().iter().map(|(id, _)| id.0).collect();
        panes.sort_by_key(|p| order.iter().position(|id| *id == p.pane_id));
    }
}

/// A process's command line from `/proc/PID/cmdline` (NUL-separated words,
/// joined with spaces).
pub fn proc_command_line(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<String> = bytes
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The argv of a pane's `#{pane_start_command}`: tmux prints each word
/// as `args_escape` (`arguments.c`, 3.3a to 3.7c) quotes it, joined with
/// spaces: bare, in double or single quotes, or one character after a
/// `\`; inside, `vis(3)` escapes (`\\`, `\"`, `\$`, `\t`, `\n`, `\ooo`
/// octal bytes). tmux escapes every ASCII control character, so text that
/// holds one raw is not its quoting (a field shifted into this one) and
/// reads as `None`, as does an empty or unterminated one.
pub fn read_start_command(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Vec<u8> = Vec::new();
    let mut in_word = false;
    let mut bytes = text.bytes().peekable();
    while let Some(b) = bytes.next() {
        match b {
            b' ' => {
                if in_word {
                    words.push(String::from_utf8_lossy(&std::mem::take(&mut word)).into_owned());
                    in_word = false;
                }
            }
            b'"' | b'\'' => {
                in_word = true;
                loop {
                    match bytes.next()? {
                        close if close == b => break,
                        b'\\' => word.push(unvis(&mut bytes)?),
                        c if c.is_ascii_control() => return None,
                        c => word.push(c),
                    }
                }
            }
            b'\\' => {
                in_word = true;
                word.push(unvis(&mut bytes)?);
            }
            c if c.is_ascii_control() => return None,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(String::from_utf8_lossy(&word).into_owned());
    }
    (!words.is_empty()).then_some(words)
}

/// A window's name as given to `rename-window`: tmux keeps every name
/// it sets `vis(3)`-encoded (`window_set_name`, 3.3a to 3.7c: a tab as
/// `\t`, `\` as `\\`) and encodes what it is given, so the encoded name
/// read back is decoded once, or each restore would add a layer.
fn read_window_name(text: &str) -> String {
    let mut name = Vec::with_capacity(text.len());
    let mut bytes = text.bytes().peekable();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => name.push(unvis(&mut bytes).unwrap_or(b'\\')),
            c => name.push(c),
        }
    }
    String::from_utf8_lossy(&name).into_owned()
}

/// The byte a `vis(3)` escape (after its `\`) stands for.
fn unvis(bytes: &mut std::iter::Peekable<impl Iterator<Item = u8>>) -> Option<u8> {
    let b = bytes.next()?;
    Some(match b {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'b' => 0x08,
        b'a' => 0x07,
        b'v' => 0x0b,
        b'f' => 0x0c,
        b's' => b' ',
        b'0'..=b'7' => {
            let mut value = u32::from(b - b'0');
            for _ in 0..2 {
                match bytes.peek() {
                    Some(d @ b'0'..=b'7') => {
                        value = value * 8 + u32::from(d - b'0');
                        bytes.next();
                    }
                    _ => break,
                }
            }
            u8::try_from(value).ok()?
        }
        c if c.is_ascii_control() => return None,
        c => c,
    })
}

/// What one restored pane runs: `None` is the default shell.
pub type Launch = Option<Vec<String>>;

/// The first pane to make: the session itself (`new-session`), in the
/// first window.
pub struct FirstPane<'a> {
    pub cwd: &'a str,
    pub cols: u16,
    pub rows: u16,
    pub launch: &'a Launch,
}

/// The first window's first pane, which `new-session` makes.
pub fn first_pane<'a>(blueprint: &'a Blueprint, launches: &'a [Vec<Launch>]) -> FirstPane<'a> {
    let window = &blueprint.windows[0];
    FirstPane {
        cwd: window.panes.first().map_or("", |p| p.cwd.as_str()),
        cols: window.cols,
        rows: window.rows,
        launch: &launches[0][0],
    }
}

/// `=NAME:INDEX`.
fn window_target(name: &str, index: u32) -> String {
    format!("={name}:{index}")
}

/// One step of rebuilding a session (`rebuild_commands`); a window is
/// `target` (`=NAME:INDEX`), a pane `=NAME:INDEX.PANE`. None prints anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RebuildStep {
    /// `move-window -s FROM -t TO`: the window `new-session` made, to its saved index.
    MoveWindow { from: String, to: String },
    /// `new-window -d -t TARGET [-c CWD] [-- LAUNCH...]`
    NewWindow {
        target: String,
        cwd: Literal,
        launch: Launch,
    },
    /// `set-option -q -w -t TARGET NAME VALUE`: keeping the window's exits
    /// as `new-session` does for the first (see `NewSession::keep_exit`).
    KeepExits {
        target: String,
        name: &'static str,
        value: &'static str,
    },
    /// `rename-window -t TARGET -- NAME`
    RenameWindow { target: String, name: Literal },
    /// `split-window -t TARGET [-c CWD] [-- LAUNCH...]`
    SplitWindow {
        target: String,
        cwd: Literal,
        launch: Launch,
    },
    /// `select-layout -t TARGET LAYOUT`
    SelectLayout { target: String, layout: String },
    /// `resize-window -t TARGET -x COLS -y ROWS`
    ResizeWindow {
        target: String,
        cols: u16,
        rows: u16,
    },
    /// `select-pane -t PANE`
    SelectPane { pane: String },
    /// `select-window -t TARGET`
    SelectWindow { target: String },
}

impl RebuildStep {
    fn name(&self) -> &'static str {
        match self {
            RebuildStep::MoveWindow { .. } => "move-window",
            RebuildStep::NewWindow { .. } => "new-window",
            RebuildStep::KeepExits { .. } => "set-option",
            RebuildStep::RenameWindow { .. } => "rename-window",
            RebuildStep::SplitWindow { .. } => "split-window",
            RebuildStep::SelectLayout { .. } => "select-layout",
            RebuildStep::ResizeWindow { .. } => "resize-window",
            RebuildStep::SelectPane { .. } => "select-pane",
            RebuildStep::SelectWindow { .. } => "select-window",
        }
    }
}

impl TmuxCommand for RebuildStep {
    type Output = ();

    fn args(&self) -> Vec<String> {
        let name = self.name();
        match self {
            RebuildStep::MoveWindow { from, to } => owned(&[name, "-s", from, "-t", to]),
            RebuildStep::NewWindow {
                target,
                cwd,
                launch,
            } => with_launch(owned(&[name, "-d", "-t", target]), cwd, launch),
            RebuildStep::KeepExits {
                target,
                name: option,
                value,
            } => owned(&[name, "-q", "-w", "-t", target, option, value]),
            RebuildStep::RenameWindow { target, name: new } => {
                owned(&[name, "-t", target, "--", &new.arg()])
            }
            RebuildStep::SplitWindow {
                target,
                cwd,
                launch,
            } => with_launch(owned(&[name, "-t", target]), cwd, launch),
            RebuildStep::SelectLayout { target, layout } => owned(&[name, "-t", target, layout]),
            RebuildStep::ResizeWindow { target, cols, rows } => owned(&[
                name,
                "-t",
                target,
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
            ]),
            RebuildStep::SelectPane { pane } => owned(&[name, "-t", pane]),
            RebuildStep::SelectWindow { target } => owned(&[name, "-t", target]),
        }
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<(), ParseError> {
        expect_empty(self.name(), lines)
    }
}

/// tmux expands `-c` as a format (`Literal`), never the launch's words.
fn with_launch(mut argv: Vec<String>, cwd: &Literal, launch: &Launch) -> Vec<String> {
    if !cwd.as_str().is_empty() {
        argv.extend(["-c".to_owned(), cwd.arg()]);
    }
    if let Some(words) = launch {
        argv.push("--".to_owned());
        argv.extend(words.iter().cloned());
    }
    argv
}

/// The commands that make the rest of a session whose first window
/// `new-session` made at index `made_at`: that window moved to its saved
/// index, the other windows, every further pane (each split from the
/// newest, with a tiled layout between splits so a small window has
/// room), then each window's size, saved layout and active pane, and the
/// current window. `launches[w][p]` is what pane `p` of window `w` runs.
pub fn rebuild_commands(
    name: &str,
    blueprint: &Blueprint,
    launches: &[Vec<Launch>],
    made_at: u32,
) -> Vec<RebuildStep> {
    let mut commands = Vec::new();
    for (w, window) in blueprint.windows.iter().enumerate() {
        let target = window_target(name, window.index);
        if w == 0 {
            if made_at != window.index {
                commands.push(RebuildStep::MoveWindow {
                    from: window_target(name, made_at),
                    to: target.clone(),
                });
            }
        } else {
            commands.push(RebuildStep::NewWindow {
                target: target.clone(),
                cwd: Literal::new(window.panes.first().map_or("", |p| p.cwd.as_str())),
                launch: launches[w][0].clone(),
            });
            for (option, value) in [("remain-on-exit", "on"), ("remain-on-exit-format", "")] {
                commands.push(RebuildStep::KeepExits {
                    target: target.clone(),
                    name: option,
                    value,
                });
            }
        }
        commands.push(RebuildStep::RenameWindow {
            target: target.clone(),
            name: Literal::new(window.name.as_str()),
        });
        for (p, pane) in window.panes.iter().enumerate().skip(1) {
            commands.push(RebuildStep::SplitWindow {
                target: target.clone(),
                cwd: Literal::new(pane.cwd.as_str()),
                launch: launches[w][p].clone(),
            });
            commands.push(RebuildStep::SelectLayout {
                target: target.clone(),
                layout: "tiled".to_owned(),
            });
        }
        commands.push(RebuildStep::ResizeWindow {
            target: target.clone(),
            cols: window.cols,
            rows: window.rows,
        });
        if window.panes.len() > 1 {
            commands.push(RebuildStep::SelectLayout {
                target: target.clone(),
                layout: window.layout.clone(),
            });
        }
        // Panes are numbered in layout order now; the saved numbers were
        // too, from the same base (`pane-base-index`).
        let base = window.panes.iter().map(|p| p.index).min().unwrap_or(0);
        if let Some(active) = window.panes.iter().position(|p| p.active) {
            commands.push(RebuildStep::SelectPane {
                pane: format!("{target}.{}", base + active as u32),
            });
        }
    }
    if let Some(current) = blueprint.windows.iter().find(|w| w.active) {
        commands.push(RebuildStep::SelectWindow {
            target: window_target(name, current.index),
        });
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: &str = "6584,100x30,0,0[100x15,0,0,0,100x14,0,16{50x14,0,16,1,49x14,51,16,2}]";

    fn row(pane_index: u32, pane_id: u32, cwd: &str, start: Option<&[&str]>) -> PanePlanRow {
        PanePlanRow {
            window_index: 0,
            window_active: true,
            cols: 100,
            rows: 30,
            layout: LAYOUT.to_owned(),
            pane_index,
            pane_id,
            pane_active: pane_index == 0,
            pid: Some(100 + pane_id),
            cwd: cwd.to_owned(),
            window_name: "sh".to_owned(),
            start_argv: start.map(|w| w.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn words(w: &[&str]) -> Option<Vec<String>> {
        Some(w.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn rows_read_as_tmux_prints_them() {
        let line = format!("0\t1\t100\t30\t{LAYOUT}\t2\t%2\t0\t7204\t/etc\tmy win\t\"sleep 1000\"");
        let parsed = parse_plan_row(&line).unwrap();
        assert_eq!(parsed.pane_id, 2);
        assert_eq!(parsed.window_name, "my win");
        assert_eq!(parsed.start_argv, words(&["sleep 1000"]));
        assert_eq!(parsed.pid, Some(7204));
        // A fake tmux prints unknown variables empty.
        assert_eq!(parse_plan_row("\t\t\t\t\t\t\t\t\t\t\t"), None);
        assert_eq!(parse_plan_row("0\t1\t100"), None);
    }

    /// tmux escapes `\`, tab and newline in the free-text fields
    /// (`free_text!`): a cwd holding them stays one field, and the start
    /// command stays what tmux says it is.
    #[test]
    fn tabs_and_newlines_in_a_cwd_stay_in_the_cwd() {
        let line = format!(
            "0\t1\t100\t30\t{LAYOUT}\t0\t%0\t1\t7\t/r/a\\tb\\nc\\\\d\\t#(touch x)\twin\\tdow\t"
        );
        let parsed = parse_plan_row(&line).unwrap();
        assert_eq!(parsed.cwd, "/r/a\tb\nc\\d\t#(touch x)");
        assert_eq!(parsed.window_name, "win\tdow");
        // tmux keeps a window name vis-encoded (`a\tb`, `\\` for `\`):
        // read as the name to give `rename-window`.
        let line = format!("0\t1\t100\t30\t{LAYOUT}\t0\t%0\t1\t7\t/\ta\\\\tb\\\\\\\\c\t");
        assert_eq!(parse_plan_row(&line).unwrap().window_name, "a\tb\\c");
        assert_eq!(parsed.start_argv, None);
        // What the old reader made of it: one field more, refused.
        let shifted = format!("0\t1\t100\t30\t{LAYOUT}\t0\t%0\t1\t7\t/r/a\tb\twin\t");
        assert_eq!(parse_plan_row(&shifted), None);
        // And a row whose escapes tmux did not make.
        let unescaped = format!("0\t1\t100\t30\t{LAYOUT}\t0\t%0\t1\t7\t/r\\x\twin\t");
        assert_eq!(parse_plan_row(&unescaped), None);
    }

    #[test]
    fn panes_follow_the_layout_and_shells_get_their_cmdline() {
        // Listed out of order, pane %2 before %1.
        let rows = [
            row(0, 0, "/tmp", Some(&["sh -c x"])),
            row(2, 2, "/etc", None),
            row(1, 1, "/usr", None),
        ];
        let blueprint = blueprint_of(&rows, |pid| Some(format!("bash {pid}"))).unwrap();
        let window = &blueprint.windows[0];
        let cwds: Vec<&str> = window.panes.iter().map(|p| p.cwd.as_str()).collect();
        assert_eq!(cwds, ["/tmp", "/usr", "/etc"]);
        assert_eq!(window.panes[0].command_line, "sh -c x");
        assert_eq!(window.panes[0].start_argv, words(&["sh -c x"]));
        assert_eq!(window.panes[1].command_line, "bash 101");
        assert_eq!(window.panes[1].start_argv, None);
        assert_eq!(blueprint_of(&[], |_| None), None);
    }

    /// As `args_escape` prints them (tmux 3.3a, `new-window -- ARGS`).
    #[test]
    fn start_commands_read_as_tmux_quotes_them() {
        let cases: &[(&str, Option<&[&str]>)] = &[
            (
                "\"sh -c \\\"sleep 100; echo hi\\\"\"",
                Some(&["sh -c \"sleep 100; echo hi\""]),
            ),
            ("sleep 1000", Some(&["sleep", "1000"])),
            ("'a\"b' \\;", Some(&["a\"b", ";"])),
            ("htop", Some(&["htop"])),
            ("''", Some(&[""])),
            (
                "\"a\\tb\\nc\\\\d\\$HOME \\351\"",
                Some(&["a\tb\nc\\d$HOME \u{fffd}"]),
            ),
            ("\"\\303\\251\" x\\001", Some(&["é", "x\u{1}"])),
            ("", None),
            ("\"unterminated", None),
            // A raw control character is never tmux's quoting.
            ("b\tsh -c x", None),
            ("\"a\nb\"", None),
        ];
        for (start, words) in cases {
            let expected = words.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(read_start_command(start), expected, "{start}");
        }
    }

    #[test]
    fn a_session_is_rebuilt_window_by_window() {
        let pane = |index: u32, cwd: &str, active: bool| PaneBlueprint {
            index,
            cwd: cwd.to_owned(),
            command_line: "bash".to_owned(),
            start_argv: None,
            legacy_start_command: None,
            active,
        };
        let blueprint = Blueprint {
            windows: vec![
                WindowBlueprint {
                    index: 1,
                    name: "edit".to_owned(),
                    layout: LAYOUT.to_owned(),
                    cols: 100,
                    rows: 30,
                    active: false,
                    panes: vec![pane(0, "/a", false), pane(1, "/b", true)],
                },
                WindowBlueprint {
                    index: 3,
                    name: "logs".to_owned(),
                    layout: "b25d,80x24,0,0,2".to_owned(),
                    cols: 80,
                    rows: 24,
                    active: true,
                    panes: vec![pane(0, "/c", true)],
                },
            ],
        };
        let launches = vec![vec![None, Some(vec!["tail -f x".to_owned()])], vec![None]];
        let first = first_pane(&blueprint, &launches);
        assert_eq!((first.cwd, first.cols, first.rows), ("/a", 100, 30));
        let commands: Vec<String> = rebuild_commands("s", &blueprint, &launches, 0)
            .iter()
            .map(|c| c.args().join(" "))
            .collect();
        assert_eq!(
            commands,
            [
                "move-window -s =s:0 -t =s:1",
                "rename-window -t =s:1 -- edit",
                "split-window -t =s:1 -c /b -- tail -f x",
                "select-layout -t =s:1 tiled",
                "resize-window -t =s:1 -x 100 -y 30",
                &format!("select-layout -t =s:1 {LAYOUT}"),
                "select-pane -t =s:1.1",
                "new-window -d -t =s:3 -c /c",
                "set-option -q -w -t =s:3 remain-on-exit on",
                "set-option -q -w -t =s:3 remain-on-exit-format ",
                "rename-window -t =s:3 -- logs",
                "resize-window -t =s:3 -x 80 -y 24",
                "select-pane -t =s:3.0",
                "select-window -t =s:3",
            ]
        );
        let in_place = rebuild_commands("s", &blueprint, &launches, 1);
        assert_eq!(
            in_place[0].args().join(" "),
            "rename-window -t =s:1 -- edit"
        );
    }

    /// Each step that passes a cwd or a name passes it as a `Literal`
    /// (tmux expands `-c` and `rename-window`'s name), and the words a
    /// pane runs as they are (tmux does not expand them).
    #[test]
    fn hostile_cwds_and_names_reach_tmux_as_text() {
        let hostile = "/r/#(touch m)/#{pane_id}#[x]";
        let escaped = "/r/##(touch m)/##{pane_id}#[x]";
        let launch = Some(vec!["echo".to_owned(), "#(id)".to_owned()]);
        let steps = [
            (
                RebuildStep::NewWindow {
                    target: "=s:1".into(),
                    cwd: Literal::new(hostile),
                    launch: launch.clone(),
                },
                format!("new-window -d -t =s:1 -c {escaped} -- echo #(id)"),
            ),
            (
                RebuildStep::SplitWindow {
                    target: "=s:1".into(),
                    cwd: Literal::new(hostile),
                    launch,
                },
                format!("split-window -t =s:1 -c {escaped} -- echo #(id)"),
            ),
            (
                RebuildStep::RenameWindow {
                    target: "=s:1".into(),
                    name: Literal::new("#(touch m)"),
                },
                "rename-window -t =s:1 -- ##(touch m)".to_owned(),
            ),
        ];
        for (step, want) in steps {
            assert_eq!(step.args().join(" "), want);
        }
    }
}
