//! tmux's message framing (OpenBSD imsg, as tmux's `compat/imsg*.c` writes
//! it) as pure functions over bytes: a 16-byte header, then the payload.
//!
//! Header, host byte order: `type: u32`, the length (header included), the
//! peer id (`PROTOCOL_VERSION`, which the server checks) and the sender's
//! pid. The length field changed in tmux 3.6, when tmux took OpenBSD's newer
//! imsg: up to 3.5a a `u16` length and a `u16` flags field whose bit 0 says
//! a descriptor rides along; from 3.6 a `u32` length whose top bit says so.
//! A message without a descriptor and under 64 KiB is the same bytes in
//! both, but the two cannot be told apart from the protocol version (8 in
//! every release from 2.9 to 3.7c): tmux's version decides.

/// tmux's `PROTOCOL_VERSION`, sent as the peer id of every message.
pub const PROTOCOL_VERSION: u32 = 8;
/// Header bytes before each payload.
pub const HEADER_LEN: usize = 16;
/// tmux's `MAX_IMSGSIZE`: a longer message (header included) is refused.
pub const MAX_MESSAGE: usize = 16384;

/// Message types tmuxd sends or reads (`tmux-protocol.h`, `enum msgtype`).
pub mod kind {
    pub const VERSION: u32 = 12;
    pub const IDENTIFY_FLAGS: u32 = 100;
    pub const IDENTIFY_TERM: u32 = 101;
    pub const IDENTIFY_TTYNAME: u32 = 102;
    pub const IDENTIFY_STDIN: u32 = 104;
    pub const IDENTIFY_ENVIRON: u32 = 105;
    pub const IDENTIFY_DONE: u32 = 106;
    pub const IDENTIFY_CLIENTPID: u32 = 107;
    pub const IDENTIFY_CWD: u32 = 108;
    pub const IDENTIFY_FEATURES: u32 = 109;
    pub const IDENTIFY_STDOUT: u32 = 110;
    pub const IDENTIFY_LONGFLAGS: u32 = 111;
    pub const COMMAND: u32 = 200;
    pub const DETACH: u32 = 201;
    pub const DETACHKILL: u32 = 202;
    pub const EXIT: u32 = 203;
    pub const EXITED: u32 = 204;
    pub const EXITING: u32 = 205;
    pub const LOCK: u32 = 206;
    pub const READY: u32 = 207;
    pub const SHUTDOWN: u32 = 210;
    pub const UNLOCK: u32 = 215;
    pub const EXEC: u32 = 217;
    pub const FLAGS: u32 = 218;
    pub const READ_OPEN: u32 = 300;
    pub const READ_DONE: u32 = 302;
    pub const WRITE_OPEN: u32 = 303;
    pub const WRITE_READY: u32 = 305;
}

/// Where the length ends and how a descriptor is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// tmux 2.9 to 3.5a: `u16` length, `u16` flags (bit 0: a descriptor).
    Flags16,
    /// tmux 3.6 and later: `u32` length, top bit: a descriptor.
    Len32,
}

const FLAGS16_HAS_FD: u16 = 1;
const LEN32_HAS_FD: u32 = 0x8000_0000;

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImsgError {
    #[error("a tmux message of {len} bytes is over tmux's limit of {MAX_MESSAGE}")]
    TooLong { len: usize },
    #[error("tmux sent a message of {len} bytes, shorter than its header")]
    BadLength { len: usize },
}

/// One message as read: its type, sender pid and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub kind: u32,
    pub peer_id: u32,
    pub pid: u32,
    pub payload: Vec<u8>,
}

/// One message's bytes: header and payload. `with_fd` marks the descriptor
/// that the caller sends in the same `sendmsg` as these bytes.
pub fn encode(
    framing: Framing,
    kind: u32,
    payload: &[u8],
    with_fd: bool,
    pid: u32,
) -> Result<Vec<u8>, ImsgError> {
    let len = HEADER_LEN + payload.len();
    if len > MAX_MESSAGE {
        return Err(ImsgError::TooLong { len });
    }
    let mut bytes = Vec::with_capacity(len);
    bytes.extend(kind.to_ne_bytes());
    match framing {
        Framing::Flags16 => {
            let flags = if with_fd { FLAGS16_HAS_FD } else { 0 };
            bytes.extend((len as u16).to_ne_bytes());
            bytes.extend(flags.to_ne_bytes());
        }
        Framing::Len32 => {
            let mark = if with_fd { LEN32_HAS_FD } else { 0 };
            bytes.extend((len as u32 | mark).to_ne_bytes());
        }
    }
    bytes.extend(PROTOCOL_VERSION.to_ne_bytes());
    bytes.extend(pid.to_ne_bytes());
    bytes.extend(payload);
    Ok(bytes)
}

/// Takes every whole message from the front of `buffer`, leaving a partial
/// one for the next read. A length shorter than the header cannot be
/// resynchronised: the caller ends the connection.
pub fn take_messages(framing: Framing, buffer: &mut Vec<u8>) -> Result<Vec<Message>, ImsgError> {
    let mut messages = Vec::new();
    let mut at = 0;
    while buffer.len() - at >= HEADER_LEN {
        let header = &buffer[at..at + HEADER_LEN];
        let word = |i: usize| u32::from_ne_bytes(header[i..i + 4].try_into().expect("4 bytes"));
        let len = match framing {
            Framing::Flags16 => u16::from_ne_bytes([header[4], header[5]]) as usize,
            Framing::Len32 => (word(4) & !LEN32_HAS_FD) as usize,
        };
        if len < HEADER_LEN {
            return Err(ImsgError::BadLength { len });
        }
        if buffer.len() - at < len {
            break;
        }
        messages.push(Message {
            kind: word(0),
            peer_id: word(8),
            pid: word(12),
            payload: buffer[at + HEADER_LEN..at + len].to_vec(),
        });
        at += len;
    }
    buffer.drain(..at);
    Ok(messages)
}

/// A NUL-terminated string payload, as tmux sends and expects them.
pub fn c_string(text: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend(text.iter().copied().filter(|&b| b != 0));
    bytes.push(0);
    bytes
}

/// The payload up to its first NUL, as text.
pub fn payload_text(payload: &[u8]) -> String {
    let end = payload
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(payload.len());
    String::from_utf8_lossy(&payload[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ne32(n: u32) -> [u8; 4] {
        n.to_ne_bytes()
    }

    fn ne16(n: u16) -> [u8; 2] {
        n.to_ne_bytes()
    }

    /// Header bytes built by hand, field by field.
    fn header(kind: u32, len_field: &[u8], pid: u32) -> Vec<u8> {
        [&ne32(kind)[..], len_field, &ne32(8), &ne32(pid)].concat()
    }

    #[test]
    fn encoding_per_framing() {
        let flags16 = |len: u16, flags: u16| [ne16(len), ne16(flags)].concat();
        let len32 = |word: u32| ne32(word).to_vec();
        // (framing, type, payload, with a descriptor, the bytes)
        type Case = (Framing, u32, &'static [u8], bool, Vec<u8>);
        let cases: Vec<Case> = vec![
            // IDENTIFY_DONE: no payload, no descriptor; the same bytes in both.
            (
                Framing::Flags16,
                kind::IDENTIFY_DONE,
                b"",
                false,
                header(106, &flags16(16, 0), 42),
            ),
            (
                Framing::Len32,
                kind::IDENTIFY_DONE,
                b"",
                false,
                header(106, &len32(16), 42),
            ),
            // IDENTIFY_STDIN carries a descriptor: flags bit 0, or len's top bit.
            (
                Framing::Flags16,
                kind::IDENTIFY_STDIN,
                b"",
                true,
                header(104, &flags16(16, 1), 42),
            ),
            (
                Framing::Len32,
                kind::IDENTIFY_STDIN,
                b"",
                true,
                header(104, &len32(0x8000_0010), 42),
            ),
            // A payload counts in the length.
            (
                Framing::Flags16,
                kind::IDENTIFY_TERM,
                b"xterm\0",
                false,
                [header(101, &flags16(22, 0), 42), b"xterm\0".to_vec()].concat(),
            ),
            (
                Framing::Len32,
                kind::IDENTIFY_TERM,
                b"xterm\0",
                false,
                [header(101, &len32(22), 42), b"xterm\0".to_vec()].concat(),
            ),
        ];
        for (framing, kind, payload, fd, want) in cases {
            let got = encode(framing, kind, payload, fd, 42).unwrap();
            assert_eq!(got, want, "{framing:?} type {kind} fd {fd}");
        }
    }

    #[test]
    fn messages_over_the_limit_are_refused() {
        let payload = vec![b'x'; MAX_MESSAGE - HEADER_LEN];
        assert!(encode(Framing::Flags16, kind::COMMAND, &payload, false, 1).is_ok());
        let payload = vec![b'x'; MAX_MESSAGE - HEADER_LEN + 1];
        for framing in [Framing::Flags16, Framing::Len32] {
            assert_eq!(
                encode(framing, kind::COMMAND, &payload, false, 1),
                Err(ImsgError::TooLong {
                    len: MAX_MESSAGE + 1
                })
            );
        }
    }

    #[test]
    fn reading_takes_whole_messages_and_keeps_the_rest() {
        for framing in [Framing::Flags16, Framing::Len32] {
            let exit = encode(framing, kind::EXIT, &ne32(0), false, 7).unwrap();
            let flags = encode(framing, kind::FLAGS, &[1, 0, 0, 0, 0, 0, 0, 0], false, 7).unwrap();
            let stream = [exit.clone(), flags.clone()].concat();
            // Every split point: what is whole comes out, the rest waits.
            for cut in 0..=stream.len() {
                let mut buffer = stream[..cut].to_vec();
                let first = take_messages(framing, &mut buffer).unwrap();
                buffer.extend(&stream[cut..]);
                let second = take_messages(framing, &mut buffer).unwrap();
                let all: Vec<u32> = first.iter().chain(&second).map(|m| m.kind).collect();
                assert_eq!(all, [kind::EXIT, kind::FLAGS], "{framing:?} cut at {cut}");
                assert!(buffer.is_empty());
                assert_eq!(
                    first.len(),
                    (cut >= exit.len()) as usize + (cut == stream.len()) as usize
                );
            }
            let mut buffer = stream;
            let messages = take_messages(framing, &mut buffer).unwrap();
            assert_eq!(
                messages[0],
                Message {
                    kind: kind::EXIT,
                    peer_id: 8,
                    pid: 7,
                    payload: ne32(0).to_vec()
                }
            );
        }
    }

    #[test]
    fn the_descriptor_mark_is_not_part_of_the_length() {
        let mut buffer = header(104, &ne32(0x8000_0010), 1);
        let messages = take_messages(Framing::Len32, &mut buffer).unwrap();
        assert_eq!(messages.len(), 1);
        assert!(messages[0].payload.is_empty());
    }

    #[test]
    fn a_length_shorter_than_the_header_is_an_error() {
        for framing in [Framing::Flags16, Framing::Len32] {
            let len_field = match framing {
                Framing::Flags16 => [ne16(3), ne16(0)].concat(),
                Framing::Len32 => ne32(3).to_vec(),
            };
            let mut buffer = header(203, &len_field, 1);
            assert_eq!(
                take_messages(framing, &mut buffer),
                Err(ImsgError::BadLength { len: 3 })
            );
        }
    }

    #[test]
    fn strings() {
        assert_eq!(c_string(b"abc"), b"abc\0");
        assert_eq!(c_string(b""), b"\0");
        assert_eq!(c_string(b"a\0b"), b"ab\0");
        assert_eq!(payload_text(b"detached\0"), "detached");
        assert_eq!(payload_text(b"no nul"), "no nul");
    }
}
