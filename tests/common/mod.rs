//! Test harness: a private tmux server (`-L <unique>`, never the user's) and
//! the real daemon binary on port 0 with its own temp data dir.

#![allow(dead_code)]

pub mod pty;
pub mod python;
pub mod webhook;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

/// A shell with a fixed prompt and no rc files, for sessions tests type into.
pub const SHELL: &str = "env PS1='$ ' bash --norc --noprofile";
/// Environment every tmux server here starts with, so prompts are predictable.
const SHELL_ENV: [(&str, &str); 4] = [
    ("PS1", "$ "),
    ("HISTFILE", "/dev/null"),
    ("PROMPT_COMMAND", ""),
    ("LANG", "C.UTF-8"),
];

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{prefix}-{}-{n}-{nanos}", std::process::id())
}

/// A tmux server of our own; killed on drop.
pub struct TmuxServer {
    pub socket: String,
}

impl TmuxServer {
    pub fn new() -> Self {
        TmuxServer {
            socket: unique("tmuxd-test"),
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args);
        // Cleared like the daemon's, so both find the same socket directory
        // (`TMUX_TMPDIR` unset) and sessions see nothing of the developer's shell.
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::temp_dir());
        command.envs(SHELL_ENV);
        command.stdin(Stdio::null());
        command
    }

    pub fn output(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .expect("tmux must be installed (scripts/test installs it)")
    }

    /// Runs tmux and insists it succeeds.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.output(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A detached bash session at its prompt, 80x24.
    pub fn new_shell(&self, name: &str) {
        self.new_session(name, (80, 24), SHELL);
    }

    /// A detached session of `size` (cols, rows) running `command`.
    pub fn new_session(&self, name: &str, size: (u16, u16), command: &str) {
        let (cols, rows) = (size.0.to_string(), size.1.to_string());
        self.run(&[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            &cols,
            "-y",
            &rows,
            command,
        ]);
    }

    /// The program in the foreground of the session's active pane.
    pub fn current_command(&self, name: &str) -> String {
        let target = format!("={name}:");
        let out = self.run(&[
            "display-message",
            "-p",
            "-t",
            &target,
            "#{pane_current_command}",
        ]);
        out.trim().to_owned()
    }

    pub fn has_session(&self, name: &str) -> bool {
        self.output(&["has-session", "-t", &format!("={name}")])
            .status
            .success()
    }

    /// The visible pane, trailing spaces trimmed, trailing empty lines dropped.
    pub fn capture(&self, name: &str) -> Vec<String> {
        let out = self.run(&["capture-pane", "-p", "-t", &format!("={name}:")]);
        trim_lines(out.lines().map(str::to_owned).collect())
    }

    /// (cols, rows) of the session's active window.
    pub fn size(&self, name: &str) -> (u16, u16) {
        let out = self.run(&[
            "display-message",
            "-p",
            "-t",
            &format!("={name}:"),
            "#{window_width} #{window_height}",
        ]);
        let mut parts = out.split_whitespace().map(|n| n.parse().unwrap());
        (parts.next().unwrap(), parts.next().unwrap())
    }

    pub fn send_keys(&self, name: &str, keys: &[&str]) {
        let target = format!("={name}:");
        let mut args = vec!["send-keys", "-t", &target];
        args.extend(keys);
        self.run(&args);
    }

    /// Waits until the pane shows `needle` (real tmux, so this is the oracle).
    pub fn wait_for_text(&self, name: &str, needle: &str) {
        wait_for(&format!("{needle:?} in tmux pane {name}"), || {
            self.capture(name)
                .iter()
                .any(|l| l.contains(needle))
                .then_some(())
        });
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.output(&["kill-server"]);
    }
}

pub fn trim_lines(mut lines: Vec<String>) -> Vec<String> {
    for line in &mut lines {
        *line = line.trim_end().to_owned();
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// How long a test waits for something that should happen "soon". Generous:
/// a loaded 2-core CI machine may take many times what an idle one does, and
/// a passing test returns as soon as its condition holds anyway.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `check` until it returns Some, or panics after `PATIENCE`.
pub fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `check` until it returns Ok, or panics after `PATIENCE` with what
/// the last Err said.
pub fn wait_for_reporting<T>(what: &str, mut check: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match check() {
            Ok(value) => return value,
            Err(last) => assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {last}"
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How to start a daemon.
#[derive(Default)]
pub struct DaemonOptions {
    /// Extra TOML placed before the generated `[tmux]` and `[discovery]` tables.
    pub extra_config: String,
    pub data_dir: Option<PathBuf>,
    /// Replaces `[tmux]` settings: a binary and the PATH the daemon sees.
    pub tmux_bin: Option<PathBuf>,
    pub path_env: Option<String>,
    pub env: Vec<(String, String)>,
    /// `discovery.interval_ms`; 200 unless given.
    pub discovery_interval_ms: Option<u64>,
    /// `--bind`; `127.0.0.1:0` unless given (a fixed port survives restarts).
    pub bind: Option<String>,
    /// Extra lines inside the generated `[tmux]` table.
    pub tmux_config: String,
    /// Extra lines inside the generated `[discovery]` table.
    pub discovery_config: String,
}

impl DaemonOptions {
    /// A daemon on a data dir that outlives it, for restart tests.
    pub fn in_dir(data_dir: &Path) -> Self {
        DaemonOptions {
            data_dir: Some(data_dir.to_owned()),
            ..Default::default()
        }
    }
}

/// The real `tmuxd serve` binary on 127.0.0.1:0.
pub struct Daemon {
    child: Option<Child>,
    pub base: String,
    pub data_dir: PathBuf,
    log: PathBuf,
    http: reqwest::blocking::Client,
    /// The token the daemon generated in its data dir (no token configured),
    /// which every harness request carries; `None` when the test set its own.
    token: Option<String>,
    _dir: tempfile::TempDir,
}

/// The daemon under test: this build's, or `TMUXD_TEST_DAEMON_BIN` (another
/// build's, for comparisons such as `scripts/crash-churn --old`).
pub fn tmuxd_bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("TMUXD_TEST_DAEMON_BIN")
            .ok()
            .filter(|bin| !bin.is_empty())
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_tmuxd").to_owned())
    })
}

/// The tmuxd binary with a cleared environment: only `PATH` (to find tmux)
/// and a `HOME` of its own. Nothing of the developer's shell (`TMUXD_*`,
/// `TMUX`, `XDG_*`) reaches it, so a test can never drive the user's own tmux
/// server or data dir, nor fail because a token is set in their shell.
pub fn tmuxd_command(home: &Path) -> Command {
    let mut command = Command::new(tmuxd_bin());
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("xdg-data"))
        .env("XDG_CONFIG_HOME", home.join("xdg-config"))
        .stdin(Stdio::null());
    // Nor any descriptor the test process holds (cargo's jobserver pipe,
    // another test's sockets): the daemon starts with its stdio alone.
    // SAFETY: one syscall between fork and exec, no allocation.
    unsafe {
        command.pre_exec(|| {
            libc::close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC as i32);
            Ok(())
        });
    }
    command
}

/// The path of a test program in `fixtures/programs`.
pub fn program_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/programs")
        .join(name)
        .display()
        .to_string()
}

impl Daemon {
    pub fn start(tmux: &TmuxServer) -> Daemon {
        Daemon::start_with(tmux, DaemonOptions::default())
    }

    pub fn start_with(tmux: &TmuxServer, options: DaemonOptions) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = options
            .data_dir
            .clone()
            .unwrap_or_else(|| dir.path().join("data"));
        let config_path = dir.path().join("config.toml");
        let bin = options
            .tmux_bin
            .clone()
            .unwrap_or_else(|| PathBuf::from("tmux"));
        let config = format!(
            "{}\n[tmux]\nbin = {bin:?}\nsocket_name = {:?}\nconfig_file = \"/dev/null\"\n{}\n\n[discovery]\ninterval_ms = {}\n{}\n",
            options.extra_config,
            tmux.socket,
            options.tmux_config,
            options.discovery_interval_ms.unwrap_or(200),
            options.discovery_config,
        );
        std::fs::write(&config_path, config).unwrap();
        let log = dir.path().join("daemon.log");
        let mut command = tmuxd_command(dir.path());
        command
            .args(["serve", "--bind"])
            .arg(options.bind.as_deref().unwrap_or("127.0.0.1:0"))
            .arg("--config")
            .arg(&config_path)
            .arg("--data-dir")
            .arg(&data_dir)
            .env("TMUXD_LOG", "tmuxd=debug,info")
            .envs(SHELL_ENV)
            .envs(options.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        if let Some(path) = &options.path_env {
            command.env("PATH", path);
        }
        let mut child = command.spawn().expect("spawn tmuxd");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("tmuxd listening on ") {
                    let _ = tx.send(url.to_owned());
                }
            }
        });
        let base = match rx.recv_timeout(PATIENCE) {
            Ok(base) => base,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "daemon did not start:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        let token = std::fs::read_to_string(data_dir.join("token"))
            .ok()
            .map(|t| t.trim().to_owned());
        Daemon {
            child: Some(child),
            base,
            data_dir,
            log,
            token,
            http: reqwest::blocking::Client::builder()
                .timeout(PATIENCE)
                .build()
                .unwrap(),
            _dir: dir,
        }
    }

    /// The daemon's own `HOME`, for client commands run beside it.
    pub fn home(&self) -> &Path {
        self._dir.path()
    }

    /// The tmuxd binary as a client of this daemon (`TMUXD_URL` set, and
    /// `TMUXD_TOKEN` when the daemon generated its token).
    pub fn client(&self) -> Command {
        let mut command = tmuxd_command(self.home());
        command.env("TMUXD_URL", &self.base);
        if let Some(token) = &self.token {
            command.env("TMUXD_TOKEN", token);
        }
        command
    }

    /// The generated token, if the daemon made one (see `token`).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Adds the generated token to a request a test builds itself.
    pub fn authorize(
        &self,
        request: reqwest::blocking::RequestBuilder,
    ) -> reqwest::blocking::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// A WebSocket request for `path` (`/v1/...`), carrying the generated
    /// token when there is one.
    pub fn ws_request(&self, path: &str) -> tungstenite::http::Request<()> {
        use tungstenite::client::IntoClientRequest;
        let url = self.base.replace("http://", "ws://") + path;
        let mut request = url.into_client_request().unwrap();
        if let Some(header) = self.auth_header() {
            request
                .headers_mut()
                .insert("Authorization", header.parse().unwrap());
        }
        request
    }

    /// `Authorization: Bearer ...` for raw clients (WebSockets, hand-spoken
    /// HTTP), when the daemon generated its token.
    pub fn auth_header(&self) -> Option<String> {
        self.token.as_ref().map(|t| format!("Bearer {t}"))
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(header) = self.auth_header() {
            request = request.header("Authorization", header);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().expect("daemon answers");
        let status = response.status();
        let text = response.text().unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    pub fn get(&self, path: &str) -> (StatusCode, Value) {
        self.request(reqwest::Method::GET, path, None)
    }

    pub fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        self.request(reqwest::Method::POST, path, Some(body))
    }

    pub fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.request(reqwest::Method::DELETE, path, None)
    }

    /// Creates a session and returns its summary (asserting 201).
    pub fn create(&self, body: &Value) -> Value {
        let (status, value) = self.post("/v1/sessions", body);
        assert_eq!(status, StatusCode::CREATED, "create {body}: {value}");
        value["session"].clone()
    }

    /// Creates session `name` running `command`; returns its id.
    pub fn create_named(&self, name: &str, command: &str) -> String {
        let session = self.create(&serde_json::json!({ "name": name, "command": command }));
        session["session_id"].as_str().unwrap().to_owned()
    }

    /// `POST .../wait` until `until` (asserting 200); returns the summary.
    pub fn wait_until(&self, id: &str, until: &str) -> Value {
        let body = serde_json::json!({ "until": until, "timeout_ms": PATIENCE.as_millis() as u64 });
        let (status, answer) = self.post(&format!("/v1/sessions/{id}/wait"), &body);
        assert_eq!(status, StatusCode::OK, "wait until {until}: {answer}");
        answer["session"].clone()
    }

    /// Types `line` and Enter into the session (asserting 200).
    pub fn type_line(&self, id: &str, line: &str) {
        let body = serde_json::json!({ "text": line, "submit": true });
        let (status, answer) = self.post(&format!("/v1/sessions/{id}/input"), &body);
        assert_eq!(status, StatusCode::OK, "{answer}");
    }

    /// Runs the CLI (`client()`) with `args` to its end.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.client().args(args).output().unwrap()
    }

    /// A fleet peer as this hub lists it in `GET /v1/hosts` (asserting 200).
    pub fn host(&self, name: &str) -> Value {
        let (status, body) = self.get("/v1/hosts");
        assert_eq!(status, StatusCode::OK, "{body}");
        let hosts = body["hosts"].as_array().unwrap();
        hosts.iter().find(|h| h["name"] == name).unwrap().clone()
    }

    /// Waits until this hub lists peer `name` with `status`; returns it.
    pub fn wait_host(&self, name: &str, status: &str) -> Value {
        wait_for(&format!("{name} {status}"), || {
            let host = self.host(name);
            (host["status"] == status).then_some(host)
        })
    }

    /// The session's summary, `GET /v1/sessions/{id}` (asserting 200).
    pub fn summary(&self, id: &str) -> Value {
        let (status, body) = self.get(&format!("/v1/sessions/{id}"));
        assert_eq!(status, StatusCode::OK, "{body}");
        body["session"].clone()
    }

    /// Every sample of `/metrics` (asserting 200): the sample as the text
    /// spells it (name and labels) and its value.
    pub fn metrics(&self) -> Vec<(String, f64)> {
        let (status, text) = self.get("/metrics");
        assert_eq!(status, StatusCode::OK, "{text}");
        let text = text.as_str().expect("metrics are text");
        text.lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| {
                let (sample, value) = line.rsplit_once(' ').expect("a sample and its value");
                let value = value
                    .parse()
                    .unwrap_or_else(|_| panic!("a number in {line:?}"));
                (sample.to_owned(), value)
            })
            .collect()
    }

    /// The value of the `/metrics` sample `sample` (name with its labels,
    /// as the text spells them), `None` when absent.
    pub fn metric(&self, sample: &str) -> Option<f64> {
        self.metrics()
            .into_iter()
            .find_map(|(name, value)| (name == sample).then_some(value))
    }

    pub fn sessions(&self) -> Vec<Value> {
        let (status, value) = self.get("/v1/sessions");
        assert_eq!(status, StatusCode::OK);
        value["sessions"].as_array().unwrap().clone()
    }

    pub fn session_ids(&self) -> Vec<String> {
        self.sessions()
            .iter()
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn snapshot_lines(&self, id: &str) -> Vec<String> {
        let (status, snap) = self.get(&format!("/v1/sessions/{id}/snapshot"));
        assert_eq!(status, StatusCode::OK, "{snap}");
        trim_lines(
            snap["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_owned())
                .collect(),
        )
    }

    /// Waits until the daemon's snapshot shows `needle`.
    pub fn wait_for_snapshot(&self, id: &str, needle: &str) -> Vec<String> {
        wait_for(&format!("{needle:?} in snapshot of {id}"), || {
            let lines = self.snapshot_lines(id);
            lines.iter().any(|l| l.contains(needle)).then_some(lines)
        })
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.pid() as i32, signal) };
    }

    /// Stops the daemon (SIGSTOP) and returns once every one of its threads
    /// is stopped: a stop reaches each thread only when it next enters the
    /// kernel, which on a loaded machine can be after a request it was
    /// about to answer.
    pub fn freeze(&self) {
        self.signal(libc::SIGSTOP);
        wait_until_stopped(self.pid());
    }

    /// Sends SIGTERM and waits; returns the exit status and how long it took.
    pub fn terminate(&mut self) -> (ExitStatus, Duration) {
        let started = Instant::now();
        self.signal(libc::SIGTERM);
        let status = self.wait_exit();
        (status, started.elapsed())
    }

    pub fn kill9(&mut self) {
        self.signal(libc::SIGKILL);
        self.wait_exit();
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        let child = self.child.as_mut().unwrap();
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "daemon did not exit:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn events(&self) -> Vec<Value> {
        read_events(&self.data_dir)
    }

    /// The event log once `holds` says it has what a test looks for. A
    /// state is in a session's summary as soon as its actor decides it;
    /// its event reaches the log a moment later, through the supervisor.
    pub fn events_once(&self, what: &str, holds: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        wait_for(what, || Some(self.events()).filter(|events| holds(events)))
    }
}

/// Returns once every thread of process `pid` is stopped (after a
/// SIGSTOP): a stop reaches each thread only when it next enters the
/// kernel, which on a loaded machine can be after a request it was about
/// to answer.
pub fn wait_until_stopped(pid: u32) {
    let tasks = format!("/proc/{pid}/task");
    wait_for("every thread of the process to stop", || {
        let mut states = std::fs::read_dir(&tasks).ok()?.map(|task| {
            let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
            // `pid (comm) S ...`: the state follows the last `)`.
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state)
        });
        states.all(|s| s == Some('T')).then_some(())
    });
}

pub fn read_events(data_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(data_dir.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("---- daemon log ----\n{}", self.log());
        }
    }
}

/// Its stdout, insisting the command succeeded.
pub fn stdout_ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "failed ({:?}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Where the shipped fake tmux lives.
pub fn fake_tmux_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake-tmux")
}

/// A PATH with the fake tmux first, then links to every system program but
/// the real tmux (made under `dir`), so nothing can reach real tmux.
pub fn path_with_fake_tmux(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for system in ["/usr/local/bin", "/usr/bin", "/bin"] {
        for entry in std::fs::read_dir(system).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if name == "tmux" || bin.join(&name).exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(entry.path(), bin.join(&name));
        }
    }
    format!("{}:{}", fake_tmux_dir().display(), bin.display())
}

/// What a command wrote to stderr, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A command's stdout as JSON, asserting it succeeded.
pub fn json_ok(output: Output) -> Value {
    let text = stdout_ok(output);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A file's owner uid and permission bits.
pub fn owner_and_mode(path: &Path) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.uid(), meta.mode() & 0o777)
}

/// A bash script printing the completions of `$LINE` (a command line,
/// ending in a space to complete a new word), one a line, as bash would
/// offer them at a TAB; `$TMUXD` is the binary.
pub const BASH_COMPLETE: &str = r#"source <("$TMUXD" completions bash)
read -ra COMP_WORDS <<< "$LINE"
[[ "$LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_TYPE=9
_clap_complete_tmuxd tmuxd "${COMP_WORDS[COMP_CWORD]}"
printf '%s\n' "${COMPREPLY[@]}""#;

/// The JSON of each `data:` line of an SSE response, as they arrive; ends
/// with the response.
pub fn sse_data(response: reqwest::blocking::Response) -> impl Iterator<Item = Value> {
    BufReader::new(response)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let data = line.strip_prefix("data:")?;
            Some(serde_json::from_str(data.trim()).unwrap())
        })
}

/// The resident memory of process `pid`, in KiB, from /proc.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// `tmuxd serve` as `Daemon::start_with` runs it (its config, plus
/// `extra_config` and `args`) on `data_dir`, expected to refuse to start:
/// returns how it exited and what it said. Panics, once it is stopped, if
/// it starts listening instead.
pub fn serve_refused(
    tmux: &TmuxServer,
    data_dir: &Path,
    extra_config: &str,
    args: &[&str],
) -> (ExitStatus, String) {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("config.toml");
    let config = format!(
        "{extra_config}\n[tmux]\nbin = \"tmux\"\nsocket_name = {:?}\nconfig_file = \"/dev/null\"\n",
        tmux.socket
    );
    std::fs::write(&config_path, config).unwrap();
    let stderr_path = dir.path().join("stderr");
    let mut child = tmuxd_command(dir.path())
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&config_path)
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("spawn tmuxd");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("tmuxd listening on ") {
                let _ = tx.send(());
            }
        }
    });
    let exited = wait_for("tmuxd to exit or to listen", || {
        if rx.try_recv().is_ok() {
            return Some(None);
        }
        child.try_wait().unwrap().map(Some)
    });
    let said = || std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let Some(status) = exited else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("tmuxd started where it should refuse to:\n{}", said());
    };
    (status, said())
}
