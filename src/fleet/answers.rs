//! A peer's answers as the hub serves them, read into the wire types: each
//! session id in them must be the peer's own (a bare `sess_N`), and
//! becomes `HOST/sess_N`; the hub never passes on what it could not read.
//!
//! Which type an answer is comes from the route that was forwarded, never
//! from what the answer holds: a peer cannot make the hub read an answer
//! as something else, and no id is found by walking arbitrary JSON.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::id::{FleetId, HostName, SessionId};
use crate::wire::{
    DeleteResponse, ErrorBody, InputResponse, QueueCancelled, QueueList, ScrollbackResponse,
    ServerInfo, SessionEnvelope, SessionSummary, Snapshot, ThoughtResponse, WaitResponse,
};

/// Why the hub does not serve a peer's answer.
#[derive(Debug, thiserror::Error)]
pub enum Unfit {
    /// Not what the route answers (a peer of another version, or not a
    /// tmuxd): dropped.
    #[error("answered what is not {what}: {error}")]
    Unreadable {
        what: &'static str,
        error: serde_json::Error,
    },
    /// It names a session that is not its own (`other/sess_1`): dropped
    /// and counted.
    #[error("answered naming {0}, not a session of its own")]
    Foreign(String),
}

/// `sess_N` of `host` becomes `host/sess_N`; an id that already names a
/// host is another host's session.
fn qualify_id(id: &mut FleetId, host: &HostName) -> Result<(), Unfit> {
    if id.host.is_some() {
        return Err(Unfit::Foreign(format!("`{id}`")));
    }
    id.host = Some(host.clone());
    Ok(())
}

/// An answer a peer gives on a route the hub forwards.
pub trait PeerAnswer: DeserializeOwned {
    /// What the hub serves in its place.
    type Served: Serialize;
    /// What it is, for error messages (`a snapshot`).
    const WHAT: &'static str;
    /// Its session ids qualified with `host`.
    fn qualify(self, host: &HostName) -> Result<Self::Served, Unfit>;
}

/// A summary as the hub serves it: `host` says whose it is.
impl PeerAnswer for SessionSummary {
    type Served = SessionSummary;
    const WHAT: &'static str = "a session summary";
    fn qualify(mut self, host: &HostName) -> Result<SessionSummary, Unfit> {
        qualify_id(&mut self.session_id, host)?;
        self.host = Some(host.clone());
        Ok(self)
    }
}

impl PeerAnswer for SessionEnvelope {
    type Served = SessionEnvelope;
    const WHAT: &'static str = "a session";
    fn qualify(self, host: &HostName) -> Result<SessionEnvelope, Unfit> {
        let session = self.session.qualify(host)?;
        Ok(SessionEnvelope { session })
    }
}

impl PeerAnswer for WaitResponse {
    type Served = WaitResponse;
    const WHAT: &'static str = "a wait answer";
    fn qualify(self, host: &HostName) -> Result<WaitResponse, Unfit> {
        let session = self.session.qualify(host)?;
        Ok(WaitResponse { session, ..self })
    }
}

/// An answer that names no session passes as it is.
macro_rules! names_no_session {
    ($($answer:ty => $what:literal),+ $(,)?) => {$(
        impl PeerAnswer for $answer {
            type Served = $answer;
            const WHAT: &'static str = $what;
            fn qualify(self, _: &HostName) -> Result<$answer, Unfit> {
                Ok(self)
            }
        }
    )+};
}

names_no_session!(
    InputResponse => "an input answer",
    crate::wire::AnswerResponse => "an answer's answer",
    ErrorBody => "an error body",
    ServerInfo => "a server description",
);

/// An answer with the session's id at its top level, served with `host`
/// beside it, as a summary has.
#[derive(Debug, Serialize)]
pub struct OnHost<T> {
    #[serde(flatten)]
    answer: T,
    host: HostName,
}

macro_rules! names_its_session {
    ($($answer:ty => $what:literal),+ $(,)?) => {$(
        impl PeerAnswer for $answer {
            type Served = OnHost<$answer>;
            const WHAT: &'static str = $what;
            fn qualify(mut self, host: &HostName) -> Result<OnHost<$answer>, Unfit> {
                qualify_id(&mut self.session_id, host)?;
                Ok(OnHost { answer: self, host: host.clone() })
            }
        }
    )+};
}

names_its_session!(
    Snapshot => "a snapshot",
    ScrollbackResponse => "a scrollback answer",
    DeleteResponse => "a delete answer",
    QueueList => "an input queue",
    QueueCancelled => "a cancelled input",
    ThoughtResponse => "a thought answer",
);

/// A peer's answer body, read as `T` and qualified, as the JSON the hub
/// serves.
pub fn serve<T: PeerAnswer>(host: &HostName, body: &[u8]) -> Result<Vec<u8>, Unfit> {
    let answer: T = serde_json::from_slice(body).map_err(|error| Unfit::Unreadable {
        what: T::WHAT,
        error,
    })?;
    let served = answer.qualify(host)?;
    Ok(serde_json::to_vec(&served).expect("wire types serialize"))
}

/// A summary a peer sent (in its list, or for one session): read, its id
/// checked against the one asked for (if any) and qualified.
pub fn summary(
    host: &HostName,
    item: &serde_json::Value,
    asked: Option<SessionId>,
) -> Result<SessionSummary, Unfit> {
    /// The id alone, read when the whole summary does not parse: an item
    /// naming no session of the peer's is refused, not merely unread.
    #[derive(serde::Deserialize)]
    struct Named {
        #[allow(dead_code)]
        session_id: SessionId,
    }
    let summary = match SessionSummary::deserialize(item) {
        Ok(summary) => summary,
        Err(_) if Named::deserialize(item).is_err() => {
            return Err(Unfit::Foreign(
                "an id that is not a bare `sess_N`".to_owned(),
            ));
        }
        Err(error) => {
            return Err(Unfit::Unreadable {
                what: SessionSummary::WHAT,
                error,
            });
        }
    };
    if asked.is_some_and(|asked| summary.session_id != FleetId::local(asked)) {
        return Err(Unfit::Foreign(format!("`{}`", summary.session_id)));
    }
    summary.qualify(host)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn gpu1() -> HostName {
        "gpu1".parse().unwrap()
    }

    /// A summary as a peer sends it, naming `id`.
    fn summary_of(id: &str) -> Value {
        json!({
            "session_id": id, "tmux_name": "work", "state": "idle",
            "state_reason": "shell_prompt", "state_since": "2026-01-01T00:00:00Z",
            "current_command": "bash", "cwd": "/", "title": "", "cols": 80, "rows": 24,
            "created_at": "2026-01-01T00:00:00Z", "transport": "attached",
            "subscribers": 0, "latest_seq": 0, "queued_inputs": 0
        })
    }

    fn served<T: PeerAnswer>(body: &Value) -> Result<Value, String> {
        let bytes = serde_json::to_vec(body).unwrap();
        match serve::<T>(&gpu1(), &bytes) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap()),
            Err(Unfit::Foreign(_)) => Err("foreign".to_owned()),
            Err(Unfit::Unreadable { what, .. }) => Err(format!("not {what}")),
        }
    }

    #[test]
    fn answers_are_read_as_their_route_answers_and_qualified() {
        let envelope = served::<SessionEnvelope>(&json!({"session": summary_of("sess_1")}));
        let envelope = envelope.unwrap();
        assert_eq!(envelope["session"]["session_id"], "gpu1/sess_1");
        assert_eq!(envelope["session"]["host"], "gpu1");
        assert_eq!(envelope.get("host"), None, "{envelope}");

        let deleted = json!({"session_id": "sess_2", "mode": "kill", "tmux_alive": false});
        let deleted = served::<DeleteResponse>(&deleted).unwrap();
        assert_eq!(
            deleted,
            json!({"session_id": "gpu1/sess_2", "mode": "kill", "tmux_alive": false, "host": "gpu1"})
        );

        let input = json!({"delivered": true, "queued": false});
        assert_eq!(served::<InputResponse>(&input).unwrap(), input);
        let error = json!({"error": {"code": "not_found", "message": "no session sess_9"}});
        assert_eq!(served::<ErrorBody>(&error).unwrap(), error);
    }

    #[test]
    fn what_is_not_served() {
        // (body, read as, outcome)
        let queue = |id: &str| json!({"session_id": id, "items": []});
        type Read = fn(&Value) -> Result<Value, String>;
        let cases: [(Value, Read, &str); 7] = [
            (queue("real/sess_1"), served::<QueueList>, "foreign"),
            (
                queue("../sess_1"),
                served::<QueueList>,
                "not an input queue",
            ),
            (queue("sess_1"), served::<Snapshot>, "not a snapshot"),
            (
                json!({"session": summary_of("other/sess_4")}),
                served::<SessionEnvelope>,
                "foreign",
            ),
            (
                json!({"lines": []}),
                served::<ScrollbackResponse>,
                "not a scrollback answer",
            ),
            (
                json!([1, 2]),
                served::<InputResponse>,
                "not an input answer",
            ),
            (json!("<html>"), served::<ErrorBody>, "not an error body"),
        ];
        for (body, read, want) in cases {
            assert_eq!(read(&body), Err(want.to_owned()), "{body}");
        }
    }

    #[test]
    fn listed_summaries_must_name_the_peers_own_sessions() {
        // (item, the id asked for, outcome: the id served, or why not)
        let cases = [
            (summary_of("sess_1"), None, "gpu1/sess_1"),
            (summary_of("sess_1"), Some(SessionId(1)), "gpu1/sess_1"),
            (summary_of("sess_1"), Some(SessionId(2)), "foreign"),
            (summary_of("real/sess_1"), None, "foreign"),
            (summary_of("../sess_1"), None, "foreign"),
            (summary_of("sess_01"), None, "foreign"),
            (json!({"tmux_name": "x"}), None, "foreign"),
            (
                json!({"session_id": "sess_1", "state": "idle"}),
                None,
                "unreadable",
            ),
            (json!([]), None, "foreign"),
        ];
        for (item, asked, want) in cases {
            let got = match summary(&gpu1(), &item, asked) {
                Ok(summary) => {
                    assert_eq!(summary.host, Some(gpu1()));
                    summary.session_id.to_string()
                }
                Err(Unfit::Foreign(_)) => "foreign".to_owned(),
                Err(Unfit::Unreadable { .. }) => "unreadable".to_owned(),
            };
            assert_eq!(got, want, "{item} asked {asked:?}");
        }
    }
}
