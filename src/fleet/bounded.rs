//! How much the hub takes from a peer. A peer may be compromised, so
//! every read from it stops at a limit picked from what a real peer sends,
//! and going past one is the peer's failure, not the hub's memory.

use bytes::{Bytes, BytesMut};

/// An answer to a request: a session list, a summary, a forwarded answer.
/// The largest a real peer sends is a scrollback at the default
/// `session.max_scrollback_lines` (10,000 lines: a few MiB even with wide
/// lines) or the list of a few thousand sessions (about 2 KiB each); 16 MiB
/// leaves room above both and is 4x a peer's default `http.max_body_bytes`,
/// which bounds what a session summary can carry (a thought, a hook's text).
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// One event of a peer's stream, and one line of it. An event carries at
/// most one request's worth of text (`http.max_body_bytes`, 4 MiB by
/// default) as JSON; 8 MiB allows for its escaping.
pub const MAX_EVENT_BYTES: usize = 8 << 20;

/// `GET /version` and the proof: a few hundred bytes from a real peer.
pub const MAX_CHECK_BYTES: usize = 64 << 10;

/// One WebSocket message or frame from a peer: a stream's output chunk or
/// a rendered screen, far smaller in practice; the same as an answer.
pub const MAX_SOCKET_MESSAGE_BYTES: usize = MAX_ANSWER_BYTES;

/// Why an answer was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("answered more than {0} bytes")]
    TooLarge(usize),
    #[error(transparent)]
    Request(#[from] reqwest::Error),
}

/// The whole body of `response`, refused past `limit` bytes: a declared
/// length over it is refused before reading, and reading stops at it.
pub async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Bytes, ReadError> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(ReadError::TooLarge(limit));
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Err(ReadError::TooLarge(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
