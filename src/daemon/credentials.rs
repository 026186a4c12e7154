//! The daemon's own credentials: the token it generates when none is
//! configured, and the unix socket its own user reaches it through.
//!
//! The token lives in `<data_dir>/token` (0600 in the 0700 data dir), made
//! at first start from 128+ random bits and kept across restarts, so
//! scripts and the CLI of the daemon's user can read it and nobody else
//! can. The socket is `<data_dir>/tmuxd.sock`: only the daemon's own uid is
//! served on it (checked at accept), with no token.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tokio::net::UnixListener;

use crate::api::random_hex;
use crate::config::MIN_TOKEN_CHARS;
use crate::store::{SOCKET_FILE, TOKEN_FILE, write_atomic};

/// Bytes of randomness in a generated token (hex-encoded: 64 characters).
const TOKEN_BYTES: usize = 32;

/// The token in `<data_dir>/token`, made now if there is none (or it is
/// unusable: too short, not text). The file must be the daemon user's own
/// regular file, not a link.
pub fn load_or_create_token(data_dir: &Path) -> anyhow::Result<String> {
    let path = data_dir.join(TOKEN_FILE);
    match read_private(&path)? {
        Some(token)
            if token.len() >= MIN_TOKEN_CHARS && token.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(token)
        }
        found => {
            if found.is_some() {
                tracing::warn!(path = %path.display(), "the token file held no usable token; making a new one");
            }
            let token = random_hex(TOKEN_BYTES);
            write_atomic(&path, format!("{token}\n").as_bytes()).with_context(|| {
                format!("cannot write the generated token to {}", path.display())
            })?;
            tracing::info!(path = %path.display(), "generated an API token (clients of this user read it from here)");
            Ok(token)
        }
    }
}

/// The trimmed text of a 0600 file the daemon's user owns; `None` if absent.
fn read_private(path: &Path) -> anyhow::Result<Option<String>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot open {} (a link is refused)", path.display()));
        }
    };
    let meta = file.metadata()?;
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != uid {
        bail!("{} is not a file of this user (uid {uid})", path.display());
    }
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    let mut text = String::new();
    if file.take(4096).read_to_string(&mut text).is_err() {
        return Ok(Some(String::new()));
    }
    Ok(Some(text.trim().to_owned()))
}

/// Binds `<data_dir>/tmuxd.sock` (0600), replacing a socket a previous
/// daemon left: the data dir's lock says none runs. `None`, with a
/// warning, where a socket cannot be made (a path too long for one).
pub fn bind_socket(data_dir: &Path) -> Option<(UnixListener, PathBuf)> {
    let path = data_dir.join(SOCKET_FILE);
    if let Ok(meta) = fs::symlink_metadata(&path) {
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_socket() {
            let _ = fs::remove_file(&path);
        }
    }
    let bound = UnixListener::bind(&path).and_then(|listener| {
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600))?;
        Ok(listener)
    });
    match bound {
        Ok(listener) => Some((listener, path)),
        Err(e) => {
            tracing::warn!(path = %path.display(), "no unix socket for the CLI: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let token = load_or_create_token(dir.path()).unwrap();
        assert_eq!(token.len(), 64);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        let mode = fs::metadata(dir.path().join(TOKEN_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create_token(dir.path()).unwrap(), token);
    }

    #[test]
    fn a_short_token_is_replaced_and_a_link_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE);
        fs::write(&path, "zq\n").unwrap();
        let token = load_or_create_token(dir.path()).unwrap();
        assert_ne!(token, "zq");
        fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, "x".repeat(40)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(load_or_create_token(dir.path()).is_err());
    }
}
