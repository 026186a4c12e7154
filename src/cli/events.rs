//! `events`: the event log, followed over SSE (or one page with
//! `--no-follow`), as aligned lines or the API's JSON. Without `--since`
//! the last few events come first, then the live ones.

use serde_json::Value;

use super::args::EventsArgs;
use super::client::{Client, ClientError};
use super::output::{json_line, print, text, visible};
use super::pipe::stdout_closed;
use crate::wire::{Event, EventsPage};

pub async fn events(client: &Client, args: EventsArgs) -> Result<(), ClientError> {
    if args.no_follow {
        let since = args.since.unwrap_or(0);
        let page = every_page(client, since).await?;
        if page.truncated {
            eprintln!(
                "tmuxd: events after {since} were no longer all retained; the oldest kept come first"
            );
        }
        for event in &page.events {
            match args.json {
                // One event per line, as the followed feed prints them.
                true => print(&json_event_line(event)?)?,
                false => print(&event_line(event))?,
            }
        }
        return Ok(());
    }
    let since = match args.since {
        Some(since) => since,
        None => {
            let newest: EventsPage = client.get("/v1/events?format=json&limit=1").await?;
            recent_start(newest.next_seq, RECENT_EVENTS)
        }
    };
    let path = format!("/v1/events?since={since}");
    tokio::select! {
        result = follow(client, &path, args.json) => result,
        () = stdout_closed() => Err(ClientError::StdoutClosed),
    }
}

/// Events a plain `tmuxd events` shows before the live ones, as `tail -f`
/// shows the end of a file first: with none, it looked hung.
const RECENT_EVENTS: u64 = 20;

/// The `since` that replays the last `recent` events before `next_seq`
/// (events are numbered from 1; `since` is exclusive).
fn recent_start(next_seq: u64, recent: u64) -> u64 {
    next_seq.saturating_sub(recent + 1)
}

/// The retained events after `since`, page after page, as one page.
async fn every_page(client: &Client, since: u64) -> Result<EventsPage, ClientError> {
    let mut all: EventsPage = client
        .get(&format!("/v1/events?format=json&since={since}"))
        .await?;
    while all.has_more {
        let page: EventsPage = client
            .get(&format!("/v1/events?format=json&since={}", all.next_since))
            .await?;
        // A page that moves nothing forward would loop for ever.
        if page.next_since <= all.next_since {
            break;
        }
        all.events.extend(page.events);
        all.next_seq = page.next_seq;
        all.next_since = page.next_since;
        all.has_more = page.has_more;
    }
    Ok(all)
}

/// Prints each SSE event as it arrives, until the daemon ends the feed.
async fn follow(client: &Client, path: &str, json: bool) -> Result<(), ClientError> {
    let mut response = client.send(reqwest::Method::GET, path, None::<&()>).await?;
    let mut pending = Vec::new();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| ClientError::Stream(format!("the event feed broke: {e}")))?;
        let Some(chunk) = chunk else { return Ok(()) };
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = pending.drain(..end + 2).collect();
            print_block(&String::from_utf8_lossy(&block), json)?;
        }
    }
}

/// One SSE block: `event:` (absent for events), `id:`, `data:` lines.
fn print_block(block: &str, json: bool) -> Result<(), ClientError> {
    let mut kind = None;
    let mut data = String::new();
    for line in block.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            kind = Some(name.trim().to_owned());
        } else if let Some(part) = line.strip_prefix("data:") {
            data.push_str(part.strip_prefix(' ').unwrap_or(part));
        }
    }
    if data.is_empty() {
        return Ok(());
    }
    if kind.as_deref() == Some("replay_truncated") {
        eprintln!(
            "tmuxd: some events after the requested seq were no longer retained: {}",
            visible(&data)
        );
        return Ok(());
    }
    if json {
        return print(&format!("{}\n", json_line(&data)));
    }
    match serde_json::from_str::<Event>(&data) {
        Ok(event) => print(&event_line(&event)),
        Err(_) => print(&format!("{}\n", visible(&data))),
    }
}

/// An event as one line of JSON (JSONL), as the API sends it.
fn json_event_line(event: &Event) -> Result<String, ClientError> {
    let line = serde_json::to_string(event).map_err(|e| ClientError::Protocol(e.to_string()))?;
    Ok(format!("{line}\n"))
}

/// `SEQ  AT  KIND  SESSION  NAME  key=value...` with fixed-width leading
/// columns, made [`visible`] (names, cwds and titles come from sessions).
fn event_line(event: &Event) -> String {
    let event = serde_json::to_value(event).unwrap_or_default();
    let mut line = format!(
        "{:>6}  {:<24}  {:<16}  {:<8}  {}",
        event["seq"].to_string(),
        text(&event["at"]),
        text(&event["kind"]),
        text(&event["session_id"]),
        text(&event["tmux_name"]),
    );
    if let Some(fields) = event.as_object() {
        let shown = ["seq", "at", "kind", "session_id", "tmux_name"];
        for (key, value) in fields.iter().filter(|(k, _)| !shown.contains(&k.as_str())) {
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            line.push_str(&format!("  {key}={value}"));
        }
    }
    line.truncate(line.trim_end().len());
    let mut line = visible(&line).into_owned();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_start_replays_the_last_events() {
        // (next_seq, recent, since)
        let table = [
            (1, 20, 0),
            (5, 20, 0),
            (21, 20, 0),
            (22, 20, 1),
            (100, 20, 79),
            (100, 0, 99),
        ];
        for (next_seq, recent, since) in table {
            assert_eq!(recent_start(next_seq, recent), since, "{next_seq} {recent}");
        }
    }

    #[test]
    fn json_events_are_one_line_each() {
        let event: Event = serde_json::from_value(serde_json::json!({
            "seq": 7, "at": "2024-05-01T10:00:00.123Z", "kind": "session_state",
            "session_id": "sess_2", "tmux_name": "a\nb", "state": "idle", "reason": "x",
            "state_since": "2024-05-01T10:00:00Z", "attention": null
        }))
        .unwrap();
        let line = json_event_line(&event).unwrap();
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        assert!(line.ends_with('\n'));
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["seq"], 7);
    }

    #[test]
    fn event_lines() {
        let event: Event = serde_json::from_value(serde_json::json!({
            "seq": 7, "at": "2024-05-01T10:00:00.123Z", "kind": "session_state",
            "session_id": "sess_2", "tmux_name": "build", "state": "idle", "reason": "foreground_process",
            "state_since": "2024-05-01T10:00:00Z", "attention": null
        }))
        .unwrap();
        assert_eq!(
            event_line(&event),
            "     7  2024-05-01T10:00:00.123Z  session_state     sess_2    build  attention=null  reason=foreground_process  state=idle  state_since=2024-05-01T10:00:00Z\n"
        );
        let hostile: Event = serde_json::from_value(serde_json::json!({
            "seq": 8, "at": "2024-05-01T10:00:00.123Z", "kind": "session_renamed",
            "session_id": "sess_2", "tmux_name": "x\u{1b}]0;X\u{7}", "old_name": "y\u{9b}2J",
            "new_name": "x\u{1b}]0;X\u{7}"
        }))
        .unwrap();
        let line = event_line(&hostile);
        assert!(
            line.contains("x\\e]0;X\\x07") && line.contains("old_name=y\\x9b2J"),
            "{line}"
        );
        assert!(!line.trim_end().chars().any(char::is_control), "{line}");
    }
}
