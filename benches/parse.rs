//! Parse throughput: the bytes a pane writes fed to a pane screen, MB/s,
//! for `vt100` 0.18 (the parser tmuxd used before) and tmuxd's own screen
//! (`crate::screen`, vte + tmux's semantics); then what a snapshot of the
//! result costs. `scripts/bench` runs it; results go in BENCHMARKS.md.
//! Nothing here asserts a speed.

use std::collections::BTreeMap;
use std::num::NonZeroU16;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tmuxd::session::{PaneScreen, Region, SnapshotFormat, WindowGeometry, compose_snapshot};

/// Runs `feed` over `input` until a second has passed; MB/s.
fn throughput(input: &[u8], mut feed: impl FnMut(&[u8])) -> f64 {
    let started = Instant::now();
    let mut bytes = 0usize;
    while started.elapsed() < Duration::from_secs(1) || bytes < 4 * input.len() {
        // %output arrives in chunks of a few KB; feed it the same way.
        for chunk in input.chunks(4096) {
            feed(chunk);
        }
        bytes += input.len();
    }
    bytes as f64 / started.elapsed().as_secs_f64() / 1e6
}

/// `seq 1 300000` as a pane receives it: the flood of BENCHMARKS.md.
fn seq_flood() -> Vec<u8> {
    (1..=300_000)
        .map(|n| format!("{n}\r\n"))
        .collect::<String>()
        .into_bytes()
}

/// Every recorded program in the golden fixtures (vim, less, top, curses,
/// shells...), one after the other.
fn recorded_programs() -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/screens");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("output.bin"))
        .filter(|p| p.exists())
        .collect();
    cases.sort();
    let mut out = Vec::new();
    for case in cases {
        out.extend(std::fs::read(case).unwrap());
        out.extend_from_slice(b"\x1b[0m\x1b[?1049l\x1b[r\r\n");
    }
    out
}

/// `ls --color`-like lines: a colour change every few characters.
fn colour_flood() -> Vec<u8> {
    let mut out = String::new();
    for n in 0..40_000 {
        out.push_str(&format!(
            "\x1b[0m\x1b[01;34mdir{n}\x1b[0m  \x1b[01;32mrun{n}.sh\x1b[0m  \x1b[38;5;{}mfile-{n}.txt\x1b[0m  \x1b[1;4;48;2;10;20;{}mend\x1b[0m\r\n",
            n % 256,
            n % 200
        ));
    }
    out.into_bytes()
}

fn snapshot_cost(pane: &PaneScreen, format: SnapshotFormat) -> Duration {
    let (cols, rows) = pane.size();
    let geometry = WindowGeometry::single_pane(cols, rows);
    let panes = BTreeMap::from([(geometry.active, pane)]);
    let n = 2000;
    let started = Instant::now();
    for _ in 0..n {
        std::hint::black_box(compose_snapshot(&geometry, &panes, format, Region::Window));
    }
    started.elapsed() / n
}

fn main() {
    let size = |n| NonZeroU16::new(n).unwrap();
    for (name, input) in [
        ("seq flood", seq_flood()),
        ("recorded programs", recorded_programs()),
        ("colour flood", colour_flood()),
    ] {
        let mut old = vt100::Parser::new(size(24), size(80), 0);
        let vt100 = throughput(&input, |chunk| old.process(chunk));
        let mut ours = PaneScreen::new(80, 24);
        let tmuxd = throughput(&input, |chunk| {
            ours.process(chunk);
        });
        println!(
            "parse {name:<18} {:>6.2} MB  vt100 {vt100:>7.1} MB/s  tmuxd screen {tmuxd:>7.1} MB/s",
            input.len() as f64 / 1e6
        );
    }
    for (cols, rows) in [(80, 24), (200, 60)] {
        let mut pane = PaneScreen::new(cols, rows);
        pane.process(&colour_flood()[..200_000]);
        let text = snapshot_cost(&pane, SnapshotFormat::Text);
        let ansi = snapshot_cost(&pane, SnapshotFormat::Ansi);
        println!(
            "snapshot {cols}x{rows} (in process)  text {:>8.3} ms  ansi {:>8.3} ms",
            text.as_secs_f64() * 1e3,
            ansi.as_secs_f64() * 1e3
        );
    }
}
