//! Whom the CLI talks to: only a daemon it can show is the user's own,
//! since an answer can make it run tmux, open a link, or learn what the
//! user's agents do, and a request can carry the token.
//!
//! - **The unix socket** of the configured data dir, by default: a socket
//!   of our uid in a directory of ours that no one else can write (so no one
//!   else could have put it there), served by a process of our uid
//!   (`SO_PEERCRED`, checked on a connection of its own before the first
//!   request). No token is needed there.
//! - **TCP**, only when the user asked (`--url`, `TMUXD_URL`), and only with
//!   a token: before anything else is sent, the daemon proves it holds that
//!   token (`crate::secret`, the HMAC of a fresh nonce), on a request that
//!   carries no token. Without a token the CLI could not tell the daemon
//!   from another user's program bound to that port, so it refuses.
//!
//! A missing socket is never a reason to try TCP: a stopped daemon's port
//! is any local user's to bind.

use std::fs::Metadata;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Url;

use super::error::ClientError;
use crate::secret::{PROOF_PATH, Proofs, new_nonce};

/// Where the daemon is.
pub enum Place {
    /// `<data_dir>/tmuxd.sock`, checked by [`check_socket`] and [`check_peer`].
    Socket(PathBuf),
    /// `--url`/`TMUXD_URL`, trusted only after [`check_proof`].
    Tcp,
}

/// Longest a daemon may take to prove itself.
const PROOF_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes of a proof read: two HMACs in hex, and room to spare.
const MAX_PROOF_BYTES: usize = 4096;

fn euid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// What [`socket_problem`] looks at of a file.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    /// A socket (the socket path) or a directory (its directory).
    pub right_kind: bool,
    pub uid: u32,
    pub mode: u32,
}

impl Seen {
    fn socket(meta: &Metadata) -> Seen {
        Seen {
            right_kind: meta.file_type().is_socket(),
            uid: meta.uid(),
            mode: meta.mode(),
        }
    }

    fn dir(meta: &Metadata) -> Seen {
        Seen {
            right_kind: meta.is_dir(),
            uid: meta.uid(),
            mode: meta.mode(),
        }
    }
}

/// Why a socket (not followed if a link) in `dir` is not one only `uid`
/// could have made, if it is not.
pub fn socket_problem(socket: Seen, dir: Seen, uid: u32) -> Option<String> {
    if !socket.right_kind {
        return Some("it is not a socket".into());
    }
    if socket.uid != uid {
        return Some(format!(
            "it belongs to uid {}, not to you ({uid})",
            socket.uid
        ));
    }
    if !dir.right_kind {
        return Some("its directory is not a directory".into());
    }
    if dir.uid != uid {
        return Some(format!(
            "its directory belongs to uid {}, not to you ({uid})",
            dir.uid
        ));
    }
    if dir.mode & 0o022 != 0 {
        return Some(format!(
            "its directory is writable by others (mode {:o}; tmuxd makes it 0700)",
            dir.mode & 0o7777
        ));
    }
    None
}

/// The daemon's directory as errors name it.
fn data_dir_of(socket: &Path) -> String {
    socket
        .parent()
        .map_or_else(|| socket.display().to_string(), |d| d.display().to_string())
}

/// Whether `socket` is the daemon's and ours: there, a socket of our uid
/// in a directory of ours that others cannot write. Absent: no daemon.
pub fn check_socket(socket: &Path) -> Result<(), ClientError> {
    let untrusted = |why: String| ClientError::UntrustedSocket {
        socket: socket.display().to_string(),
        why,
    };
    let meta = match std::fs::symlink_metadata(socket) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ClientError::NotRunning {
                data_dir: data_dir_of(socket),
                why: format!("no socket at {}", socket.display()),
            });
        }
        Err(e) => return Err(untrusted(e.to_string())),
    };
    let dir = socket.parent().unwrap_or(Path::new("/"));
    let dir = std::fs::metadata(dir).map_err(|e| untrusted(e.to_string()))?;
    match socket_problem(Seen::socket(&meta), Seen::dir(&dir), euid()) {
        Some(why) => Err(untrusted(why)),
        None => Ok(()),
    }
}

/// Whether the process serving `socket` runs as us, on a connection of its
/// own. Nobody listening (a socket a stopped daemon left): no daemon.
pub async fn check_peer(socket: &Path) -> Result<(), ClientError> {
    let stream = tokio::net::UnixStream::connect(socket).await.map_err(|e| {
        use std::io::ErrorKind::{ConnectionRefused, NotFound};
        match e.kind() {
            ConnectionRefused | NotFound => ClientError::NotRunning {
                data_dir: data_dir_of(socket),
                why: format!("nothing listens on {}: {e}", socket.display()),
            },
            _ => ClientError::Stream(format!(
                "cannot reach tmuxd at unix socket {}: {e}",
                socket.display()
            )),
        }
    })?;
    let peer = stream.peer_cred()?.uid();
    match peer == euid() {
        true => Ok(()),
        false => Err(ClientError::UntrustedSocket {
            socket: socket.display().to_string(),
            why: format!("the program serving it runs as uid {peer}, not as you"),
        }),
    }
}

/// Asks the daemon at `base` to prove it holds `token` (the request
/// carries no token), and checks the answer.
pub async fn check_proof(
    http: &reqwest::Client,
    base: &Url,
    token: &str,
) -> Result<(), ClientError> {
    let unproven = |why: String| ClientError::Unproven {
        base: base.to_string(),
        why,
    };
    let nonce = new_nonce();
    let url = format!(
        "{}{PROOF_PATH}?nonce={nonce}",
        base.as_str().trim_end_matches('/')
    );
    let asked = async {
        let mut response =
            http.get(&url)
                .send()
                .await
                .map_err(|source| ClientError::Unreachable {
                    base: base.to_string(),
                    source,
                })?;
        let status = response.status();
        if !status.is_success() {
            return Err(unproven(format!(
                "it answered GET {PROOF_PATH} with HTTP {}",
                status.as_u16()
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unproven(format!("its answer broke off: {e}")))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_PROOF_BYTES {
                return Err(unproven("its answer is too long to be a proof".into()));
            }
        }
        Ok(body)
    };
    let body = tokio::time::timeout(PROOF_TIMEOUT, asked)
        .await
        .map_err(|_| unproven(format!("no proof within {} s", PROOF_TIMEOUT.as_secs())))??;
    let proofs: Proofs =
        serde_json::from_slice(&body).map_err(|_| unproven("its answer is not a proof".into()))?;
    match proofs.shows(token, &nonce) {
        true => Ok(()),
        false => Err(unproven("its proof does not match the token".into())),
    }
}

/// The refusal of TCP without a token (exit 2: nothing was sent).
pub fn needs_token() -> ClientError {
    ClientError::Usage(
        "over TCP (--url, TMUXD_URL) tmuxd needs the daemon's token, to check that the daemon \
         answers and not another user's program on that port: set TMUXD_TOKEN (a daemon that \
         generated its token keeps it in <data_dir>/token) or auth.token in the config file; \
         or unset TMUXD_URL and drop --url to use the daemon's unix socket, which needs none"
            .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_socket_of_ours_in_a_private_directory_is_trusted() {
        let me = 1000;
        let socket = |right_kind, uid| Seen {
            right_kind,
            uid,
            mode: 0o140600,
        };
        let dir = |uid, mode: u32| Seen {
            right_kind: true,
            uid,
            mode: 0o040000 | mode,
        };
        // (socket, its directory, the problem named, if any)
        let table = [
            (socket(true, me), dir(me, 0o700), None),
            (socket(true, me), dir(me, 0o755), None),
            (socket(false, me), dir(me, 0o700), Some("not a socket")),
            (socket(true, 65534), dir(me, 0o700), Some("uid 65534")),
            (
                socket(true, me),
                dir(65534, 0o700),
                Some("directory belongs"),
            ),
            (socket(true, me), dir(me, 0o770), Some("writable by others")),
            (
                socket(true, me),
                dir(me, 0o1777),
                Some("writable by others"),
            ),
            (socket(true, me), dir(me, 0o702), Some("writable by others")),
        ];
        for (socket, dir, want) in table {
            let problem = socket_problem(socket, dir, me);
            match want {
                None => assert_eq!(problem, None, "{socket:?} {dir:?}"),
                Some(want) => {
                    let problem = problem.unwrap_or_default();
                    assert!(problem.contains(want), "{socket:?} {dir:?}: {problem}");
                }
            }
        }
        let not_a_dir = Seen {
            right_kind: false,
            ..dir(me, 0o700)
        };
        assert!(socket_problem(socket(true, me), not_a_dir, me).is_some());
    }

    #[test]
    fn an_absent_socket_means_no_daemon_and_names_how_to_start_one() {
        let dir = tempfile::tempdir().unwrap();
        let error = check_socket(&dir.path().join("tmuxd.sock")).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("no tmuxd is running") && text.contains("tmuxd serve"),
            "{text}"
        );
        assert_eq!(error.exit_code(), 1);
    }
}
