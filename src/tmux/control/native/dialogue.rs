//! What tmuxd says to the tmux server as a control client, and how it
//! answers what the server says, as pure functions (the bytes are built and
//! read here; `native` moves them).
//!
//! The order is the point (tmux issue 4980, crashing every tmux before
//! 3.7): `IDENTIFY_FLAGS` makes the server treat the client as a control
//! client, and only `IDENTIFY_DONE` creates its control state; a
//! notification to control clients in between writes through a null
//! pointer. On Linux the server's read of its socket stops after a chunk
//! that carries a descriptor and takes one descriptor per read, so the two
//! descriptor messages go first, each in a `sendmsg` of its own, and
//! everything from FLAGS to DONE (and the command) follows in one write that
//! the server reads, and handles, in one turn of its loop.

use super::imsg::{self, Framing, ImsgError, Message, kind};

/// `CLIENT_CONTROL` (`-C`): replies and notifications as lines.
const CLIENT_CONTROL: u64 = 0x2000;
/// `CLIENT_UTF8` (`-u`): the client takes UTF-8.
const CLIENT_UTF8: u64 = 0x10000;

/// tmux's `EBADF` for a file the client refuses to open.
const EBADF: i32 = 9;

/// How big the one write may get: well under the server's 64 KiB read
/// buffer, so it is read whole (a write read in pieces would reopen the
/// window between FLAGS and DONE).
pub const MAX_BATCH: usize = 8 * 1024;

/// What the client tells the server about itself, and the command it runs.
#[derive(Clone, Debug)]
pub struct Identify {
    pub pid: u32,
    /// Working directory (the server falls back to HOME if it cannot enter it).
    pub cwd: Vec<u8>,
    /// `NAME=value` entries; a few, not tmuxd's whole environment.
    pub environ: Vec<Vec<u8>>,
    /// The command's argv, each word escaped as for a child (`argv_arg`).
    pub argv: Vec<Vec<u8>>,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DialogueError {
    #[error(transparent)]
    Imsg(#[from] ImsgError),
    #[error("the identify messages take {len} bytes, over the {MAX_BATCH} sent in one write")]
    BatchTooLong { len: usize },
}

/// `IDENTIFY_STDIN` then `IDENTIFY_STDOUT`: each to be sent with the
/// client's end of the control stream, one descriptor per `sendmsg`.
pub fn descriptor_messages(framing: Framing, pid: u32) -> Result<[Vec<u8>; 2], ImsgError> {
    Ok([
        imsg::encode(framing, kind::IDENTIFY_STDIN, &[], true, pid)?,
        imsg::encode(framing, kind::IDENTIFY_STDOUT, &[], true, pid)?,
    ])
}

/// FLAGS through DONE, then the command: the one write.
pub fn identify_batch(framing: Framing, request: &Identify) -> Result<Vec<u8>, DialogueError> {
    let flags = CLIENT_CONTROL | CLIENT_UTF8;
    let mut messages: Vec<(u32, Vec<u8>)> = vec![
        (kind::IDENTIFY_FLAGS, (flags as i32).to_ne_bytes().to_vec()),
        (kind::IDENTIFY_LONGFLAGS, flags.to_ne_bytes().to_vec()),
        // Empty: tmux names the terminal "unknown"; control clients draw nothing.
        (kind::IDENTIFY_TERM, imsg::c_string(b"")),
        (kind::IDENTIFY_FEATURES, 0i32.to_ne_bytes().to_vec()),
        // tmux 3.3a reads it at DONE whatever the client; empty names the
        // client `client-PID`.
        (kind::IDENTIFY_TTYNAME, imsg::c_string(b"")),
        (kind::IDENTIFY_CWD, imsg::c_string(&request.cwd)),
        (
            kind::IDENTIFY_CLIENTPID,
            (request.pid as i32).to_ne_bytes().to_vec(),
        ),
    ];
    for entry in &request.environ {
        messages.push((kind::IDENTIFY_ENVIRON, imsg::c_string(entry)));
    }
    messages.push((kind::IDENTIFY_DONE, Vec::new()));
    messages.push((kind::COMMAND, command_payload(&request.argv)));
    let mut batch = Vec::new();
    for (kind, payload) in messages {
        batch.extend(imsg::encode(framing, kind, &payload, false, request.pid)?);
    }
    if batch.len() > MAX_BATCH {
        return Err(DialogueError::BatchTooLong { len: batch.len() });
    }
    Ok(batch)
}

/// `struct msg_command`: argc, then each word NUL-terminated.
fn command_payload(argv: &[Vec<u8>]) -> Vec<u8> {
    let mut payload = (argv.len() as i32).to_ne_bytes().to_vec();
    for word in argv {
        payload.extend(imsg::c_string(word));
    }
    payload
}

/// Why the server let the client go, as `tmux -C` words it in `%exit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `MSG_EXIT`: the session ended, the client's input closed, or the
    /// command failed; with the server's message if it gave one.
    Exit(Option<String>),
    /// `MSG_DETACH`/`MSG_DETACHKILL` from `detach-client`, naming the session.
    Detached(String),
    /// `MSG_SHUTDOWN`: `kill-server`.
    ServerExited,
    /// `MSG_VERSION`: the server speaks another protocol version.
    VersionMismatch { server: u32 },
    /// The connection closed with no word from the server.
    Lost,
}

impl Ending {
    /// The `%exit` reason `tmux -C` would print.
    pub fn reason(&self) -> Option<String> {
        match self {
            Ending::Exit(message) => message.clone(),
            Ending::Detached(session) => Some(format!("detached (from session {session})")),
            Ending::ServerExited => Some("server exited".to_owned()),
            Ending::VersionMismatch { server } => Some(format!(
                "protocol version mismatch (client {}, server {server})",
                imsg::PROTOCOL_VERSION
            )),
            Ending::Lost => Some("lost server".to_owned()),
        }
    }
}

/// What to do about one message from the server.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Bytes to send back.
    pub reply: Option<Vec<u8>>,
    /// The server is letting the client go.
    pub ending: Option<Ending>,
    /// The server is done with the client: close the connection (which the
    /// server takes as the client leaving).
    pub hang_up: bool,
}

/// How a control client answers each message, as tmux's own client does in
/// `client_dispatch_wait` (a control client is never sent `MSG_READY`, so
/// it never leaves that state), except that it opens no files for the
/// server: control output flows on the control stream.
pub fn answer(framing: Framing, pid: u32, message: &Message) -> Result<Answer, ImsgError> {
    let send = |kind: u32, payload: &[u8]| imsg::encode(framing, kind, payload, false, pid);
    let stream = || message.payload.get(..4).unwrap_or(&[0; 4]).to_vec();
    let refuse = |kind: u32| {
        let mut payload = stream();
        payload.extend(EBADF.to_ne_bytes());
        send(kind, &payload)
    };
    let answer = match message.kind {
        kind::EXIT => Answer {
            ending: Some(Ending::Exit(exit_message(&message.payload))),
            hang_up: true,
            ..Answer::default()
        },
        kind::SHUTDOWN => Answer {
            ending: Some(Ending::ServerExited),
            hang_up: true,
            ..Answer::default()
        },
        kind::VERSION => Answer {
            ending: Some(Ending::VersionMismatch {
                server: message.peer_id & 0xff,
            }),
            hang_up: true,
            ..Answer::default()
        },
        kind::DETACH | kind::DETACHKILL => Answer {
            reply: Some(send(kind::EXITING, &[])?),
            ending: Some(Ending::Detached(imsg::payload_text(&message.payload))),
            hang_up: false,
        },
        // The answer to EXITING: the server has let go.
        kind::EXITED => Answer {
            hang_up: true,
            ..Answer::default()
        },
        kind::EXEC => Answer {
            reply: Some(send(kind::EXITING, &[])?),
            ..Answer::default()
        },
        kind::LOCK => Answer {
            reply: Some(send(kind::UNLOCK, &[])?),
            ..Answer::default()
        },
        kind::WRITE_OPEN => Answer {
            reply: Some(refuse(kind::WRITE_READY)?),
            ..Answer::default()
        },
        kind::READ_OPEN => Answer {
            reply: Some(refuse(kind::READ_DONE)?),
            ..Answer::default()
        },
        // MSG_FLAGS (after `refresh-client -f`), MSG_READY, file data for
        // files never opened: nothing to do.
        _ => Answer::default(),
    };
    Ok(answer)
}

/// `MSG_EXIT`: an int status, then an optional message.
fn exit_message(payload: &[u8]) -> Option<String> {
    let text = imsg::payload_text(payload.get(4..)?);
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(argv: &[&str]) -> Identify {
        Identify {
            pid: 4242,
            cwd: b"/home/me".to_vec(),
            environ: vec![b"PATH=/usr/bin".to_vec()],
            argv: argv.iter().map(|w| w.as_bytes().to_vec()).collect(),
        }
    }

    /// The batch read back as the server reads it.
    fn read_back(framing: Framing, mut bytes: Vec<u8>) -> Vec<Message> {
        let messages = imsg::take_messages(framing, &mut bytes).unwrap();
        assert!(bytes.is_empty(), "whole messages only");
        messages
    }

    #[test]
    fn the_batch_runs_from_flags_to_done_then_the_command() {
        for framing in [Framing::Flags16, Framing::Len32] {
            let argv = ["attach-session", "-E", "-t", "=work"];
            let batch = identify_batch(framing, &request(&argv)).unwrap();
            let messages = read_back(framing, batch);
            let kinds: Vec<u32> = messages.iter().map(|m| m.kind).collect();
            assert_eq!(
                kinds,
                [
                    kind::IDENTIFY_FLAGS,
                    kind::IDENTIFY_LONGFLAGS,
                    kind::IDENTIFY_TERM,
                    kind::IDENTIFY_FEATURES,
                    kind::IDENTIFY_TTYNAME,
                    kind::IDENTIFY_CWD,
                    kind::IDENTIFY_CLIENTPID,
                    kind::IDENTIFY_ENVIRON,
                    kind::IDENTIFY_DONE,
                    kind::COMMAND,
                ],
                "{framing:?}"
            );
            let payload = |k: u32| &messages.iter().find(|m| m.kind == k).unwrap().payload;
            assert_eq!(payload(kind::IDENTIFY_FLAGS), &0x12000i32.to_ne_bytes());
            assert_eq!(payload(kind::IDENTIFY_LONGFLAGS), &0x12000u64.to_ne_bytes());
            assert_eq!(payload(kind::IDENTIFY_TERM), b"\0");
            assert_eq!(payload(kind::IDENTIFY_TTYNAME), b"\0");
            assert_eq!(payload(kind::IDENTIFY_CWD), b"/home/me\0");
            assert_eq!(payload(kind::IDENTIFY_CLIENTPID), &4242i32.to_ne_bytes());
            assert_eq!(payload(kind::IDENTIFY_ENVIRON), b"PATH=/usr/bin\0");
            let command = [&4i32.to_ne_bytes()[..], b"attach-session\0-E\0-t\0=work\0"].concat();
            assert_eq!(payload(kind::COMMAND), &command);
            assert!(messages.iter().all(|m| m.pid == 4242 && m.peer_id == 8));
        }
    }

    #[test]
    fn descriptors_are_marked_and_sent_first() {
        for framing in [Framing::Flags16, Framing::Len32] {
            let [stdin, stdout] = descriptor_messages(framing, 1).unwrap();
            let kinds: Vec<u32> = read_back(framing, [stdin.clone(), stdout].concat())
                .iter()
                .map(|m| m.kind)
                .collect();
            assert_eq!(kinds, [kind::IDENTIFY_STDIN, kind::IDENTIFY_STDOUT]);
            let marked = match framing {
                Framing::Flags16 => stdin[6] == 1,
                Framing::Len32 => stdin[7] & 0x80 != 0,
            };
            assert!(marked, "{framing:?}: {stdin:?}");
        }
    }

    #[test]
    fn a_batch_too_big_for_one_read_is_refused() {
        let mut big = request(&["attach-session"]);
        big.environ = vec![vec![b'x'; 1000]; 9];
        assert!(matches!(
            identify_batch(Framing::Len32, &big),
            Err(DialogueError::BatchTooLong { .. })
        ));
    }

    fn message(kind: u32, payload: &[u8]) -> Message {
        Message {
            kind,
            peer_id: 8,
            pid: 1,
            payload: payload.to_vec(),
        }
    }

    #[test]
    fn answers_to_the_server() {
        let framing = Framing::Flags16;
        let send =
            |kind: u32, payload: &[u8]| imsg::encode(framing, kind, payload, false, 5).unwrap();
        let exit_with = [&1i32.to_ne_bytes()[..], b"no sessions\0"].concat();
        let refused = [&3i32.to_ne_bytes()[..], &EBADF.to_ne_bytes()].concat();
        let stream_3 = [&3i32.to_ne_bytes()[..], &[0; 8]].concat();
        let table: Vec<(Message, Answer)> = vec![
            (
                message(kind::EXIT, &0i32.to_ne_bytes()),
                Answer {
                    reply: None,
                    ending: Some(Ending::Exit(None)),
                    hang_up: true,
                },
            ),
            (
                message(kind::EXIT, &exit_with),
                Answer {
                    reply: None,
                    ending: Some(Ending::Exit(Some("no sessions".into()))),
                    hang_up: true,
                },
            ),
            (
                message(kind::EXIT, b""),
                Answer {
                    reply: None,
                    ending: Some(Ending::Exit(None)),
                    hang_up: true,
                },
            ),
            (
                message(kind::SHUTDOWN, b""),
                Answer {
                    reply: None,
                    ending: Some(Ending::ServerExited),
                    hang_up: true,
                },
            ),
            (
                Message {
                    peer_id: 7,
                    ..message(kind::VERSION, b"")
                },
                Answer {
                    reply: None,
                    ending: Some(Ending::VersionMismatch { server: 7 }),
                    hang_up: true,
                },
            ),
            (
                message(kind::DETACH, b"work\0"),
                Answer {
                    reply: Some(send(kind::EXITING, b"")),
                    ending: Some(Ending::Detached("work".into())),
                    hang_up: false,
                },
            ),
            (
                message(kind::EXITED, b""),
                Answer {
                    reply: None,
                    ending: None,
                    hang_up: true,
                },
            ),
            (
                message(kind::WRITE_OPEN, &stream_3),
                Answer {
                    reply: Some(send(kind::WRITE_READY, &refused)),
                    ..Answer::default()
                },
            ),
            (
                message(kind::READ_OPEN, &stream_3),
                Answer {
                    reply: Some(send(kind::READ_DONE, &refused)),
                    ..Answer::default()
                },
            ),
            (message(kind::FLAGS, &[0; 8]), Answer::default()),
            (message(kind::READY, b""), Answer::default()),
        ];
        for (message, want) in table {
            assert_eq!(answer(framing, 5, &message).unwrap(), want, "{message:?}");
        }
    }

    #[test]
    fn exit_reasons_read_as_tmux_prints_them() {
        assert_eq!(Ending::Exit(None).reason(), None);
        assert_eq!(
            Ending::Detached("w".into()).reason().unwrap(),
            "detached (from session w)"
        );
        assert_eq!(Ending::ServerExited.reason().unwrap(), "server exited");
        assert_eq!(Ending::Lost.reason().unwrap(), "lost server");
    }
}
