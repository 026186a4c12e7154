//! `push-subscriptions.json`: the browsers to push to, each tied to the
//! credential that subscribed it (a page credential's SHA-256, never the
//! credential), so logging out stops its pushes. Written 0600 and
//! atomically on every change; a push service's 404 or 410 removes one.
//! Pure over the list; the owner (`Push`) saves and locks.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ece::{EceError, ReceiverKeys};
use crate::store::{StoreError, load_or_default, write_atomic};

/// The file's name in the data dir.
pub const SUBSCRIPTIONS_FILE: &str = "push-subscriptions.json";
/// Subscriptions kept at most; a new one past it replaces the oldest.
pub const MAX_SUBSCRIPTIONS: usize = 32;
/// Longest endpoint URL taken (FCM's are ~200 bytes, Mozilla's ~400).
pub const MAX_ENDPOINT_BYTES: usize = 1024;

/// Who subscribed: a dashboard credential (its SHA-256, hex) or a holder
/// of the read-write token (or the daemon's own user).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    Page(String),
    Token,
}

/// One browser to push to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// The push service's URL for this browser (RFC 8030).
    pub endpoint: String,
    /// The browser's P-256 key and auth secret, base64url (RFC 8291).
    pub p256dh: String,
    pub auth: String,
    pub owner: Owner,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SubscriptionError {
    #[error("endpoint is not a URL")]
    NotUrl,
    #[error("endpoint is longer than {MAX_ENDPOINT_BYTES} bytes")]
    TooLong,
    #[error(
        "endpoint must be https (plain http only to a loopback address), without a user or password"
    )]
    NotHttps,
    #[error("{0} is not base64url")]
    NotBase64(&'static str),
    #[error(transparent)]
    Keys(#[from] EceError),
}

impl Subscription {
    /// A subscription as a page sent it, checked: an https endpoint (a
    /// push service; plain http to loopback only, for a local one), keys
    /// that are a P-256 point and a 16-byte secret.
    pub fn checked(
        endpoint: &str,
        p256dh: &str,
        auth: &str,
        owner: Owner,
        now: DateTime<Utc>,
    ) -> Result<Subscription, SubscriptionError> {
        if endpoint.len() > MAX_ENDPOINT_BYTES {
            return Err(SubscriptionError::TooLong);
        }
        let url = reqwest::Url::parse(endpoint).map_err(|_| SubscriptionError::NotUrl)?;
        let loopback = url
            .host_str()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
            .and_then(|h| h.parse::<IpAddr>().ok())
            .is_some_and(|ip| ip.is_loopback());
        let secure = url.scheme() == "https" || (url.scheme() == "http" && loopback);
        if !secure || !url.username().is_empty() || url.password().is_some() {
            return Err(SubscriptionError::NotHttps);
        }
        let decode = |what, value: &str| {
            URL_SAFE_NO_PAD
                .decode(value.trim_end_matches('='))
                .map_err(|_| SubscriptionError::NotBase64(what))
        };
        ReceiverKeys::new(&decode("p256dh", p256dh)?, &decode("auth", auth)?)?;
        Ok(Subscription {
            endpoint: url.to_string(),
            p256dh: p256dh.trim_end_matches('=').to_owned(),
            auth: auth.trim_end_matches('=').to_owned(),
            owner,
            created_at: now,
        })
    }

    /// The keys to encrypt for (checked when it was taken).
    pub fn keys(&self) -> Result<ReceiverKeys, SubscriptionError> {
        let decode = |what, value: &str| {
            URL_SAFE_NO_PAD
                .decode(value)
                .map_err(|_| SubscriptionError::NotBase64(what))
        };
        Ok(ReceiverKeys::new(
            &decode("p256dh", &self.p256dh)?,
            &decode("auth", &self.auth)?,
        )?)
    }
}

/// The file: every subscription, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscriptions {
    #[serde(default)]
    version: u32,
    subscriptions: Vec<Subscription>,
}

impl Subscriptions {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(SUBSCRIPTIONS_FILE)
    }

    /// Reads the file; a missing one is empty, a corrupt one is moved
    /// aside (and logged) and read as empty.
    pub fn load(path: &Path) -> Subscriptions {
        load_or_default(path)
    }

    pub fn save(&self, path: &Path) -> Result<(), StoreError> {
        let file = Subscriptions {
            version: 1,
            subscriptions: self.subscriptions.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
        bytes.push(b'\n');
        write_atomic(path, &bytes)
    }

    pub fn all(&self) -> &[Subscription] {
        &self.subscriptions
    }

    /// Adds one; the same endpoint again replaces the old (a page that
    /// logged in anew), and past `MAX_SUBSCRIPTIONS` the oldest goes.
    pub fn add(&mut self, subscription: Subscription) {
        self.subscriptions
            .retain(|s| s.endpoint != subscription.endpoint);
        while self.subscriptions.len() >= MAX_SUBSCRIPTIONS {
            self.subscriptions.remove(0);
        }
        self.subscriptions.push(subscription);
    }

    /// Removes the subscription at `endpoint` if `by` may: its owner, or a
    /// token holder. Whether one went.
    pub fn remove(&mut self, endpoint: &str, by: &Owner) -> bool {
        let before = self.subscriptions.len();
        self.subscriptions
            .retain(|s| s.endpoint != endpoint || !(by == &Owner::Token || &s.owner == by));
        self.subscriptions.len() != before
    }

    /// Removes every subscription of `owner` (its credential ended).
    pub fn remove_owner(&mut self, owner: &Owner) -> bool {
        let before = self.subscriptions.len();
        self.subscriptions.retain(|s| &s.owner != owner);
        self.subscriptions.len() != before
    }

    /// Removes the subscription a push service said is gone (404/410).
    pub fn prune(&mut self, endpoint: &str) -> bool {
        let before = self.subscriptions.len();
        self.subscriptions.retain(|s| s.endpoint != endpoint);
        self.subscriptions.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::elliptic_curve::sec1::ToEncodedPoint;

    fn keys() -> (String, String) {
        let key = p256::SecretKey::random(&mut rand_core::OsRng);
        let point = key.public_key().to_encoded_point(false);
        (
            URL_SAFE_NO_PAD.encode(point.as_bytes()),
            URL_SAFE_NO_PAD.encode([9u8; 16]),
        )
    }

    fn sub(endpoint: &str, owner: Owner) -> Subscription {
        let (p256dh, auth) = keys();
        Subscription::checked(endpoint, &p256dh, &auth, owner, Utc::now()).unwrap()
    }

    #[test]
    fn only_a_push_service_and_real_keys_are_taken() {
        let (p, a) = keys();
        let check = |endpoint: &str, p: &str, a: &str| {
            Subscription::checked(endpoint, p, a, Owner::Token, Utc::now()).map(|_| ())
        };
        use SubscriptionError as E;
        let long = format!("https://push.example/{}", "x".repeat(MAX_ENDPOINT_BYTES));
        let padded = format!("{a}==");
        let table: &[(&str, &str, &str, Result<(), E>)] = &[
            ("https://fcm.googleapis.com/fcm/send/abc", &p, &a, Ok(())),
            ("http://127.0.0.1:9/push", &p, &a, Ok(())),
            ("http://[::1]:9/push", &p, &a, Ok(())),
            ("https://push.example/x", &p, &padded, Ok(())),
            ("http://push.example/x", &p, &a, Err(E::NotHttps)),
            ("http://localhost.evil/x", &p, &a, Err(E::NotHttps)),
            ("file:///etc/passwd", &p, &a, Err(E::NotHttps)),
            ("https://u:p@push.example/x", &p, &a, Err(E::NotHttps)),
            ("not a url", &p, &a, Err(E::NotUrl)),
            (&long, &p, &a, Err(E::TooLong)),
            (
                "https://push.example/x",
                "@@",
                &a,
                Err(E::NotBase64("p256dh")),
            ),
            (
                "https://push.example/x",
                &a,
                &a,
                Err(E::Keys(EceError::BadPublicKey)),
            ),
            (
                "https://push.example/x",
                &p,
                &p,
                Err(E::Keys(EceError::BadAuthSecret(65))),
            ),
        ];
        for (endpoint, p, a, want) in table {
            assert_eq!(&check(endpoint, p, a), want, "{endpoint}");
        }
    }

    #[test]
    fn owners_replace_remove_and_prune() {
        let page = Owner::Page("aa".into());
        let other = Owner::Page("bb".into());
        let mut list = Subscriptions::default();
        list.add(sub("https://p.example/1", page.clone()));
        list.add(sub("https://p.example/1", other.clone()));
        assert_eq!(list.all().len(), 1, "same endpoint replaced");
        assert_eq!(list.all()[0].owner, other);
        list.add(sub("https://p.example/2", page.clone()));
        assert!(!list.remove("https://p.example/1", &page), "not its own");
        assert!(list.remove("https://p.example/2", &page));
        list.add(sub("https://p.example/3", page.clone()));
        assert!(list.remove_owner(&other));
        assert!(!list.remove_owner(&other));
        assert!(
            list.remove("https://p.example/3", &Owner::Token),
            "a token holder may"
        );
        for n in 0..MAX_SUBSCRIPTIONS + 3 {
            list.add(sub(&format!("https://p.example/n{n}"), Owner::Token));
        }
        assert_eq!(list.all().len(), MAX_SUBSCRIPTIONS);
        assert_eq!(
            list.all()[0].endpoint,
            "https://p.example/n3",
            "oldest went"
        );
        assert!(list.prune("https://p.example/n3"));
        assert!(!list.prune("https://p.example/n3"));
    }

    #[test]
    fn kept_in_a_private_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = Subscriptions::path(dir.path());
        let mut list = Subscriptions::load(&path);
        list.add(sub("https://p.example/1", Owner::Page("aa".into())));
        list.save(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(Subscriptions::load(&path).all(), list.all());
    }
}
