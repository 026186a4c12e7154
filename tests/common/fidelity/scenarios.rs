//! The programs and cases both fidelity suites run: the live oracle tests
//! (tmuxd's snapshot against tmux's `capture-pane`) and the golden recorder.
//! A scenario is a window shape plus steps typed or run through tmux.

use std::path::PathBuf;

use crate::common::{SHELL, TmuxServer, wait_for};

/// The session's status line (tmux's `status` and `status-position`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Bottom,
    Top,
    Off,
    TwoLines,
}

impl Status {
    pub fn lines(self) -> u16 {
        match self {
            Status::Off => 0,
            Status::Bottom | Status::Top => 1,
            Status::TwoLines => 2,
        }
    }

    pub fn top(self) -> bool {
        self == Status::Top
    }
}

/// One thing done to the session. `{t}` in an argument is the session's
/// target (`=NAME:`), `{dir}` the programs directory.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// Types a line into the pane, then Enter.
    Run(&'static str),
    /// Types text literally.
    Type(&'static str),
    /// tmux key names (`Enter`, `C-f`, `Space`).
    Keys(&'static [&'static str]),
    /// A tmux command (new-window, resize-window, split-window...).
    Tmux(&'static [&'static str]),
    /// Waits until tmux shows this text in the active pane.
    WaitText(&'static str),
}

/// What the oracle compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The window snapshot against capture-pane (one pane per window).
    Window,
    /// `?pane=active` against capture-pane of the active pane, then the
    /// same after selecting each other pane.
    EachPane,
}

#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    pub name: &'static str,
    pub cols: u16,
    pub rows: u16,
    pub status: Status,
    pub steps: &'static [Step],
    pub check: Check,
}

/// Where `fixtures/programs` lives.
pub fn programs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs")
}

const VIM: &str = "vim -u NONE -i NONE -N -n -c 'set nu hlsearch ruler laststatus=2' -c 'syntax on' {dir}/demo.py";

const fn case(name: &'static str, steps: &'static [Step]) -> Scenario {
    Scenario {
        name,
        cols: 80,
        rows: 24,
        status: Status::Bottom,
        steps,
        check: Check::Window,
    }
}

const fn sized(name: &'static str, cols: u16, rows: u16, steps: &'static [Step]) -> Scenario {
    Scenario {
        cols,
        rows,
        ..case(name, steps)
    }
}

const fn with_status(name: &'static str, status: Status, steps: &'static [Step]) -> Scenario {
    Scenario {
        status,
        ..case(name, steps)
    }
}

use Step::*;

pub const SCENARIOS: &[Scenario] = &[
    case(
        "bash_color_prompt",
        &[
            Run(r"PS1='\[\e[1;32m\]me@box\[\e[0m\]:\[\e[1;34m\]~/src\[\e[0m\]\$ '"),
            Run(r"echo plain; printf '\e[1;31mbold red\e[0m \e[4munder\e[24m \e[7mrev\e[27m\n'"),
            Run("ls -d --color=always / /tmp /dev/null; echo done-marker"),
            WaitText("done-marker"),
        ],
    ),
    case(
        "vim_scroll_split",
        &[
            Run(VIM),
            WaitText("A demo module"),
            Type("/return"),
            Keys(&["Enter"]),
            Keys(&["C-f"]),
            Keys(&["C-e", "C-e", "C-e"]),
            Type(":split"),
            Keys(&["Enter"]),
            Type(":vsplit"),
            Keys(&["Enter"]),
            Keys(&["C-d"]),
            WaitText("demo.py"),
        ],
    ),
    case(
        "less_long_file",
        &[
            Run("seq -f 'line %g of the long file' 1 2000 | less"),
            WaitText("line 1 of"),
            Keys(&["Space"]),
            Type("/line 15.0"),
            Keys(&["Enter"]),
            WaitText("line 1500"),
        ],
    ),
    case("top", &[Run("top -d 30"), WaitText("PID")]),
    case(
        "python_repl",
        &[
            Run("python3 -q"),
            WaitText(">>>"),
            Run("1 + 1"),
            Run(r"print('\x1b[32mgreen\x1b[0m', 'δ' * 3, '表' * 2)"),
            Run("for i in range(3): print('item', i)"),
            Keys(&["Enter"]),
            WaitText("item 2"),
        ],
    ),
    case(
        "python_curses",
        &[Run("python3 {dir}/curses_demo.py"), WaitText("sub window")],
    ),
    case(
        "unicode_wide_combining",
        &[
            Run("cat {dir}/unicode.txt; echo end-marker"),
            WaitText("end-marker"),
        ],
    ),
    case(
        "colors_256_truecolor",
        &[
            Run("bash {dir}/colors.sh; echo end-marker"),
            WaitText("end-marker"),
        ],
    ),
    case(
        "alt_screen_on",
        &[
            Run("echo on the main screen"),
            Run("tput smcup; echo on the alternate screen; cat"),
            WaitText("alternate screen"),
        ],
    ),
    case(
        "alt_screen_off",
        &[
            Run("echo on the main screen"),
            Run("tput smcup; echo on the alternate screen; tput rmcup; echo back-marker"),
            WaitText("back-marker"),
        ],
    ),
    case(
        "scroll_region",
        &[
            Run("bash {dir}/scroll_region.sh; cat"),
            WaitText("after the region"),
        ],
    ),
    case(
        "resize_grow_vim",
        &[
            Run(VIM),
            WaitText("A demo module"),
            Tmux(&["resize-window", "-t", "{t}", "-x", "100", "-y", "30"]),
            Keys(&["C-f"]),
            WaitText("function_"),
        ],
    ),
    case(
        "resize_shrink_top",
        &[
            Run("top -d 30"),
            WaitText("PID"),
            Tmux(&["resize-window", "-t", "{t}", "-x", "50", "-y", "15"]),
            WaitText("PID"),
        ],
    ),
    sized(
        "large_window",
        200,
        60,
        &[
            Run("seq -s ' ' 1 400; seq 1 40; echo end-marker"),
            WaitText("end-marker"),
        ],
    ),
    sized(
        "small_window",
        30,
        8,
        &[
            Run("echo a line longer than thirty columns wraps twice over; seq 1 5"),
            WaitText("5"),
        ],
    ),
    case(
        "two_windows",
        &[
            Run("echo first window"),
            Tmux(&["new-window", "-t", "{t}"]),
            Run("echo second window; seq 1 5"),
            WaitText("second window"),
            Tmux(&["select-window", "-t", "{t}0"]),
            WaitText("first window"),
        ],
    ),
    with_status(
        "status_top",
        Status::Top,
        &[Run("seq 1 40; echo end-marker"), WaitText("end-marker")],
    ),
    with_status(
        "status_off",
        Status::Off,
        &[Run("seq 1 40; echo end-marker"), WaitText("end-marker")],
    ),
    with_status(
        "status_two_lines",
        Status::TwoLines,
        &[Run("seq 1 40; echo end-marker"), WaitText("end-marker")],
    ),
    Scenario {
        check: Check::EachPane,
        ..case(
            "two_panes",
            &[
                Run("seq 1 30; echo left pane"),
                Tmux(&["split-window", "-h", "-t", "{t}"]),
                Run("printf 'right pane: %s\\n' 你好 colours; echo right-marker"),
                WaitText("right-marker"),
            ],
        )
    },
    case(
        "strikethrough_bold_dim",
        &[
            Run(
                r"printf '\e[9mstruck\e[0m plain \e[1;2mbold-dim\e[0m \e[2mdim\e[0m\n'; echo end-marker",
            ),
            WaitText("end-marker"),
        ],
    ),
    case(
        "insert_delete_chars_bg",
        &[
            Run(
                r"printf 'abcdefghij\e[5G\e[41m\e[3@\e[0m\n0123456789\e[3G\e[44m\e[2P\e[0m\n'; echo end-marker",
            ),
            WaitText("end-marker"),
        ],
    ),
    // 600 KB without a pause: tmuxd stops drawing it and re-seeds the
    // screen from tmux once quiet; colour and cursor must still be exact.
    case(
        "flood_then_quiet",
        &[
            Run(r"seq 1 100000; printf '\033[31mred tail\033[0m partial'; cat"),
            WaitText("red tail partial"),
        ],
    ),
    case(
        "emoji_zwj",
        &[
            Run(
                r"printf 'a \U1F469\u200D\U1F4BB b \U1F468\u200D\U1F469\u200D\U1F467 c\n'; echo end-marker",
            ),
            WaitText("end-marker"),
        ],
    ),
    case(
        "wide_cut_by_erase",
        &[
            Run(
                r"printf '\u8868\u8868\u8868\u8868\e[1G\e[2C\e[1X\n\u8868\u8868\u8868\e[4G\e[K\n'; echo end-marker",
            ),
            WaitText("end-marker"),
        ],
    ),
    // Readline editing a long command line: backspaces from the start of a
    // wrapped row go up to the end of the row above (issue 24).
    sized(
        "readline_wrapped_backspace",
        61,
        24,
        &[
            Run(r"printf 'w%.0s' $(seq 1 65); printf '\b\b\b\b\b\bB\n'; echo end-marker"),
            WaitText("end-marker"),
        ],
    ),
    // Erase with reverse video and a background on: tmux leaves plain
    // blanks with the background only.
    case(
        "erase_reverse_bg",
        &[
            Run(
                r"printf 'abcdef\r\e[7;41m\e[3X\e[0m\n\e[4:3;58:5:2;21mstyled\e[0m \e[53;5;8mover\e[0m\n'; echo end-marker",
            ),
            WaitText("end-marker"),
        ],
    ),
];

pub fn scenario(name: &str) -> &'static Scenario {
    SCENARIOS
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

fn expand(arg: &str, name: &str) -> String {
    arg.replace("{t}", &format!("={name}:"))
        .replace("{dir}", &programs_dir().to_string_lossy())
}

/// Programs the scenarios run; `scripts/test` installs them. A missing one
/// fails the test with this message rather than skipping it.
pub fn require_programs() {
    for program in ["vim", "less", "top", "python3", "tput", "seq"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "{program} is missing: run scripts/test, which installs it"
        );
    }
}

/// Creates the session at the scenario's size, with its status line.
pub fn create_session(tmux: &TmuxServer, scenario: &Scenario, name: &str) {
    require_programs();
    let (cols, rows) = (scenario.cols.to_string(), scenario.rows.to_string());
    let dir = programs_dir();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        &cols,
        "-y",
        &rows,
        "-c",
        &dir.to_string_lossy(),
        SHELL,
    ]);
    let target = format!("={name}:");
    let status = match scenario.status {
        Status::Off => "off",
        Status::TwoLines => "2",
        Status::Bottom | Status::Top => "on",
    };
    tmux.run(&["set-option", "-t", &target, "status", status]);
    if scenario.status.top() {
        tmux.run(&["set-option", "-t", &target, "status-position", "top"]);
    }
    tmux.wait_for_text(name, "$");
}

/// Runs every step against the session, through tmux.
pub fn run_steps(tmux: &TmuxServer, scenario: &Scenario, name: &str) {
    for step in scenario.steps {
        run_step(tmux, step, name);
    }
}

pub fn run_step(tmux: &TmuxServer, step: &Step, name: &str) {
    match *step {
        Step::Run(line) => {
            tmux.send_keys(name, &["-l", &expand(line, name)]);
            tmux.send_keys(name, &["Enter"]);
        }
        Step::Type(text) => tmux.send_keys(name, &["-l", &expand(text, name)]),
        Step::Keys(keys) => tmux.send_keys(name, keys),
        Step::Tmux(args) => {
            let args: Vec<String> = args.iter().map(|a| expand(a, name)).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            tmux.run(&args);
        }
        Step::WaitText(text) => tmux.wait_for_text(name, text),
    }
}

/// tmux's view of a pane: its lines, ANSI lines and cursor, read twice so a
/// pane still drawing is never taken as settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmuxView {
    pub lines: Vec<String>,
    pub ansi: Vec<String>,
    /// (row, col), as tmux reports it.
    pub cursor: (u16, u16),
    /// (cols, rows) of the pane.
    pub size: (u16, u16),
}

/// `target` is a pane target (`=NAME:`, `%3`).
pub fn tmux_view(tmux: &TmuxServer, target: &str) -> TmuxView {
    let read = || {
        let lines = tmux.run(&["capture-pane", "-p", "-t", target]);
        let ansi = tmux.run(&["capture-pane", "-p", "-e", "-N", "-t", target]);
        let facts = tmux.run(&[
            "display-message",
            "-p",
            "-t",
            target,
            "#{cursor_y} #{cursor_x} #{pane_width} #{pane_height}",
        ]);
        let mut nums = facts.split_whitespace().map(|n| n.parse().unwrap_or(0));
        TmuxView {
            lines: crate::common::trim_lines(lines.lines().map(str::to_owned).collect()),
            ansi: ansi.lines().map(str::to_owned).collect(),
            cursor: (nums.next().unwrap_or(0), nums.next().unwrap_or(0)),
            size: (nums.next().unwrap_or(0), nums.next().unwrap_or(0)),
        }
    };
    wait_for(&format!("tmux pane {target} to settle"), || {
        let first = read();
        (read() == first).then_some(first)
    })
}

/// Where a client shows tmux's cursor: after a program writes the last
/// column tmux reports `cursor_x == width` (a wrap is pending), but its
/// client can only place the cursor on the last column.
pub fn shown_cursor((row, col): (u16, u16), cols: u16) -> (u16, u16) {
    (row, col.min(cols.saturating_sub(1)))
}
