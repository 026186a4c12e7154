//! When tmux is lost anyway (`kill-server`): health says so, one
//! notification goes out, and `tmuxd restore` makes the sessions again under
//! their names and ids, with their windows, layouts, sizes and cwds; a
//! command runs again only where the session's creator said so.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Daemon, DaemonOptions, SHELL, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A window as compared before and after: index, size, layout without its
/// checksum and pane ids, and each pane's cwd in pane order.
type WindowShape = (u32, String, String, Vec<String>);

/// `#{window_layout}` modulo pane ids (and so its checksum).
fn without_pane_ids(layout: &str) -> String {
    let body = layout.get(5..).unwrap_or_default();
    let leaf = regex::Regex::new(r"(\d+x\d+,\d+,\d+),\d+").unwrap();
    leaf.replace_all(body, "$1").into_owned()
}

/// The session's windows as tmux has them now.
fn tmux_shape(tmux: &TmuxServer, name: &str) -> Vec<WindowShape> {
    let out = tmux.run(&[
        "list-panes",
        "-s",
        "-t",
        &format!("={name}:"),
        "-F",
        "#{window_index}\t#{window_width}x#{window_height}\t#{window_layout}\t#{pane_current_path}",
    ]);
    let mut windows: Vec<WindowShape> = Vec::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let index: u32 = f[0].parse().unwrap();
        match windows.last_mut() {
            Some(w) if w.0 == index => w.3.push(f[3].to_owned()),
            _ => windows.push((
                index,
                f[1].to_owned(),
                without_pane_ids(f[2]),
                vec![f[3].to_owned()],
            )),
        }
    }
    windows
}

/// The session's windows as tmuxd keeps them to restore it.
fn kept_shape(data_dir: &Path, id: &str) -> Option<Vec<WindowShape>> {
    let text = std::fs::read_to_string(data_dir.join("restore.json")).ok()?;
    let file: Value = serde_json::from_str(&text).ok()?;
    let windows = file["sessions"][id]["blueprint"]["windows"]
        .as_array()?
        .clone();
    Some(
        windows
            .iter()
            .map(|w| {
                (
                    w["index"].as_u64().unwrap() as u32,
                    format!("{}x{}", w["cols"], w["rows"]),
                    without_pane_ids(w["layout"].as_str().unwrap()),
                    w["panes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| p["cwd"].as_str().unwrap().to_owned())
                        .collect(),
                )
            })
            .collect(),
    )
}

fn dir(root: &Path, name: &str) -> String {
    let path = root.join(name);
    std::fs::create_dir_all(&path).unwrap();
    path.canonicalize().unwrap().to_string_lossy().into_owned()
}

/// A script that appends a line to `marker` each time it runs, then stays
/// as a shell (so its pane lives).
fn marking_script(root: &Path, name: &str, marker: &Path) -> PathBuf {
    let script = root.join(name);
    std::fs::write(
        &script,
        format!("echo ran >> '{}'\nexec {SHELL}\n", marker.display()),
    )
    .unwrap();
    script
}

fn lines_in(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn sessions_lost_with_tmux_are_restored_with_layouts_cwds_and_only_the_resume_command() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    let (a, b, c, d) = (
        dir(&root, "a"),
        dir(&root, "b"),
        dir(&root, "c"),
        dir(&root, "d"),
    );
    let resumed = root.join("resumed");
    let rerun = root.join("rerun");
    let notified = root.join("notified");
    let resume = marking_script(&root, "resume.sh", &resumed);
    let job = marking_script(&root, "job.sh", &rerun);

    let tmux = TmuxServer::new();
    let notify = format!(
        "[notify]\ncommand = [\"sh\", \"-c\", \"echo $TMUXD_EVENT_TRIGGER >> '{}'\"]\n",
        notified.display()
    );
    let d_ = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: notify,
            ..Default::default()
        },
    );
    let daemon = &d_;

    // An agent: a shell, split, that resumes with a script when restored.
    let agent = daemon.create(&json!({
        "name": "agent", "cwd": a, "command": SHELL, "cols": 100, "rows": 30,
        "resume_command": format!("sh {}", resume.display()),
    }));
    // A job whose command must not run again (restore: shell, the default).
    let job_session = daemon.create(&json!({
        "name": "job", "cwd": c, "command": format!("sh {}", job.display()),
    }));
    let agent_id = agent["session_id"].as_str().unwrap().to_owned();
    let job_id = job_session["session_id"].as_str().unwrap().to_owned();
    for id in [&agent_id, &job_id] {
        daemon.wait_until(id, "idle");
    }
    tmux.run(&["split-window", "-h", "-t", "=agent:", "-c", &b, SHELL]);
    tmux.run(&["split-window", "-v", "-t", "=agent:", "-c", &d, SHELL]);
    tmux.run(&["split-window", "-v", "-t", "=job:", "-c", &d, SHELL]);
    tmux.run(&["new-window", "-d", "-t", "=job:3", "-c", &a, SHELL]);
    tmux.run(&["split-window", "-h", "-t", "=job:3", "-c", &b, SHELL]);
    assert_eq!(lines_in(&rerun), 1, "the job ran once when created");
    assert_eq!(lines_in(&resumed), 0, "nothing resumes at create");

    // Each new pane enters its directory just after tmux forks it.
    wait_for("every new pane in its directory", || {
        let agent = tmux_shape(&tmux, "agent");
        let job = tmux_shape(&tmux, "job");
        (agent[0].3 == [a.clone(), b.clone(), d.clone()]
            && job.len() == 2
            && job[1].3 == [a.clone(), b.clone()])
        .then_some(())
    });
    let before: Vec<(String, Vec<WindowShape>)> = ["agent", "job"]
        .iter()
        .map(|name| (name.to_string(), tmux_shape(&tmux, name)))
        .collect();
    assert_eq!(before[0].1[0].3, [a.clone(), b.clone(), d.clone()]);
    assert_eq!(before[1].1.len(), 2, "{before:?}");
    for (id, (_, shape)) in [&agent_id, &job_id].iter().zip(&before) {
        wait_for("tmuxd to keep each session's windows", || {
            (kept_shape(&daemon.data_dir, id).as_ref() == Some(shape)).then_some(())
        });
    }
    let (_, health) = daemon.get("/healthz");
    assert_eq!(health["tmux_lost"], Value::Null, "{health}");
    assert_eq!(health["status"], "ok", "{health}");

    tmux.run(&["kill-server"]);

    let lost = wait_for("health to say tmux is lost", || {
        let (_, health) = daemon.get("/healthz");
        (health["tmux_lost"]["restorable"] == 2).then_some(health)
    });
    assert!(lost["tmux_lost"]["since"].is_string(), "{lost}");
    // Still 200 (a restart would not help), but not `ok`: tmux is gone.
    assert_eq!(lost["status"], "degraded", "{lost}");
    let reason = lost["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("2 sessions can be restored"), "{lost}");
    let (_, ready) = daemon.get("/readyz");
    assert_eq!(ready["tmux_lost"]["restorable"], 2, "{ready}");
    wait_for("one tmux_lost notification", || {
        std::fs::read_to_string(&notified)
            .ok()
            .filter(|t| t.contains("tmux_lost"))
    });
    let kinds =
        |daemon: &Daemon, kind: &str| daemon.events().iter().filter(|e| e["kind"] == kind).count();
    assert_eq!(kinds(daemon, "tmux_lost"), 1);
    assert_eq!(daemon.log().matches("the tmux server is gone").count(), 1);
    // Every end is also a state change to `exited`, as for any other end.
    let exited = |id: &str| {
        daemon.events().iter().any(|e| {
            e["kind"] == "session_state"
                && e["session_id"] == id
                && e["state"] == "exited"
                && e["reason"] == "tmux_server_gone"
        })
    };
    for id in [&agent_id, &job_id] {
        wait_for("a session_state exited event for each end", || {
            exited(id.as_str()).then_some(())
        });
    }

    // Bad requests change nothing.
    let (status, body) = daemon.post(
        "/v1/sessions/restore",
        &json!({ "session_ids": ["sess_999"] }),
    );
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sess_999")
    );
    let (status, body) = daemon.post("/v1/sessions/restore", &json!({ "session_ids": [] }));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(!tmux.has_session("agent") && !tmux.has_session("job"));

    let out = daemon.client().args(["restore"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("agent") && printed.contains("restored"),
        "{printed}"
    );

    for (id, name) in [(&agent_id, "agent"), (&job_id, "job")] {
        let session = daemon.summary(id);
        assert_eq!(session["tmux_name"], name);
        assert_eq!(session["ended_at"], Value::Null);
    }
    for (name, shape) in &before {
        // A shell's cwd shows once it runs; the layout at once.
        wait_for("the same windows, layouts, sizes and cwds", || {
            (&tmux_shape(&tmux, name) == shape).then_some(())
        });
    }
    wait_for("the resume command to run", || {
        (lines_in(&resumed) == 1).then_some(())
    });
    daemon.wait_until(&job_id, "idle");
    assert_eq!(lines_in(&rerun), 1, "the job's command did not run again");
    assert_eq!(lines_in(&resumed), 1, "the resume command ran once");
    assert_eq!(kinds(daemon, "session_restored"), 2);
    let (_, health) = daemon.get("/healthz");
    assert_eq!(health["tmux_lost"], Value::Null, "{health}");

    let out = daemon.client().args(["restore"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to restore"));
}

/// After a reboot (tmux gone while tmuxd was stopped), `restore.on_start`
/// brings the sessions back at startup; without it they wait, restorable.
#[test]
fn a_daemon_finding_none_of_its_sessions_restores_them_with_on_start() {
    let data = tempfile::tempdir().unwrap();
    let root = data.path().canonicalize().unwrap();
    let cwd = dir(&root, "work");
    let tmux = TmuxServer::new();
    let mut first = Daemon::start_with(&tmux, DaemonOptions::in_dir(&root.join("data")));
    let id = first.create_named("kept", SHELL);
    first.wait_until(&id, "idle");
    tmux.run(&["split-window", "-h", "-t", "=kept:", "-c", &cwd, SHELL]);
    // tmux reads a pane's cwd from its process, which enters it just after
    // the fork: the shape to compare with is the one with the new pane there.
    let shape = wait_for("the new pane in its directory", || {
        let shape = tmux_shape(&tmux, "kept");
        shape[0].3.contains(&cwd).then_some(shape)
    });
    wait_for("the windows kept", || {
        (kept_shape(&first.data_dir, &id).as_ref() == Some(&shape)).then_some(())
    });
    first.terminate();
    tmux.run(&["kill-server"]);

    let waiting = Daemon::start_with(&tmux, DaemonOptions::in_dir(&root.join("data")));
    let (_, health) = waiting.get("/healthz");
    assert_eq!(health["tmux_lost"]["restorable"], 1, "{health}");
    assert!(
        !tmux.has_session("kept"),
        "nothing restored without on_start"
    );
    let mut waiting = waiting;
    waiting.terminate();

    let options = DaemonOptions {
        extra_config: "[restore]\non_start = true\n".to_owned(),
        ..DaemonOptions::in_dir(&root.join("data"))
    };
    let daemon = Daemon::start_with(&tmux, options);
    wait_for("the session restored at startup", || {
        let (status, s) = daemon.get(&format!("/v1/sessions/{id}"));
        (status == StatusCode::OK && s["session"]["ended_at"].is_null()).then_some(())
    });
    wait_for("its windows", || {
        (tmux_shape(&tmux, "kept") == shape).then_some(())
    });
    // The event log is written behind the restore: waited for, not raced.
    let restored = wait_for("the restore's event", || {
        daemon
            .events()
            .into_iter()
            .find(|e| e["kind"] == "session_restored")
    });
    assert_eq!(restored["reason"], "startup_restore");
    assert_eq!(restored["session_id"], id.as_str());
}

/// Each pane's cwd in the session, exactly (one `display-message` a pane:
/// a cwd may hold a tab or a newline).
fn pane_cwds(tmux: &TmuxServer, name: &str) -> Vec<String> {
    let panes = tmux.run(&[
        "list-panes",
        "-s",
        "-t",
        &format!("={name}:"),
        "-F",
        "#{pane_id}",
    ]);
    panes
        .lines()
        .map(|pane| {
            let out = tmux.run(&["display-message", "-p", "-t", pane, "#{pane_current_path}"]);
            out.strip_suffix('\n').unwrap_or(&out).to_owned()
        })
        .collect()
}

/// Every pane's cwd as tmuxd keeps it to restore the session.
fn kept_cwds(data_dir: &Path, id: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(data_dir.join("restore.json")) else {
        return Vec::new();
    };
    let file: Value = serde_json::from_str(&text).unwrap_or_default();
    let windows = file["sessions"][id]["blueprint"]["windows"]
        .as_array()
        .cloned();
    windows
        .unwrap_or_default()
        .iter()
        .flat_map(|w| w["panes"].as_array().cloned().unwrap_or_default())
        .map(|p| p["cwd"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Kills the tmux server, waits for tmuxd to see `lost` sessions lost,
/// and restores them.
fn lose_and_restore(tmux: &TmuxServer, daemon: &Daemon, lost: usize) {
    tmux.run(&["kill-server"]);
    wait_for("health to say tmux is lost", || {
        let (_, health) = daemon.get("/healthz");
        (health["tmux_lost"]["restorable"] == lost).then_some(())
    });
    let (status, body) = daemon.post("/v1/sessions/restore", &json!({}));
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A directory whose path holds `#(touch MARK)` (MARK absolute: the
/// command spans directories, as `/` cannot be in one name), as a cloned
/// repository or an extracted archive can: tmux expands formats in `-c`,
/// so it must reach tmux as text. Its path, and MARK.
fn command_named_dir(root: &Path) -> (String, PathBuf) {
    let mark = root.join("MARK");
    let hostile = format!("{}/#(touch {})", root.display(), mark.display());
    std::fs::create_dir_all(&hostile).unwrap();
    (hostile, mark)
}

/// A shell that enters `dir` itself (tmux expands no command).
fn shell_in(dir: &str) -> [&str; 5] {
    [
        "sh",
        "-c",
        "cd \"$1\" && exec bash --norc --noprofile",
        "sh",
        dir,
    ]
}

/// Waits for every pane of each session to be in `dir`, and for tmuxd to
/// keep that for a restore; fails as soon as MARK exists.
fn wait_in_dir(
    tmux: &TmuxServer,
    daemon: &Daemon,
    sessions: &[(&str, &str, usize)],
    dir: &str,
    mark: &Path,
) {
    for (id, name, panes) in sessions {
        let want = vec![dir.to_owned(); *panes];
        wait_for("each pane in the directory", || {
            assert!(!mark.exists(), "the directory's name ran");
            (pane_cwds(tmux, name) == want).then_some(())
        });
        wait_for("tmuxd to keep the cwds", || {
            (kept_cwds(&daemon.data_dir, id) == want).then_some(())
        });
    }
}

/// Created through the API with `cwd`, with more panes and a window in the
/// directory, and restored in `rerun` mode (`new-session`, `split-window`
/// and `new-window -c`).
#[test]
fn a_directory_named_like_a_tmux_command_is_only_a_cwd_when_created_and_rerun() {
    let root_dir = tempfile::tempdir().unwrap();
    let (hostile, mark) = command_named_dir(&root_dir.path().canonicalize().unwrap());
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let made = daemon.create(&json!({
        "name": "api", "cwd": hostile, "command": SHELL, "restore": "rerun",
    }));
    let id = made["session_id"].as_str().unwrap();
    let mut split = vec!["split-window", "-t", "=api:", "--"];
    split.extend(shell_in(&hostile));
    tmux.run(&split);
    let mut window = vec!["new-window", "-d", "-t", "=api:5", "--"];
    window.extend(shell_in(&hostile));
    tmux.run(&window);
    let sessions = [(id, "api", 3)];
    wait_in_dir(&tmux, &daemon, &sessions, &hostile, &mark);

    lose_and_restore(&tmux, &daemon, 1);
    wait_in_dir(&tmux, &daemon, &sessions, &hostile, &mark);
    assert!(!mark.exists());
}

/// `tmuxd new --cwd .` run inside the directory, restored with shells.
#[test]
fn tmuxd_new_in_a_directory_named_like_a_tmux_command_keeps_it_as_text() {
    let root_dir = tempfile::tempdir().unwrap();
    let (hostile, mark) = command_named_dir(&root_dir.path().canonicalize().unwrap());
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let out = daemon
        .client()
        .current_dir(&hostile)
        .args(["new", "--name", "cli", "--cwd", ".", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let sessions = [(id.as_str(), "cli", 1)];
    wait_in_dir(&tmux, &daemon, &sessions, &hostile, &mark);

    lose_and_restore(&tmux, &daemon, 1);
    wait_in_dir(&tmux, &daemon, &sessions, &hostile, &mark);
    assert!(!mark.exists());
}

/// A session made outside tmuxd whose shell entered the directory:
/// adopted, then restored there.
#[test]
fn an_adopted_session_in_a_directory_named_like_a_tmux_command_restores_there() {
    let root_dir = tempfile::tempdir().unwrap();
    let (hostile, mark) = command_named_dir(&root_dir.path().canonicalize().unwrap());
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let mut outside = vec![
        "new-session",
        "-d",
        "-s",
        "outside",
        "-x",
        "80",
        "-y",
        "24",
        "--",
    ];
    outside.extend(shell_in(&hostile));
    tmux.run(&outside);
    let id = wait_for("discovery to adopt the outside session", || {
        daemon
            .sessions()
            .into_iter()
            .find(|s| s["tmux_name"] == "outside")
            .and_then(|s| s["session_id"].as_str().map(str::to_owned))
    });
    let sessions = [(id.as_str(), "outside", 1)];
    wait_in_dir(&tmux, &daemon, &sessions, &hostile, &mark);

    lose_and_restore(&tmux, &daemon, 1);
    wait_in_dir(&tmux, &daemon, &sessions, &hostile, &mark);
    assert!(!mark.exists());
}

/// Restore in `rerun` mode reads each pane's cwd, window name and start
/// command from tmux: a tab or newline in a cwd (or a window name) moves
/// nothing into the command, and each pane reruns its own command only.
#[test]
fn tabs_and_newlines_in_cwds_change_nothing_on_rerun() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    // What a reader that splits at tabs would take for the cwd, and the
    // command it would find after it.
    let decoy = dir(&root, "t");
    let tabbed = dir(&root, "t\tw\ttouch shifted");
    let newline = dir(&root, "n\nl");
    let ran = root.join("ran");
    let job = marking_script(&root, "job.sh", &ran);
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);

    let shell = daemon.create(&json!({ "name": "tabbed", "cwd": tabbed, "restore": "rerun" }));
    let mixed = daemon.create(&json!({
        "name": "mixed", "cwd": newline, "command": SHELL, "restore": "rerun",
    }));
    let job_line = format!("sh {}", job.display());
    // Renamed first: tmuxd reads the name with the panes the split shows.
    // tmux 3.7 refuses a control character in a window name ("invalid
    // window name"); then only the cwds carry a tab.
    let renamed = tmux.output(&["rename-window", "-t", "=mixed:", "a\tb"]);
    let refused = String::from_utf8_lossy(&renamed.stderr).contains("invalid window name");
    assert!(
        renamed.status.success() || refused,
        "rename-window: {renamed:?}"
    );
    tmux.run(&["split-window", "-t", "=mixed:", "-c", &tabbed, &job_line]);
    let expected = [
        (
            "tabbed",
            shell["session_id"].as_str().unwrap(),
            vec![tabbed.clone()],
        ),
        (
            "mixed",
            mixed["session_id"].as_str().unwrap(),
            vec![newline.clone(), tabbed.clone()],
        ),
    ];
    for (name, id, cwds) in &expected {
        wait_for("each pane in its directory", || {
            (&pane_cwds(&tmux, name) == cwds).then_some(())
        });
        wait_for("tmuxd to keep the cwds", || {
            (&kept_cwds(&daemon.data_dir, id) == cwds).then_some(())
        });
    }
    wait_for("the job to run once", || {
        (lines_in(&ran) == 1).then_some(())
    });
    let window_name = || tmux.run(&["display-message", "-p", "-t", "=mixed:", "#{window_name}"]);
    let name_before = window_name();

    lose_and_restore(&tmux, &daemon, expected.len());
    for (name, _, cwds) in &expected {
        wait_for("each restored pane in its directory", || {
            (&pane_cwds(&tmux, name) == cwds).then_some(())
        });
    }
    wait_for("the job to run again", || {
        (lines_in(&ran) == 2).then_some(())
    });
    // tmux shows a tab in a window name as `\t`, before and after.
    assert_eq!(window_name(), name_before);
    let shifted: Vec<_> = std::fs::read_dir(&decoy).unwrap().collect();
    assert!(shifted.is_empty(), "a command ran from a cwd: {shifted:?}");
    assert_eq!(lines_in(&ran), 2);
}

/// A pane whose directory is gone by the restore starts in the daemon's
/// `default_cwd` (its HOME), as a session created without one does, not
/// wherever tmuxd itself runs.
#[test]
fn a_pane_whose_directory_is_gone_is_restored_in_the_default_cwd() {
    let root = tempfile::tempdir().unwrap();
    let gone = dir(&root.path().canonicalize().unwrap(), "gone");
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let made = daemon.create(&json!({ "name": "moved", "cwd": gone, "command": SHELL }));
    let id = made["session_id"].as_str().unwrap();
    wait_for("tmuxd to keep the cwd", || {
        (kept_cwds(&daemon.data_dir, id) == [gone.clone()]).then_some(())
    });
    tmux.run(&["kill-server"]);
    std::fs::remove_dir(&gone).unwrap();
    wait_for("health to say tmux is lost", || {
        let (_, health) = daemon.get("/healthz");
        (health["tmux_lost"]["restorable"] == 1).then_some(())
    });
    let (status, body) = daemon.post("/v1/sessions/restore", &json!({}));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["restored"].as_array().map(Vec::len), Some(1), "{body}");
    let home = daemon.home().canonicalize().unwrap();
    wait_for("the pane in the daemon's HOME", || {
        (pane_cwds(&tmux, "moved") == [home.to_str().unwrap()]).then_some(())
    });
}
