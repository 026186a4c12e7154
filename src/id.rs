//! tmuxd's names for sessions and hosts, parsed once at the edge.
//!
//! - [`SessionId`]: a session this tmuxd tracks, `sess_N`. Never reused by
//!   a data dir (the counter is persisted), so it names a session across
//!   renames, detaches and restarts.
//! - [`HostName`]: a fleet peer's label, as the config names it.
//! - [`FleetId`]: a session anywhere in the fleet: `sess_N` here, or
//!   `HOST/sess_N` on a peer.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Prefix of every session id: `sess_<n>`.
const SESSION_PREFIX: &str = "sess_";

/// The longest host label, as for a DNS label.
pub const HOST_NAME_MAX: usize = 63;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("`{0}` is not a session id (`sess_N`)")]
    Session(String),
    #[error(
        "`{0}` is not a host name (1 to {HOST_NAME_MAX} letters, digits or `-`, not starting with `-`)"
    )]
    Host(String),
}

/// A session tracked by this tmuxd: `sess_N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

impl SessionId {
    /// The id after this one, for the counter.
    pub fn next(self) -> SessionId {
        SessionId(self.0 + 1)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SESSION_PREFIX}{}", self.0)
    }
}

/// For the wire and disk types that carry ids as text (events, thoughts).
impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.to_string()
    }
}

impl FromStr for SessionId {
    type Err = IdError;

    /// Exactly `sess_` and a number in its one spelling: no sign, no
    /// leading zero, no spaces, so each session has one id string.
    fn from_str(text: &str) -> Result<Self, IdError> {
        text.strip_prefix(SESSION_PREFIX)
            .filter(|digits| {
                !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && !(digits.len() > 1 && digits.starts_with('0'))
            })
            .and_then(|digits| digits.parse().ok())
            .map(SessionId)
            .ok_or_else(|| IdError::Session(text.to_owned()))
    }
}

impl Serialize for SessionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A fleet peer's label: letters, digits and `-`, as in a DNS label.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostName(String);

impl HostName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HostName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for HostName {
    type Err = IdError;

    fn from_str(text: &str) -> Result<Self, IdError> {
        let valid = !text.is_empty()
            && text.len() <= HOST_NAME_MAX
            && !text.starts_with('-')
            && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if valid {
            Ok(HostName(text.to_owned()))
        } else {
            Err(IdError::Host(text.to_owned()))
        }
    }
}

impl Serialize for HostName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for HostName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A session anywhere in the fleet: here (`sess_N`) or on a peer
/// (`HOST/sess_N`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FleetId {
    pub host: Option<HostName>,
    pub session: SessionId,
}

impl FleetId {
    pub fn local(session: SessionId) -> FleetId {
        FleetId {
            host: None,
            session,
        }
    }
}

impl fmt::Display for FleetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Some(host) => write!(f, "{host}/{}", self.session),
            None => write!(f, "{}", self.session),
        }
    }
}

impl FromStr for FleetId {
    type Err = IdError;

    fn from_str(text: &str) -> Result<Self, IdError> {
        match text.split_once('/') {
            Some((host, session)) => Ok(FleetId {
                host: Some(host.parse()?),
                session: session.parse()?,
            }),
            None => Ok(FleetId::local(text.parse()?)),
        }
    }
}

impl Serialize for FleetId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FleetId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_have_one_spelling() {
        assert_eq!("sess_0".parse(), Ok(SessionId(0)));
        assert_eq!("sess_42".parse(), Ok(SessionId(42)));
        assert_eq!(SessionId(42).to_string(), "sess_42");
        for bad in [
            "",
            "sess_",
            "sess_01",
            "sess_-1",
            "sess_+1",
            "sess_ 1",
            "sess_1 ",
            "Sess_1",
            "1",
            "sess_1x",
            "sess_99999999999999999999999",
        ] {
            assert!(bad.parse::<SessionId>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn host_names_are_dns_labels() {
        for good in ["gpu1", "build-box", "A", &"a".repeat(HOST_NAME_MAX)] {
            assert_eq!(good.parse::<HostName>().unwrap().as_str(), good);
        }
        for bad in [
            "",
            "-gpu",
            "gpu_1",
            "gpu.lan",
            "gpu/1",
            "gpü",
            "a b",
            &"a".repeat(HOST_NAME_MAX + 1),
        ] {
            assert!(bad.parse::<HostName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fleet_ids_are_local_or_host_qualified() {
        // (text, Some((host, session number)) / None for an error)
        type Parts<'a> = Option<(Option<&'a str>, u64)>;
        let cases: [(&str, Parts); 17] = [
            ("sess_3", Some((None, 3))),
            ("gpu1/sess_3", Some((Some("gpu1"), 3))),
            ("build-2/sess_10", Some((Some("build-2"), 10))),
            ("GPU1/sess_0", Some((Some("GPU1"), 0))),
            ("gpu1/", None),
            ("/sess_3", None),
            ("gpu1/sess_3/x", None),
            ("gpu1//sess_3", None),
            ("a/b/sess_1", None),
            ("gpu_1/sess_3", None),
            ("-gpu/sess_3", None),
            ("gpu1/build", None),
            ("gpu1/sess_03", None),
            ("gpu1%2Fsess_3", None),
            ("gpu1/../sess_3", None),
            (" gpu1/sess_3", None),
            ("", None),
        ];
        for (text, want) in cases {
            let got = text.parse::<FleetId>().ok();
            let got = got
                .as_ref()
                .map(|id| (id.host.as_ref().map(HostName::as_str), id.session.0));
            assert_eq!(got, want, "{text:?}");
            if let Ok(id) = text.parse::<FleetId>() {
                assert_eq!(id.to_string(), text, "one spelling");
            }
        }
    }

    #[test]
    fn ids_travel_as_json_strings() {
        let json = serde_json::to_string(&SessionId(7)).unwrap();
        assert_eq!(json, "\"sess_7\"");
        assert_eq!(
            serde_json::from_str::<SessionId>(&json).unwrap(),
            SessionId(7)
        );
        assert!(serde_json::from_str::<SessionId>("7").is_err());
        let fleet: FleetId = serde_json::from_str("\"gpu1/sess_7\"").unwrap();
        assert_eq!(serde_json::to_string(&fleet).unwrap(), "\"gpu1/sess_7\"");
    }
}
