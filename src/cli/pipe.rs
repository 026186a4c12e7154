//! Noticing that whoever reads our stdout has gone, even while we have
//! nothing to write: `tmuxd events | head -3` must end once `head` exits,
//! not at the next event, which may never come.

use std::os::fd::AsRawFd;

/// Resolves when stdout is a pipe or terminal whose other end has closed.
/// Never resolves for a regular file or `/dev/null`.
pub async fn stdout_closed() {
    let (tx, rx) = tokio::sync::oneshot::channel();
    // A plain thread, not the blocking pool: the runtime would wait for a
    // pool thread at exit, and this one may wait forever (a regular file).
    std::thread::spawn(move || {
        if wait_for_hangup(std::io::stdout().as_raw_fd()) {
            let _ = tx.send(());
        }
    });
    match rx.await {
        Ok(()) => {}
        Err(_) => std::future::pending().await,
    }
}

/// Blocks until `fd` reports an error or hang-up: `poll` with no events
/// asked for still reports those, and a pipe's write end gets `POLLERR`
/// once no reader is left.
fn wait_for_hangup(fd: i32) -> bool {
    let mut entry = libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        let ready = unsafe { libc::poll(&mut entry, 1, -1) };
        if ready > 0 {
            return entry.revents & (libc::POLLERR | libc::POLLHUP) != 0;
        }
        if ready < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_without_reader_hangs_up() {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills two fds, both closed below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        unsafe { libc::close(fds[0]) };
        assert!(wait_for_hangup(fds[1]));
        unsafe { libc::close(fds[1]) };
    }
}
