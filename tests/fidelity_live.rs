//! Live oracle tests: real programs in real tmux (private socket), the real
//! daemon over HTTP. Once output settles, tmuxd's snapshot must equal tmux's
//! own `capture-pane` of the same pane: text, cursor, colours and attributes.

use crate::common;
use crate::fidelity;

use std::time::{Duration, Instant};

use serde_json::Value;

use common::{Daemon, DaemonOptions, TmuxServer, trim_lines};
use fidelity::ansi;
use fidelity::scenarios::{
    self, Check, Scenario, TmuxView, create_session, run_steps, shown_cursor, tmux_view,
};

const NAME: &str = "fid";

macro_rules! live {
    ($($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                run_live(scenarios::scenario(stringify!($case)));
            }
        )*
    };
}

live!(
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
    flood_then_quiet,
    strikethrough_bold_dim,
    insert_delete_chars_bg,
    wide_cut_by_erase,
    readline_wrapped_backspace,
    erase_reverse_bg,
);

#[test]
fn every_scenario_runs_live() {
    let source = include_str!("fidelity_live.rs");
    for scenario in scenarios::SCENARIOS {
        assert!(
            source.contains(&format!("    {},\n", scenario.name)),
            "scenario {} has no live test",
            scenario.name
        );
    }
}

fn start(scenario: &Scenario, options: DaemonOptions) -> (TmuxServer, Daemon, String) {
    let tmux = TmuxServer::new();
    create_session(&tmux, scenario, NAME);
    let daemon = Daemon::start_with(&tmux, options);
    let id = common::wait_for("the session to be adopted", || {
        daemon.session_ids().first().cloned()
    });
    (tmux, daemon, id)
}

fn run_live(scenario: &Scenario) {
    let (tmux, daemon, id) = start(scenario, DaemonOptions::default());
    run_steps(&tmux, scenario, NAME);
    match scenario.check {
        Check::Window => assert_matches_tmux(&tmux, &daemon, &id, &format!("={NAME}:"), false),
        Check::EachPane => {
            let panes = tmux.run(&["list-panes", "-t", &format!("={NAME}:"), "-F", "#{pane_id}"]);
            for pane in panes.lines().rev() {
                tmux.run(&["select-pane", "-t", pane]);
                assert_matches_tmux(&tmux, &daemon, &id, pane, true);
            }
        }
    }
}

/// What tmuxd served for one snapshot request.
struct Served {
    lines: Vec<String>,
    cursor: (u16, u16),
    size: (u16, u16),
}

fn served(daemon: &Daemon, id: &str, query: &str) -> Served {
    let (status, snap) = daemon.get(&format!("/v1/sessions/{id}/snapshot?{query}"));
    assert!(status.is_success(), "{snap}");
    let n = |v: &Value| v.as_u64().unwrap() as u16;
    Served {
        lines: snap["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect(),
        cursor: (n(&snap["cursor"]["row"]), n(&snap["cursor"]["col"])),
        size: (n(&snap["cols"]), n(&snap["rows"])),
    }
}

/// Why one attempt did not match, for the failure message.
fn mismatch(view: &TmuxView, text: &Served, ansi_lines: &Served) -> Option<String> {
    if text.size != view.size {
        return Some(format!("size: tmuxd {:?}, tmux {:?}", text.size, view.size));
    }
    let ours = trim_lines(text.lines.clone());
    if ours != view.lines {
        return Some(format!(
            "text:\n--- tmuxd\n{}\n--- tmux\n{}",
            ours.join("\n"),
            view.lines.join("\n")
        ));
    }
    let cursor = shown_cursor(view.cursor, view.size.0);
    if text.cursor != cursor {
        return Some(format!("cursor: tmuxd {:?}, tmux {cursor:?}", text.cursor));
    }
    let (ours, theirs) = (
        ansi::screen_runs(&ansi_lines.lines),
        ansi::screen_runs(&view.ansi),
    );
    ansi::first_difference(&ours, &theirs).map(|d| format!("attributes at {d}"))
}

/// Polls until tmuxd's snapshot of `target` (the window, or with `pane` the
/// active pane) equals tmux's view of it, or fails after 10 s with the diff.
fn assert_matches_tmux(tmux: &TmuxServer, daemon: &Daemon, id: &str, target: &str, pane: bool) {
    let pane_query = if pane { "&pane=active" } else { "" };
    let deadline = Instant::now() + common::PATIENCE;
    loop {
        let view = tmux_view(tmux, target);
        let text = served(daemon, id, &format!("format=text{pane_query}"));
        let ansi_lines = served(daemon, id, &format!("format=ansi{pane_query}"));
        let Some(why) = mismatch(&view, &text, &ansi_lines) else {
            return;
        };
        assert!(
            Instant::now() < deadline,
            "snapshot of {target} never matched tmux; last difference: {why}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A window resized by someone else (not through tmuxd's API) must show up
/// in the snapshot long before the next discovery tick (5 s here).
#[test]
fn outside_resize_is_seen_promptly() {
    let scenario = scenarios::scenario("top");
    let options = DaemonOptions {
        discovery_interval_ms: Some(5000),
        ..DaemonOptions::default()
    };
    let (tmux, daemon, id) = start(scenario, options);
    run_steps(&tmux, scenario, NAME);
    assert_matches_tmux(&tmux, &daemon, &id, &format!("={NAME}:"), false);
    for (cols, rows) in [(100, 30), (60, 15), (90, 20)] {
        let started = Instant::now();
        tmux.run(&[
            "resize-window",
            "-t",
            &format!("={NAME}:"),
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
        assert_matches_tmux(&tmux, &daemon, &id, &format!("={NAME}:"), false);
        let took = started.elapsed();
        eprintln!("resize to {cols}x{rows} seen in {} ms", took.as_millis());
        // Heard from tmux's layout notice, not the next discovery (5 s):
        // half that on a loaded machine.
        assert!(took < Duration::from_millis(2500), "resize took {took:?}");
    }
}
