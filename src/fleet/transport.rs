//! How the hub's requests reach a peer: over TCP to its URL, or over the
//! unix socket of the ssh forward the hub supervises. Either way redirects
//! are never followed (a peer could send the hub's token, or a forwarded
//! input, anywhere), and WebSocket messages are bounded.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::bounded::MAX_SOCKET_MESSAGE_BYTES;

/// The directory of the forwards' sockets, inside the data dir.
const SOCKET_DIR: &str = "fleet";

/// The longest path a unix socket can have (`sun_path`, less its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Where requests to a peer go.
#[derive(Clone, Debug)]
pub enum Route {
    /// Its URL, over TCP.
    Tcp,
    /// The local end of its ssh forward.
    Socket(PathBuf),
}

/// The client for one peer: no redirects, and over `route`.
pub fn client(route: &Route) -> reqwest::Result<reqwest::Client> {
    let builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .redirect(reqwest::redirect::Policy::none());
    match route {
        Route::Tcp => builder.tcp_nodelay(true),
        Route::Socket(path) => builder.unix_socket(path.as_path()),
    }
    .build()
}

/// Why the forward's socket cannot be placed.
#[derive(Debug, thiserror::Error)]
pub enum SocketDirError {
    #[error("cannot make {0}: {1}")]
    Create(PathBuf, std::io::Error),
    #[error("{0} is not a directory of this user's: another user could bind the forward")]
    NotOurs(PathBuf),
    #[error(
        "{0} is longer than a unix socket path may be ({MAX_SOCKET_PATH} bytes): use a shorter data_dir"
    )]
    TooLong(PathBuf),
    #[error("{0} has a `:`, which ssh -L cannot take: use another data_dir")]
    Colon(PathBuf),
}

/// `<data_dir>/fleet/<host>.sock`, its directory made 0700 and checked to
/// be this user's own: no other user can bind, replace or connect to it.
pub fn forward_socket(data_dir: &Path, host: &str) -> Result<PathBuf, SocketDirError> {
    let dir = data_dir.join(SOCKET_DIR);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(SocketDirError::Create(dir, e)),
    }
    let metadata =
        std::fs::symlink_metadata(&dir).map_err(|e| SocketDirError::Create(dir.clone(), e))?;
    // SAFETY: geteuid(2) cannot fail.
    let uid = unsafe { libc::geteuid() };
    if !metadata.is_dir() || metadata.uid() != uid {
        return Err(SocketDirError::NotOurs(dir));
    }
    if metadata.mode() & 0o777 != 0o700 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| SocketDirError::Create(dir.clone(), e))?;
    }
    let path = dir.join(format!("{host}.sock"));
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(SocketDirError::TooLong(path));
    }
    if path.as_os_str().as_encoded_bytes().contains(&b':') {
        return Err(SocketDirError::Colon(path));
    }
    Ok(path)
}

/// A byte stream to a peer, whichever way it goes.
pub trait PeerStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> PeerStream for T {}

/// A WebSocket to a peer.
pub type PeerSocket = WebSocketStream<Box<dyn PeerStream>>;

/// Opens a WebSocket to `request` (whose URL names the peer's own
/// address) over `route` to `address` (`host:port`), messages bounded.
pub async fn connect_socket(
    route: &Route,
    address: &str,
    request: tungstenite::handshake::client::Request,
) -> Result<PeerSocket, tungstenite::Error> {
    let stream: Box<dyn PeerStream> = match route {
        Route::Tcp => {
            let tcp = tokio::net::TcpStream::connect(address).await?;
            tcp.set_nodelay(true)?;
            Box::new(tcp)
        }
        Route::Socket(path) => Box::new(tokio::net::UnixStream::connect(path).await?),
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_SOCKET_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_SOCKET_MESSAGE_BYTES));
    let (socket, _) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_directory_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join(SOCKET_DIR);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = forward_socket(data.path(), "gpu1").unwrap();
        assert_eq!(path, dir.join("gpu1.sock"));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let long = data.path().join("x".repeat(100));
        std::fs::create_dir(&long).unwrap();
        assert!(matches!(
            forward_socket(&long, "gpu1"),
            Err(SocketDirError::TooLong(_))
        ));
    }

    #[test]
    fn a_symlinked_socket_directory_is_refused() {
        let data = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), data.path().join(SOCKET_DIR)).unwrap();
        assert!(matches!(
            forward_socket(data.path(), "gpu1"),
            Err(SocketDirError::NotOurs(_))
        ));
    }
}
