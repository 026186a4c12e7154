//! The CLI trusts nothing that answers (see issue 29): it talks to the daemon's
//! unix socket when that is provably the user's own, over TCP only when
//! asked and only once the daemon has proved it holds the token; it runs
//! nothing a server names; and what sessions control (names, cwds, titles,
//! process names) reaches the terminal with its control characters made
//! visible. The impostor here is another uid (`nobody`, through `setpriv`),
//! as on a shared machine.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use common::{Daemon, SHELL, TmuxServer, stderr, stdout_ok, tmuxd_command, wait_for};
use serde_json::{Value, json};

const IMPOSTOR: &str = include_str!("py/impostor.py");
const TOKEN: &str = "the-users-token-0123456789abcdef";

/// `tests/py/impostor.py` run as `nobody`, and what it has been sent.
struct Impostor {
    child: Child,
    /// The port (`tcp`) or socket path (`unix`) it serves.
    at: String,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Impostor {
    /// `where_`: `["tcp"]` or `["unix", PATH]`; `evil`: what it asks to run.
    fn start(evil: &Path, where_: &[&str]) -> Impostor {
        let mut child = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(["/usr/bin/python3", "-c", IMPOSTOR])
            .arg(evil)
            .args(where_)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("setpriv (util-linux) and python3 run");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        let at = match &ready["ready"] {
            Value::String(path) => path.clone(),
            port => port.to_string(),
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                log.lock()
                    .unwrap()
                    .push(serde_json::from_str(&line).unwrap());
            }
        });
        Impostor { child, at, seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.at)
    }

    /// Everything it was sent, once a request of the test's own (sent after
    /// the CLI's) has arrived: nothing the CLI sent is still in flight. The
    /// test's own requests, and as many connections, are left out.
    fn seen(&self) -> Vec<Value> {
        use std::io::Write;
        let sentinel = |r: &Value| r["path"] == "/end-of-test";
        let before = self.seen_now().iter().filter(|r| sentinel(r)).count();
        let mut stream = std::net::TcpStream::connect(format!("127.0.0.1:{}", self.at)).unwrap();
        stream
            .write_all(b"GET /end-of-test HTTP/1.0\r\nHost: x\r\n\r\n")
            .unwrap();
        let seen = wait_for("the impostor to see the end of the test", || {
            let seen = self.seen_now();
            (seen.iter().filter(|r| sentinel(r)).count() > before).then_some(seen)
        });
        let mut ours = seen.iter().filter(|r| sentinel(r)).count();
        seen.into_iter()
            .filter(|r| !sentinel(r))
            .filter(|r| match r["connect"] == true && ours > 0 {
                true => {
                    ours -= 1;
                    false
                }
                false => true,
            })
            .collect()
    }

    /// Everything it was sent so far (a unix socket's impostor).
    fn seen_now(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Impostor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A script the impostor names as tmux; running it creates `MARK`.
fn evil_script(dir: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let mark = dir.join("MARK");
    let evil = dir.join("evil.sh");
    std::fs::write(&evil, format!("#!/bin/sh\ntouch {}\n", mark.display())).unwrap();
    std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
    (evil, mark)
}

/// The commands an impostor would most like answered: run its script,
/// open its link, read an agent's events, receive typed text, stream.
const COMMANDS: [&[&str]; 6] = [
    &["attach", "build"],
    &["ls"],
    &["open", "--print"],
    &["send", "build", "--enter", "a secret typed"],
    &["watch", "build"],
    // `--verbose`: without it, `hooks send` says nothing (issue 32).
    &[
        "hooks",
        "send",
        "claude",
        "--verbose",
        r#"{"hook_event_name":"Stop","cwd":"/secret/project"}"#,
    ],
];

/// Another user's program on the address the CLI was given (`TMUXD_URL`,
/// with the user's token) cannot prove it holds the token: it receives the
/// proof request only, never the token, a command or an event, and nothing
/// it answers runs.
#[test]
fn an_impostor_at_the_url_gets_nothing_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (evil, mark) = evil_script(dir.path());
    let impostor = Impostor::start(&evil, &["tcp"]);
    let data_dir = dir.path().join("data");
    let outputs: Vec<Output> = COMMANDS
        .iter()
        .map(|args| {
            tmuxd_command(dir.path())
                .env("TMUXD_URL", impostor.url())
                .env("TMUXD_TOKEN", TOKEN)
                .env("TMUXD_DATA_DIR", &data_dir)
                .env("TMUX_PANE", "%1")
                .env("DISPLAY", ":0")
                .args(*args)
                .output()
                .unwrap()
        })
        .collect();
    assert!(!mark.exists(), "the impostor's script ran");
    let seen = impostor.seen();
    for request in seen.iter().filter(|r| r.get("method").is_some()) {
        assert!(!request.to_string().contains(TOKEN), "{request}");
        assert_eq!(
            request["headers"].get("authorization"),
            None,
            "the token was sent: {request}"
        );
        assert!(
            request["path"]
                .as_str()
                .unwrap()
                .starts_with("/v1/auth/proof?nonce="),
            "only the proof was asked: {request}"
        );
    }
    for (args, out) in COMMANDS.iter().zip(&outputs) {
        let said = stderr(out);
        assert!(
            said.contains("did not prove it is your tmuxd"),
            "{args:?}: {said}"
        );
        match args[0] {
            // Never fails the agent; says why on stderr (--verbose).
            "hooks" => assert_eq!(out.status.code(), Some(0), "{args:?}"),
            _ => assert_eq!(out.status.code(), Some(1), "{args:?}: {said}"),
        }
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("evil.invalid"),
            "{args:?} printed the impostor's link"
        );
    }
    let proofs = seen.iter().filter(|r| r.get("method").is_some()).count();
    assert_eq!(
        proofs,
        COMMANDS.len(),
        "one proof asked per command: {seen:?}"
    );
}

/// With no socket (the daemon is stopped) and no `--url`, the
/// CLI says no daemon runs and how to start one; it never tries the
/// configured TCP port, where another user may be listening.
#[test]
fn without_a_socket_the_cli_says_no_daemon_runs_and_never_tries_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let (evil, mark) = evil_script(dir.path());
    let impostor = Impostor::start(&evil, &["tcp"]);
    let data_dir = dir.path().join("data");
    std::fs::create_dir(&data_dir).unwrap();
    let outputs: Vec<Output> = COMMANDS
        .iter()
        .map(|args| {
            tmuxd_command(dir.path())
                .env("TMUXD_BIND", format!("127.0.0.1:{}", impostor.at))
                .env("TMUXD_DATA_DIR", &data_dir)
                .env("TMUXD_TOKEN", TOKEN)
                .env("TMUX_PANE", "%1")
                .args(*args)
                .output()
                .unwrap()
        })
        .collect();
    assert!(!mark.exists(), "the impostor's script ran");
    let seen = impostor.seen();
    assert!(seen.is_empty(), "the CLI connected to the port: {seen:?}");
    for (args, out) in COMMANDS.iter().zip(&outputs) {
        let said = stderr(out);
        assert!(
            said.contains("no tmuxd is running") && said.contains("tmuxd serve"),
            "{args:?}: {said}"
        );
        let want = if args[0] == "hooks" { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(want), "{args:?}: {said}");
    }
    // A socket a stopped daemon left, with no one listening, says the same.
    let left = std::os::unix::net::UnixListener::bind(data_dir.join("tmuxd.sock")).unwrap();
    drop(left);
    let out = tmuxd_command(dir.path())
        .env("TMUXD_BIND", format!("127.0.0.1:{}", impostor.at))
        .env("TMUXD_DATA_DIR", &data_dir)
        .arg("ls")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no tmuxd is running"),
        "{}",
        stderr(&out)
    );
    let seen = impostor.seen();
    assert!(seen.is_empty(), "the CLI connected to the port: {seen:?}");
}

/// A socket in the data dir that another user made (here: the
/// directory was open to them for a moment) is refused before any request.
#[test]
fn a_socket_another_user_made_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (evil, mark) = evil_script(dir.path());
    let data_dir = dir.path().join("data");
    std::fs::create_dir(&data_dir).unwrap();
    for open in [dir.path(), data_dir.as_path()] {
        std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let socket = data_dir.join("tmuxd.sock");
    let impostor = Impostor::start(&evil, &["unix", socket.to_str().unwrap()]);
    let run = |args: &[&str]| {
        tmuxd_command(dir.path())
            .env("TMUXD_DATA_DIR", &data_dir)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["attach", "build"]);
    assert!(!mark.exists(), "the impostor's script ran");
    assert!(
        impostor.seen_now().is_empty(),
        "the CLI connected: {:?}",
        impostor.seen_now()
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("refusing the unix socket") && stderr(&out).contains("uid 65534"),
        "{}",
        stderr(&out)
    );
    // The directory back to ours alone: the socket in it is still theirs.
    std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = run(&["ls"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("uid 65534"), "{}", stderr(&out));
    assert!(!mark.exists());
    assert!(
        impostor.seen_now().is_empty(),
        "the CLI connected: {:?}",
        impostor.seen_now()
    );
}

/// The real daemon: over its socket with no token; over TCP with its token
/// (it proves it holds it); refused over TCP without one (exit 2, naming
/// where a token goes), and a wrong token is told apart from nothing.
#[test]
fn the_real_daemon_is_reached_on_its_socket_or_proves_itself_over_tcp() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let id = daemon.create_named("mine", SHELL);
    let on_socket = tmuxd_command(daemon.home())
        .env("TMUXD_DATA_DIR", &daemon.data_dir)
        .arg("ls")
        .output()
        .unwrap();
    assert!(stdout_ok(on_socket).contains(&id));
    assert!(stdout_ok(daemon.client().arg("ls").output().unwrap()).contains(&id));

    let tcp = |token: Option<&str>| {
        let mut command = tmuxd_command(daemon.home());
        command.env("TMUXD_URL", &daemon.base).arg("ls");
        if let Some(token) = token {
            command.env("TMUXD_TOKEN", token);
        }
        command.output().unwrap()
    };
    let without = tcp(None);
    assert_eq!(without.status.code(), Some(2), "{}", stderr(&without));
    assert!(
        stderr(&without).contains("TMUXD_TOKEN")
            && stderr(&without).contains("auth.token")
            && stderr(&without).contains("socket"),
        "{}",
        stderr(&without)
    );
    let wrong = tcp(Some("not-the-daemons-token-0123456789"));
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        stderr(&wrong).contains("did not prove"),
        "{}",
        stderr(&wrong)
    );
}

/// `--token` on the command line is visible to every user in /proc: it
/// works, with a warning naming the alternatives; the variable does not warn.
#[test]
fn a_token_on_the_command_line_is_warned_about() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let token = daemon.token().unwrap();
    let flag = tmuxd_command(daemon.home())
        .args(["ls", "--url", &daemon.base, "--token", token])
        .output()
        .unwrap();
    let said = stderr(&flag);
    assert!(flag.status.success(), "{said}");
    assert!(
        said.contains("warning: --token on the command line can be read by every user of this machine (ps, /proc/PID/cmdline); set TMUXD_TOKEN or auth.token"),
        "{said}"
    );
    let variable = daemon.client().arg("ls").output().unwrap();
    assert!(variable.status.success());
    assert!(variable.stderr.is_empty(), "{}", stderr(&variable));
}

/// A path as bash's `$'...'`, every byte but the plainest escaped, so no
/// control character is typed into the shell as itself.
fn ansi_c(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let escaped: String = path
        .as_os_str()
        .as_bytes()
        .iter()
        .map(|&b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'.' | b'-' | b'_' => {
                (b as char).to_string()
            }
            _ => format!("\\x{b:02x}"),
        })
        .collect();
    format!("$'{escaped}'")
}

/// Whether `bytes` holds a control byte other than `\n`: C0, DEL, or C1
/// as UTF-8 encodes it (`\xc2\x80`..`\xc2\x9f`).
fn control_bytes(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .filter(|&c| c != '\n' && c.is_control())
        .map(|c| format!("{c:?}"))
        .collect()
}

/// A session whose cwd, tmux name, title and process name hold
/// escape sequences (a directory name clearing the screen, OSC 52 setting
/// the clipboard, a C1 CSI) reaches `ls`, `show` and `events` with each
/// control character made visible; `--json` keeps the exact text.
#[test]
fn hostile_names_cwds_and_titles_print_no_control_bytes() {
    let tmux = TmuxServer::new();
    let daemon = Daemon::start(&tmux);
    let dir = tempfile::tempdir().unwrap();
    let hostile_dir = dir
        .path()
        .join("proj\x1b]0;X\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u{9b}2J\x7f");
    std::fs::create_dir(&hostile_dir).unwrap();
    // A process whose name holds an escape and a C1 CSI.
    let program = dir.path().join("sl\x1b[2J\u{9b}p");
    std::fs::copy("/bin/sleep", &program).unwrap();

    let session = daemon.create(&json!({ "name": "plain", "command": SHELL }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    daemon.wait_for_snapshot(&id, "$");
    let hostile_name = "n\u{9b}2J\u{1b}x";
    // tmux 3.7 refuses control characters in a session name outright.
    let renamed = tmux.output(&["rename-session", "-t", "=plain", hostile_name]);
    let refused = String::from_utf8_lossy(&renamed.stderr).contains("invalid session name");
    assert!(
        renamed.status.success() || refused,
        "rename-session: {renamed:?}"
    );
    daemon.type_line(
        &id,
        &format!(
            "printf '\\033]2;T\\302\\2332Jitle\\007'; cd {}; {} 600",
            ansi_c(&hostile_dir),
            ansi_c(&program)
        ),
    );
    let summary = wait_for("the hostile cwd and title", || {
        let s = daemon.summary(&id);
        let ready = s["cwd"] == hostile_dir.to_str().unwrap()
            && s["title"].as_str().is_some_and(|t| t.contains('\u{9b}'));
        ready.then_some(s)
    });
    // tmux itself writes a name's control characters as octal escapes
    // (`\033`); the name is renamed anyway, in case a tmux does not.

    for args in [
        vec!["ls"],
        vec!["show", &id],
        vec!["events", "--since", "0", "--no-follow"],
    ] {
        let out = daemon.client().args(&args).output().unwrap();
        let stdout = out.stdout.clone();
        let text = stdout_ok(out);
        let found = control_bytes(&stdout);
        assert!(found.is_empty(), "{args:?} printed {found:?}:\n{text}");
        if args[0] == "show" {
            assert!(text.contains(r"T\x9b2Jitle"), "{text}");
        }
        if args[0] != "events" {
            assert!(text.contains(r"proj\e]0;X\x07\e[2J"), "{args:?}: {text}");
            assert!(text.contains(r"\x9b2J\x7f"), "{args:?}: {text}");
        }
    }
    let json = daemon
        .client()
        .args(["show", &id, "--json"])
        .output()
        .unwrap();
    let exact: Value = serde_json::from_str(&stdout_ok(json)).unwrap();
    assert_eq!(exact["session"]["cwd"], hostile_dir.to_str().unwrap());
    assert_eq!(exact["session"]["tmux_name"], summary["tmux_name"]);
}
