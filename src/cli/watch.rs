//! `tmuxd watch ID`: the session's output stream, written to stdout as it
//! arrives, until the stream closes or Ctrl-C.

use std::io::Write;

use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use super::client::{Client, ClientError};

pub async fn watch(client: &Client, id: &str) -> Result<(), ClientError> {
    let url = client.ws_url(&format!("/v1/sessions/{id}/stream"));
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .map_err(|e| ClientError::Stream(format!("cannot open {url}: {e}")))?;
    if let Some(token) = client.token() {
        let auth = json!({ "type": "auth", "token": token }).to_string();
        socket
            .send(Message::Text(auth.into()))
            .await
            .map_err(|e| ClientError::Stream(e.to_string()))?;
    }
    let mut stdout = std::io::stdout();
    loop {
        let message = tokio::select! {
            message = socket.next() => message,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        match message {
            Some(Ok(Message::Binary(frame))) if frame.len() >= 8 => {
                let _ = stdout.write_all(&frame[8..]);
                let _ = stdout.flush();
            }
            Some(Ok(Message::Text(text))) if text.contains("\"error\"") => {
                eprintln!("tmuxd: {text}")
            }
            Some(Ok(Message::Close(frame))) => {
                let reason = frame.map(|f| f.reason.to_string()).unwrap_or_default();
                return match reason.as_str() {
                    "" | "session ended" => Ok(()),
                    _ => Err(ClientError::Stream(format!("stream closed: {reason}"))),
                };
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(ClientError::Stream(e.to_string())),
            None => return Ok(()),
        }
    }
}
