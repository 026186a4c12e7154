//! The fleet over real network separation: each peer's tmuxd (with its own
//! tmux server) runs in its own network namespace, joined to the hub (in
//! the test's namespace) by a veth pair, so a link can be cut with
//! `ip link set down`. A second test reaches a peer only through the hub's
//! supervised `ssh -L` to an sshd in the peer's namespace.
//!
//! Needs root, iproute2 and OpenSSH (`scripts/test` installs them); it
//! fails, never skips, when it cannot set up. Namespaces get names unique
//! to the run and are deleted on every exit path (`Net`'s Drop).

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};

const PEER_PORT: u16 = 7420;

fn run(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program} (scripts/test installs iproute2 and openssh): {e}")
        });
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Namespaces of one test, each joined to this namespace by a veth pair;
/// all deleted on drop (which removes their veth pairs too).
struct Net {
    tag: String,
    subnet: u8,
    namespaces: Vec<String>,
}

impl Net {
    fn new(tag: &str) -> Net {
        let pid = std::process::id();
        Net {
            tag: format!("{}{tag}", pid % 1_000_000),
            subnet: 100 + (pid % 100) as u8,
            namespaces: Vec::new(),
        }
    }

    /// Namespace `i` with `lo` up and a link to here: its address, and the
    /// name of this side's end of the link.
    fn add(&mut self, i: u8) -> (String, String, String) {
        let ns = format!("tmuxd-fleet-{}-{i}", self.tag);
        let here = format!("tf{}h{i}", self.tag);
        let there = format!("tf{}p{i}", self.tag);
        run("ip", &["netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        run(
            "ip",
            &["link", "add", &here, "type", "veth", "peer", "name", &there],
        );
        run("ip", &["link", "set", &there, "netns", &ns]);
        let (near, far) = (
            format!("10.{}.{i}.1", self.subnet),
            format!("10.{}.{i}.2", self.subnet),
        );
        run("ip", &["addr", "add", &format!("{near}/24"), "dev", &here]);
        run("ip", &["link", "set", &here, "up"]);
        run(
            "ip",
            &[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{far}/24"),
                "dev",
                &there,
            ],
        );
        run("ip", &["-n", &ns, "link", "set", &there, "up"]);
        run("ip", &["-n", &ns, "link", "set", "lo", "up"]);
        (ns, far, here)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = Command::new("ip")
                .args(["netns", "pids", ns])
                .output()
                .map(|out| {
                    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                        let _ = Command::new("kill").args(["-9", pid]).status();
                    }
                });
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// A peer's tmuxd inside a namespace, on its own data dir and tmux server.
struct NsPeer {
    ns: String,
    bind: String,
    base: String,
    home: PathBuf,
    data_dir: PathBuf,
    config: PathBuf,
    child: Option<Child>,
    token: String,
    http: reqwest::blocking::Client,
}

impl NsPeer {
    fn start(ns: &str, bind: &str, tmux: &TmuxServer, dir: &Path) -> NsPeer {
        let config = dir.join("config.toml");
        // A bind off loopback needs a configured token.
        let token = format!("fleet-peer-token-{}", tmux.socket);
        std::fs::write(
            &config,
            format!(
                "[auth]\ntoken = {token:?}\n\n[tmux]\nsocket_name = {:?}\nconfig_file = \"/dev/null\"\n\n[discovery]\ninterval_ms = 200\n",
                tmux.socket
            ),
        )
        .unwrap();
        let mut peer = NsPeer {
            ns: ns.to_owned(),
            bind: bind.to_owned(),
            base: String::new(),
            home: dir.to_owned(),
            data_dir: dir.join("data"),
            config,
            child: None,
            token,
            http: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
        };
        peer.spawn();
        peer
    }

    fn spawn(&mut self) {
        let mut child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.ns,
                common::tmuxd_bin(),
                "serve",
                "--bind",
                &self.bind,
            ])
            .arg("--config")
            .arg(&self.config)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMUXD_LOG", "info")
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(self.home.join("daemon.log")).unwrap())
            .spawn()
            .expect("ip netns exec tmuxd");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("tmuxd listening on ") {
                    let _ = tx.send(url.to_owned());
                }
            }
        });
        let Ok(base) = rx.recv_timeout(common::PATIENCE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("peer in {} did not start: {}", self.ns, self.log());
        };
        self.base = base;
        self.child = Some(child);
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.home.join("daemon.log")).unwrap_or_default()
    }

    fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child (ip netns exec execs tmuxd).
        unsafe { libc::kill(self.pid(), signal) };
    }

    fn stop(&mut self) {
        self.signal(libc::SIGTERM);
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    fn get(&self, path: &str) -> Value {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .unwrap();
        response.json().unwrap()
    }

    fn create(&self, name: &str) -> String {
        let response = self
            .http
            .post(format!("{}/v1/sessions", self.base))
            .bearer_auth(&self.token)
            .json(&json!({"name": name, "command": common::SHELL}))
            .send()
            .unwrap();
        let body: Value = response.json().unwrap();
        body["session"]["session_id"].as_str().unwrap().to_owned()
    }

    fn table(&self, name: &str, url: &str) -> String {
        format!(
            "[[fleet.peers]]\nname = {name:?}\nurl = {url:?}\ntoken = {:?}\n",
            self.token
        )
    }
}

impl Drop for NsPeer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_hub(tmux: &TmuxServer, tables: &str, data_dir: &Path) -> Daemon {
    Daemon::start_with(
        tmux,
        DaemonOptions {
            extra_config: format!(
                "[fleet]\nheartbeat_ms = 300\nrequest_timeout_ms = 1500\n\n{tables}"
            ),
            ..DaemonOptions::in_dir(data_dir)
        },
    )
}

/// Waits until the hub recorded exactly the peer's events, each once.
fn wait_fanned_in(peer: &NsPeer, hub: &Daemon, name: &str) -> usize {
    wait_for(&format!("{name}'s events on the hub"), || {
        let own: Vec<u64> = peer.get("/v1/events?format=json&since=0&limit=10000")["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["seq"].as_u64().unwrap())
            .collect();
        let (_, page) = hub.get("/v1/events?format=json&since=0&limit=10000");
        let fanned: Vec<u64> = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["host"] == name)
            .map(|e| e["host_seq"].as_u64().unwrap())
            .collect();
        (own == fanned).then_some(own.len())
    })
}

fn timed_get(hub: &Daemon, path: &str) -> (StatusCode, Value, Duration) {
    let started = Instant::now();
    let (status, body) = hub.get(path);
    (status, body, started.elapsed())
}

#[test]
fn a_fleet_over_real_links() {
    let mut net = Net::new("n");
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let tmuxes: Vec<_> = (0..3).map(|_| TmuxServer::new()).collect();
    let mut peers = Vec::new();
    let mut links = Vec::new();
    for i in 0..3u8 {
        let (ns, address, link) = net.add(i + 1);
        let bind = format!("{address}:{PEER_PORT}");
        let peer = NsPeer::start(&ns, &bind, &tmuxes[i as usize], dirs[i as usize].path());
        peers.push(peer);
        links.push(link);
    }
    let names = ["p1", "p2", "p3"];
    let tables: String = peers
        .iter()
        .zip(names)
        .map(|(p, n)| p.table(n, &p.base))
        .collect();
    let ids: Vec<String> = peers
        .iter()
        .zip(names)
        .map(|(p, n)| p.create(&format!("on-{n}")))
        .collect();
    let hub_tmux = TmuxServer::new();
    let hub_dir = tempfile::tempdir().unwrap();
    let mut hub = start_hub(&hub_tmux, &tables, hub_dir.path());
    for name in names {
        hub.wait_host(name, "up");
    }

    // Lists and ids.
    let (_, list) = hub.get("/v1/sessions");
    let listed: Vec<(String, String)> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session_id"].as_str().unwrap().to_owned(),
                s["host"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = names
        .iter()
        .zip(&ids)
        .map(|(n, id)| (format!("{n}/{id}"), n.to_string()))
        .collect();
    assert_eq!(listed, want);

    // Input, snapshot and a wait on p1, through the hub.
    let p1 = format!("/v1/sessions/p1%2F{}", ids[0]);
    let (status, body) = hub.post(
        &format!("{p1}/input"),
        &json!({"text": "echo over-$((40+2))-links", "submit": true}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = hub.post(
        &format!("{p1}/wait"),
        &json!({"match": "over-42-links", "timeout_ms": 10000}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, snapshot) = hub.get(&format!("{p1}/snapshot?format=text"));
    assert!(snapshot.to_string().contains("over-42-links"), "{snapshot}");

    // A stream and a screen WebSocket on p2, through the hub.
    let p2 = format!("/v1/sessions/p2%2F{}", ids[1]);
    let (mut stream, _) = tungstenite::connect(hub.ws_request(&format!("{p2}/stream"))).unwrap();
    let ready: Value = serde_json::from_str(stream.read().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(ready["type"], "ready", "{ready}");
    stream
        .send(tungstenite::Message::text(
            json!({"type": "input", "text": "echo p2-$((3*3))\r"}).to_string(),
        ))
        .unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("p2-9") {
        if let tungstenite::Message::Binary(frame) = stream.read().unwrap() {
            seen.extend_from_slice(&frame[8..]);
        }
    }
    drop(stream);
    let (mut screen, _) = tungstenite::connect(hub.ws_request(&format!("{p2}/screen"))).unwrap();
    let first = screen.read().unwrap();
    assert!(first.to_text().unwrap().contains("p2-9"), "{first}");
    drop(screen);

    // Every peer's events fanned in, each once.
    for (peer, name) in peers.iter().zip(names) {
        wait_fanned_in(peer, &hub, name);
    }

    // p3's link cut: down within seconds, its sessions stale, the others as fast as before.
    run("ip", &["link", "set", &links[2], "down"]);
    let cut = Instant::now();
    hub.wait_host("p3", "down");
    let noticed = cut.elapsed();
    assert!(noticed < Duration::from_secs(5), "down after {noticed:?}");
    println!("p3's link cut: down on the hub after {noticed:?}");
    let (_, list) = hub.get("/v1/sessions?host=p3");
    assert_eq!(list["sessions"][0]["stale"], true, "{list}");
    let (status, body, took) = timed_get(&hub, &format!("{p1}/snapshot"));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        took < Duration::from_secs(1),
        "p1 took {took:?} with p3 cut"
    );
    let (status, body, _) = timed_get(&hub, &format!("/v1/sessions/p3%2F{}/snapshot", ids[2]));
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`p3` is down"),
        "{body}"
    );
    // Events p3 makes meanwhile (a session made in its tmux, adopted) arrive once it is back.
    tmuxes[2].new_shell("made-while-cut");
    run("ip", &["link", "set", &links[2], "up"]);
    hub.wait_host("p3", "up");
    // The new session can arrive by the event fan-in a moment before the
    // refresh that clears `stale` from the rest: wait for both.
    wait_for("the session made while cut listed, nothing stale", || {
        let (_, list) = hub.get("/v1/sessions?host=p3");
        let sessions = list["sessions"].as_array()?;
        let fresh = sessions.iter().all(|s| s.get("stale").is_none());
        (fresh && list.to_string().contains("made-while-cut")).then_some(())
    });
    wait_fanned_in(&peers[2], &hub, "p3");

    // p2 frozen: its requests fail with a clear error in bounded time, the rest answer.
    peers[1].signal(libc::SIGSTOP);
    common::wait_until_stopped(peers[1].pid() as u32);
    let (status, body, took) = timed_get(&hub, &format!("{p2}/snapshot"));
    assert!(
        [StatusCode::GATEWAY_TIMEOUT, StatusCode::SERVICE_UNAVAILABLE].contains(&status),
        "{status} {body}"
    );
    assert!(
        body["error"]["message"].as_str().unwrap().contains("`p2`"),
        "{body}"
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
    println!("p2 frozen: a request for it answered {status} after {took:?}");
    hub.wait_host("p2", "down");
    let (status, _, took) = timed_get(&hub, &format!("{p1}/snapshot"));
    assert_eq!(status, StatusCode::OK);
    assert!(
        took < Duration::from_secs(1),
        "p1 took {took:?} with p2 frozen"
    );
    peers[1].signal(libc::SIGCONT);
    hub.wait_host("p2", "up");

    // p1 restarted: events resume, none lost or repeated.
    peers[0].stop();
    hub.wait_host("p1", "down");
    tmuxes[0].new_shell("made-while-p1-stopped");
    peers[0].spawn();
    peers[0].create("after-restart");
    hub.wait_host("p1", "up");
    wait_fanned_in(&peers[0], &hub, "p1");

    // The hub restarted while every peer makes events: same.
    hub.terminate();
    for (peer, name) in peers.iter().zip(names) {
        peer.create(&format!("while-hub-away-{name}"));
    }
    hub = start_hub(&hub_tmux, &tables, hub_dir.path());
    for (peer, name) in peers.iter().zip(names) {
        wait_fanned_in(peer, &hub, name);
    }
    drop(hub);
    drop(peers);
    drop(net);
}

/// A child killed and waited for on every exit path.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `ssh` client the hub runs, found among its children.
fn ssh_child(hub_pid: u32) -> Option<i32> {
    for entry in std::fs::read_dir("/proc").ok()? {
        let entry = entry.ok()?;
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, after)) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid = after.split_whitespace().nth(1);
        let comm = stat
            .split_once('(')
            .and_then(|(_, c)| c.split_once(')'))
            .map(|(c, _)| c);
        if ppid == Some(&hub_pid.to_string()) && comm == Some("ssh") {
            return entry.file_name().to_str()?.parse().ok();
        }
    }
    None
}

#[test]
fn a_peer_reached_only_through_ssh() {
    let mut net = Net::new("s");
    // Its own subnet: the other test links 1 to 3 from this namespace too.
    let (ns, address, _) = net.add(9);
    let dir = tempfile::tempdir().unwrap();
    // The peer's tmuxd listens on its namespace's loopback: only ssh reaches it.
    let tmux = TmuxServer::new();
    let peer = NsPeer::start(&ns, &format!("127.0.0.1:{PEER_PORT}"), &tmux, dir.path());
    // Adopted from its tmux: nothing here can reach the peer's API.
    tmux.new_shell("over-ssh");
    // sshd in the peer's namespace, with a host key and a client key made here.
    let keys = dir.path().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let host_key = keys.join("host");
    let client_key = keys.join("client");
    for key in [&host_key, &client_key] {
        run(
            "ssh-keygen",
            &["-q", "-t", "ed25519", "-N", "", "-f", key.to_str().unwrap()],
        );
    }
    let authorized = keys.join("authorized_keys");
    std::fs::copy(keys.join("client.pub"), &authorized).unwrap();
    let sshd_config = keys.join("sshd_config");
    std::fs::write(
        &sshd_config,
        format!(
            "ListenAddress {address}:22\nHostKey {}\nAuthorizedKeysFile {}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nAllowTcpForwarding yes\nPidFile {}\n",
            host_key.display(),
            authorized.display(),
            keys.join("sshd.pid").display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all("/run/sshd").unwrap();
    let sshd_log = keys.join("sshd.log");
    let _sshd = Reap(
        Command::new("ip")
            .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
            .arg(&sshd_config)
            .stderr(std::fs::File::create(&sshd_log).unwrap())
            .spawn()
            .expect("sshd (scripts/test installs openssh-server)"),
    );
    let user = std::env::var("USER").unwrap_or_else(|_| "root".to_owned());
    let table = format!(
        "{}ssh = \"{user}@{address}\"\nssh_args = [\"-i\", {:?}, \"-o\", \"StrictHostKeyChecking=no\", \"-o\", \"UserKnownHostsFile=/dev/null\", \"-o\", \"LogLevel=ERROR\"]\n",
        peer.table("far", &format!("http://127.0.0.1:{PEER_PORT}")),
        client_key.display()
    );
    let hub_tmux = TmuxServer::new();
    let hub_dir = tempfile::tempdir().unwrap();
    let hub = start_hub(&hub_tmux, &table, hub_dir.path());
    let up = hub.wait_host("far", "up");
    assert_eq!(up["transport"], "ssh", "{up}");
    // The forward listens on a unix socket in a directory only this user
    // can enter, never on a port another local user could take while ssh
    // reconnects; ssh's command line names the socket.
    {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let socket = hub_dir.path().join("fleet/far.sock");
        let dir_mode = std::fs::metadata(hub_dir.path().join("fleet"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700, "{dir_mode:o}");
        let socket_meta = std::fs::symlink_metadata(&socket).unwrap();
        assert!(socket_meta.file_type().is_socket());
        assert_eq!(
            socket_meta.permissions().mode() & 0o077,
            0,
            "{:o}",
            socket_meta.permissions().mode()
        );
        let ssh = wait_for("the hub's ssh child", || ssh_child(hub.pid()));
        let cmdline = std::fs::read(format!("/proc/{ssh}/cmdline")).unwrap();
        let argv: Vec<String> = cmdline
            .split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let forward = format!("{}:127.0.0.1:{PEER_PORT}", socket.display());
        assert!(argv.contains(&forward), "{argv:?}");
    }
    let id = wait_for("the adopted session listed on the hub", || {
        let (_, list) = hub.get("/v1/sessions?host=far");
        let session = list["sessions"].as_array()?.first()?.clone();
        session["session_id"].as_str().map(str::to_owned)
    });
    let path = format!("/v1/sessions/{}", id.replace('/', "%2F"));
    let (status, body) = hub.post(
        &format!("{path}/input"),
        &json!({"text": "echo through-ssh", "submit": true}),
    );
    assert_eq!(
        status,
        StatusCode::OK,
        "{body}: {}",
        std::fs::read_to_string(&sshd_log).unwrap_or_default()
    );
    let (status, body) = hub.post(
        &format!("{path}/wait"),
        &json!({"match": "^through-ssh", "timeout_ms": 10000}),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    // A WebSocket through the hub goes over the forward's socket too.
    let (mut screen, _) = tungstenite::connect(hub.ws_request(&format!("{path}/screen"))).unwrap();
    let first = screen.read().unwrap();
    assert!(first.to_text().unwrap().contains("through-ssh"), "{first}");
    drop(screen);

    // The ssh client killed: tmuxd runs a new one and the peer comes back.
    let first = wait_for("the hub's ssh child", || ssh_child(hub.pid()));
    // SAFETY: kill(2) on the ssh the hub under test started.
    unsafe { libc::kill(first, libc::SIGKILL) };
    let second = wait_for("a new ssh child", || {
        ssh_child(hub.pid()).filter(|&pid| pid != first)
    });
    assert_ne!(first, second);
    let (status, body) = wait_for("the peer through the new ssh", || {
        let (status, body) = hub.get(&format!("{path}/snapshot?format=text"));
        (status == StatusCode::OK).then_some((status, body))
    });
    assert_eq!(status, StatusCode::OK);
    assert!(body.to_string().contains("through-ssh"), "{body}");
    let far = hub.host("far");
    assert_eq!(far["status"], "up", "{far}");
    assert!(
        far["ssh_error"]
            .as_str()
            .unwrap_or("")
            .contains("ssh exited"),
        "{far}"
    );

    // The peer stops and another program takes its port on the peer host
    // (where the forward ends): it gets asked for a proof it cannot give,
    // and never the token.
    let mut peer = peer;
    peer.stop();
    hub.wait_host("far", "down");
    let squatter_log = dir.path().join("squatter.log");
    let _squatter = Reap(
        Command::new("ip")
            .args(["netns", "exec", &ns, "python3", "-c", SQUATTER])
            .arg(&squatter_log)
            .arg(PEER_PORT.to_string())
            .spawn()
            .expect("python3"),
    );
    let down = wait_for("the squatter refused a proof twice", || {
        let host = hub.host("far");
        let tries = std::fs::read_to_string(&squatter_log)
            .unwrap_or_default()
            .lines()
            .count();
        let refused = host["last_error"]
            .as_str()?
            .contains("did not prove it holds the token");
        (tries >= 2 && refused).then_some(host)
    });
    assert_eq!(down["status"], "down", "{down}");
    let seen = std::fs::read_to_string(&squatter_log).unwrap();
    assert!(
        seen.lines().all(|l| l.ends_with(" -")),
        "the squatter got a token: {seen}"
    );
    assert!(!seen.contains(&peer.token), "{seen}");
    drop(hub);
    drop(peer);
    drop(net);
}

/// An HTTP server that answers anything with `{"version": ...}` and logs
/// each request's path and `Authorization` (`-` when none).
const SQUATTER: &str = r#"
import http.server, sys
log = open(sys.argv[1], "a")
class Squatter(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log.write("%s %s\n" % (self.path, self.headers.get("Authorization") or "-"))
        log.flush()
        body = b'{"version": "0.1.0"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Squatter).serve_forever()
"#;
