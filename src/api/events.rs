//! `GET /v1/events`: the event log as Server-Sent Events (`id:` is the
//! event's seq), replayed from `?since=N` or `Last-Event-ID`, then live.
//! `?format=json` returns one page of retained events (bounded in count and
//! bytes; `has_more` and `next_since` lead to the next) and ends.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::error::ApiError;
use super::extract::ApiQuery;
use super::state::AppState;
use crate::metrics::{Metrics, StreamKind, SubscriberGuard};
use crate::supervisor::Supervisor;
use crate::wire::Event;
use crate::wire::{
    EVENTS_PAGE_BYTES, EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX, ErrorBody, EventsFormat, EventsPage,
    EventsQuery, ReplayTruncatedNotice,
};

/// The event log: live (Server-Sent Events), or a page of it.
///
/// Server-Sent Events, `id:` = the event's seq: replays the retained events
/// after `since` (or `Last-Event-ID`), then live; without either, live only.
/// `format=json` returns one page `{"events", "truncated", "next_seq",
/// "has_more", "next_since"}` and ends: at most `limit` events (default
/// 1000, 1 to 10000, else 400) and at most 1 MiB of their JSON (one event at
/// least); while `has_more`, the next page is `since=next_since`. The kinds
/// and their fields: `docs/api.md#events`.
#[utoipa::path(get, path = "/v1/events", tag = "events",
    params(EventsQuery,
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this seq (when `since` is absent)")),
    responses(
        (status = 200, description = "With `format=json`: one page of the retained events after `since`: \
at most `limit` (default 1000, at most 10000) and at most 1 MiB of events' JSON (one event at least); \
while `has_more`, the next page is `since=next_since`. \
Otherwise a Server-Sent Events stream that stays open: each event is `id: <seq>` and `data: <Event as JSON>`; \
when events after `since` are no longer retained, an event named `replay_truncated` comes first with \
`data: {\"since\": N}` (ReplayTruncatedNotice); a comment line every 15 s keeps the connection alive. \
Without `since` nor `Last-Event-ID` the stream starts with the next event.",
            content((EventsPage = "application/json"), (crate::wire::ServerSentEvent = "text/event-stream"))),
        (status = 400, description = "`bad_request`: a bad query or Last-Event-ID; a `limit` out of \
1..=10000, or without `format=json`", body = ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let last_event_id = match headers.get("last-event-id") {
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::bad_request("Last-Event-ID must be an event seq"))?,
        ),
        None => None,
    };
    let supervisor = state.supervisor.clone();
    let since = query.since.or(last_event_id);
    let limit = page_limit(query.format, query.limit)?;
    if query.format == Some(EventsFormat::Json) {
        let since = since.unwrap_or(0);
        let page = supervisor.events_page(since, limit, EVENTS_PAGE_BYTES);
        let page = EventsPage {
            next_since: page.events.last().map_or(since, |e| e.seq),
            events: page.events,
            truncated: page.truncated,
            next_seq: supervisor.next_event_seq(),
            has_more: page.has_more,
        };
        return Ok(Json(page).into_response());
    }
    // Without a starting point, follow from now on.
    let since = since.unwrap_or_else(|| supervisor.next_event_seq().saturating_sub(1));
    let (live, replay, truncated) = supervisor.follow_events(since);
    let feed = Feed {
        supervisor,
        live,
        pending: replay.into(),
        last: since,
        truncated,
        cancel: state.cancel.clone(),
        _counted: state.metrics.subscriber(StreamKind::Events),
        metrics: state.metrics.clone(),
    };
    let stream = futures::stream::unfold(feed, Feed::next);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

/// Events per JSON page: `limit` within 1..=`EVENTS_PAGE_MAX`, and only
/// with `format=json` (a stream has no pages).
fn page_limit(format: Option<EventsFormat>, limit: Option<usize>) -> Result<usize, ApiError> {
    match (format, limit) {
        (_, None) => Ok(EVENTS_PAGE_DEFAULT),
        (Some(EventsFormat::Json), Some(n)) if (1..=EVENTS_PAGE_MAX).contains(&n) => Ok(n),
        (Some(EventsFormat::Json), Some(_)) => Err(ApiError::bad_request(format!(
            "limit must be between 1 and {EVENTS_PAGE_MAX}"
        ))),
        (_, Some(_)) => Err(ApiError::bad_request(
            "limit applies to format=json pages only",
        )),
    }
}

struct Feed {
    supervisor: Supervisor,
    live: broadcast::Receiver<Event>,
    pending: VecDeque<Event>,
    /// The seq of the last event sent; later ones only, no duplicates.
    last: u64,
    /// Events after `since` were already dropped: say so first.
    truncated: bool,
    cancel: CancellationToken,
    /// Counts this stream as a subscriber until the client goes.
    _counted: SubscriberGuard,
    metrics: Metrics,
}

impl Feed {
    async fn next(mut self) -> Option<(Result<SseEvent, Infallible>, Self)> {
        if std::mem::take(&mut self.truncated) {
            let notice = SseEvent::default()
                .event("replay_truncated")
                .json_data(ReplayTruncatedNotice { since: self.last })
                .unwrap_or_default();
            return Some((Ok(notice), self));
        }
        loop {
            if let Some(event) = self.pending.pop_front() {
                if event.seq <= self.last {
                    continue;
                }
                self.last = event.seq;
                let data = serde_json::to_string(&event).unwrap_or_default();
                self.metrics.bytes_sent(StreamKind::Events, data.len());
                return Some((
                    Ok(SseEvent::default().id(self.last.to_string()).data(data)),
                    self,
                ));
            }
            tokio::select! {
                _ = self.cancel.cancelled() => return None,
                received = self.live.recv() => match received {
                    Ok(event) => self.pending.push_back(event),
                    // Fell behind the broadcast: fill the gap from the log.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.pending = self.supervisor.events_since(self.last).0.into();
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_limits() {
        let json = Some(EventsFormat::Json);
        let sse = Some(EventsFormat::Sse);
        // (format, limit, answer)
        let table = [
            (json, None, Some(EVENTS_PAGE_DEFAULT)),
            (None, None, Some(EVENTS_PAGE_DEFAULT)),
            (json, Some(1), Some(1)),
            (json, Some(EVENTS_PAGE_MAX), Some(EVENTS_PAGE_MAX)),
            (json, Some(0), None),
            (json, Some(EVENTS_PAGE_MAX + 1), None),
            (sse, Some(10), None),
            (None, Some(10), None),
        ];
        for (format, limit, answer) in table {
            assert_eq!(
                page_limit(format, limit).ok(),
                answer,
                "{format:?} {limit:?}"
            );
        }
    }
}
