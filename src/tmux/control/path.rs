//! Which way tmuxd's control clients reach a tmux server: its own client
//! protocol (`native`), or a `tmux -C attach-session` child (the path for a
//! tmux whose protocol framing tmuxd does not know, and for the fake tmux
//! in `fixtures/`, which has no server socket). Chosen once per server from
//! `tmux -V`; said in `doctor` and `/healthz`.

use std::sync::Mutex;

use tokio::sync::OnceCell;

use super::native::Framing;

/// How control clients attach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientPath {
    /// tmuxd's own client, with this framing.
    Native { framing: Framing },
    /// A `tmux -C` child per session, and why.
    Child { why: String },
}

impl ClientPath {
    /// One line for `doctor`, `/healthz` and the log.
    pub fn describe(&self) -> String {
        match self {
            ClientPath::Native { framing } => {
                let header = match framing {
                    Framing::Flags16 => "16-bit length",
                    Framing::Len32 => "32-bit length",
                };
                format!("native (tmux client protocol 8, {header} headers)")
            }
            ClientPath::Child { why } => format!("tmux -C child ({why})"),
        }
    }

    pub fn is_native(&self) -> bool {
        matches!(self, ClientPath::Native { .. })
    }
}

/// The path for what `tmux -V` printed. Native only for the releases whose
/// framing is known (3.2 to 3.7; 3.2 is the oldest tmuxd runs on): a
/// development build (`next-`), OpenBSD's own tmux (the system's imsg,
/// whatever its version), a fake, or a later release get the child client,
/// which speaks whatever its server does (and from 3.7 the crash the
/// native handshake avoids is fixed in tmux).
pub fn choose_path(version: &str) -> ClientPath {
    let child = |why: String| ClientPath::Child { why };
    let Some(number) = version.trim().strip_prefix("tmux ") else {
        return child(format!("unrecognised version {version:?}"));
    };
    let (major, rest) = number.split_once('.').unwrap_or((number, ""));
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let suffix = &rest[minor.len()..];
    let release_suffix =
        suffix.is_empty() || (suffix.len() == 1 && suffix.as_bytes()[0].is_ascii_lowercase());
    let (Ok(major), Ok(minor)) = (major.parse::<u32>(), minor.parse::<u32>()) else {
        return child(format!(
            "{version} is not a release tmuxd knows the protocol of"
        ));
    };
    if !release_suffix {
        return child(format!(
            "{version} is not a release tmuxd knows the protocol of"
        ));
    }
    match (major, minor) {
        (3, 2..=5) => ClientPath::Native {
            framing: Framing::Flags16,
        },
        (3, 6..=7) => ClientPath::Native {
            framing: Framing::Len32,
        },
        _ => child(format!("{version}: protocol framing not known to tmuxd")),
    }
}

/// The path chosen for one server, shared by every clone of its `Tmux`.
#[derive(Debug, Default)]
pub struct PathCell {
    chosen: OnceCell<ClientPath>,
    /// Set when a server refused the native client (another protocol
    /// version): the child client from then on.
    demoted: Mutex<Option<String>>,
}

impl PathCell {
    /// The path, asking `version` (`tmux -V`) the first time. A failed
    /// `-V` is not kept: tmux may be installed later.
    pub async fn get<F, E>(&self, version: F) -> ClientPath
    where
        F: Future<Output = Result<String, E>>,
        E: std::fmt::Display,
    {
        if let Some(why) = self.demoted.lock().expect("path lock").clone() {
            return ClientPath::Child { why };
        }
        let chosen = self
            .chosen
            .get_or_try_init(|| async { version.await.map(|v| choose_path(&v)) })
            .await;
        match chosen {
            Ok(path) => path.clone(),
            Err(e) => ClientPath::Child {
                why: format!("tmux -V failed: {e}"),
            },
        }
    }

    /// The server refused the native client: use the child from now on.
    pub fn demote(&self, why: String) {
        *self.demoted.lock().expect("path lock") = Some(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_by_version() {
        let native16 = ClientPath::Native {
            framing: Framing::Flags16,
        };
        let native32 = ClientPath::Native {
            framing: Framing::Len32,
        };
        for (version, want) in [
            ("tmux 3.2", Some(&native16)),
            ("tmux 3.2a", Some(&native16)),
            ("tmux 3.3a", Some(&native16)),
            ("tmux 3.4", Some(&native16)),
            ("tmux 3.5a", Some(&native16)),
            ("tmux 3.6", Some(&native32)),
            ("tmux 3.6b", Some(&native32)),
            ("tmux 3.7c\n", Some(&native32)),
            ("tmux 3.8", None),
            ("tmux 4.0", None),
            ("tmux 3.1c", None),
            ("tmux next-3.6", None),
            ("tmux openbsd-7.6", None),
            ("tmux 3.3a (fake)", None),
            ("tmux 3.2-rc2", None),
            ("tmux master", None),
            ("", None),
        ] {
            let got = choose_path(version);
            match want {
                Some(want) => assert_eq!(&got, want, "{version:?}"),
                None => assert!(!got.is_native(), "{version:?}: {got:?}"),
            }
        }
    }

    #[tokio::test]
    async fn the_path_is_asked_once_and_a_failure_is_not_kept() {
        let cell = PathCell::default();
        let failed = cell.get(async { Err::<String, _>("no tmux") }).await;
        assert!(!failed.is_native());
        let asked = cell
            .get(async { Ok::<_, String>("tmux 3.3a".to_owned()) })
            .await;
        assert!(asked.is_native());
        let again = cell
            .get(async { Ok::<_, String>("tmux 9.9".to_owned()) })
            .await;
        assert_eq!(again, asked, "kept from the first answer");
        cell.demote("protocol version mismatch".into());
        let demoted = cell
            .get(async { Ok::<_, String>("tmux 3.3a".to_owned()) })
            .await;
        assert!(!demoted.is_native());
        assert!(demoted.describe().contains("mismatch"));
    }
}
