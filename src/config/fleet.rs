//! `[fleet]`: the peers whose sessions this tmuxd also serves. A
//! `[[fleet.peers]]` table is checked once, as the file is read, into a
//! [`PeerConfig`] whose parts are typed: the fleet builds its peers from
//! that and checks nothing again.

use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

use super::{ConfigError, invalid};
use crate::id::HostName;

/// `[fleet]` as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetConfig {
    /// The peers, by name.
    pub peers: Vec<PeerConfig>,
    /// Longest a request forwarded to a peer may take before the hub
    /// answers `peer_timeout` (waits get their own timeout on top).
    pub request_timeout_ms: u64,
    /// How often each peer is checked; a failed or late check marks it down.
    pub heartbeat_ms: u64,
}

impl Default for FleetConfig {
    fn default() -> Self {
        FleetConfig {
            peers: Vec::new(),
            request_timeout_ms: 10_000,
            heartbeat_ms: 1_000,
        }
    }
}

/// One `[[fleet.peers]]` table, checked; `Debug` masks the token.
#[derive(Clone, PartialEq, Eq)]
pub struct PeerConfig {
    /// The host label its sessions carry (`NAME/sess_N`).
    pub name: HostName,
    /// As configured, for `/v1/hosts` and `tmuxd config`.
    pub url: String,
    /// `url`'s host (an IPv6 address in brackets) and port.
    pub host: String,
    pub port: u16,
    pub token: PeerToken,
    /// `user@host`: tmuxd runs and supervises `ssh -N -L` to reach `url`.
    pub ssh: Option<String>,
    /// Extra `ssh` arguments placed before the destination.
    pub ssh_args: Vec<String>,
}

/// Where a peer's token is.
#[derive(Clone, PartialEq, Eq)]
pub enum PeerToken {
    /// In the config, trimmed.
    Given(String),
    /// In this file (a leading `~` expanded from the environment's
    /// HOME), read when the daemon starts.
    File(PathBuf),
}

/// One `[[fleet.peers]]` table as the file has it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerTable {
    /// The host label its sessions carry (`NAME/sess_N`).
    pub name: String,
    /// The peer's tmuxd, `http://ADDR:PORT`. With `ssh`, the address as
    /// seen from the peer host (usually its loopback), reached through a
    /// local forward.
    pub url: String,
    /// The peer's read-write token (never sent anywhere but to the peer).
    #[serde(default)]
    pub token: Option<String>,
    /// A file holding the token instead (read at start).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// `user@host`: tmuxd runs and supervises `ssh -N -L` to reach `url`.
    #[serde(default)]
    pub ssh: Option<String>,
    /// Extra `ssh` arguments placed before the destination (`-p 2222`,
    /// `-i KEY`, `-o Option=value`).
    #[serde(default)]
    pub ssh_args: Vec<String>,
}

impl fmt::Debug for PeerTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerTable")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| super::MASK))
            .field("token_file", &self.token_file)
            .field("ssh", &self.ssh)
            .field("ssh_args", &self.ssh_args)
            .finish()
    }
}

impl fmt::Debug for PeerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerToken::Given(_) => f.write_str(super::MASK),
            PeerToken::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

impl fmt::Debug for PeerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerConfig")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("token", &self.token)
            .field("ssh", &self.ssh)
            .field("ssh_args", &self.ssh_args)
            .finish()
    }
}

/// `[fleet]` in a layer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileFleet {
    pub peers: Option<Vec<PeerTable>>,
    pub request_timeout_ms: Option<u64>,
    pub heartbeat_ms: Option<u64>,
}

/// Why a peer's `url` is not one the hub can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerUrlError {
    #[error("`{0}` must start with http:// (reach peers over SSH or a private network)")]
    NotHttp(String),
    #[error("`{0}` needs a port: http://HOST:PORT")]
    NoPort(String),
    #[error("`{url}`: `{port}` is not a port")]
    BadPort { url: String, port: String },
    #[error("`{url}`: `{host}` is not a host")]
    BadHost { url: String, host: String },
}

/// `http://HOST:PORT` with nothing after but an optional `/`: a peer is a
/// tmuxd root, and the hub builds every path itself.
pub fn parse_peer_url(url: &str) -> Result<(String, u16), PeerUrlError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| PeerUrlError::NotHttp(url.to_owned()))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| PeerUrlError::NoPort(url.to_owned()))?;
    let port: u16 = port
        .parse()
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| PeerUrlError::BadPort {
            url: url.to_owned(),
            port: port.to_owned(),
        })?;
    let bad_host = host.is_empty()
        || host.contains(['/', '@', '?', '#', ' '])
        || (host.contains(':') && !(host.starts_with('[') && host.ends_with(']')));
    if bad_host {
        return Err(PeerUrlError::BadHost {
            url: url.to_owned(),
            host: host.to_owned(),
        });
    }
    Ok((host.to_owned(), port))
}

/// The tables checked: names unique and valid, URLs plain
/// `http://HOST:PORT`, one token source, and `ssh` a `[user@]host`
/// destination.
pub fn check_peers(tables: Vec<PeerTable>) -> Result<Vec<PeerConfig>, ConfigError> {
    let mut names = BTreeSet::new();
    let mut peers = Vec::with_capacity(tables.len());
    for (i, table) in tables.into_iter().enumerate() {
        let key = |field: &str| format!("fleet.peers[{i}].{field}");
        let name: HostName = table
            .name
            .parse()
            .map_err(|e: crate::id::IdError| invalid(&key("name"), e.to_string()))?;
        if !names.insert(name.clone()) {
            return Err(invalid(&key("name"), format!("`{name}` is used twice")));
        }
        let (host, port) =
            parse_peer_url(&table.url).map_err(|e| invalid(&key("url"), e.to_string()))?;
        let token = match (table.token, table.token_file) {
            (Some(_), Some(_)) => {
                return Err(invalid(&key("token"), "give token or token_file, not both"));
            }
            (None, None) => return Err(invalid(&key("token"), "a peer needs token or token_file")),
            (Some(token), None) if token.trim().is_empty() => {
                return Err(invalid(&key("token"), "must not be empty"));
            }
            (Some(token), None) => PeerToken::Given(token.trim().to_owned()),
            (None, Some(path)) => PeerToken::File(path),
        };
        if let Some(ssh) = &table.ssh {
            let bad =
                ssh.is_empty() || ssh.starts_with('-') || ssh.contains(|c: char| c.is_whitespace());
            if bad {
                return Err(invalid(&key("ssh"), format!("`{ssh}` is not [user@]host")));
            }
        }
        if !table.ssh_args.is_empty() && table.ssh.is_none() {
            return Err(invalid(&key("ssh_args"), "needs ssh"));
        }
        peers.push(PeerConfig {
            name,
            url: table.url,
            host,
            port,
            token,
            ssh: table.ssh,
            ssh_args: table.ssh_args,
        });
    }
    Ok(peers)
}

/// `fleet.peers` as `tmuxd config` prints it, tokens masked.
pub fn render_peers(peers: &[PeerConfig]) -> String {
    let text = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let tables: Vec<String> = peers
        .iter()
        .map(|p| {
            let mut fields = vec![
                format!("name = {}", text(p.name.as_str())),
                format!("url = {}", text(&super::mask_urls(&p.url))),
            ];
            match &p.token {
                PeerToken::Given(_) => fields.push(format!("token = {}", text(super::MASK))),
                PeerToken::File(file) => {
                    fields.push(format!("token_file = {}", text(&file.to_string_lossy())));
                }
            }
            if let Some(ssh) = &p.ssh {
                fields.push(format!("ssh = {}", text(ssh)));
            }
            if !p.ssh_args.is_empty() {
                let args = toml::Value::from(p.ssh_args.clone()).to_string();
                fields.push(format!("ssh_args = {args}"));
            }
            format!("{{ {} }}", fields.join(", "))
        })
        .collect();
    format!("[{}]", tables.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(name: &str, url: &str) -> PeerTable {
        PeerTable {
            name: name.to_owned(),
            url: url.to_owned(),
            token: Some("t".repeat(32)),
            token_file: None,
            ssh: None,
            ssh_args: Vec::new(),
        }
    }

    fn key_of(peers: Vec<PeerTable>) -> Option<String> {
        match check_peers(peers) {
            Ok(_) => None,
            Err(ConfigError::Invalid { key, .. }) => Some(key),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn peer_urls() {
        let cases = [
            ("http://10.0.0.2:7420", Some(("10.0.0.2", 7420))),
            ("http://gpu1.lan:7420/", Some(("gpu1.lan", 7420))),
            ("http://[::1]:7420", Some(("[::1]", 7420))),
            ("https://gpu1:7420", None),
            ("http://gpu1", None),
            ("http://gpu1:0", None),
            ("http://gpu1:7420/api", None),
            ("http://user@gpu1:7420", None),
            ("http://::1:7420", None),
            ("gpu1:7420", None),
        ];
        for (url, want) in cases {
            let got = parse_peer_url(url).ok();
            let want = want.map(|(h, p)| (h.to_owned(), p));
            assert_eq!(got, want, "{url}");
        }
    }

    #[test]
    fn bad_peers_name_their_key() {
        assert_eq!(key_of(vec![peer("gpu1", "http://a:1")]), None);
        let cases: [(Vec<PeerTable>, &str); 7] = [
            (vec![peer("gpu_1", "http://a:1")], "fleet.peers[0].name"),
            (
                vec![peer("a", "http://a:1"), peer("a", "http://b:1")],
                "fleet.peers[1].name",
            ),
            (vec![peer("a", "https://a:1")], "fleet.peers[0].url"),
            (
                vec![PeerTable {
                    token: None,
                    ..peer("a", "http://a:1")
                }],
                "fleet.peers[0].token",
            ),
            (
                vec![PeerTable {
                    token_file: Some("/x".into()),
                    ..peer("a", "http://a:1")
                }],
                "fleet.peers[0].token",
            ),
            (
                vec![PeerTable {
                    ssh: Some("-oProxyCommand=x".into()),
                    ..peer("a", "http://a:1")
                }],
                "fleet.peers[0].ssh",
            ),
            (
                vec![PeerTable {
                    ssh_args: vec!["-p2222".into()],
                    ..peer("a", "http://a:1")
                }],
                "fleet.peers[0].ssh_args",
            ),
        ];
        for (peers, key) in cases {
            assert_eq!(key_of(peers).as_deref(), Some(key));
        }
    }

    #[test]
    fn rendered_peers_hide_tokens() {
        let peers = check_peers(vec![peer("gpu1", "http://a:1")]).unwrap();
        assert_eq!(peers[0].token, PeerToken::Given("t".repeat(32)));
        assert!(!format!("{peers:?}").contains("tttt"));
        let text = render_peers(&peers);
        assert!(!text.contains("tttt"), "{text}");
        assert!(text.contains("name = \"gpu1\""), "{text}");
    }
}
