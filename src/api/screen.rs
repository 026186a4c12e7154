//! `GET /v1/sessions/{id}/screen`: a viewer's feed. The whole screen first
//! (rows as lines with SGR colors and attributes, cursor, size), then only
//! changed rows, at most ~30 frames a second. Each frame is built from the
//! screen as it is when sent, so a slow viewer gets the current screen, not
//! a backlog.

use std::time::Duration;

use axum::extract::ws::Message;
use axum::extract::{Path, State};
use axum::response::Response;
use futures::StreamExt;

use super::auth::{AuthenticatedSocket, PendingSocket};
use super::error::ApiError;
use super::extract::ApiQuery;
use super::state::AppState;
use super::ws::{self, CLOSE_GOING_AWAY, CLOSE_NORMAL, CLOSE_TRY_LATER, Outbox};
use crate::id::SessionId;
use crate::metrics::StreamKind;
use crate::session::{Acknowledger, Region, SessionHandle, Snapshot, SnapshotFormat};
use crate::wire::{ErrorBody, RowChange, ScreenMessage, ScreenQuery};

/// At most one frame per this interval (~30 per second).
const FRAME_INTERVAL: Duration = Duration::from_millis(33);

/// The session's screen for viewers, live (WebSocket).
///
/// Authenticated as the stream is. The server sends ScreenMessage as JSON
/// text: `screen` (the whole screen, lines with SGR colors) first and
/// whenever the size changes, then `rows` (`{"row", "line"}` for the changed
/// rows only, and `cursor`), at most ~30 frames a second, always from the
/// current screen; `pong` answers `{"type":"ping"}`. A read token is enough:
/// viewers only watch.
///
/// Once the first frame is sent, the session's attention flag is
/// acknowledged (`acknowledged_by: dashboard`) unless `acknowledge=false`
/// (the dashboard's wall of thumbnails passes it; opening a session does
/// not).
#[utoipa::path(get, path = "/v1/sessions/{id}/screen", tag = "streams",
    params(("id" = String, Path, example = "sess_1", description = "The session id, `sess_<n>`"), ScreenQuery),
    responses(
        (status = 101, description = "Switching to the WebSocket protocol"),
        (status = 400, description = "`bad_request`: no WebSocket upgrade", body = ErrorBody),
        (status = 404, description = "`not_found` (known before the upgrade only to a caller with a bearer header)", body = ErrorBody),
        (status = 409, description = "`session_ended`: the session has ended (read its last screen from the snapshot; known before the upgrade only to a caller with a bearer header)", body = ErrorBody)))]
pub async fn screen(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ScreenQuery>,
    pending: PendingSocket,
) -> Result<Response, ApiError> {
    let acknowledge = query.acknowledge.unwrap_or(true);
    ws::serve_session(state, id, pending, move |socket, handle, state, id| {
        serve(socket, handle, state, id, acknowledge)
    })
    .await
}

/// The first frame, and again whenever the size changes.
fn full_frame(snapshot: &Snapshot) -> ScreenMessage {
    let screen = &snapshot.screen;
    ScreenMessage::Screen {
        seq: snapshot.seq,
        cols: screen.cols,
        rows: screen.rows,
        cursor: screen.cursor.clone().into(),
        title: screen.title.clone(),
        alternate_screen: screen.alternate_screen,
        lines: screen.lines.clone(),
    }
}

/// What changed since `previous`, or `None` if nothing a viewer sees did.
pub fn diff_frame(previous: Option<&Snapshot>, current: &Snapshot) -> Option<ScreenMessage> {
    let Some(previous) = previous else {
        return Some(full_frame(current));
    };
    let (before, now) = (&previous.screen, &current.screen);
    if (before.cols, before.rows) != (now.cols, now.rows) || before.lines.len() != now.lines.len() {
        return Some(full_frame(current));
    }
    let changed: Vec<RowChange> = now
        .lines
        .iter()
        .enumerate()
        .filter(|(i, line)| before.lines.get(*i) != Some(line))
        .map(|(row, line)| RowChange {
            row,
            line: line.clone(),
        })
        .collect();
    if changed.is_empty() && before.cursor == now.cursor && before.title == now.title {
        return None;
    }
    Some(ScreenMessage::Rows {
        seq: current.seq,
        cursor: now.cursor.clone().into(),
        title: now.title.clone(),
        rows: changed,
    })
}

/// Viewers only watch, so a read token is as good as a read-write one.
async fn serve(
    socket: AuthenticatedSocket,
    handle: SessionHandle,
    state: AppState,
    id: SessionId,
    acknowledge: bool,
) {
    let socket = socket.into_inner();
    let _slot = match state
        .streams
        .acquire_for(id, &state.metrics, StreamKind::Screen)
    {
        Ok(slot) => slot,
        Err(reason) => return ws::close(socket, CLOSE_TRY_LATER, &reason.to_string()).await,
    };
    let Ok(mut output) = handle.watch_output().await else {
        return ws::close(socket, CLOSE_NORMAL, "session ended").await;
    };
    let (tx, mut rx) = socket.split();
    let mut tx = Outbox::new(tx, &state.metrics, StreamKind::Screen);
    let mut shown: Option<Snapshot> = None;
    loop {
        output.borrow_and_update();
        let Ok(snapshot) = handle.snapshot(SnapshotFormat::Ansi, Region::Window).await else {
            return tx.close(CLOSE_NORMAL, "session ended").await;
        };
        if let Some(frame) = diff_frame(shown.as_ref(), &snapshot)
            && tx.send_json(&frame).await.is_err()
        {
            return;
        }
        if shown.is_none() && acknowledge {
            // The viewer has the screen: someone is looking at the session.
            handle.acknowledge(Acknowledger::Dashboard).await;
        }
        shown = Some(snapshot);
        // Coalesce: whatever arrives meanwhile goes into the next frame.
        let pause = tokio::time::sleep(FRAME_INTERVAL);
        tokio::pin!(pause);
        let mut paused = false;
        loop {
            tokio::select! {
                _ = state.cancel.cancelled() => return tx.close(CLOSE_GOING_AWAY, "tmuxd is shutting down").await,
                _ = &mut pause, if !paused => paused = true,
                changed = output.changed(), if paused => match changed {
                    Ok(()) => break,
                    Err(_) => return tx.close(CLOSE_NORMAL, "session ended").await,
                },
                message = rx.next() => match message {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                    Some(Ok(Message::Text(text))) if text.contains("\"ping\"") => {
                        if tx.send_json(&ScreenMessage::Pong).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Cursor, ScreenSnapshot};

    fn snapshot(lines: &[&str], cursor_col: u16) -> Snapshot {
        Snapshot {
            session_id: SessionId(1),
            seq: 1,
            screen: ScreenSnapshot {
                cols: 10,
                rows: lines.len() as u16,
                cursor: Cursor {
                    row: 0,
                    col: cursor_col,
                    visible: true,
                },
                alternate_screen: false,
                title: String::new(),
                lines: lines.iter().map(|l| (*l).to_owned()).collect(),
                pane: None,
                wrapped: Vec::new(),
                copy_mode: None,
            },
        }
    }

    fn changed_rows(frame: Option<ScreenMessage>) -> Vec<RowChange> {
        match frame {
            Some(ScreenMessage::Rows { rows, .. }) => rows,
            other => panic!("expected rows, got {other:?}"),
        }
    }

    #[test]
    fn frames_carry_only_what_changed() {
        let first = snapshot(&["a", "b", "c"], 0);
        let full = |frame| matches!(frame, Some(ScreenMessage::Screen { .. }));
        assert!(full(diff_frame(None, &first)));
        assert_eq!(diff_frame(Some(&first), &first), None);
        let edited = snapshot(&["a", "B", "c"], 0);
        let row = RowChange {
            row: 1,
            line: "B".into(),
        };
        assert_eq!(changed_rows(diff_frame(Some(&first), &edited)), vec![row]);
        let moved = snapshot(&["a", "b", "c"], 4);
        assert_eq!(changed_rows(diff_frame(Some(&first), &moved)), vec![]);
        let resized = snapshot(&["a", "b"], 0);
        assert!(full(diff_frame(Some(&first), &resized)));
    }
}
