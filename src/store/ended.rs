//! `ended.json`: sessions that ended, kept readable for a while (their last
//! summary and screens), so a restart does not lose how they ended.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::registry::format_version;

/// `ended.json`, newest last.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EndedFile {
    /// Format version, always 1.
    #[serde(deserialize_with = "format_version")]
    pub version: u32,
    pub sessions: Vec<EndedRecord>,
}

/// One ended session. The summary and screens are kept as the API served
/// them; the store does not look inside.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EndedRecord {
    pub session_id: String,
    pub ended_at: DateTime<Utc>,
    /// The session summary as of its end (`state: "exited"`).
    pub summary: Value,
    /// The last screens (window and active pane, text and ANSI), if kept.
    #[serde(default)]
    pub screens: Option<Value>,
}

impl EndedFile {
    pub fn empty() -> Self {
        EndedFile {
            version: 1,
            sessions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_other_versions() {
        let file = EndedFile {
            version: 1,
            sessions: vec![EndedRecord {
                session_id: "sess_4".into(),
                ended_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
                summary: serde_json::json!({"state": "exited", "exit_status": 3}),
                screens: None,
            }],
        };
        let text = serde_json::to_string(&file).unwrap();
        assert_eq!(serde_json::from_str::<EndedFile>(&text).unwrap(), file);
        let other = text.replace("\"version\":1", "\"version\":2");
        assert!(serde_json::from_str::<EndedFile>(&other).is_err());
    }
}
