//! Records the bytes a tmux client receives, exactly as tmuxd's own client
//! gets them (same argv, `TERM`, `ignore-size`), for the golden fixtures.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use tmuxd::tmux::{Socket, Tmux};

use crate::common::TmuxServer;

/// A tmux client on a PTY of its own; its output accumulates in `bytes`.
/// The PTY's writer is never taken: dropping it would type into the session.
pub struct Recorder {
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Recorder {
    pub fn attach(tmux: &TmuxServer, name: &str, cols: u16, rows: u16) -> Recorder {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        // The daemon's own argv, so the bytes are the ones its client gets.
        let tmuxd = Tmux::new(
            "tmux".into(),
            Socket::Name(tmux.socket.clone()),
            Some("/dev/null".into()),
            Duration::from_secs(5),
        );
        let mut command = CommandBuilder::from_argv(tmuxd.attach_argv(name));
        for var in tmuxd::tmux::child_env_removals() {
            command.env_remove(var);
        }
        command.env("TERM", "xterm-256color");
        let child = pair
            .slave
            .spawn_command(command)
            .expect("spawn tmux client");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("PTY reader");
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&bytes);
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Recorder {
            child,
            master: pair.master,
            bytes,
        }
    }

    /// What tmuxd does when it learns a new window size.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize PTY");
    }

    pub fn len(&self) -> usize {
        self.bytes.lock().unwrap().len()
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }

    /// Polls until no byte has arrived for `quiet`, or panics after 10 s.
    pub fn wait_quiet(&self, quiet: Duration) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = (self.len(), Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(10));
            let len = self.len();
            if len != last.0 {
                last = (len, Instant::now());
            } else if last.1.elapsed() >= quiet {
                return;
            }
            assert!(Instant::now() < deadline, "client output never settled");
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
