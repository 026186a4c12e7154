//! Golden screens: what a session actor receives for a pane (recorded from
//! real tmux over a control client: seeds, then the pane's own output) fed
//! through the same `PaneScreen` the actor uses, compared with what tmux
//! itself showed at that moment. No tmux needed to check them.
//!
//! Regenerate with real tmux (see `docs/fidelity.md`):
//! `TMUXD_RECORD_FIXTURES=all cargo test --test tests -- --ignored fidelity_golden:: --nocapture`
//! (or a comma-separated list of case names instead of `all`).

use crate::common;
use crate::fidelity;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tmuxd::session::{
    Captured, PaneScreen, PaneState, Region, SnapshotFormat, WindowGeometry, compose_snapshot,
};

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
    emoji_zwj,
    strikethrough_bold_dim,
    insert_delete_chars_bg,
    wide_cut_by_erase,
    readline_wrapped_backspace,
    erase_reverse_bg,
);

#[test]
fn every_fixture_directory_has_a_test() {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The agent presets' screens, tested with the presets.
        .filter(|name| name != "agents")
        .collect();
    dirs.sort();
    let mut cases: Vec<String> = CASES.iter().map(|c| (*c).to_owned()).collect();
    cases.sort();
    assert_eq!(dirs, cases, "fixtures/screens and the golden! list differ");
}

fn state_of(value: &Value) -> PaneState {
    let n = |k: &str| value[k].as_u64().unwrap() as u16;
    let flag = |k: &str| value[k].as_bool().unwrap();
    PaneState {
        cols: n("cols"),
        rows: n("rows"),
        cursor_x: n("cursor_x"),
        cursor_y: n("cursor_y"),
        cursor_visible: flag("cursor_visible"),
        alternate_on: flag("alternate_on"),
        scroll_upper: n("scroll_upper"),
        scroll_lower: n("scroll_lower"),
        origin_mode: flag("origin_mode"),
        title: value["title"].as_str().unwrap().to_owned(),
    }
}

fn state_json(state: &PaneState) -> Value {
    json!({
        "cols": state.cols, "rows": state.rows,
        "cursor_x": state.cursor_x, "cursor_y": state.cursor_y,
        "cursor_visible": state.cursor_visible, "alternate_on": state.alternate_on,
        "scroll_upper": state.scroll_upper, "scroll_lower": state.scroll_lower,
        "origin_mode": state.origin_mode, "title": state.title,
    })
}

/// Replays the fixture as the actor would: each seed replaces the pane's
/// screen at the byte where it was taken, output in between is fed.
fn check_fixture(case: &str) {
    let dir = fixtures_dir().join(case);
    let read =
        |file: &str| std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{case}/{file}: {e}"));
    let meta: Value = serde_json::from_slice(&read("layout.json")).unwrap();
    let output = read("output.bin");
    let mut pane = PaneScreen::new(1, 1);
    let mut fed = 0;
    let mut state = PaneState::default();
    for seed in meta["seeds"].as_array().unwrap() {
        let at = seed["at_byte"].as_u64().unwrap() as usize;
        pane.process(&output[fed..at]);
        fed = at;
        state = state_of(&seed["state"]);
        let captured = Captured {
            normal: read(seed["normal"].as_str().unwrap()),
            alternate: seed["alternate"].as_str().map(read),
        };
        pane.seed(&state, &captured);
    }
    pane.process(&output[fed..]);
    let geometry = WindowGeometry::single_pane(state.cols, state.rows);
    let panes = std::collections::BTreeMap::from([(geometry.active, &pane)]);
    let text = compose_snapshot(&geometry, &panes, SnapshotFormat::Text, Region::ActivePane);
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
    let expected_ansi = String::from_utf8(read("expected_ansi.txt")).unwrap();
    let ours = compose_snapshot(&geometry, &panes, SnapshotFormat::Ansi, Region::ActivePane);
    let tmux_lines: Vec<String> = expected_ansi.lines().map(str::to_owned).collect();
    let (ours, theirs) = (
        ansi::screen_runs(&ours.lines),
        ansi::screen_runs(&tmux_lines),
    );
    if let Some(diff) = ansi::first_difference(&ours, &theirs) {
        panic!("{case}: attributes differ from tmux at {diff}");
    }
    // The daemon's settled-screen check, given tmux's capture and cursor
    // (modes are not recorded: the screen's own), finds no drift either.
    let screen = pane.screen();
    let tmux_cursor = tmuxd::screen::TmuxCursor {
        position: (
            cursor["row"].as_u64().unwrap() as u16,
            cursor["col"].as_u64().unwrap() as u16,
        ),
        visible: !screen.hide_cursor(),
        alternate: screen.alternate_screen(),
    };
    let rows: Vec<Vec<u8>> = expected_ansi
        .lines()
        .map(|l| l.as_bytes().to_vec())
        .collect();
    if let Some(cause) = tmuxd::screen::compare(screen, &rows, tmux_cursor) {
        panic!(
            "{case}: the settled-screen check calls it drift ({})",
            cause.as_str()
        );
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
    let recorder = Recorder::attach(&tmux, name);
    recorder.wait_quiet(Duration::from_millis(150));
    for step in scenario.steps {
        scenarios::run_step(&tmux, step, name);
    }
    let (output, seeds, view) = loop {
        recorder.wait_quiet(Duration::from_millis(200));
        let before = recorder.len();
        let view = tmux_view(&tmux, &format!("={name}:"));
        if recorder.len() == before {
            break (recorder.output(), recorder.seeds(), view);
        }
    };
    let dir = fixtures_dir().join(scenario.name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seeds: Vec<Value> = seeds
        .iter()
        .enumerate()
        .map(|(n, seed)| {
            let normal = format!("seed-{n}-normal.bin");
            write(&dir, &normal, &seed.captured.normal);
            let alternate = seed.captured.alternate.as_ref().map(|bytes| {
                let file = format!("seed-{n}-alternate.bin");
                write(&dir, &file, bytes);
                file
            });
            json!({
                "at_byte": seed.at_byte,
                "state": state_json(&seed.state),
                "normal": normal,
                "alternate": alternate,
            })
        })
        .collect();
    let meta = json!({
        "case": scenario.name,
        "seeds": seeds,
        "cursor": {"row": view.cursor.0, "col": view.cursor.1},
        "tmux_version": tmux.run(&["-V"]).trim(),
    });
    write(&dir, "output.bin", &output);
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
