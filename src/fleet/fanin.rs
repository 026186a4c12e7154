//! A peer's events as the hub records them: ids qualified with the host,
//! and the peer's own numbering kept beside the hub's.
//!
//! A peer speaks only for its own sessions: a `session_id` it sends must be
//! a bare `sess_N`, which becomes `host/sess_N`. Anything else
//! (`other/sess_1` would be another host's session on the hub) is never
//! passed on: such an event is dropped and counted. (Its answers:
//! `answers.rs`.)

use serde_json::{Map, Value};

use crate::id::{HostName, SessionId};
use crate::store::{EventKind, NewEvent};

/// Detail key naming the peer an event came from.
pub const HOST_KEY: &str = "host";
/// Detail key holding the event's seq on its peer: the hub's cursor for
/// that peer is the largest it recorded, so it survives in the hub's log.
pub const HOST_SEQ_KEY: &str = "host_seq";
/// Detail key holding when the peer recorded it.
pub const HOST_AT_KEY: &str = "host_at";

/// What to do with one event of a peer's stream.
#[derive(Debug, PartialEq)]
pub enum FanIn {
    /// Record it in the hub's log; the peer's seq is `seq`.
    Record { seq: u64, event: NewEvent },
    /// Advance the cursor past it without recording: an event the peer
    /// itself had from one of its own peers (a fleet is one level deep, so
    /// two hubs following each other cannot loop), or of a kind this
    /// version does not know.
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
    let Value::Object(mut fields) = serde_json::from_str(data)? else {
        return Err(BadEvent::NotObject);
    };
    let seq = fields
        .remove("seq")
        .and_then(|v| v.as_u64())
        .ok_or(BadEvent::NoSeq)?;
    if fields.contains_key(HOST_KEY) {
        return Ok(FanIn::Skip { seq });
    }
    let kind: Option<EventKind> = fields
        .remove("kind")
        .and_then(|v| serde_json::from_value(v).ok());
    let Some(kind) = kind else {
        return Ok(FanIn::Skip { seq });
    };
    let text = |fields: &mut Map<String, Value>, key: &str| match fields.remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let session_id = match fields.remove("session_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => match id.parse::<SessionId>() {
            Ok(session) => Some(qualify_id(host, &session)),
            Err(_) => return Ok(FanIn::Foreign { seq }),
        },
        Some(_) => return Ok(FanIn::Foreign { seq }),
    };
    let reason = text(&mut fields, "reason");
    let tmux_name = text(&mut fields, "tmux_name");
    let at = fields.remove("at");
    let mut detail = fields;
    detail.insert(HOST_KEY.to_owned(), Value::from(host.as_str()));
    detail.insert(HOST_SEQ_KEY.to_owned(), Value::from(seq));
    if let Some(at) = at {
        detail.insert(HOST_AT_KEY.to_owned(), at);
    }
    Ok(FanIn::Record {
        seq,
        event: NewEvent {
            kind,
            session_id,
            reason,
            tmux_name,
            detail,
        },
    })
}

/// `sess_N` on peer `host` is `host/sess_N` on the hub.
pub fn qualify_id(host: &HostName, id: &SessionId) -> String {
    format!("{host}/{id}")
}

/// The hub's cursor for each peer, as found in its own retained events.
pub fn cursors_in<'a>(
    events: impl IntoIterator<Item = &'a crate::store::Event>,
) -> Vec<(String, u64)> {
    let mut found = std::collections::BTreeMap::new();
    for event in events {
        let host = event.detail.get(HOST_KEY).and_then(Value::as_str);
        let seq = event.detail.get(HOST_SEQ_KEY).and_then(Value::as_u64);
        if let (Some(host), Some(seq)) = (host, seq) {
            let entry = found.entry(host.to_owned()).or_insert(0);
            *entry = seq.max(*entry);
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn gpu1() -> HostName {
        "gpu1".parse().unwrap()
    }

    #[test]
    fn peer_events_keep_their_seq_and_gain_the_host() {
        let data = r#"{"seq":7,"at":"2026-01-01T00:00:00Z","kind":"session_state","session_id":"sess_3","reason":"quiet","state":"idle"}"#;
        let FanIn::Record { seq, event } = fan_in(&gpu1(), data).unwrap() else {
            panic!("not recorded");
        };
        assert_eq!(seq, 7);
        assert_eq!(event.kind, EventKind::SessionState);
        assert_eq!(event.session_id.as_deref(), Some("gpu1/sess_3"));
        assert_eq!(event.reason.as_deref(), Some("quiet"));
        assert_eq!(event.detail["host"], json!("gpu1"));
        assert_eq!(event.detail["host_seq"], json!(7));
        assert_eq!(event.detail["state"], json!("idle"));
        assert_eq!(event.detail["host_at"], json!("2026-01-01T00:00:00Z"));
        assert!(!event.detail.contains_key("seq"));
    }

    #[test]
    fn what_is_skipped_and_what_is_refused() {
        // (data, outcome: Some(Skip seq) / None for error)
        let cases = [
            (
                r#"{"seq":3,"kind":"session_created","host":"other"}"#,
                Some(3),
            ),
            (r#"{"seq":4,"kind":"from_the_future"}"#, Some(4)),
            (
                r#"{"seq":4,"kind":"session_created","session_id":"real/sess_1"}"#,
                Some(4),
            ),
            (
                r#"{"seq":4,"kind":"session_deleted","session_id":"sess_1/../sess_2"}"#,
                Some(4),
            ),
            (
                r#"{"seq":4,"kind":"session_detached","session_id":7}"#,
                Some(4),
            ),
            (
                r#"{"seq":4,"kind":"session_state","session_id":""}"#,
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
