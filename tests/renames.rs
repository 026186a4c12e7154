//! Sessions followed by tmux's own id: a rename from outside renames the
//! tracked session (never adopts it again), and a session made outside
//! tmuxd is adopted only once it has lived `discovery.min_age_ms`.

use crate::common;

use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, PATIENCE, TmuxServer, wait_for};
use serde_json::{Value, json};

/// `discovery.min_age_ms` for the churn test: longer than the default, so a
/// session made and killed by two forked `tmux` commands on a loaded
/// machine still dies younger than it.
const MIN_AGE: Duration = Duration::from_millis(500);

fn listed(daemon: &Daemon, name: &str) -> Option<Value> {
    daemon
        .sessions()
        .into_iter()
        .find(|s| s["tmux_name"] == name)
}

/// The id of session `name` once its control client is attached (tmux
/// before 3.7 can crash when a session changes while a control client is
/// mid-handshake, so tests act from outside only after that).
fn attached_id(daemon: &Daemon, name: &str) -> Option<String> {
    listed(daemon, name)
        .filter(|s| s["transport"] == "attached")
        .map(|s| s["session_id"].as_str().unwrap().to_owned())
}

fn events_of(daemon: &Daemon, kind: &str) -> Vec<Value> {
    daemon
        .events()
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// tmux's clients attached to session `name` (tmuxd's control client is one).
fn clients_of(tmux: &TmuxServer, name: &str) -> usize {
    let target = format!("={name}");
    tmux.run(&["list-clients", "-t", &target, "-F", "#{client_pid}"])
        .lines()
        .count()
}

#[test]
fn a_session_renamed_from_outside_is_followed_and_never_adopted_again() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    tmux.new_shell("first");
    let id = wait_for("first adopted", || attached_id(&daemon, "first"));

    let names = ["first", "second", "third", "fourth"];
    for pair in names.windows(2) {
        let (old, new) = (format!("={}", pair[0]), pair[1]);
        tmux.run(&["rename-session", "-t", &old, new]);
        wait_for("the rename followed", || {
            (attached_id(&daemon, new).as_deref() == Some(id.as_str())).then_some(())
        });
    }
    // A session appearing makes discovery list every session again: one
    // that matched by name would adopt "fourth" anew now.
    tmux.new_shell("witness");
    wait_for("witness adopted", || attached_id(&daemon, "witness"));

    let sessions = daemon.sessions();
    let tracked: Vec<(&str, &str)> = sessions
        .iter()
        .map(|s| {
            (
                s["tmux_name"].as_str().unwrap(),
                s["session_id"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(tracked.len(), 2, "{tracked:?}");
    assert!(tracked.contains(&("fourth", id.as_str())), "{tracked:?}");
    assert_eq!(clients_of(&tmux, "fourth"), 1, "one control client");
    let summary = daemon.summary(&id);
    assert_eq!(summary["tmux_name"], "fourth", "{summary}");

    // The registry takes a rename a moment before its event is logged.
    let expected: Vec<(String, String)> = names
        .windows(2)
        .map(|p| (p[0].to_owned(), p[1].to_owned()))
        .collect();
    daemon.events_once("every rename's event", |events| {
        let renamed = |e: &&Value| e["kind"] == "session_renamed";
        events.iter().filter(renamed).count() >= expected.len()
    });
    let renames: Vec<(String, String)> = events_of(&daemon, "session_renamed")
        .iter()
        .map(|e| {
            assert_eq!(e["session_id"], id.as_str());
            assert_eq!(e["tmux_name"], e["new_name"]);
            let name = |key: &str| e[key].as_str().unwrap().to_owned();
            (name("old_name"), name("new_name"))
        })
        .collect();
    assert_eq!(renames, expected);
    let adopted = events_of(&daemon, "session_adopted");
    assert_eq!(adopted.len(), 2, "first and witness only: {adopted:?}");

    // The actor targets the new name: a resize goes through, and the
    // screen still follows what the session prints.
    let (status, body) = daemon.post(
        &format!("/v1/sessions/{id}/resize"),
        &json!({ "cols": 100, "rows": 30 }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(tmux.size("fourth"), (100, 30));
    daemon.type_line(&id, "echo after-renames");
    daemon.wait_for_snapshot(&id, "after-renames");

    // Persisted under the new name with tmux's id.
    let tmux_id = tmux
        .run(&["list-sessions", "-F", "#{session_id} #{session_name}"])
        .lines()
        .find_map(|l| l.strip_suffix(" fourth").map(str::to_owned))
        .unwrap();
    wait_for("registry.json to hold the new name and tmux's id", || {
        let text = std::fs::read_to_string(daemon.data_dir.join("registry.json")).ok()?;
        let file: Value = serde_json::from_str(&text).ok()?;
        let entry = file["sessions"]
            .as_array()?
            .iter()
            .find(|s| s["session_id"] == id.as_str())?
            .clone();
        (entry["tmux_name"] == "fourth" && entry["tmux_id"] == tmux_id.as_str()).then_some(())
    });
}

/// What a script does (tmuxinator, sesh, users' own): sessions made and
/// killed with plain tmux within milliseconds. None of them is worth a
/// handshake; a session that stays is adopted once it has lived the
/// minimum age.
#[test]
fn sessions_that_end_young_are_never_attached_and_one_that_lives_is() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            discovery_config: format!("min_age_ms = {}", MIN_AGE.as_millis()),
            ..Default::default()
        },
    );
    // Tracked, so its control client hears every session come and go.
    tmux.new_shell("anchor");
    wait_for("anchor adopted", || attached_id(&daemon, "anchor"));

    const CHURN: usize = 40;
    for n in 0..CHURN {
        let name = format!("churn-{n}");
        tmux.run(&["new-session", "-d", "-s", &name]);
        tmux.run(&["kill-session", "-t", &format!("={name}")]);
    }
    let made = Instant::now();
    tmux.new_shell("keeper");
    let seen = wait_for("keeper listed", || listed(&daemon, "keeper"));
    let waited = made.elapsed();
    assert!(
        waited >= MIN_AGE,
        "adopted after {waited:?}, before it lived {MIN_AGE:?}: {seen}"
    );
    assert!(waited < PATIENCE);
    wait_for("keeper attached", || attached_id(&daemon, "keeper"));

    let about_churn = |e: &Value| {
        e["tmux_name"]
            .as_str()
            .is_some_and(|n| n.starts_with("churn-"))
    };
    let churn_events: Vec<Value> = daemon.events().into_iter().filter(about_churn).collect();
    assert_eq!(
        churn_events,
        Vec::<Value>::new(),
        "no churned session adopted"
    );
    let adopted: Vec<String> = events_of(&daemon, "session_adopted")
        .iter()
        .map(|e| e["tmux_name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(adopted, ["anchor", "keeper"]);
    // Not even an attach that failed.
    assert!(!daemon.log().contains("churn-"), "{}", daemon.log());
}

/// Renamed while tmuxd was stopped: found again by the id tmuxd marked on
/// it, under its new name, a tracked one re-attached and a detached one
/// still left alone; neither is taken for ended nor adopted anew.
#[test]
fn sessions_renamed_while_tmuxd_was_away_keep_their_ids() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let options = || DaemonOptions::in_dir(data.path());
    let mut daemon = Daemon::start_with(&tmux, options());
    let ids = ["job", "parked"].map(|name| {
        let made = daemon.create(&json!({ "name": name, "command": common::SHELL }));
        made["session_id"].as_str().unwrap().to_owned()
    });
    let [job, parked] = ids;
    daemon.delete(&format!("/v1/sessions/{parked}"));
    let (status, _) = daemon.terminate();
    assert!(status.success());

    tmux.run(&["rename-session", "-t", "=job", "job-renamed"]);
    tmux.run(&["rename-session", "-t", "=parked", "parked-renamed"]);
    let daemon = Daemon::start_with(&tmux, options());
    let tracked: Vec<(String, String)> = daemon
        .sessions()
        .iter()
        .map(|s| {
            let field = |key: &str| s[key].as_str().unwrap().to_owned();
            (field("tmux_name"), field("session_id"))
        })
        .collect();
    assert_eq!(tracked, [("job-renamed".to_owned(), job.clone())]);
    let renamed: Vec<(String, String)> = events_of(&daemon, "session_renamed")
        .iter()
        .map(|e| {
            let field = |key: &str| e[key].as_str().unwrap().to_owned();
            (field("session_id"), field("new_name"))
        })
        .collect();
    assert_eq!(
        renamed,
        [
            (job.clone(), "job-renamed".to_owned()),
            (parked.clone(), "parked-renamed".to_owned())
        ]
    );
    let ended = events_of(&daemon, "session_deleted");
    assert_eq!(ended, Vec::<Value>::new(), "nothing ended");

    // Still detached under its new name; adopting it gives back its id.
    tmux.new_shell("newcomer");
    wait_for("a discovery tick", || attached_id(&daemon, "newcomer"));
    assert!(listed(&daemon, "parked-renamed").is_none());
    let (status, body) = daemon.post(
        "/v1/sessions/adopt",
        &json!({ "tmux_name": "parked-renamed" }),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["session"]["session_id"], parked.as_str());
}
