//! tmuxd as a tmux client in its own right: the control stream on one end
//! of a socketpair whose other end the server holds, and tmux's client
//! protocol (imsg) on the server's socket, with the identify messages in an
//! order no tmux can crash on (see `dialogue`). No `tmux` process per
//! session, and two descriptors per client, both closed on drop.
//!
//! The connection to the server's socket is the client: when it closes
//! (tmuxd closing it, or dying, even by SIGKILL) the server lets the client
//! go at once, whatever output it held for it. Shutting the write side of
//! the control stream is a clean detach: the server flushes what it holds,
//! says `MSG_EXIT`, and the stream ends once tmuxd hangs up.

mod dialogue;
pub mod imsg;

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

pub use dialogue::{DialogueError, Ending, Identify};
pub use imsg::Framing;

/// Environment variables the client passes (`IDENTIFY_ENVIRON`): the server
/// would copy `update-environment` ones into the session on attach, which
/// tmuxd's attach turns off (`-E`), so these are only what a command run
/// from the client might look for.
const PASSED_ENV: [&str; 5] = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE"];

/// How long, once the control stream ended, to wait for the server's last
/// word (its `MSG_EXIT`, or the protocol socket closing too).
const LAST_WORD: Duration = Duration::from_secs(1);

/// How long a full listen backlog is tried again: the server speaks the
/// protocol and is only busy (see `control::pace`), so it is waited for.
const BACKLOG_PATIENCE: Duration = Duration::from_secs(10);
/// The first and the longest pause between connects that met a full backlog.
const BACKLOG_FIRST_PAUSE: Duration = Duration::from_millis(2);
const BACKLOG_MAX_PAUSE: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Nothing listens there: no server runs (`tmux -N` says the same).
    #[error("no tmux server is running at {}: {source}", path.display())]
    NoServer { path: PathBuf, source: io::Error },
    /// Something else is wrong with the socket; the child client may fare better.
    #[error("cannot talk to the tmux server at {}: {source}", path.display())]
    Unreachable { path: PathBuf, source: io::Error },
    /// The server's listen backlog stayed full for `BACKLOG_PATIENCE`: it
    /// speaks the protocol and is busy; a child client would meet the same.
    #[error("the tmux server at {} stayed too busy to accept a client: {source}", path.display())]
    Busy { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Dialogue(#[from] DialogueError),
}

/// A connected native control client's transport.
#[derive(Debug)]
pub struct NativeClient {
    /// The protocol connection; `None` once tmuxd hung up.
    imsg: Option<UnixStream>,
    reader: OwnedReadHalf,
    /// Dropping it shuts the stream's write side: the clean detach.
    writer: Option<OwnedWriteHalf>,
    framing: Framing,
    pid: u32,
    /// Protocol bytes read, not yet a whole message.
    inbox: Vec<u8>,
    /// Answers not yet written.
    outbox: Vec<u8>,
    ending: Option<Ending>,
}

/// Connects to the server at `socket` and runs `argv` (an `attach-session`)
/// as a control client.
pub async fn connect(
    socket: &Path,
    framing: Framing,
    argv: Vec<Vec<u8>>,
) -> Result<NativeClient, ConnectError> {
    let unreachable = |source| ConnectError::Unreachable {
        path: socket.to_owned(),
        source,
    };
    let imsg = connect_socket(socket)
        .await
        .map_err(|source| match source.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => ConnectError::NoServer {
                path: socket.to_owned(),
                source,
            },
            io::ErrorKind::WouldBlock => ConnectError::Busy {
                path: socket.to_owned(),
                source,
            },
            _ => unreachable(source),
        })?;
    let request = Identify {
        pid: std::process::id(),
        cwd: current_dir(),
        environ: passed_environ(),
        argv,
    };
    let batch = dialogue::identify_batch(framing, &request)?;
    let descriptors =
        dialogue::descriptor_messages(framing, request.pid).map_err(DialogueError::from)?;
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(unreachable)?;
    for message in &descriptors {
        send_with_fd(&imsg, message, theirs.as_raw_fd())
            .await
            .map_err(unreachable)?;
    }
    // The server holds its own copies now; ours would keep the stream open
    // after the server let go.
    drop(theirs);
    let mut imsg = imsg;
    imsg.write_all(&batch).await.map_err(unreachable)?;
    ours.set_nonblocking(true).map_err(unreachable)?;
    let (reader, writer) = UnixStream::from_std(ours)
        .map_err(unreachable)?
        .into_split();
    Ok(NativeClient {
        imsg: Some(imsg),
        reader,
        writer: Some(writer),
        framing,
        pid: request.pid,
        inbox: Vec::new(),
        outbox: Vec::new(),
        ending: None,
    })
}

impl NativeClient {
    /// Reads control-stream bytes into `buf` (0: the stream ended), answering
    /// the server's protocol messages meanwhile so they never back up.
    /// Cancel-safe.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut scratch = [0u8; 1024];
        loop {
            self.flush_answers();
            let Some(imsg) = &self.imsg else {
                return self.reader.read(buf).await;
            };
            let answers_waiting = !self.outbox.is_empty();
            tokio::select! {
                biased;
                read = self.reader.read(buf) => {
                    let n = read?;
                    if n == 0 {
                        self.hear_last_word().await;
                    }
                    return Ok(n);
                }
                heard = read_some(imsg, &mut scratch) => self.hear(heard, &scratch),
                _ = imsg.writable(), if answers_waiting => {}
            }
        }
    }

    /// The stream's writer, until the input was ended.
    pub fn writer(&mut self) -> Option<&mut OwnedWriteHalf> {
        self.writer.as_mut()
    }

    /// Ends the client's input: tmux detaches it cleanly.
    pub fn end_input(&mut self) {
        self.writer = None;
    }

    /// Why the server let the client go, once the stream has ended.
    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// Hangs up the protocol connection: the server drops the client at
    /// once (and the stream ends).
    pub fn hang_up(&mut self) {
        self.imsg = None;
    }

    /// After the stream ended: the server closes the protocol socket with
    /// it, or has already said why; wait briefly for that word.
    async fn hear_last_word(&mut self) {
        let mut scratch = [0u8; 1024];
        let deadline = tokio::time::Instant::now() + LAST_WORD;
        while let Some(imsg) = &self.imsg {
            match tokio::time::timeout_at(deadline, read_some(imsg, &mut scratch)).await {
                Ok(heard) => self.hear(heard, &scratch),
                Err(_) => break,
            }
        }
        self.imsg = None;
        self.ending.get_or_insert(Ending::Lost);
    }

    fn hear(&mut self, heard: io::Result<usize>, scratch: &[u8]) {
        let n = match heard {
            Ok(n) if n > 0 => n,
            Ok(_) | Err(_) => {
                self.imsg = None;
                self.ending.get_or_insert(Ending::Lost);
                return;
            }
        };
        self.inbox.extend(&scratch[..n]);
        let messages = match imsg::take_messages(self.framing, &mut self.inbox) {
            Ok(messages) => messages,
            Err(e) => {
                tracing::warn!("tmux protocol: {e}; hanging up");
                self.imsg = None;
                self.ending.get_or_insert(Ending::Lost);
                return;
            }
        };
        for message in messages {
            let answer = match dialogue::answer(self.framing, self.pid, &message) {
                Ok(answer) => answer,
                Err(e) => {
                    tracing::warn!("tmux protocol: cannot answer {}: {e}", message.kind);
                    continue;
                }
            };
            if let Some(reply) = answer.reply {
                self.outbox.extend(reply);
            }
            if let Some(ending) = answer.ending {
                self.ending.get_or_insert(ending);
            }
            if answer.hang_up {
                self.imsg = None;
                return;
            }
        }
    }

    /// Writes what answers it can without waiting (a few bytes, rarely).
    fn flush_answers(&mut self) {
        let Some(imsg) = &self.imsg else {
            self.outbox.clear();
            return;
        };
        while !self.outbox.is_empty() {
            match imsg.try_write(&self.outbox) {
                Ok(n) => {
                    self.outbox.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    tracing::debug!("tmux protocol: cannot answer: {e}");
                    self.outbox.clear();
                    return;
                }
            }
        }
    }
}

/// Connects; a full listen backlog (many clients connecting at once: tmux
/// accepts one per loop turn) is tried again for `BACKLOG_PATIENCE`, not
/// taken as a server tmuxd cannot reach.
/// Connects, trying a full listen backlog (EAGAIN) again with backoff.
async fn connect_socket(socket: &Path) -> io::Result<UnixStream> {
    let deadline = tokio::time::Instant::now() + BACKLOG_PATIENCE;
    let mut pause = BACKLOG_FIRST_PAUSE;
    loop {
        match UnixStream::connect(socket).await {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if tokio::time::Instant::now() + pause > deadline {
                    return Err(e);
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(BACKLOG_MAX_PAUSE);
            }
            other => return other,
        }
    }
}

/// A readable wait and one read through a shared reference; cancel-safe.
async fn read_some(socket: &UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        socket.readable().await?;
        match socket.try_read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

/// One message with one descriptor, in a `sendmsg` of its own.
async fn send_with_fd(socket: &UnixStream, bytes: &[u8], fd: RawFd) -> io::Result<()> {
    loop {
        socket.writable().await?;
        match socket.try_io(Interest::WRITABLE, || {
            sendmsg_fd(socket.as_raw_fd(), bytes, fd)
        }) {
            Ok(n) if n == bytes.len() => return Ok(()),
            Ok(n) => {
                return Err(io::Error::other(format!(
                    "sent {n} of a {}-byte message with a descriptor",
                    bytes.len()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

fn sendmsg_fd(socket: RawFd, bytes: &[u8], fd: RawFd) -> io::Result<usize> {
    // u64s: a control buffer aligned for `cmsghdr`.
    let mut control = [0u64; 4];
    // SAFETY: CMSG_* only compute sizes and offsets within `control`, which
    // is large enough for one descriptor (CMSG_SPACE(4) is 24 bytes on
    // 64-bit Linux, 16 on 32-bit) and aligned for `cmsghdr`; the iovec and
    // msghdr point at buffers that outlive the call; sendmsg(2) only reads.
    unsafe {
        let space = libc::CMSG_SPACE(size_of::<RawFd>() as u32) as usize;
        assert!(space <= size_of_val(&control));
        let mut iov = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = space as _;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        let sent = libc::sendmsg(socket, &message, libc::MSG_NOSIGNAL);
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(sent as usize)
    }
}

fn current_dir() -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    std::env::current_dir()
        .map(|dir| dir.as_os_str().as_bytes().to_vec())
        .unwrap_or_else(|_| b"/".to_vec())
}

fn passed_environ() -> Vec<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    PASSED_ENV
        .iter()
        .filter_map(|name| {
            let value = std::env::var_os(name)?;
            Some([name.as_bytes(), b"=", value.as_bytes()].concat())
        })
        .collect()
}
