//! Trust in the data dir: ids are never reassigned and event seqs never go
//! back, whatever happens to the files; a failing disk is reported, retried,
//! and loses no event for live listeners or, once it recovers, on disk.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, owner_and_mode, wait_for};
use reqwest::Method;
use serde_json::{Value, json};

fn id_number(id: &str) -> u64 {
    id.strip_prefix("sess_").unwrap().parse().unwrap()
}

/// tmux name -> session id, for every session the daemon lists.
fn ids_by_name(daemon: &Daemon) -> BTreeMap<String, String> {
    daemon
        .sessions()
        .iter()
        .map(|s| {
            (
                s["tmux_name"].as_str().unwrap().to_owned(),
                s["session_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn put_thought(daemon: &Daemon, id: &str, text: &str) {
    let (status, body) = daemon.request(
        Method::PUT,
        &format!("/v1/sessions/{id}/thought"),
        Some(&json!({ "text": text })),
    );
    assert_eq!(status, 200, "{body}");
}

/// Every seq in the event files on disk (rotated file first), in file order.
fn seqs_on_disk(data: &Path) -> Vec<u64> {
    let mut seqs = Vec::new();
    for name in ["events.jsonl.1", "events.jsonl"] {
        let text = std::fs::read_to_string(data.join(name)).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let event: Value = serde_json::from_str(line).expect("every line on disk is whole");
            seqs.push(event["seq"].as_u64().unwrap());
        }
    }
    seqs
}

fn next_seq(daemon: &Daemon) -> u64 {
    let (status, page) = daemon.get("/v1/events?format=json");
    assert_eq!(status, 200, "{page}");
    page["next_seq"].as_u64().unwrap()
}

/// Three sessions whose names sort in the opposite order of their ids, so a
/// daemon that numbers what it finds afresh would hand the old ids out again
/// to different sessions. Returns name -> id as first assigned.
fn sessions_in_reverse_order(daemon: &Daemon) -> BTreeMap<String, String> {
    for name in ["zeta", "mid", "alpha"] {
        daemon.create(&json!({ "name": name, "command": common::SHELL }));
    }
    let before = ids_by_name(daemon);
    assert_eq!(before["zeta"], "sess_1");
    assert_eq!(before["alpha"], "sess_3");
    put_thought(daemon, &before["alpha"], "alpha's own thought");
    before
}

/// After a restart that lost data: an old id names its old session or
/// nothing, never another one; a thought stays with its session; new ids are
/// above every old one.
fn assert_no_id_reassigned(daemon: &Daemon, before: &BTreeMap<String, String>) {
    let after = wait_for("all three sessions tracked again", || {
        let after = ids_by_name(daemon);
        before
            .keys()
            .all(|name| after.contains_key(name))
            .then_some(after)
    });
    for (name, old_id) in before {
        let (status, body) = daemon.get(&format!("/v1/sessions/{old_id}"));
        if status == 200 {
            assert_eq!(
                body["session"]["tmux_name"],
                name.as_str(),
                "{old_id} used to name {name}, now {after:?}"
            );
        } else {
            assert_eq!(status, 404, "{body}");
        }
    }
    for (name, id) in &after {
        if let Some(old) = before.get(name) {
            assert!(id == old || id_number(id) > 3, "{name}: {old} -> {id}");
        }
        let (_, body) = daemon.get(&format!("/v1/sessions/{id}"));
        if name != "alpha" {
            assert!(
                body["session"]["thought"].is_null(),
                "alpha's thought moved to {name}: {body}"
            );
        }
    }
    let fresh = daemon.create(&json!({ "name": "fresh", "command": common::SHELL }));
    assert!(
        id_number(fresh["session_id"].as_str().unwrap()) > 3,
        "{fresh}"
    );
}

#[test]
fn ids_are_not_reassigned_after_registry_json_is_deleted() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let before = sessions_in_reverse_order(&daemon);
    daemon.terminate();

    std::fs::remove_file(data.path().join("registry.json")).unwrap();
    let daemon = Daemon::start_with(&tmux, options());
    assert_no_id_reassigned(&daemon, &before);
    // tmux carries each session's id, so a lost registry loses none of them;
    // hidden, so no program in the session gets it.
    assert_eq!(ids_by_name(&daemon)["alpha"], "sess_3");
    assert_eq!(ids_by_name(&daemon)["zeta"], "sess_1");
    let hidden = tmux.run(&["show-environment", "-h", "-t", "=alpha", "tmuxd_id"]);
    assert_eq!(hidden.trim(), "tmuxd_id=sess_3");
    let visible = tmux.run(&["show-environment", "-t", "=alpha"]);
    assert!(!visible.contains("tmuxd_id"), "{visible}");
}

#[test]
fn ids_are_not_reassigned_when_only_the_event_log_remembers_them() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let before = sessions_in_reverse_order(&daemon);
    daemon.kill9();

    // Everything but the event log is gone or damaged, and the sessions
    // carry no mark of tmuxd (as under the fake tmux, which cannot hold one).
    std::fs::write(data.path().join("registry.json"), "{\"version\":1,\"nex").unwrap();
    for file in ["thoughts.json", "counters.json"] {
        let _ = std::fs::remove_file(data.path().join(file));
    }
    for name in before.keys() {
        // Set by the create call itself; absent on a tmuxd that sets none.
        let target = format!("={name}");
        let _ = tmux.output(&["set-environment", "-u", "-t", &target, "tmuxd_id"]);
    }
    let daemon = Daemon::start_with(&tmux, options());
    assert_no_id_reassigned(&daemon, &before);
}

/// The highest seq on disk and the time of the newest event, skipping the
/// lines an earlier damage left (the daemon skips them too).
fn newest_on_disk(data: &Path) -> (u64, DateTime<Utc>) {
    let text = std::fs::read_to_string(data.join("events.jsonl")).unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let highest = events.iter().filter_map(|e| e["seq"].as_u64()).max();
    let at = |e: &Value| serde_json::from_value::<DateTime<Utc>>(e["at"].clone()).unwrap();
    let newest = events.iter().map(at).max();
    (highest.unwrap(), newest.unwrap())
}

/// After `damage`, every event of the new run (and the next one) is
/// numbered above every seq handed out before.
fn assert_numbering_goes_on(
    daemon: &Daemon,
    (highest, last_at, damage): (u64, DateTime<Utc>, &str),
) {
    let next = next_seq(daemon);
    assert!(next > highest, "{damage}: next seq {next} after {highest}");
    let (_, page) = daemon.get("/v1/events?format=json&since=0");
    for event in page["events"].as_array().unwrap() {
        let at: DateTime<Utc> = serde_json::from_value(event["at"].clone()).unwrap();
        if at > last_at {
            assert!(
                event["seq"].as_u64().unwrap() > highest,
                "{damage}: {event} reuses a seq up to {highest}"
            );
        }
    }
}

#[test]
fn event_seq_never_goes_back_when_the_event_log_is_damaged() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let events = data.path().join("events.jsonl");
    let options = || DaemonOptions::in_dir(data.path());
    // Each damage, applied to the log of a cleanly stopped daemon.
    type Damage = fn(&Path);
    let damages: [(&str, Damage); 4] = [
        ("garbage over the last lines", |path| {
            let text = std::fs::read_to_string(path).unwrap();
            let keep: Vec<&str> = text.lines().collect();
            let cut = keep.len().saturating_sub(3);
            let damaged = format!("{}\n#@!garbage\n\0\0\0\n", keep[..cut].join("\n"));
            std::fs::write(path, damaged).unwrap();
        }),
        ("cut at a line boundary", |path| {
            let text = std::fs::read_to_string(path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let keep = lines[..lines.len() / 2].join("\n") + "\n";
            std::fs::write(path, keep).unwrap();
        }),
        ("torn in the middle of a line", |path| {
            let bytes = std::fs::read(path).unwrap();
            std::fs::write(path, &bytes[..bytes.len() - 10]).unwrap();
        }),
        ("deleted", |path| std::fs::remove_file(path).unwrap()),
    ];
    // (highest seq handed out, when the last event was, the damage since)
    let mut before: Option<(u64, DateTime<Utc>, &str)> = None;
    for (round, (damage, apply)) in damages.iter().enumerate() {
        let mut daemon = Daemon::start_with(&tmux, options());
        if let Some(before) = before {
            assert_numbering_goes_on(&daemon, before);
        }
        daemon.create(&json!({ "name": format!("s{round}"), "command": common::SHELL }));
        put_thought(&daemon, &ids_by_name(&daemon)[&format!("s{round}")], "x");
        daemon.terminate();
        let (highest, last_at) = newest_on_disk(data.path());
        before = Some((highest, last_at, damage));
        apply(&events);
    }
    let daemon = Daemon::start_with(&tmux, options());
    assert_numbering_goes_on(&daemon, before.unwrap());
    let highest_seen = before.unwrap().0;

    // A client resuming from the last seq it saw gets what happens next.
    let client = reqwest::blocking::Client::builder()
        .timeout(PATIENCE)
        .build()
        .unwrap();
    let response = daemon
        .authorize(client.get(format!("{}/v1/events", daemon.base)))
        .header("Last-Event-ID", highest_seen.to_string())
        .send()
        .unwrap();
    daemon.create(&json!({ "name": "after", "command": common::SHELL }));
    let created = common::sse_data(response)
        .find(|e| e["kind"] == "session_created")
        .unwrap();
    assert_eq!(created["tmux_name"], "after");
}

#[test]
fn event_seq_never_goes_back_after_a_crash() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    daemon.create(&json!({ "name": "a", "command": common::SHELL }));
    daemon.kill9();
    let seen = *seqs_on_disk(data.path()).last().unwrap();
    // The crash cut the last line short, as a torn write would.
    let events = data.path().join("events.jsonl");
    let bytes = std::fs::read(&events).unwrap();
    std::fs::write(&events, &bytes[..bytes.len() - 5]).unwrap();

    let daemon = Daemon::start_with(&tmux, options());
    let reattached = wait_for("the session re-attached", || {
        let (_, page) = daemon.get("/v1/events?format=json&since=0");
        page["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["reason"] == "startup_reattach")
            .cloned()
    });
    assert!(
        reattached["seq"].as_u64().unwrap() > seen,
        "{reattached} reuses a seq up to {seen}"
    );
    let seqs = seqs_on_disk(data.path());
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

/// Sets the soft file-size limit (RLIMIT_FSIZE) of a running process: with
/// 1 byte, every write that grows a file fails with EFBIG, as on a full
/// disk. Unlike a read-only mode it holds for root too, and for files the
/// daemon already has open.
fn limit_file_size(pid: u32, bytes: Option<u64>) {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit(2) reading into and writing from local structs.
    let read = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_FSIZE,
            std::ptr::null(),
            &mut old,
        )
    };
    assert_eq!(read, 0, "prlimit: {}", std::io::Error::last_os_error());
    let new = libc::rlimit {
        rlim_cur: bytes.unwrap_or(old.rlim_max),
        rlim_max: old.rlim_max,
    };
    // SAFETY: as above.
    let set = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_FSIZE,
            &new,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(set, 0, "prlimit: {}", std::io::Error::last_os_error());
}

/// Reads the SSE feed until `count` thought updates arrived.
fn collect_thoughts(response: reqwest::blocking::Response, count: usize) -> Vec<Value> {
    common::sse_data(response)
        .filter(|e| e["kind"] == "thought_update")
        .take(count)
        .collect()
}

#[test]
fn a_failing_disk_is_reported_retried_and_loses_no_event() {
    const UPDATES: usize = 61;
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let id = daemon.create(&json!({ "name": "s", "command": common::SHELL }))["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, health) = daemon.get("/healthz");
    assert_eq!(health["status"], "ok", "{health}");
    let first = next_seq(&daemon);
    let client = reqwest::blocking::Client::builder()
        .timeout(PATIENCE)
        .build()
        .unwrap();
    let feed = daemon
        .authorize(client.get(format!("{}/v1/events", daemon.base)))
        .send()
        .unwrap();
    let listener = std::thread::spawn(move || collect_thoughts(feed, UPDATES));

    limit_file_size(daemon.pid(), Some(1));
    for n in 0..UPDATES {
        put_thought(&daemon, &id, &format!("update {n}"));
    }
    daemon.create(&json!({ "name": "during", "command": common::SHELL }));

    // Served from memory, to replaying and live clients alike.
    let (_, page) = daemon.get(&format!("/v1/events?format=json&since={}", first - 1));
    let thoughts = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "thought_update")
        .count();
    assert_eq!(thoughts, UPDATES, "{page}");
    let live = listener.join().unwrap();
    assert_eq!(live.len(), UPDATES);
    assert_eq!(
        live[UPDATES - 1]["thought"]["text"],
        format!("update {}", UPDATES - 1)
    );

    // Reported where an operator looks.
    let (status, health) = daemon.get("/healthz");
    assert_eq!(status, 200);
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["storage"]["status"], "degraded", "{health}");
    let reason = health["storage"]["failures"].to_string();
    assert!(reason.contains("events.jsonl"), "{health}");
    assert!(reason.contains("File too large"), "{health}");
    assert!(health["storage"]["unwritten_events"].as_u64().unwrap() >= UPDATES as u64);
    let (status, ready) = daemon.get("/readyz");
    assert_eq!(status, 200, "a degraded daemon still serves: {ready}");
    assert_eq!(ready["storage"]["status"], "degraded", "{ready}");
    assert_eq!(daemon.metric("tmuxd_storage_degraded"), Some(1.0));
    // Nothing of it reached the disk yet: the fault is real.
    let on_disk = seqs_on_disk(data.path());
    assert!(on_disk.iter().all(|&seq| seq < first), "{on_disk:?}");

    limit_file_size(daemon.pid(), None);
    wait_for("storage to recover", || {
        let (_, health) = daemon.get("/healthz");
        (health["status"] == "ok").then_some(())
    });
    assert_eq!(daemon.metric("tmuxd_storage_degraded"), Some(0.0));
    let on_disk = seqs_on_disk(data.path());
    let expected: Vec<u64> = (1..next_seq(&daemon)).collect();
    assert_eq!(
        on_disk, expected,
        "the backlog is on disk, in order, without gaps"
    );
    let registry = std::fs::read_to_string(data.path().join("registry.json")).unwrap();
    assert!(registry.contains("\"during\""), "{registry}");
    let thoughts = std::fs::read_to_string(data.path().join("thoughts.json")).unwrap();
    assert!(
        thoughts.contains(&format!("update {}", UPDATES - 1)),
        "{thoughts}"
    );

    // And a clean restart continues right after the last event on disk.
    daemon.terminate();
    let last = *seqs_on_disk(data.path()).last().unwrap();
    let daemon = Daemon::start_with(&tmux, options());
    // The daemon answers before its sessions have attached again (their
    // events follow): wait for the first one.
    let page = wait_for("the first event after the restart", || {
        let (_, page) = daemon.get(&format!("/v1/events?format=json&since={last}"));
        page["events"][0].is_object().then_some(page)
    });
    assert_eq!(page["events"][0]["seq"].as_u64(), Some(last + 1), "{page}");
    let (_, body) = daemon.get(&format!("/v1/sessions/{id}"));
    assert_eq!(
        body["session"]["thought"]["text"],
        format!("update {}", UPDATES - 1)
    );
}

/// Everything in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The uid `nobody` has on Debian and Fedora alike.
const NOBODY: u32 = 65534;

/// A data dir that belongs to another user is refused with exit 78 naming
/// `data_dir`, whatever uid tmuxd runs as (a root daemon must not write
/// into it either), and nothing in it is created or changed.
#[test]
fn a_data_dir_of_another_user_is_refused() {
    let tmux = TmuxServer::new();
    let root = tempfile::tempdir().unwrap();
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let data = if unsafe { libc::geteuid() } == 0 {
        let data = root.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::os::unix::fs::chown(&data, Some(NOBODY), Some(NOBODY)).unwrap();
        std::fs::set_permissions(&data, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        data
    } else {
        // Not root: a directory of root's serves as another user's.
        std::path::PathBuf::from("/usr")
    };
    let before = (owner_and_mode(&data), entries(&data));
    let (status, said) = common::serve_refused(&tmux, &data, "", &[]);
    assert_eq!(status.code(), Some(78), "{said}");
    assert!(said.contains("`data_dir`"), "{said}");
    assert!(said.contains(&data.display().to_string()), "{said}");
    assert!(said.contains("belongs to uid"), "{said}");
    assert_eq!((owner_and_mode(&data), entries(&data)), before);
}

/// A data dir reached through a directory or link that another user can
/// replace is refused at start (exit 78), naming the step, and nothing is
/// made under it: swapped after the start, it would take tmuxd's writes
/// into their directory.
#[test]
fn a_data_dir_another_user_could_redirect_is_refused() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let tmux = TmuxServer::new();
    let root = tempfile::tempdir().unwrap();
    let mine = root.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    let refused = |data: &Path, component: &Path, why: &str| {
        let (status, said) = common::serve_refused(&tmux, data, "", &[]);
        assert_eq!(status.code(), Some(78), "{said}");
        assert!(said.contains("`data_dir`"), "{said}");
        let through = format!("is reached through {}, {why}", component.display());
        assert!(said.contains(&through), "wanted {through:?} in: {said}");
        assert_eq!(entries(&mine), Vec::<String>::new(), "nothing made");
    };

    // A directory anyone may write to, not sticky: anyone can swap the link in it.
    let open = root.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    symlink(&mine, open.join("link")).unwrap();
    refused(
        &open.join("link/data"),
        &open,
        "a directory anyone may write to",
    );

    // A sticky directory (as /tmp is): only an entry's owner can replace it,
    // so a link of our own there is fine, another user's link is not.
    let sticky = root.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = sticky.join("theirs");
        symlink(&mine, &theirs).unwrap();
        std::os::unix::fs::lchown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
        let why = "which belongs to uid 65534 in a directory others write to";
        refused(&theirs.join("data"), &theirs, why);
    }
    symlink(&mine, sticky.join("ours")).unwrap();
    let daemon = Daemon::start_with(&tmux, DaemonOptions::in_dir(&sticky.join("ours/data")));
    daemon.create(&json!({ "name": "kept", "command": common::SHELL }));
    assert!(mine.join("data/registry.json").exists());
}

/// An `events.jsonl` that is a symbolic link is not followed: tmuxd refuses
/// to start, saying which file, and the link's target is untouched.
#[test]
fn a_planted_events_jsonl_link_is_not_followed() {
    let tmux = TmuxServer::new();
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let victim = root.path().join("victim");
    std::fs::write(&victim, "the victim's own line\n").unwrap();
    std::os::unix::fs::symlink(&victim, data.join("events.jsonl")).unwrap();

    let (status, said) = common::serve_refused(&tmux, &data, "", &[]);
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains("events.jsonl is a symbolic link"),
        "names the file and why: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's own line\n"
    );
    assert!(
        std::fs::symlink_metadata(data.join("events.jsonl"))
            .unwrap()
            .is_symlink()
    );
}

/// The single-daemon guard cannot be deleted. After `rm lock` (the old
/// guard's file) and every other file, a second daemon on the same data dir
/// is still refused, naming it, and the first one carries on.
#[test]
fn deleting_files_in_the_data_dir_does_not_let_a_second_daemon_in() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let first = Daemon::start_with(&tmux, DaemonOptions::in_dir(data.path()));
    for name in entries(data.path()) {
        let path = data.path().join(name);
        if !path.is_dir() {
            std::fs::remove_file(path).unwrap();
        }
    }
    let (status, said) = common::serve_refused(&tmux, data.path(), "", &[]);
    assert_eq!(status.code(), Some(1), "{said}");
    let expected = format!(
        "another tmuxd is already using data dir {}",
        data.path().display()
    );
    assert!(said.contains(&expected), "{said}");
    first.create(&json!({ "name": "still-mine", "command": common::SHELL }));
    wait_for("the first daemon to write its registry again", || {
        data.path().join("registry.json").exists().then_some(())
    });
}
