//! A person's tmux client: `tmux attach-session` on a PTY of its own, its
//! output read and dropped so tmux never blocks on it.

use std::io::{Read, Write};
use std::sync::Mutex;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

pub struct PtyClient {
    child: Box<dyn Child + Send + Sync>,
    /// Taken on first typing only: a PTY writer dropped unused can type
    /// into the session.
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    master: Box<dyn MasterPty + Send>,
}

impl PtyClient {
    /// Attaches to session `name` of the server `server` names (`["-L",
    /// name]` or `["-S", path]`), on a terminal of `cols` x `rows`.
    pub fn attach(server: &[&str], name: &str, cols: u16, rows: u16) -> PtyClient {
        let size = PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size).expect("openpty");
        let mut command = CommandBuilder::new("tmux");
        let target = format!("={name}");
        command.args(server);
        command.args(["-f", "/dev/null", "attach-session", "-t", &target]);
        for inherited in ["TMUX", "TMUX_PANE", "TMUX_TMPDIR"] {
            command.env_remove(inherited);
        }
        command.env("TERM", "xterm-256color");
        let child = pair
            .slave
            .spawn_command(command)
            .expect("spawn tmux client");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("PTY reader");
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
        });
        PtyClient {
            child,
            writer: Mutex::new(None),
            master: pair.master,
        }
    }

    /// Types `bytes` as the person would.
    pub fn type_bytes(&self, bytes: &[u8]) {
        let mut writer = self.writer.lock().unwrap();
        if writer.is_none() {
            *writer = Some(self.master.take_writer().expect("PTY writer"));
        }
        if let Some(writer) = writer.as_mut() {
            let _ = writer.write_all(bytes);
            let _ = writer.flush();
        }
    }
}

impl Drop for PtyClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
