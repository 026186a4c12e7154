//! The persisted shapes of `registry.json` and `thoughts.json`: plain data
//! that the supervisor merges with what tmux reports at startup.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::id::SessionId;

/// The only format version this build reads or writes. A file with another
/// version fails to parse, so it is moved aside as corrupt instead of being
/// misread or overwritten in place.
const FORMAT_VERSION: u32 = 1;

/// `registry.json`: which sessions tmuxd supervises and how to name new ones.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RegistryFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    /// The `n` the next new `sess_<n>` id gets; only ever increases, so ids
    /// are never reused.
    pub next_session_counter: u64,
    /// Sessions under supervision when the file was written. One whose
    /// `session_id` is not a `sess_N` (a hand edit) is left out, as
    /// startup always skipped it, rather than failing the whole file.
    #[serde(deserialize_with = "sessions_with_ids")]
    pub sessions: Vec<PersistedSession>,
    /// tmux session names deliberately detached, which discovery must not
    /// adopt again on its own.
    pub detached: Vec<String>,
}

/// One supervised session as remembered across restarts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PersistedSession {
    /// tmuxd's stable id (`sess_<n>`), reused when the same tmux session is
    /// adopted again.
    pub session_id: SessionId,
    /// The tmux session name, the key for matching against `list-panes`.
    pub tmux_name: String,
    /// When tmuxd first created or adopted the session.
    pub created_at: DateTime<Utc>,
    /// The command the session was created to run, if one was given.
    #[serde(default)]
    pub command: Option<String>,
    /// The working directory it was created in, if one was given.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Input waiting for the session to be ready for it, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued_inputs: Vec<QueuedInput>,
    /// The attention flag when the file was written: kept across restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention: Option<PersistedAttention>,
    /// tmux's id of the session (`$N`), which follows it through renames;
    /// it names the session only while the same tmux server runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_id: Option<String>,
}

/// Why a session needed someone, and since when.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PersistedAttention {
    /// `bell`, `notification`, `needs_input` or `long_silence`.
    pub reason: String,
    pub since: DateTime<Utc>,
    /// What a program's notification said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What a queued input waits for.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InputWhen {
    /// A shell at its prompt.
    #[default]
    Idle,
    /// A program waiting for input (a REPL, a question).
    Waiting,
}

/// Text queued with `when: "idle"` or `"waiting"`, typed when the session
/// is next in that state.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct QueuedInput {
    /// Its number in the session's queue (never reused while queued), for
    /// cancelling it. Files from before numbering read as 0.
    #[serde(default)]
    pub id: u64,
    /// The state it waits for.
    #[serde(default)]
    pub when: InputWhen,
    /// Typed literally.
    pub text: String,
    /// Enter after the text.
    pub submit: bool,
    /// When it was queued.
    pub queued_at: DateTime<Utc>,
    /// Typing it began. Saved before the first byte is typed, so an item a
    /// crash interrupted is reported (`input_dropped`, `interrupted`) and
    /// never typed twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub started: bool,
}

/// `thoughts.json`: the latest published status of each session.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ThoughtsFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    /// Latest thought per `session_id`; sorted, so the file diffs cleanly.
    pub thoughts: BTreeMap<String, Thought>,
}

/// An external status for a session, e.g. published by a coding agent's hook.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Thought {
    /// The status text as published.
    pub text: String,
    /// A short state label the publisher chose (e.g. `thinking`), if any.
    pub state: Option<String>,
    /// Input tokens the publisher reported, if any.
    pub tokens_in: Option<u64>,
    /// Output tokens the publisher reported, if any.
    pub tokens_out: Option<u64>,
    /// When the publisher made this status (or when tmuxd received it, if
    /// the publisher did not say); an older one never replaces a newer one.
    pub updated_at: DateTime<Utc>,
}

impl RegistryFile {
    /// The registry of a first start: no sessions, ids starting at `sess_1`.
    pub fn empty() -> Self {
        RegistryFile {
            version: FORMAT_VERSION,
            next_session_counter: 1,
            sessions: Vec::new(),
            detached: Vec::new(),
        }
    }
}

impl ThoughtsFile {
    pub fn empty() -> Self {
        ThoughtsFile {
            version: FORMAT_VERSION,
            thoughts: BTreeMap::new(),
        }
    }
}

fn sessions_with_ids<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<PersistedSession>, D::Error> {
    let listed = Vec::<serde_json::Value>::deserialize(deserializer)?;
    let valid_id = |session: &serde_json::Value| match session.get("session_id") {
        Some(serde_json::Value::String(id)) => id.parse::<SessionId>().is_ok(),
        _ => true,
    };
    listed
        .into_iter()
        .filter(valid_id)
        .map(|session| serde_json::from_value(session).map_err(D::Error::custom))
        .collect()
}

pub(super) fn format_version<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(deserializer)?;
    if version == FORMAT_VERSION {
        Ok(version)
    } else {
        Err(D::Error::custom(format_args!(
            "unsupported version {version} (this tmuxd reads version {FORMAT_VERSION})"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DataDir, Loaded};
    use chrono::TimeZone;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap()
    }

    #[test]
    fn registry_json_shape() {
        let mut registry = RegistryFile::empty();
        registry.next_session_counter = 3;
        registry.sessions.push(PersistedSession {
            queued_inputs: Vec::new(),
            session_id: SessionId(2),
            tmux_name: "work".into(),
            created_at: at(),
            command: Some("htop".into()),
            cwd: None,
            attention: None,
            tmux_id: Some("$4".into()),
        });
        registry.detached.push("7".into());
        let json = serde_json::to_string(&registry).unwrap();
        assert_eq!(
            json,
            r#"{"version":1,"next_session_counter":3,"sessions":[{"session_id":"sess_2","tmux_name":"work","created_at":"2025-03-04T05:06:07Z","command":"htop","cwd":null,"tmux_id":"$4"}],"detached":["7"]}"#
        );
        assert_eq!(
            serde_json::from_str::<RegistryFile>(&json).unwrap(),
            registry
        );
    }

    #[test]
    fn a_session_with_a_bad_id_is_left_out_and_the_rest_read() {
        let json = r#"{"version":1,"next_session_counter":3,"sessions":[
            {"session_id":"sess_07","tmux_name":"a","created_at":"2025-03-04T05:06:07Z"},
            {"session_id":"sess_2","tmux_name":"b","created_at":"2025-03-04T05:06:07Z"}],
            "detached":[]}"#;
        let file: RegistryFile = serde_json::from_str(json).unwrap();
        let ids: Vec<SessionId> = file.sessions.iter().map(|s| s.session_id).collect();
        assert_eq!(ids, [SessionId(2)]);
        let broken = json.replace(
            r#""created_at":"2025-03-04T05:06:07Z"}]"#,
            r#""created_at":7}]"#,
        );
        assert!(
            serde_json::from_str::<RegistryFile>(&broken).is_err(),
            "any other fault still fails the file"
        );
    }

    #[test]
    fn session_without_command_or_cwd_parses() {
        let json = r#"{"session_id":"sess_1","tmux_name":"0","created_at":"2025-03-04T05:06:07Z"}"#;
        let session: PersistedSession = serde_json::from_str(json).unwrap();
        assert_eq!(session.command, None);
        assert_eq!(session.cwd, None);
        assert_eq!(session.created_at, at());
    }

    #[test]
    fn thoughts_json_round_trips() {
        let mut thoughts = ThoughtsFile::empty();
        thoughts.thoughts.insert(
            "sess_1".into(),
            Thought {
                text: "reading tests".into(),
                state: Some("thinking".into()),
                tokens_in: Some(10),
                tokens_out: None,
                updated_at: at(),
            },
        );
        let json = serde_json::to_string(&thoughts).unwrap();
        assert_eq!(
            json,
            r#"{"version":1,"thoughts":{"sess_1":{"text":"reading tests","state":"thinking","tokens_in":10,"tokens_out":null,"updated_at":"2025-03-04T05:06:07Z"}}}"#
        );
        assert_eq!(
            serde_json::from_str::<ThoughtsFile>(&json).unwrap(),
            thoughts
        );
    }

    #[test]
    fn only_version_one_parses() {
        let cases = [
            (
                r#"{"version":1,"next_session_counter":1,"sessions":[],"detached":[]}"#,
                true,
            ),
            (
                r#"{"version":2,"next_session_counter":1,"sessions":[],"detached":[]}"#,
                false,
            ),
            (
                r#"{"version":0,"next_session_counter":1,"sessions":[],"detached":[]}"#,
                false,
            ),
            (
                r#"{"next_session_counter":1,"sessions":[],"detached":[]}"#,
                false,
            ),
        ];
        for (json, ok) in cases {
            assert_eq!(
                serde_json::from_str::<RegistryFile>(json).is_ok(),
                ok,
                "{json}"
            );
        }
        let thoughts = r#"{"version":2,"thoughts":{}}"#;
        assert!(serde_json::from_str::<ThoughtsFile>(thoughts).is_err());
    }

    #[test]
    fn wrong_registry_version_loads_as_corrupt() {
        let root = tempfile::tempdir().unwrap();
        let data = DataDir::open(root.path()).unwrap();
        let path = data.registry_path();
        let newer = r#"{"version":2,"next_session_counter":9,"sessions":[],"detached":[]}"#;
        std::fs::write(&path, newer).unwrap();
        let Loaded::Corrupt { moved_to, error } = data.load_json::<RegistryFile>(&path).unwrap()
        else {
            panic!("expected Corrupt");
        };
        assert!(
            error.to_string().contains("unsupported version 2"),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(moved_to).unwrap(), newer);
        assert!(!path.exists());
    }

    #[test]
    fn saved_registry_loads_back() {
        let root = tempfile::tempdir().unwrap();
        let data = DataDir::open(root.path()).unwrap();
        let path = data.registry_path();
        let registry = RegistryFile::empty();
        data.save_json(&path, &registry).unwrap();
        assert_eq!(data.load_json(&path).unwrap(), Loaded::Found(registry));
    }
}
