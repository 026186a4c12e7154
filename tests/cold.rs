//! Sessions without a control client of their own ("cold", `live: false`:
//! `tmux.live_clients`), on real tmux: what they do is still seen through
//! tmuxd's one look across the server (activity, bell flags, dead panes):
//! a cold session that prints works and becomes hot, a bell raises
//! attention, a question after output needs someone, and watching them
//! sets, sizes and types nothing.

use crate::common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use serde_json::Value;

/// One client for the sessions that are not busy, watched or new.
fn one_live_client() -> DaemonOptions {
    DaemonOptions {
        tmux_config: "live_clients = 1\n".to_owned(),
        ..DaemonOptions::default()
    }
}

fn summary_of(daemon: &Daemon, name: &str) -> Value {
    daemon
        .sessions()
        .into_iter()
        .find(|s| s["tmux_name"] == name)
        .unwrap_or_else(|| panic!("{name} is not listed"))
}

/// Waits until `name` is attached (no longer `starting`); its id.
fn attached_id(daemon: &Daemon, name: &str) -> String {
    wait_for(&format!("{name} attached"), || {
        let s = summary_of(daemon, name);
        (s["state"] != "starting").then(|| s["session_id"].as_str().unwrap().to_owned())
    })
}

/// Waits until `name` is listed cold (attached once, then let go); its id.
fn cold_id(daemon: &Daemon, name: &str) -> String {
    wait_for(&format!("{name} cold"), || {
        let s = summary_of(daemon, name);
        (s["live"] == false && s["state"] != "starting")
            .then(|| s["session_id"].as_str().unwrap().to_owned())
    })
}

/// A program that waits for a line without echoing it, so that an Enter
/// typed at tmux (not through tmuxd) prints nothing; then runs `then`.
fn after_enter(then: &str) -> String {
    format!("bash --norc --noprofile -c 'stty -echo; read x; {then}; sleep 600'")
}

/// Everything tmux would show of a session's and its window's options,
/// and the server's: what watching must never change.
fn options(tmux: &TmuxServer, name: &str) -> Vec<String> {
    let target = format!("={name}:");
    let mut all = Vec::new();
    for args in [
        vec!["show-options", "-t", &target],
        vec!["show-options", "-w", "-t", &target],
        vec!["show-options", "-g"],
        vec!["show-options", "-gw"],
        vec!["show-hooks", "-t", &target],
        vec!["show-hooks", "-g"],
    ] {
        all.extend(tmux.run(&args).lines().map(|l| format!("{args:?} {l}")));
    }
    all
}

#[test]
fn a_cold_session_that_rings_a_bell_raises_attention() {
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    // Rings, then waits again (work after a bell would take its flag down).
    tmux.new_session("ringer", (80, 24), &after_enter("printf \"\\a\"; read y"));
    let before = options(&tmux, "ringer");
    let daemon = Daemon::start_with(&tmux, one_live_client());
    // Typed into through tmuxd, the shell is the most recently active:
    // it holds the one client, and the ringer goes cold.
    let anchor = attached_id(&daemon, "anchor");
    daemon.type_line(&anchor, "echo anchored");
    let ringer = cold_id(&daemon, "ringer");
    assert!(
        summary_of(&daemon, "ringer")["attention"].is_null(),
        "{}",
        summary_of(&daemon, "ringer")
    );

    // The bell is the only byte it writes: no screen change to see.
    let rang = Instant::now();
    tmux.send_keys("ringer", &["Enter"]);
    let raised = wait_for("the cold session's bell", || {
        let s = summary_of(&daemon, "ringer");
        (!s["attention"].is_null()).then_some(s)
    });
    eprintln!("bell -> attention in {:?}", rang.elapsed());
    assert_eq!(raised["attention"]["reason"], "bell", "{raised}");
    assert_eq!(raised["session_id"], ringer.as_str());

    // Watching set nothing on it, resized nothing, typed nothing.
    assert_eq!(options(&tmux, "ringer"), before);
    assert_eq!(tmux.size("ringer"), (80, 24));
    assert_eq!(tmux.capture("ringer"), Vec::<String>::new());
}

#[test]
fn a_cold_session_that_prints_works_and_then_asks_for_someone() {
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    // Quiet while tmuxd adopts it and lets it go cold, then works on its
    // own (longer than a program takes to open: `work_alone`), then asks.
    let program = "bash --norc --noprofile -c 'sleep 8; \
                   for i in $(seq 16); do echo step-$i; sleep 0.5; done; \
                   read -p \"Proceed? [y/N] \" a; sleep 600'";
    tmux.new_session("asker", (80, 24), program);
    let before = options(&tmux, "asker");
    let daemon = Daemon::start_with(&tmux, one_live_client());
    let anchor = attached_id(&daemon, "anchor");
    daemon.type_line(&anchor, "echo anchored");
    let asker = cold_id(&daemon, "asker");
    assert_eq!(
        tmux.capture("asker"),
        Vec::<String>::new(),
        "the program printed before its session went cold: the machine is too slow for this test"
    );
    assert!(summary_of(&daemon, "asker")["attention"].is_null());

    // It prints on its own: working, hot, its screen followed.
    tmux.wait_for_text("asker", "step-1");
    let started = Instant::now();
    let working = wait_for("the cold session working", || {
        let s = summary_of(&daemon, "asker");
        (s["state"] == "working" && s["live"] == true).then_some(s)
    });
    eprintln!("output -> working and hot in {:?}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "working only after {:?}: {working}",
        started.elapsed()
    );

    // Then a question after the work it did on its own: someone is needed.
    let asked = daemon.wait_until(&asker, "attention");
    assert_eq!(asked["attention"]["reason"], "needs_input", "{asked}");
    assert_eq!(asked["state"], "waiting", "{asked}");
    let screen = daemon.snapshot_lines(&asker);
    assert!(
        screen.iter().any(|l| l.contains("step-16"))
            && screen.iter().any(|l| l.contains("Proceed? [y/N]")),
        "{screen:?}"
    );
    assert_eq!(options(&tmux, "asker"), before);
    assert_eq!(tmux.size("asker"), (80, 24));
}

/// One pane's output stream (`/v1/sessions/{id}/stream`), read with a
/// deadline: its text messages and the bytes of its binary frames, whose
/// sequence numbers must rise.
struct OutputStream {
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    notices: Vec<Value>,
    bytes: Vec<u8>,
    last_seq: Option<u64>,
}

impl OutputStream {
    /// Opens the stream (after `since`, if given) and reads its `ready`
    /// and any notice sent before the first frame.
    fn open(daemon: &Daemon, id: &str, since: Option<u64>) -> OutputStream {
        let path = match since {
            Some(since) => format!("/v1/sessions/{id}/stream?since={since}"),
            None => format!("/v1/sessions/{id}/stream"),
        };
        let (socket, _) = tungstenite::connect(daemon.ws_request(&path)).unwrap();
        if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = socket.get_ref() {
            tcp.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
        }
        let mut stream = OutputStream {
            socket,
            notices: Vec::new(),
            bytes: Vec::new(),
            last_seq: None,
        };
        wait_for("the stream's ready message", || {
            stream.read_one();
            (!stream.notices.is_empty()).then_some(())
        });
        assert_eq!(stream.notices[0]["type"], "ready", "{:?}", stream.notices);
        // A notice comes right after `ready`, before any frame.
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(500) && stream.bytes.is_empty() {
            stream.read_one();
        }
        stream
    }

    /// Reads one message if one comes within the read timeout.
    fn read_one(&mut self) {
        match self.socket.read() {
            Ok(tungstenite::Message::Text(text)) => {
                self.notices.push(serde_json::from_str(&text).unwrap());
            }
            Ok(tungstenite::Message::Binary(frame)) => {
                let seq = u64::from_be_bytes(frame[..8].try_into().unwrap());
                assert!(
                    self.last_seq.is_none_or(|last| seq > last),
                    "frame {seq} after {:?}",
                    self.last_seq
                );
                self.last_seq = Some(seq);
                self.bytes.extend_from_slice(&frame[8..]);
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("the stream failed: {e}"),
        }
    }

    /// Reads until `done` finds what it looks for in what arrived.
    fn read_until_found<T>(
        &mut self,
        what: &str,
        mut done: impl FnMut(&OutputStream) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + common::PATIENCE;
        loop {
            if let Some(found) = done(self) {
                return found;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            self.read_one();
        }
    }

    /// Reads until the output holds `needle`.
    fn read_until(&mut self, needle: &str) {
        self.read_until_found(&format!("{needle:?} on the stream"), |s| {
            let tail = s.bytes.len().saturating_sub(needle.len() + 64 * 1024);
            String::from_utf8_lossy(&s.bytes[tail..])
                .contains(needle)
                .then_some(())
        })
    }

    /// Reads until the shell loop's `END-<count>` line; its count.
    fn read_end_count(&mut self) -> u64 {
        self.read_until_found("END-<count>", |s| {
            let text = String::from_utf8_lossy(&s.bytes);
            let (_, after) = text.rsplit_once("END-")?;
            let (count, _) = after.split_once('\r')?;
            count.parse().ok()
        })
    }

    /// The numbers of the output's lines that are `L<n>` exactly.
    fn numbered_lines(&self) -> Vec<u64> {
        String::from_utf8_lossy(&self.bytes)
            .split('\n')
            // A line the shell's prompt began holds what it wrote there,
            // then a carriage return (bracketed paste turned off).
            .filter_map(|l| {
                let l = l.trim_end_matches('\r').rsplit('\r').next()?;
                l.strip_prefix('L')?.parse().ok()
            })
            .collect()
    }

    fn truncation_notices(&self) -> Vec<&Value> {
        self.notices
            .iter()
            .filter(|n| n["type"] == "replay_truncated")
            .collect()
    }
}

/// Asserts `lines` are `first..=last` once each and in order.
fn assert_consecutive(lines: &[u64], first: u64, last: u64) {
    assert!(!lines.is_empty(), "no numbered line arrived");
    let want: Vec<u64> = (first..=last).collect();
    if lines != want {
        let missing: Vec<u64> = want
            .iter()
            .filter(|n| !lines.contains(n))
            .copied()
            .collect();
        let twice = lines.windows(2).filter(|w| w[0] >= w[1]).count();
        panic!(
            "{} lines of {first}..={last}: {} missing (first: {:?}), {twice} out of order or twice",
            lines.len(),
            missing.len(),
            &missing[..missing.len().min(10)]
        );
    }
}

#[test]
fn a_stream_opened_on_a_cold_session_gets_every_byte_it_prints_then() {
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    tmux.new_shell("quiet");
    // Prints a line every few milliseconds from the Enter typed at tmux
    // until `stop` exists: printing while cold, heated by the policy and
    // by the stream opened on it at about the same time.
    let dir = tempfile::tempdir().unwrap();
    let stop = dir.path().join("stop");
    let printer = format!(
        "bash --norc --noprofile -c 'stty -echo; read x; i=0; \
         while [ ! -e {} ]; do i=$((i+1)); echo L$i; sleep 0.005; done; echo END-$i; sleep 600'",
        stop.display()
    );
    tmux.new_session("printer", (80, 24), &printer);
    let daemon = Daemon::start_with(&tmux, one_live_client());
    let anchor = attached_id(&daemon, "anchor");
    daemon.type_line(&anchor, "echo anchored");
    let quiet = cold_id(&daemon, "quiet");
    let printer = cold_id(&daemon, "printer");

    // Cold, then streamed: hot, and every line typed after the stream
    // opened arrives once, in order.
    let mut stream = OutputStream::open(&daemon, &quiet, None);
    assert_eq!(summary_of(&daemon, "quiet")["live"], true);
    daemon.type_line(&quiet, "seq -f L%g 1 5000; echo DONE-$((6*7))");
    stream.read_until("DONE-42\r\n");
    // From its first byte on: the shell's echo of the line typed, too.
    let text = String::from_utf8_lossy(&stream.bytes).into_owned();
    assert!(
        text.contains("seq -f L%g 1 5000; echo DONE-$((6*7))"),
        "no echo of the typed line: {:?}",
        &text[..text.len().min(300)]
    );
    assert_consecutive(&stream.numbered_lines(), 1, 5000);
    assert!(
        stream.truncation_notices().is_empty(),
        "{:?}",
        stream.notices
    );

    // Already printing while cold when the stream opens: it starts where
    // it joins, and from there nothing is lost across the heating.
    tmux.send_keys("printer", &["Enter"]);
    tmux.wait_for_text("printer", "L20");
    let mut joined = OutputStream::open(&daemon, &printer, None);
    joined.read_until("L");
    wait_for("the printer hot", || {
        (summary_of(&daemon, "printer")["live"] == true).then_some(())
    });
    let seen = joined.numbered_lines().len();
    joined.read_until_found("200 more lines", |s| {
        (s.numbered_lines().len() > seen + 200).then_some(())
    });
    std::fs::write(&stop, "").unwrap();
    let end = joined.read_end_count();
    let lines = joined.numbered_lines();
    assert_consecutive(&lines, lines[0], end);
}

#[test]
fn a_streamed_session_loses_nothing_while_the_budget_moves_others() {
    let tmux = TmuxServer::new();
    for name in ["streamed", "b", "c"] {
        tmux.new_shell(name);
    }
    let dir = tempfile::tempdir().unwrap();
    let stop = dir.path().join("stop");
    let daemon = Daemon::start_with(&tmux, one_live_client());
    let streamed = attached_id(&daemon, "streamed");
    let b = attached_id(&daemon, "b");
    let c = attached_id(&daemon, "c");

    let mut stream = OutputStream::open(&daemon, &streamed, None);
    daemon.type_line(
        &streamed,
        &format!(
            "i=0; while [ ! -e {} ]; do i=$((i+1)); echo L$i; sleep 0.005; done; echo END-$i",
            stop.display()
        ),
    );
    stream.read_until("L1\r\n");

    // The one budgeted client moves between the others while the streamed
    // session prints: b watched, then let go; c typed into, then b again.
    let mut churn = || {
        let watching = OutputStream::open(&daemon, &b, None);
        wait_for("b hot", || {
            (daemon.summary(&b)["live"] == true).then_some(())
        });
        drop(watching);
        daemon.type_line(&c, "echo c-now");
        wait_for("b cold again", || {
            (daemon.summary(&b)["live"] == false).then_some(())
        });
        stream.read_one();
    };
    churn();
    churn();
    assert_eq!(daemon.summary(&streamed)["live"], true);
    // Still printing after the churn: it all happened mid-stream.
    let during = stream.numbered_lines().last().copied().unwrap_or(0);
    stream.read_until_found("lines after the churn", |s| {
        (s.numbered_lines().last().copied().unwrap_or(0) > during + 10).then_some(())
    });
    std::fs::write(&stop, "").unwrap();
    let end = stream.read_end_count();
    assert_consecutive(&stream.numbered_lines(), 1, end);
}

/// A stream of the session `ticker` (`id`) closed while it prints line
/// `line`, the session held hot by another stream meanwhile: resumed
/// after the closed one's last frame, it gets that line and no gap. The
/// resumed stream's last seq.
fn resume_held(
    daemon: &Daemon,
    tmux: &TmuxServer,
    id: &str,
    closed: OutputStream,
    line: u64,
) -> u64 {
    let seen = closed.last_seq.unwrap();
    let mut holder = OutputStream::open(daemon, id, None);
    drop(closed);
    tmux.send_keys("ticker", &["Enter"]);
    holder.read_until(&format!("L{line}\r\n"));
    let mut resumed = OutputStream::open(daemon, id, Some(seen));
    resumed.read_until(&format!("L{line}\r\n"));
    assert!(
        resumed.truncation_notices().is_empty(),
        "{:?}",
        resumed.notices
    );
    assert_eq!(resumed.numbered_lines(), vec![line]);
    resumed.last_seq.unwrap()
}

#[test]
fn a_resume_across_a_cold_stretch_is_told_of_the_gap_and_only_then() {
    let tmux = TmuxServer::new();
    tmux.new_shell("anchor");
    // Prints `L<n>` for each Enter typed at tmux, echoing nothing typed.
    let ticker = "bash --norc --noprofile -c 'stty -echo; n=0; \
                  while read x; do n=$((n+1)); echo L$n; done'";
    tmux.new_session("ticker", (80, 24), ticker);
    let daemon = Daemon::start_with(&tmux, one_live_client());
    let anchor = attached_id(&daemon, "anchor");
    let ticker = attached_id(&daemon, "ticker");

    let mut first = OutputStream::open(&daemon, &ticker, None);
    tmux.send_keys("ticker", &["Enter"]);
    first.read_until("L1\r\n");
    let seen = resume_held(&daemon, &tmux, &ticker, first, 2);

    // Let go (the anchor is the most recently active now), then printing
    // while cold: those bytes were never read, and a resume from before
    // the cold stretch is told so.
    daemon.type_line(&anchor, "echo anchored");
    cold_id(&daemon, "ticker");
    tmux.send_keys("ticker", &["Enter"]);
    tmux.wait_for_text("ticker", "L3");
    let mut across = OutputStream::open(&daemon, &ticker, Some(seen));
    let gaps = across.truncation_notices();
    assert_eq!(gaps.len(), 1, "{:?}", across.notices);
    assert_eq!(
        across.notices[1]["type"], "replay_truncated",
        "the gap is said before any frame: {:?}",
        across.notices
    );
    tmux.send_keys("ticker", &["Enter"]);
    across.read_until("L4\r\n");
    assert!(!across.numbered_lines().contains(&3), "{:?}", across.bytes);

    // Hot since: a resume from after the cold stretch misses nothing and
    // is told of no gap.
    resume_held(&daemon, &tmux, &ticker, across, 5);
}

/// Everything of the server a watcher could disturb, as lines to compare:
/// the sessions there are; each one's size, cursor, history length, screen,
/// options, hooks and environment; the server's and global options, hooks
/// and environment.
fn server_state(tmux: &TmuxServer, names: &[&str]) -> Vec<String> {
    let mut all = vec![tmux.run(&["list-sessions", "-F", "#{session_name}"])];
    for name in names {
        let target = format!("={name}:");
        let look = "#{window_width}x#{window_height} cursor #{cursor_x},#{cursor_y} history #{history_size}";
        all.push(format!(
            "{name}: {}",
            tmux.run(&["display-message", "-p", "-t", &target, look])
        ));
        all.push(format!("{name}: {:?}", tmux.capture(name)));
        for args in [
            vec!["show-options", "-t", &target],
            vec!["show-options", "-w", "-t", &target],
            vec!["show-hooks", "-t", &target],
            vec!["show-environment", "-t", &target],
        ] {
            all.extend(
                tmux.run(&args)
                    .lines()
                    .map(|l| format!("{name} {args:?} {l}")),
            );
        }
    }
    for args in [
        ["show-options", "-s"],
        ["show-options", "-g"],
        ["show-options", "-gw"],
        ["show-hooks", "-g"],
        ["show-environment", "-g"],
    ] {
        all.extend(tmux.run(&args).lines().map(|l| format!("{args:?} {l}")));
    }
    all
}

/// Fails with what changed (and only that) when `after` is not `before`.
fn assert_unchanged(before: &[String], after: &[String], what: &str) {
    let gone: Vec<&String> = before.iter().filter(|l| !after.contains(l)).collect();
    let new: Vec<&String> = after.iter().filter(|l| !before.contains(l)).collect();
    assert!(
        before == after,
        "{what}: before only {gone:#?}, after only {new:#?}"
    );
}

/// Waits until every one of `names` is tracked and looked at; their ids.
fn all_looked_at(daemon: &Daemon, names: &[&str]) -> Vec<String> {
    names.iter().map(|name| attached_id(daemon, name)).collect()
}

/// With one client budgeted, makes some sessions hot and some cold, one of
/// them hot and then cold again; returns the stream that holds one hot.
fn hot_and_cold(daemon: &Daemon, names: &[&str]) -> OutputStream {
    let ids = all_looked_at(daemon, names);
    let live = |id: &str| daemon.summary(id)["live"] == true;
    // Cold ones: all but the one the budget keeps (nothing printed since
    // their first looks: whichever holds a client).
    wait_for("all but one cold", || {
        (ids.iter().filter(|id| live(id)).count() <= 1).then_some(())
    });
    let cold: Vec<&String> = ids.iter().filter(|id| !live(id)).collect();
    let (warmed, held) = (cold[0].as_str(), cold[1].as_str());
    let watching = OutputStream::open(daemon, warmed, None);
    wait_for("the watched one hot", || live(warmed).then_some(()));
    drop(watching);
    // Watched, the held one takes the one budgeted client.
    let holder = OutputStream::open(daemon, held, None);
    wait_for("the held one hot", || live(held).then_some(()));
    wait_for("the watched one cold again", || {
        (!live(warmed)).then_some(())
    });
    let heats: Vec<bool> = ids.iter().map(|id| live(id)).collect();
    assert!(
        heats.contains(&true) && heats.contains(&false),
        "hot and cold together: {heats:?}"
    );
    holder
}

#[test]
fn stopping_killing_or_detaching_leaves_hot_and_cold_sessions_alone() {
    let tmux = TmuxServer::new();
    let names = ["a", "b", "c", "d", "e"];
    let sizes = [(80, 24), (100, 30), (132, 40), (90, 20), (70, 50)];
    for (name, size) in names.iter().zip(sizes) {
        crate::safety::shell_at_prompt(&tmux, name, size);
    }
    let before = server_state(&tmux, &names);
    let no_clients = || {
        wait_for("tmuxd's clients to leave", || {
            tmux.run(&["list-clients"]).trim().is_empty().then_some(())
        })
    };

    // Detached, a hot one and a cold one; then SIGTERM with the rest.
    let mut daemon = Daemon::start_with(&tmux, one_live_client());
    let holder = hot_and_cold(&daemon, &names);
    assert_unchanged(&before, &server_state(&tmux, &names), "watching disturbed");
    let hot = daemon
        .sessions()
        .into_iter()
        .find(|s| s["live"] == true)
        .unwrap();
    let cold = daemon
        .sessions()
        .into_iter()
        .find(|s| s["live"] == false)
        .unwrap();
    for session in [hot, cold] {
        let id = session["session_id"].as_str().unwrap();
        let (status, body) = daemon.delete(&format!("/v1/sessions/{id}"));
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
        assert_eq!(body["tmux_alive"], true, "{body}");
    }
    assert_unchanged(&before, &server_state(&tmux, &names), "detaching disturbed");
    let (status, took) = daemon.terminate();
    assert!(status.success(), "{status:?} after {took:?}");
    drop(holder);
    no_clients();
    assert_unchanged(&before, &server_state(&tmux, &names), "SIGTERM disturbed");

    // SIGKILL with hot and cold ones (a new data dir: all adopted again).
    let mut daemon = Daemon::start_with(&tmux, one_live_client());
    let holder = hot_and_cold(&daemon, &names);
    daemon.kill9();
    drop(holder);
    no_clients();
    assert_unchanged(&before, &server_state(&tmux, &names), "SIGKILL disturbed");
}
