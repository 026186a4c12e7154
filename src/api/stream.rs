//! `GET /v1/sessions/{id}/stream`: one pane's raw output (every byte its
//! program wrote, in order) as sequenced binary frames, with resume from a
//! sequence number, and input back. The pane is the active one when the
//! stream opens, or `?pane=%N`; sequence numbers count the session's output
//! of all panes, so a pane's frames may skip numbers.

use std::sync::atomic::Ordering;

use axum::extract::ws::Message;
use axum::extract::{Path, State};
use axum::response::Response;
use futures::StreamExt;

use super::auth::{Access, AuthenticatedSocket, PendingSocket};
use super::error::ApiError;
use super::extract::ApiQuery;
use super::state::AppState;
use super::ws::{self, CLOSE_GOING_AWAY, CLOSE_NORMAL, CLOSE_TRY_LATER, Outbox};
use crate::id::SessionId;
use crate::metrics::StreamKind;
use crate::session::{Chunk, Replay, SessionHandle};
use crate::tmux::control::PaneId;
use crate::wire::{ErrorBody, StreamClientMessage, StreamQuery, StreamServerMessage};

/// One pane's output, live (WebSocket).
///
/// Every byte the pane's program wrote, in order (not tmux's redraws). The
/// pane is the active one when the stream opens, or `pane` (`%N` or `N`).
/// Send the upgrade headers. With tokens configured, authenticate with the
/// bearer header, or send no Authorization header and make the first message
/// `{"type":"auth","token":...}` (SocketAuth) within 5 s (at most 4 KiB
/// before it).
///
/// The server sends, as text, StreamServerMessage: `ready` first
/// (`latest_seq`, `replay_from`, `pane`, `cols`, `rows`), `replay_truncated`
/// when output after `since` is no longer retained (the session's log keeps
/// 1 MiB), `pong`, `error`; and binary frames
/// `[u64 seq, big-endian][output bytes]`, replayed after `since`, then live.
/// Sequence numbers count the output of all panes, so one pane's frames may
/// skip numbers.
///
/// The client sends binary frames (raw input, written to the program in the
/// pane with `send-keys -H`, never through tmux's key table; at most 1 MiB
/// a message; not with the read token) or text StreamClientMessage: `input`,
/// `resize`, `ping`.
///
/// A client more than `session.subscriber_queue_bytes` (4 MiB) behind, that
/// cannot take a frame for 5 s, or whose pane tmux paused (tmuxd fell 5 s
/// behind) is closed with a reason; reconnecting with `since` resumes from
/// the log. Close codes: 1000 session ended, 1001 shutdown, 1008 refused auth
/// or output queue overflowed (reconnect with `since`), 1013 too many open
/// streams (`http.max_streams_per_session`, 16; `http.max_streams`, 256).
#[utoipa::path(get, path = "/v1/sessions/{id}/stream", tag = "streams",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`"), StreamQuery),
    responses(
        (status = 101, description = "Switching to the WebSocket protocol"),
        (status = 400, description = "`bad_request`: no WebSocket upgrade, or a bad query", body = ErrorBody),
        (status = 404, description = "`not_found` (known before the upgrade only to a caller with a bearer header)", body = ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended (read its last screen from the snapshot; known before the upgrade only to a caller with a bearer header)", body = ErrorBody)))]
pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<StreamQuery>,
    pending: PendingSocket,
) -> Result<Response, ApiError> {
    let since = query.since;
    let pane = match query.pane.as_deref().map(parse_pane) {
        Some(Some(pane)) => Some(pane),
        Some(None) => return Err(ApiError::bad_request("pane must be %N or N")),
        None => None,
    };
    ws::serve_session(state, id, pending, move |socket, handle, state, id| {
        serve(socket, handle, state, id, (since, pane))
    })
    .await
}

/// `%N`, or `N` as a shell would rather not quote it.
fn parse_pane(text: &str) -> Option<PaneId> {
    match text.strip_prefix('%') {
        Some(_) => text.parse().ok(),
        None => format!("%{text}").parse().ok(),
    }
}

/// Frames sent per flush at most.
const MAX_BATCH: usize = 64;

/// `[u64 seq, big-endian][bytes]`.
fn frame(chunk: &Chunk) -> Message {
    let mut data = Vec::with_capacity(8 + chunk.bytes.len());
    data.extend_from_slice(&chunk.seq.to_be_bytes());
    data.extend_from_slice(&chunk.bytes);
    Message::Binary(data.into())
}

async fn serve(
    socket: AuthenticatedSocket,
    handle: SessionHandle,
    state: AppState,
    id: SessionId,
    (since, pane): (Option<u64>, Option<PaneId>),
) {
    let access = socket.access();
    let socket = socket.into_inner();
    let _slot = match state
        .streams
        .acquire_for(id, &state.metrics, StreamKind::Output)
    {
        Ok(slot) => slot,
        Err(reason) => return ws::close(socket, CLOSE_TRY_LATER, &reason.to_string()).await,
    };
    let Ok(subscription) = handle.subscribe(since, pane).await else {
        return ws::close(socket, CLOSE_NORMAL, "session ended").await;
    };
    let (tx, mut rx) = socket.split();
    let mut tx = Outbox::new(tx, &state.metrics, StreamKind::Output);
    let (replay, truncated) = match subscription.replay {
        Replay::Complete(chunks) => (chunks, false),
        Replay::Truncated(chunks) => (chunks, true),
    };
    let replay_from = replay
        .first()
        .map_or(subscription.latest_seq + 1, |c| c.seq);
    let ready = StreamServerMessage::Ready {
        latest_seq: subscription.latest_seq,
        replay_from,
        pane: subscription.pane.to_string(),
        cols: subscription.cols,
        rows: subscription.rows,
    };
    if tx.send_json(&ready).await.is_err() {
        return;
    }
    if truncated
        && tx
            .send_json(&StreamServerMessage::ReplayTruncated {
                oldest_seq: replay_from,
            })
            .await
            .is_err()
    {
        return;
    }
    for chunk in &replay {
        if tx.send(frame(chunk)).await.is_err() {
            return;
        }
    }
    let mut live = subscription.live;
    loop {
        tokio::select! {
            _ = state.cancel.cancelled() => return tx.close(CLOSE_GOING_AWAY, "tmuxd is shutting down").await,
            chunk = live.recv() => match chunk {
                Some(chunk) => {
                    // Whatever else is queued goes out in the same flush.
                    let mut batch = vec![frame(&chunk)];
                    while batch.len() < MAX_BATCH {
                        let Some(next) = live.try_recv() else { break };
                        batch.push(frame(&next));
                    }
                    if tx.send_all(batch).await.is_err() {
                        // Not reading: the socket is dropped, the session goes on.
                        return;
                    }
                }
                None if subscription.overflowed.load(Ordering::Relaxed) => {
                    return tx.drop_overflowed("output skipped (this client fell behind, or tmux paused the pane); reconnect with since").await;
                }
                None => return tx.close(CLOSE_NORMAL, "session ended").await,
            },
            message = rx.next() => {
                let reply = match message {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                    Some(Ok(Message::Binary(bytes))) => type_raw(&state, id, access, &bytes).await,
                    Some(Ok(Message::Text(text))) => control(&state, id, access, &text).await,
                    Some(Ok(_)) => None,
                };
                if let Some(reply) = reply
                    && tx.send_json(&reply).await.is_err()
                {
                    return;
                }
            }
        }
    }
}

/// Input goes to the program in the pane, never through tmux's key table.
async fn type_raw(
    state: &AppState,
    id: SessionId,
    access: Access,
    bytes: &[u8],
) -> Option<StreamServerMessage> {
    if access != Access::ReadWrite {
        return Some(error("the read token cannot send input"));
    }
    match state.supervisor.write_raw(id, bytes).await {
        Ok(()) => None,
        Err(e) => Some(error(&format!("input failed: {e}"))),
    }
}

async fn control(
    state: &AppState,
    id: SessionId,
    access: Access,
    text: &str,
) -> Option<StreamServerMessage> {
    let message = match super::extract::from_str_strict::<StreamClientMessage>(text) {
        Ok(message) => message,
        Err(e) => return Some(error(&format!("bad message: {e}"))),
    };
    match message {
        StreamClientMessage::Ping => Some(StreamServerMessage::Pong),
        StreamClientMessage::Input { text } => type_raw(state, id, access, text.as_bytes()).await,
        StreamClientMessage::Resize { .. } if access != Access::ReadWrite => {
            Some(error("the read token cannot resize"))
        }
        StreamClientMessage::Resize { cols, rows } => {
            match state.supervisor.resize(id, cols, rows).await {
                Ok(_) => None,
                Err(e) => Some(error(&e.to_string())),
            }
        }
    }
}

fn error(message: &str) -> StreamServerMessage {
    StreamServerMessage::Error {
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_is_percent_n_or_n() {
        for (text, want) in [
            ("%3", Some(PaneId(3))),
            ("3", Some(PaneId(3))),
            ("%", None),
            ("", None),
            ("%%3", None),
            ("-3", None),
            ("+3", None),
            ("3x", None),
            ("@3", None),
            ("99999999999", None),
        ] {
            assert_eq!(parse_pane(text), want, "{text:?}");
        }
    }
}
