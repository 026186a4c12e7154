//! The dashboard at `/`: its assets and headers over HTTP, and the page
//! itself in headless Chromium (Debian's `chromium`, driven by
//! `playwright-core` from `tests/browser/`) against the real daemon and a
//! private tmux server. `scripts/test` installs Chromium and the npm
//! packages; without them these tests fail, naming what is missing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};

/// One browser at a time: the machine has two cores.
static BROWSER: Mutex<()> = Mutex::new(());

const TOKEN: &str = "dashboard-test-token-0123456789";
const READ_TOKEN: &str = "dashboard-test-read-token-0123456789";

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

fn chromium() -> PathBuf {
    std::env::var_os("TMUXD_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// Fails, never skips, when something the browser tests need is missing.
fn require_browser_tools() {
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node is not installed: run scripts/test, which installs what the browser tests need"
    );
    assert!(
        chromium().exists(),
        "no chromium at {}: run scripts/test (it installs Debian's chromium) or set TMUXD_CHROMIUM",
        chromium().display()
    );
    assert!(
        browser_dir().join("node_modules/playwright-core").exists(),
        "tests/browser/node_modules is missing: run scripts/test (it runs `npm ci` there)"
    );
}

/// Runs one scenario of `tests/browser/dashboard.mjs` against `daemon`;
/// returns its output, or panics with it.
fn run_scenario(scenario: &str, daemon: &Daemon, env: &[(&str, &str)]) -> String {
    require_browser_tools();
    let _one_at_a_time = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let log = tempfile::NamedTempFile::new().unwrap();
    // One file description for both streams: two `reopen`s would each keep
    // an offset of their own, and a failure on stderr overwrote the log.
    let out = log.reopen().unwrap();
    let err = out.try_clone().unwrap();
    let mut child = Command::new("node")
        .arg("dashboard.mjs")
        .arg(scenario)
        .current_dir(browser_dir())
        .env("TMUXD_URL", &daemon.base)
        .env("TMUXD_PID", daemon.pid().to_string())
        .env("TMUXD_TEST_SHELL", common::SHELL)
        .envs(daemon.token().map(|t| ("TMUXD_TEST_TOKEN", t)))
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("spawn node");
    // The script's own waits are bounded by PATIENCE each; this bounds the whole.
    let deadline = started + PATIENCE * 4;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    match status {
        Some(status) if status.success() => println!("{output}"),
        Some(status) => panic!("browser scenario {scenario} failed ({status}):\n{output}"),
        None => panic!("browser scenario {scenario} did not finish in time:\n{output}"),
    }
    println!(
        "browser scenario {scenario}: {:.1}s",
        started.elapsed().as_secs_f64()
    );
    output
}

#[test]
fn page_and_assets_are_served_with_a_strict_policy() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let http = reqwest::blocking::Client::new();
    let page = http.get(format!("{}/", daemon.base)).send().unwrap();
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let csp = headers["content-security-policy"].to_str().unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let html = page.text().unwrap();
    assert!(html.contains(r#"<script type="module" src="/assets/app.js">"#));
    assert!(!html.contains("<script>"), "no inline script");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nothing from elsewhere"
    );

    let script = http
        .get(format!("{}/assets/app.js", daemon.base))
        .send()
        .unwrap();
    assert_eq!(script.status(), 200);
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let etag = script.headers()["etag"].clone();
    let again = http
        .get(format!("{}/assets/app.js", daemon.base))
        .header("If-None-Match", etag)
        .send()
        .unwrap();
    assert_eq!(again.status(), 304, "unchanged assets revalidate");
    let missing = http
        .get(format!("{}/assets/nope.js", daemon.base))
        .send()
        .unwrap();
    assert_eq!(missing.status(), 404);
    let foreign = http
        .get(format!("{}/", daemon.base))
        .header("Host", "attacker.example")
        .send()
        .unwrap();
    assert_eq!(foreign.status(), 403, "no token: loopback Host only");
}

#[test]
fn with_a_token_the_page_loads_but_the_api_does_not() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(&tmux, token_options());
    let http = reqwest::blocking::Client::new();
    for path in ["/", "/assets/app.js", "/assets/style.css"] {
        let response = http.get(format!("{}{path}", daemon.base)).send().unwrap();
        assert_eq!(response.status(), 200, "{path} needs no token");
    }
    let api = http
        .get(format!("{}/v1/sessions", daemon.base))
        .send()
        .unwrap();
    assert_eq!(api.status(), 401);
}

/// The adopt list: `GET /v1/sessions/untracked` names the tmux sessions
/// tmuxd does not track (here one detached from it), with windows,
/// attached clients, birth, the id it keeps and why, and never a tracked
/// one; `tmuxd adopt` without a name prints the same. (Each reason is
/// table-tested in `supervisor::untracked`.)
#[test]
fn untracked_sessions_are_listed_for_adoption() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    daemon.create_named("kept", common::SHELL);
    let left = daemon.create_named("left", common::SHELL);
    let (status, _) = daemon.delete(&format!("/v1/sessions/{left}?mode=detach"));
    assert_eq!(status, 200);
    tmux.run(&["new-window", "-d", "-t", "=left:"]);

    let detached = wait_for("the detached session listed with its two windows", || {
        let (status, body) = daemon.get("/v1/sessions/untracked");
        assert_eq!(status, 200, "{body}");
        let listed = body["sessions"].as_array().unwrap().clone();
        assert!(
            !listed.iter().any(|s| s["tmux_name"] == "kept"),
            "a tracked session is not listed: {body}"
        );
        listed
            .into_iter()
            .find(|s| s["tmux_name"] == "left" && s["windows"] == 2 && s["attached_clients"] == 0)
    });
    assert_eq!(detached["reason"], "detached");
    assert_eq!(detached["session_id"], left.as_str());
    assert!(detached["created_at"].as_str().unwrap().starts_with("20"));

    let printed = common::stdout_ok(daemon.client().arg("adopt").output().unwrap());
    let mut lines = printed.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "WINDOWS", "ATTACHED", "CREATED", "ID", "WHY"],
        "{printed}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[..3], ["left", "2", "0"], "{printed}");
    assert_eq!(row[5..], [left.as_str(), "detached"], "{printed}");

    let refused = daemon.client().args(["adopt", "-q"]).output().unwrap();
    assert_eq!(
        refused.status.code(),
        Some(2),
        "-q needs a name to print the id of"
    );

    // Adopted from the list, it leaves the list and is tracked under its old id.
    let (status, adopted) = daemon.post(
        "/v1/sessions/adopt",
        &serde_json::json!({ "tmux_name": "left" }),
    );
    assert_eq!(status, 201, "{adopted}");
    assert_eq!(adopted["session"]["session_id"], left.as_str());
    let (_, body) = daemon.get("/v1/sessions/untracked");
    assert_eq!(body["sessions"], serde_json::json!([]), "{body}");
}

fn token_options() -> DaemonOptions {
    DaemonOptions {
        extra_config: format!("[auth]\ntoken = {TOKEN:?}\nread_token = {READ_TOKEN:?}\n"),
        ..Default::default()
    }
}

#[test]
fn browser_wall_open_type_render_bell_resume_phone_kill() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let home = std::fs::canonicalize(daemon.home()).unwrap();
    assert_eq!(
        home,
        daemon.home(),
        "the page shows HOME as given, tmux the real path"
    );
    run_scenario(
        "end-to-end",
        &daemon,
        &[
            ("TMUXD_TEST_TMUX_SOCKET", tmux.socket.as_str()),
            ("TMUXD_TEST_HOME", home.to_str().unwrap()),
        ],
    );
    assert!(
        !tmux.has_session("dash-a"),
        "killed from the page: the tmux session is gone"
    );
    assert!(tmux.has_session("dash-0-other"), "the other session lives");
}

/// A plain load without a failed request or a console error; names readable
/// at 1280x800 and 390x844 with attention on half the sessions; the title
/// counting them; keyboard navigation; an ended session after a reload with
/// its exit status and last screen; the scrollback in view; a phone's open
/// session at >= 10 px with an answer bar; adopting from the list.
#[test]
fn browser_triage_wall_ended_scrollback_phone_adopt() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    run_scenario(
        "triage",
        &daemon,
        &[("TMUXD_TEST_TMUX_SOCKET", tmux.socket.as_str())],
    );
    let asked = tmux.capture("asker");
    assert!(
        asked.iter().any(|l| l == "answered-y"),
        "the answer bar typed y: {asked:?}"
    );
}

/// An open 90x30 session keeps its cursor in view at 1280x720 and 1440x900
/// (fitted to the height too), on a 390x844 phone and when made too big to
/// fit (followed); the filter finds sessions by their screen text, also one
/// never on screen; the hover preview is at least 11 px and inside the
/// window.
#[test]
fn browser_cursor_in_view_filter_on_screen_text_readable_preview() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    run_scenario("readable", &daemon, &[]);
}

/// The page's pure decisions (`src/web/assets/words.js`: states in words,
/// a question's answers), table-tested in node.
#[test]
fn dashboard_words_and_answers_table() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    run_scenario("words", &daemon, &[]);
}

#[test]
fn browser_refused_until_the_token_and_read_only_with_the_read_token() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(&tmux, token_options());
    run_scenario(
        "tokens",
        &daemon,
        &[
            ("TMUXD_TEST_TOKEN", TOKEN),
            ("TMUXD_TEST_READ_TOKEN", READ_TOKEN),
        ],
    );
    let typed = tmux.capture("dash-secret");
    assert!(
        !typed.iter().any(|l| l.contains("nope")),
        "the read-only page typed nothing: {typed:?}"
    );
}

/// A page served on another port of the same machine gets no WebSocket (a
/// WebSocket has no preflight): from `localhost:` and `127.0.0.1:` origins,
/// with and without the token, nothing opens (no screen is read) and
/// nothing is typed.
#[test]
fn browser_a_page_on_another_port_cannot_type_or_read() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("pwned");
    run_scenario(
        "cross-origin",
        &daemon,
        &[("TMUXD_TEST_MARKER", marker.to_str().unwrap())],
    );
    assert!(!marker.exists(), "the foreign page typed a command");
    let typed = tmux.capture("victim");
    assert!(
        !typed.iter().any(|l| l.contains("touch")),
        "nothing was typed: {typed:?}"
    );
    let log = daemon.log();
    assert!(
        log.contains("is not this daemon's own"),
        "refused by origin"
    );
}

/// 50 live sessions, one printing: the page's JS heap (≤ 50 MB) and the
/// daemon's CPU. The numbers are printed for BENCHMARKS.md.
#[test]
fn browser_fifty_sessions_heap_and_daemon_cpu() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let output = run_scenario("measure-fifty", &daemon, &[]);
    let line = output
        .lines()
        .find(|l| l.starts_with("MEASUREMENT "))
        .expect("the scenario reports its measurement");
    eprintln!("{line}");
}

/// Regenerates docs/dashboard.png, dashboard-session.png, dashboard-ended.png
/// and dashboard-phone.png:
/// `cargo test --test tests -- --ignored dashboard::screenshots`.
#[test]
#[ignore = "writes docs/*.png; run by hand"]
fn screenshots() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    run_scenario(
        "screenshots",
        &daemon,
        &[
            ("TMUXD_SCREENSHOT_DIR", docs.to_str().unwrap()),
            ("TMUXD_TEST_TMUX_SOCKET", tmux.socket.as_str()),
        ],
    );
}

/// docs/push-phone.png, the guide's phone flow:
/// `cargo test --test tests -- --ignored dashboard::push_screenshot`.
#[test]
#[ignore = "writes docs/push-phone.png; run by hand"]
fn push_screenshot() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    run_scenario(
        "push",
        &daemon,
        &[("TMUXD_SCREENSHOT_DIR", docs.to_str().unwrap())],
    );
}

/// Issue 33: the page subscribes to Web Push (to a fake push service the
/// scenario runs: chromium's own needs Google's), tmuxd's push opens with
/// the subscription's keys, shows through the service worker with the
/// question's answers, its `y` types into tmux, and the same `y` again
/// types nothing.
#[test]
fn browser_push_subscribe_show_answer_once() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    run_scenario("push", &daemon, &[]);
    let screen = tmux.capture("asker");
    let answered: Vec<&String> = screen.iter().filter(|l| l.contains("answered-")).collect();
    assert_eq!(answered.len(), 1, "answered once: {screen:?}");
    assert!(answered[0].contains("answered-y"), "{screen:?}");
    let typed_after = screen
        .iter()
        .skip_while(|l| !l.contains("answered-y"))
        .skip(1)
        .any(|l| !l.trim().is_empty());
    assert!(!typed_after, "the stale answer typed: {screen:?}");
}
