//! Many create/exit cycles leave no zombie children and no growth in open
//! fds or threads.

use crate::common;

use common::{Daemon, TmuxServer, wait_for};
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Usage {
    fds: usize,
    threads: usize,
    /// Live children (tmux clients): zero when no session is tracked.
    children: usize,
    zombies: usize,
}

fn usage(pid: u32) -> Usage {
    let count = |dir: String| std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    let (mut children, mut zombies) = (0, 0);
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...; comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            if fields[0] == "Z" {
                zombies += 1
            } else {
                children += 1
            }
        }
    }
    Usage {
        fds: count(format!("/proc/{pid}/fd")),
        threads: count(format!("/proc/{pid}/task")),
        children,
        zombies,
    }
}

/// Each open fd and what it is, for a failure's message.
fn fds(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .map(|e| {
                    format!(
                        "{}->{}",
                        e.file_name().to_string_lossy(),
                        std::fs::read_link(e.path())
                            .map(|p| p.display().to_string())
                            .unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Half the sessions exit on their own at once, half are killed through the API.
fn cycle(daemon: &Daemon, i: usize) {
    if i.is_multiple_of(2) {
        daemon.create(&json!({ "command": "true" }));
    } else {
        let session = daemon.create(&json!({ "command": common::SHELL }));
        let id = session["session_id"].as_str().unwrap();
        let (status, body) = daemon.delete(&format!("/v1/sessions/{id}?mode=kill"));
        assert_eq!(status, 200, "{body}");
    }
}

fn settle(daemon: &Daemon) -> Usage {
    wait_for("every session to be reaped", || {
        daemon.sessions().is_empty().then_some(())
    });
    wait_for("children to be waited on", || {
        let now = usage(daemon.pid());
        (now.children == 0 && now.zombies == 0).then_some(now)
    })
}

#[test]
fn create_exit_cycles_leak_nothing() {
    let tmux = TmuxServer::new();
    // A session that outlives the cycles keeps the tmux server up throughout.
    tmux.new_shell("anchor");
    let daemon = Daemon::start(&tmux);
    wait_for("anchor adopted", || {
        (daemon.sessions().len() == 1).then_some(())
    });
    let (status, body) = daemon.delete(&format!("/v1/sessions/{}", daemon.session_ids()[0]));
    assert_eq!(status, 200, "{body}");

    for i in 0..10 {
        cycle(&daemon, i);
    }
    let baseline = settle(&daemon);
    for i in 0..200 {
        cycle(&daemon, i);
    }
    settle(&daemon);
    // Blocking-pool threads idle out; fds and threads must come back to the baseline.
    let after = common::wait_for_reporting("usage back to the baseline", || {
        let now = usage(daemon.pid());
        match now.fds <= baseline.fds && now.threads <= baseline.threads {
            true => Ok(now),
            false => Err(format!(
                "{now:?}, baseline {baseline:?}; fds {:?}",
                fds(daemon.pid())
            )),
        }
    });
    // Nothing is cold, so nothing needs the server-wide client either: the
    // forgotten anchor is left with no client of tmuxd's.
    wait_for("no tmux client left", || {
        tmux.run(&["list-clients", "-F", "#{client_flags}"])
            .trim()
            .is_empty()
            .then_some(())
    });
    eprintln!("baseline {baseline:?}, after 200 cycles {after:?}");
    assert_eq!(after.zombies, 0);
    let ended: Vec<_> = daemon
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "session_deleted")
        .collect();
    let mut ids: Vec<_> = ended.iter().map(|e| e["session_id"].to_string()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), ended.len(), "each end recorded once: {ended:?}");
    let odd: Vec<_> = daemon
        .events()
        .into_iter()
        .filter(|e| {
            e["kind"] != "session_deleted"
                && e["kind"] != "session_created"
                && e["kind"] != "session_state"
        })
        .collect();
    assert_eq!(
        ended.len(),
        210,
        "every session's end was recorded; other events: {odd:?}"
    );
    assert!(tmux.has_session("anchor"));
}
