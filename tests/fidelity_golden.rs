//! Golden screens: byte streams a tmux client received (recorded from real
//! tmux) fed through the same `Screen` the session actor uses, compared with
//! what tmux itself showed at that moment. No tmux needed to check them.
//!
//! Regenerate with real tmux (see `docs/fidelity.md`):
//! `TMUXD_RECORD_FIXTURES=all cargo test --test fidelity_golden -- --ignored --nocapture`
//! (or a comma-separated list of case names instead of `all`).

mod common;
#[path = "common/fidelity/mod.rs"]
mod fidelity;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tmuxd::session::{Layout, PaneFacts, Region, Screen, SnapshotFormat};
use tmuxd::tmux::PaneRect;

use common::{TmuxServer, trim_lines};
use fidelity::ansi::{self, Attrs, Color, Run};
use fidelity::recorder::Recorder;
use fidelity::scenarios::{self, Scenario, create_session, tmux_view};

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/screens")
}

macro_rules! golden {
    ($($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                check_fixture(stringify!($case));
            }
        )*
        const CASES: &[&str] = &[$(stringify!($case)),*];
    };
}

golden!(
    bash_color_prompt,
    vim_scroll_split,
    less_long_file,
    top,
    python_repl,
    python_curses,
    unicode_wide_combining,
    colors_256_truecolor,
    alt_screen_on,
    alt_screen_off,
    scroll_region,
    resize_grow_vim,
    resize_shrink_top,
    large_window,
    small_window,
    two_windows,
    status_top,
    status_off,
    status_two_lines,
    two_panes,
);

#[test]
fn every_fixture_directory_has_a_test() {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut cases: Vec<String> = CASES.iter().map(|c| (*c).to_owned()).collect();
    cases.sort();
    assert_eq!(dirs, cases, "fixtures/screens and the golden! list differ");
}

fn layout_at(meta: &Value, entry: &Value) -> Layout {
    Layout {
        cols: entry["cols"].as_u64().unwrap() as u16,
        rows: entry["rows"].as_u64().unwrap() as u16,
        status_lines: meta["status_lines"].as_u64().unwrap() as u16,
        status_top: meta["status_top"].as_bool().unwrap(),
    }
}

fn rect(value: &Value) -> PaneRect {
    let n = |k: &str| value[k].as_u64().unwrap() as u16;
    PaneRect {
        left: n("left"),
        top: n("top"),
        cols: n("cols"),
        rows: n("rows"),
    }
}

/// Replays `output.bin` through `Screen`, applying each recorded layout at
/// the byte where tmuxd would have resized its client.
fn check_fixture(case: &str) {
    let dir = fixtures_dir().join(case);
    let read =
        |file: &str| std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{case}/{file}: {e}"));
    let meta: Value = serde_json::from_slice(&read("layout.json")).unwrap();
    let output = read("output.bin");
    let layouts = meta["layouts"].as_array().unwrap();
    let mut screen = Screen::new(layout_at(&meta, &layouts[0]));
    let mut fed = 0;
    for entry in &layouts[1..] {
        let at = entry["at_byte"].as_u64().unwrap() as usize;
        screen.process(&output[fed..at]);
        fed = at;
        screen.set_layout(layout_at(&meta, entry));
    }
    screen.process(&output[fed..]);
    let facts = PaneFacts {
        active_pane: Some(rect(&meta["active_pane"])),
        ..PaneFacts::default()
    };
    let text = screen.snapshot(SnapshotFormat::Text, Region::ActivePane, &facts);
    let expected = String::from_utf8(read("expected.txt")).unwrap();
    let expected = trim_lines(expected.lines().map(str::to_owned).collect());
    assert_eq!(
        trim_lines(text.lines.clone()),
        expected,
        "{case}: text differs from tmux"
    );
    let cursor = &meta["cursor"];
    let expected_cursor = scenarios::shown_cursor(
        (
            cursor["row"].as_u64().unwrap() as u16,
            cursor["col"].as_u64().unwrap() as u16,
        ),
        text.cols,
    );
    assert_eq!(
        (text.cursor.row, text.cursor.col),
        expected_cursor,
        "{case}: cursor differs from tmux"
    );
    if let Ok(expected_ansi) = std::fs::read_to_string(dir.join("expected_ansi.txt")) {
        let ours = screen.snapshot(SnapshotFormat::Ansi, Region::ActivePane, &facts);
        let tmux_lines: Vec<String> = expected_ansi.lines().map(str::to_owned).collect();
        let (ours, theirs) = (
            ansi::screen_runs(&ours.lines),
            ansi::screen_runs(&tmux_lines),
        );
        if let Some(diff) = ansi::first_difference(&ours, &theirs) {
            panic!("{case}: attributes differ from tmux at {diff}");
        }
    }
}

#[test]
fn ansi_normalizer_treats_spellings_of_one_colour_alike() {
    let red = Attrs {
        fg: Color::Idx(1),
        ..Attrs::default()
    };
    for line in [
        "\x1b[31mx",
        "\x1b[38;5;1mx",
        "\x1b[38:5:1mx",
        "\x1b[0;31mx\x1b[m",
    ] {
        let want = vec![Run {
            attrs: red,
            text: "x".into(),
        }];
        assert_eq!(ansi::runs(line), want, "{line:?}");
    }
    let rgb = Attrs {
        bg: Color::Rgb(1, 2, 3),
        ..Attrs::default()
    };
    for line in [
        "\x1b[48;2;1;2;3mx",
        "\x1b[48:2::1:2:3mx",
        "\x1b[48:2:1:2:3mx",
    ] {
        assert_eq!(ansi::runs(line)[0].attrs, rgb, "{line:?}");
    }
}

#[test]
fn ansi_normalizer_keeps_only_what_blanks_show() {
    assert_eq!(ansi::runs("a\x1b[1;31m   \x1b[m  "), ansi::runs("a"));
    let on_green = ansi::runs("\x1b[42m  ");
    assert_eq!(on_green[0].attrs.bg, Color::Idx(2));
    assert_eq!(
        ansi::runs("\x1b[1ma\x1b[22mb"),
        ansi::runs("\x1b[1ma\x1b[mb")
    );
}

/// Which cases to record: `TMUXD_RECORD_FIXTURES=all` or `a,b,c`.
fn cases_to_record() -> Vec<&'static str> {
    let wanted = std::env::var("TMUXD_RECORD_FIXTURES").unwrap_or_default();
    CASES
        .iter()
        .copied()
        .filter(|c| wanted == "all" || wanted.split(',').any(|w| w == *c))
        .collect()
}

/// Regenerates fixtures from real tmux on a private socket.
#[test]
#[ignore = "records fixtures from real tmux; set TMUXD_RECORD_FIXTURES"]
fn record_fixtures() {
    let cases = cases_to_record();
    assert!(
        !cases.is_empty(),
        "set TMUXD_RECORD_FIXTURES=all or a comma-separated list of cases"
    );
    for case in cases {
        record(scenarios::scenario(case));
        eprintln!("recorded {case}");
    }
}

fn record(scenario: &Scenario) {
    let tmux = TmuxServer::new();
    let name = "rec";
    create_session(&tmux, scenario, name);
    let status = scenario.status.lines();
    let mut size = tmux.size(name);
    let mut recorder = Recorder::attach(&tmux, name, size.0, size.1 + status);
    recorder.wait_quiet(Duration::from_millis(150));
    let mut layouts = vec![json!({"at_byte": 0, "cols": size.0, "rows": size.1})];
    for step in scenario.steps {
        scenarios::run_step(&tmux, step, name);
        let now = tmux.size(name);
        if now != size {
            // What tmuxd does when it learns the new size: resize its PTY.
            recorder.wait_quiet(Duration::from_millis(100));
            layouts.push(json!({"at_byte": recorder.len(), "cols": now.0, "rows": now.1}));
            recorder.resize(now.0, now.1 + status);
            size = now;
        }
    }
    let (bytes, view) = loop {
        recorder.wait_quiet(Duration::from_millis(200));
        let before = recorder.len();
        let view = tmux_view(&tmux, &format!("={name}:"));
        if recorder.len() == before {
            break (recorder.bytes(), view);
        }
    };
    let pane = tmux.run(&[
        "display-message",
        "-p",
        "-t",
        &format!("={name}:"),
        "#{pane_left} #{pane_top} #{pane_width} #{pane_height}",
    ]);
    let p: Vec<u16> = pane
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let meta = json!({
        "case": scenario.name,
        "status_lines": status,
        "status_top": scenario.status.top(),
        "layouts": layouts,
        "active_pane": {"left": p[0], "top": p[1], "cols": p[2], "rows": p[3]},
        "cursor": {"row": view.cursor.0, "col": view.cursor.1},
        "tmux_version": tmux.run(&["-V"]).trim(),
    });
    let dir = fixtures_dir().join(scenario.name);
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "output.bin", &bytes);
    write(
        &dir,
        "layout.json",
        serde_json::to_string_pretty(&meta).unwrap().as_bytes(),
    );
    write(
        &dir,
        "expected.txt",
        (view.lines.join("\n") + "\n").as_bytes(),
    );
    write(
        &dir,
        "expected_ansi.txt",
        (view.ansi.join("\n") + "\n").as_bytes(),
    );
}

fn write(dir: &Path, file: &str, bytes: &[u8]) {
    std::fs::write(dir.join(file), bytes).unwrap();
}
