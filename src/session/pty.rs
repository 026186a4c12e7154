//! The pseudo-terminal running tmuxd's tmux client for one session.
//!
//! Reads and writes go through our own non-blocking duplicate of the master
//! fd, driven by tokio, so no thread per session. portable-pty's
//! `take_writer` is never used: dropping that writer types a newline and EOF
//! into the terminal, which would reach the user's shell through tmux.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;
use std::time::Duration;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::io::unix::AsyncFd;

/// How long the client gets to leave after SIGTERM before SIGKILL.
const CLIENT_EXIT_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
#[error("cannot start the tmux client ({program}): {message}")]
pub struct PtyError {
    pub program: String,
    pub message: String,
}

pub struct ClientPty {
    /// Used only to resize; the lock makes the PTY shareable across awaits.
    master: Mutex<Box<dyn MasterPty + Send>>,
    child: Box<dyn Child + Send + Sync>,
    io: AsyncFd<OwnedFd>,
}

impl ClientPty {
    /// Starts `argv` on a new PTY of `cols` x `rows`.
    pub fn spawn(
        argv: &[OsString],
        env_remove: &[OsString],
        cols: u16,
        rows: u16,
    ) -> Result<ClientPty, PtyError> {
        let program = argv
            .first()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let fail = |message: String| PtyError {
            program: program.clone(),
            message,
        };
        let pair = native_pty_system()
            .openpty(pty_size(cols, rows))
            .map_err(|e| fail(format!("openpty: {e}")))?;
        let mut command = CommandBuilder::from_argv(argv.to_vec());
        for var in env_remove {
            command.env_remove(var);
        }
        // The client renders for this terminal type; vt100 parses xterm's dialect.
        command.env("TERM", "xterm-256color");
        command.cwd("/");
        let child = pair
            .slave
            .spawn_command(command)
            .map_err(|e| fail(e.to_string()))?;
        // Only the child keeps the slave open, so its exit reaches us as EOF.
        drop(pair.slave);
        let raw = pair
            .master
            .as_raw_fd()
            .ok_or_else(|| fail("the PTY has no fd".into()))?;
        let fd = nonblocking_dup(raw).map_err(|e| fail(format!("PTY fd: {e}")))?;
        // SAFETY: `fd` is an OwnedFd we just created; AsyncFd owns it until drop,
        // so it stays open and refers to the same file description.
        let io = unsafe { AsyncFd::register(fd) }.map_err(|e| fail(format!("PTY fd: {e}")))?;
        Ok(ClientPty {
            master: Mutex::new(pair.master),
            child,
            io,
        })
    }

    /// Reads output; `Ok(0)` once the client has gone (Linux reports EIO).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.io.readable().await?;
            match guard.try_io(|fd| read_fd(fd.as_raw_fd(), buf)) {
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }

    /// Reads what is already waiting, without waiting; 0 when nothing is.
    pub fn read_ready(&self, buf: &mut [u8]) -> usize {
        let mut total = 0;
        while total < buf.len() {
            match read_fd(self.io.get_ref().as_raw_fd(), &mut buf[total..]) {
                Ok(n) if n > 0 => total += n,
                _ => break,
            }
        }
        total
    }

    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        let master = self
            .master
            .lock()
            .map_err(|_| io::Error::other("PTY lock poisoned"))?;
        master
            .resize(pty_size(cols, rows))
            .map_err(io::Error::other)
    }

    /// Ends the client without touching the session: SIGTERM makes a tmux
    /// client detach and exit; nothing is written to the terminal. Waits for
    /// the process so it never lingers as a zombie.
    pub async fn close(self) {
        let ClientPty {
            master,
            mut child,
            io,
        } = self;
        if let Some(pid) = child.process_id()
            && matches!(child.try_wait(), Ok(None))
        {
            // SAFETY: plain kill(2) on our own child's pid, not yet reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
        let waited = tokio::task::spawn_blocking(move || {
            let deadline = std::time::Instant::now() + CLIENT_EXIT_GRACE;
            loop {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => return,
                    Ok(None) if std::time::Instant::now() >= deadline => {
                        let _ = child.kill();
                        let _ = child.wait();
                        return;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        let _ = waited.await;
        drop(io);
        drop(master);
    }
}

fn pty_size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows: rows.max(1),
        cols: cols.max(1),
        pixel_width: 0,
        pixel_height: 0,
    }
}

fn nonblocking_dup(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl on an fd we own; the result is a new fd we take ownership of.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` is a fresh, valid fd owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(dup) };
    // SAFETY: F_GETFL/F_SETFL on a valid fd.
    let flags = unsafe { libc::fcntl(dup, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(dup, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(owned)
}

fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for writes of buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
