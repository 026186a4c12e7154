//! `tmuxd watch SESSION`: the current screen, then the session's output as
//! it arrives, until Ctrl-C, the session's end, or a closed stdout. The
//! terminal is put back as it was on every way out; `--raw` writes the
//! output bytes only.

use std::io::IsTerminal;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::json;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};

use super::args::WatchArgs;
use super::client::{Client, ClientError, TOKEN_HINT, api_error, encode};
use super::output::{json_line, print, visible, write_stdout};
use super::pipe::stdout_closed;
use super::resolve::session_id;
use super::terminal::{Modes, draw_snapshot, plain_snapshot};
use crate::wire::Snapshot;

/// What is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The screen first, then output; `terminal` when stdout is a terminal
    /// (drawn in place, and reset at the end).
    Screen {
        terminal: bool,
    },
    Raw,
    Json,
}

pub async fn watch(client: &Client, args: WatchArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mode = match (args.raw, args.json) {
        (true, _) => Mode::Raw,
        (_, true) => Mode::Json,
        _ => Mode::Screen {
            terminal: std::io::stdout().is_terminal(),
        },
    };
    let mut modes = Modes::default();
    let result = tokio::select! {
        result = show(client, &id, mode, &mut modes) => result,
        () = stdout_closed() => Err(ClientError::StdoutClosed),
        () = interrupted() => Ok(()),
    };
    if mode == (Mode::Screen { terminal: true }) {
        let _ = write_stdout(&modes.restore_sequence());
    }
    result
}

async fn show(client: &Client, id: &str, mode: Mode, modes: &mut Modes) -> Result<(), ClientError> {
    let since = match mode {
        Mode::Screen { terminal } => {
            let path = format!("/v1/sessions/{}/snapshot?format=ansi", encode(id));
            let snapshot: Snapshot = client.get(&path).await?;
            if terminal {
                write_stdout(&draw_snapshot(&snapshot, modes))?;
            } else {
                write_stdout(&plain_snapshot(&snapshot))?;
            }
            Some(snapshot.seq)
        }
        Mode::Raw | Mode::Json => None,
    };
    stream(client, id, since, mode, modes).await
}

/// The output stream from after `since` (or live), until it closes.
async fn stream(
    client: &Client,
    id: &str,
    since: Option<u64>,
    mode: Mode,
    modes: &mut Modes,
) -> Result<(), ClientError> {
    let mut path = format!("/v1/sessions/{}/stream", encode(id));
    if let Some(since) = since {
        path.push_str(&format!("?since={since}"));
    }
    let mut socket = connect(client, &client.ws_url(&path)).await?;
    while let Some(message) = socket.next().await {
        let message = message.map_err(|e| ClientError::Stream(format!("the stream broke: {e}")))?;
        match message {
            Message::Binary(frame) if frame.len() >= 8 => {
                let (seq, bytes) = frame.split_at(8);
                match mode {
                    Mode::Json => {
                        let seq = u64::from_be_bytes(seq.try_into().unwrap_or_default());
                        let data = String::from_utf8_lossy(bytes);
                        print(&format!(
                            "{}\n",
                            json!({ "type": "output", "seq": seq, "data": data })
                        ))?;
                    }
                    _ => {
                        modes.observe(bytes);
                        write_stdout(bytes)?;
                    }
                }
            }
            Message::Text(text) if mode == Mode::Json => print(&format!("{}\n", json_line(&text)))?,
            Message::Text(text) if text.contains("replay_truncated") => {
                eprintln!(
                    "tmuxd: some output was no longer retained; the stream resumes after a gap"
                )
            }
            Message::Close(frame) => {
                let (code, reason) = frame.map_or((1000, String::new()), |f| {
                    (u16::from(f.code), f.reason.to_string())
                });
                return closed(code, &reason);
            }
            _ => {}
        }
    }
    Ok(())
}

/// The messages of an open stream, over TCP or the daemon's unix socket.
type Frames = futures::stream::BoxStream<'static, Result<Message, tungstenite::Error>>;

/// Opens the WebSocket with the bearer token in the handshake, so a bad
/// token is refused at once instead of after the first-message timeout;
/// only to a daemon that has shown it is ours (`Client::token`).
async fn connect(client: &Client, url: &str) -> Result<Frames, ClientError> {
    let mut request = url
        .into_client_request()
        .map_err(|e| ClientError::Usage(format!("bad stream URL {url}: {e}")))?;
    if let Some(token) = client.token().await? {
        let value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            ClientError::Usage(format!(
                "the token is not a valid header value; {TOKEN_HINT}"
            ))
        })?;
        request.headers_mut().insert("authorization", value);
    }
    let opened = match client.socket() {
        Some(path) => {
            let unix = tokio::net::UnixStream::connect(path).await.map_err(|e| {
                ClientError::Stream(format!("cannot reach tmuxd at {}: {e}", path.display()))
            })?;
            let opened = tokio_tungstenite::client_async(request, unix).await;
            opened.map(|(socket, _)| socket.boxed())
        }
        None => {
            let opened = tokio_tungstenite::connect_async(request).await;
            opened.map(|(socket, _)| socket.boxed())
        }
    };
    match opened {
        // Without a token the daemon may still want one: its close reason says so.
        Ok(frames) => Ok(frames),
        Err(tungstenite::Error::Http(response)) => {
            Err(handshake_refused(response.status(), response.body()))
        }
        Err(e) => Err(ClientError::Stream(format!("cannot open {url}: {e}"))),
    }
}

fn handshake_refused(status: StatusCode, body: &Option<Vec<u8>>) -> ClientError {
    api_error(status, body.as_deref().unwrap_or_default())
}

/// How a close frame ends the command.
fn closed(code: u16, reason: &str) -> Result<(), ClientError> {
    match (code, reason) {
        (_, "" | "session ended") => Ok(()),
        (1008, reason) if reason.contains("auth") => Err(ClientError::Stream(format!(
            "the stream was refused: {}; {TOKEN_HINT}",
            visible(reason)
        ))),
        (_, reason) => Err(ClientError::Stream(format!(
            "the stream closed: {}",
            visible(reason)
        ))),
    }
}

/// Ctrl-C, SIGTERM or SIGHUP: end as the user asked, with the terminal reset.
async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_reasons() {
        assert!(closed(1000, "session ended").is_ok());
        assert!(closed(1000, "").is_ok());
        let auth = closed(1008, "authentication required: send ...").unwrap_err();
        assert!(auth.to_string().contains("TMUXD_TOKEN"), "{auth}");
        let other = closed(1013, "too many open streams").unwrap_err();
        assert!(other.to_string().contains("too many open streams"));
    }
}
