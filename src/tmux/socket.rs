//! Where tmuxd's tmux server listens, as a path another client can use
//! (`tmux -S PATH attach`), resolved the way tmux resolves `-L NAME`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Socket, Tmux};

impl Tmux {
    /// The tmux binary, as configured (a bare name is looked up in PATH).
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    pub fn socket(&self) -> &Socket {
        &self.socket
    }

    /// The server's socket path. For `-L NAME` and the default server this
    /// is `$TMUX_TMPDIR/tmux-UID/NAME` (`/tmp` when unset), as tmux computes
    /// it; `tmpdir` is this process's `TMUX_TMPDIR`.
    pub fn socket_path(&self, tmpdir: Option<&OsStr>, uid: u32) -> PathBuf {
        let name = match &self.socket {
            Socket::Path(path) => return path.clone(),
            Socket::Name(name) => name.as_str(),
            Socket::Default => "default",
        };
        let tmpdir = tmpdir
            .filter(|d| !d.is_empty())
            .unwrap_or(OsStr::new("/tmp"));
        Path::new(tmpdir).join(format!("tmux-{uid}")).join(name)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn tmux(socket: Socket) -> Tmux {
        Tmux::new("tmux".into(), socket, None, Duration::from_secs(1))
    }

    #[test]
    fn socket_paths() {
        let path =
            |socket, tmpdir: Option<&str>| tmux(socket).socket_path(tmpdir.map(OsStr::new), 1000);
        assert_eq!(
            path(Socket::Default, None),
            Path::new("/tmp/tmux-1000/default")
        );
        assert_eq!(
            path(Socket::Default, Some("")),
            Path::new("/tmp/tmux-1000/default")
        );
        assert_eq!(
            path(Socket::Name("work".into()), Some("/run/user/1000")),
            Path::new("/run/user/1000/tmux-1000/work")
        );
        assert_eq!(
            path(Socket::Path("/srv/t.sock".into()), Some("/x")),
            Path::new("/srv/t.sock")
        );
    }
}
