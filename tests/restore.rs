//! When tmux is lost anyway (`kill-server`): health says so, one
//! notification goes out, and `tmuxd restore` makes the sessions again under
//! their names and ids, with their windows, layouts, sizes and cwds; a
//! command runs again only where the session's creator said so.

mod common;

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

    tmux.run(&["kill-server"]);

    let lost = wait_for("health to say tmux is lost", || {
        let (_, health) = daemon.get("/healthz");
        (health["tmux_lost"]["restorable"] == 2).then_some(health)
    });
    assert!(lost["tmux_lost"]["since"].is_string(), "{lost}");
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
        let (status, session) = daemon.get(&format!("/v1/sessions/{id}"));
        assert_eq!(status, StatusCode::OK, "{session}");
        assert_eq!(session["session"]["tmux_name"], name);
        assert_eq!(session["session"]["ended_at"], Value::Null);
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
    let restored = daemon.events();
    let restored = restored
        .iter()
        .find(|e| e["kind"] == "session_restored")
        .unwrap();
    assert_eq!(restored["reason"], "startup_restore");
    assert_eq!(restored["session_id"], id.as_str());
}
