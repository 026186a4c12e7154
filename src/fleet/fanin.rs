//! A peer's events as the hub records them: ids qualified with the host,
//! and the peer's own numbering kept beside the hub's.
//!
//! A peer speaks only for its own sessions: a `session_id` it sends must be
//! a bare `sess_N`, which becomes `host/sess_N`. Anything else
//! (`other/sess_1` would be another host's session on the hub) is never
//! passed on: such an event is dropped and counted. (Its answers:
//! `answers.rs`.)

use serde_json::Value;

use crate::id::{HostName, SessionId};
use crate::store::NewEvent;
use crate::wire::{Event, FromPeer};

/// What to do with one event of a peer's stream.
#[derive(Debug, PartialEq)]
pub enum FanIn {
    /// Record it in the hub's log; the peer's seq is `seq`.
    Record { seq: u64, event: Box<NewEvent> },
    /// Advance the cursor past it without recording: an event the peer
    /// itself had from one of its own peers (a fleet is one level deep, so
    /// two hubs following each other cannot loop), or one this version
    /// cannot read (a newer peer's kind, or a payload it changed).
    Skip { seq: u64 },
    /// Advance the cursor past it, drop it and count it: it names a
    /// session that is not a bare `sess_N` on this peer.
    Foreign { seq: u64 },
}

/// Why a message of a peer's stream is no event.
#[derive(Debug, thiserror::Error)]
pub enum BadEvent {
    #[error("bad event: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("bad event: not an object")]
    NotObject,
    #[error("bad event: no seq")]
    NoSeq,
}

/// The hub's version of one peer event (`data` of its SSE message).
pub fn fan_in(host: &HostName, data: &str) -> Result<FanIn, BadEvent> {
    let value: Value = serde_json::from_str(data)?;
    if !value.is_object() {
        return Err(BadEvent::NotObject);
    }
    // Any message with a seq moves the cursor, an event this version
    // cannot read included: the stream goes on past it.
    let seq = value
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or(BadEvent::NoSeq)?;
    // A peer's own peer's event (its ids name that host) is passed over
    // before the ids are judged; an id is judged before the payload, so a
    // peer naming another host's session is counted whatever it sent.
    if value.get("host").is_some() {
        return Ok(FanIn::Skip { seq });
    }
    let session_id = match value.get("session_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => match id.parse::<SessionId>() {
            Ok(session) => Some(qualify_id(host, &session)),
            Err(_) => return Ok(FanIn::Foreign { seq }),
        },
        Some(_) => return Ok(FanIn::Foreign { seq }),
    };
    let Ok(event) = serde_json::from_value::<Event>(value) else {
        return Ok(FanIn::Skip { seq });
    };
    let from_peer = FromPeer {
        host: host.as_str().to_owned(),
        host_seq: seq,
        host_at: Some(event.at),
    };
    Ok(FanIn::Record {
        seq,
        event: Box::new(NewEvent {
            session_id,
            reason: event.reason,
            tmux_name: event.tmux_name,
            body: event.body,
            from_peer: Some(from_peer),
        }),
    })
}

/// `sess_N` on peer `host` is `host/sess_N` on the hub.
pub fn qualify_id(host: &HostName, id: &SessionId) -> String {
    format!("{host}/{id}")
}

/// The hub's cursor for each peer, as found in its own retained events.
pub fn cursors_in<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<(String, u64)> {
    let mut found = std::collections::BTreeMap::new();
    for peer in events.into_iter().filter_map(|e| e.from_peer.as_ref()) {
        let entry = found.entry(peer.host.clone()).or_insert(0);
        *entry = peer.host_seq.max(*entry);
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Body, Payload, SessionState, StateChanged};

    fn gpu1() -> HostName {
        "gpu1".parse().unwrap()
    }

    #[test]
    fn peer_events_keep_their_seq_and_gain_the_host() {
        let data = r#"{"seq":7,"at":"2026-01-01T00:00:00Z","kind":"session_state","session_id":"sess_3","reason":"quiet","attention":null,"state":"idle","state_since":"2026-01-01T00:00:00Z","from_a_newer_version":1}"#;
        let FanIn::Record { seq, event } = fan_in(&gpu1(), data).unwrap() else {
            panic!("not recorded");
        };
        let at = "2026-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(seq, 7);
        assert_eq!(event.session_id.as_deref(), Some("gpu1/sess_3"));
        assert_eq!(event.reason.as_deref(), Some("quiet"));
        let state = StateChanged {
            state: SessionState::Idle,
            state_since: at,
            attention: None,
            acknowledged_by: None,
            exit: None,
        };
        assert_eq!(event.body, Body::Whole(Payload::SessionState(state)));
        let from = FromPeer {
            host: "gpu1".into(),
            host_seq: 7,
            host_at: Some(at),
        };
        assert_eq!(event.from_peer, Some(from));
    }

    #[test]
    fn what_is_skipped_and_what_is_refused() {
        // (data, outcome: Some(Skip seq) / None for error)
        let cases = [
            (
                r#"{"seq":3,"at":"2026-01-01T00:00:00Z","kind":"session_created","host":"other","host_seq":9}"#,
                Some(3),
            ),
            (
                r#"{"seq":4,"at":"2026-01-01T00:00:00Z","kind":"session_state","state":"sleeping"}"#,
                Some(4),
            ),
            (r#"{"seq":4,"kind":"from_the_future"}"#, Some(4)),
            (
                r#"{"seq":4,"at":"2026-01-01T00:00:00Z","kind":"session_created","session_id":"real/sess_1"}"#,
                Some(4),
            ),
            (
                r#"{"seq":4,"at":"2026-01-01T00:00:00Z","kind":"session_deleted","session_id":"sess_1/../sess_2"}"#,
                Some(4),
            ),
            (
                r#"{"seq":4,"kind":"session_detached","session_id":7}"#,
                Some(4),
            ),
            (
                r#"{"seq":4,"at":"2026-01-01T00:00:00Z","kind":"session_detached","session_id":""}"#,
                Some(4),
            ),
            (r#"{"kind":"session_created"}"#, None),
            (r#"[1]"#, None),
            ("not json", None),
        ];
        for (data, want) in cases {
            let got = match fan_in(&gpu1(), data) {
                Ok(FanIn::Skip { seq } | FanIn::Foreign { seq }) => Some(seq),
                Ok(FanIn::Record { .. }) => panic!("{data} recorded"),
                Err(_) => None,
            };
            assert_eq!(got, want, "{data}");
        }
    }
}
