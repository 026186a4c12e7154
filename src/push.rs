//! Web Push (RFC 8030 delivery, RFC 8291 encryption, RFC 8292 VAPID):
//! the dashboard subscribes a browser, and the notifier (`notify`) hands
//! each notification its gate let through to [`Push::send`], which
//! encrypts one small message per subscription and POSTs it to the
//! browser's push service. Owns the VAPID key and the subscriptions file;
//! a push service's 404 or 410 removes a subscription.

mod ece;
pub mod http;
pub mod payload;
pub mod subscriptions;
mod vapid;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use ece::MAX_PLAINTEXT;
pub use payload::{Answer, Message};
pub use subscriptions::{Owner, Subscription, SubscriptionError};
pub use vapid::{KEY_FILE, VapidError};

use subscriptions::Subscriptions;
use vapid::Vapid;

/// How long a push service keeps a message for a browser that is away:
/// an hour (an answer to an older question is refused anyway).
const TTL_S: u32 = 3600;

/// Web Push for one daemon; cheap to clone.
#[derive(Clone)]
pub struct Push {
    inner: Arc<Inner>,
}

struct Inner {
    vapid: Vapid,
    /// The VAPID `sub` claim: how a push service reaches the operator.
    contact: String,
    path: PathBuf,
    /// Locked only in short synchronous sections.
    subscriptions: Mutex<Subscriptions>,
    /// Held while the file is written, so the last change is the one on disk.
    saving: tokio::sync::Mutex<()>,
    /// Made at the first push: it reads the system's certificates.
    poster: std::sync::OnceLock<http::Poster>,
}

/// How one push went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    Delivered,
    /// The push service says the subscription is gone (404/410): removed.
    Gone,
    Failed,
}

impl Push {
    /// Reads (or makes) the VAPID key and reads the subscriptions.
    pub fn open(data_dir: &Path, contact: String) -> Result<Push, VapidError> {
        let vapid = Vapid::load_or_create(data_dir)?;
        let path = Subscriptions::path(data_dir);
        let subscriptions = Subscriptions::load(&path);
        Ok(Push {
            inner: Arc::new(Inner {
                vapid,
                contact,
                path,
                subscriptions: Mutex::new(subscriptions),
                saving: tokio::sync::Mutex::new(()),
                poster: std::sync::OnceLock::new(),
            }),
        })
    }

    /// The VAPID public key, base64url: the page subscribes with it.
    pub fn public_key(&self) -> &str {
        self.inner.vapid.public_key()
    }

    fn list(&self) -> std::sync::MutexGuard<'_, Subscriptions> {
        self.inner.subscriptions.lock().expect("subscriptions lock")
    }

    pub fn count(&self) -> usize {
        self.list().all().len()
    }

    /// Keeps `subscription` (replacing one at the same endpoint) and saves.
    pub async fn subscribe(
        &self,
        subscription: Subscription,
    ) -> Result<(), crate::store::StoreError> {
        self.list().add(subscription);
        self.save().await
    }

    /// Removes the subscription at `endpoint` if `by` owns it (a token
    /// holder may remove any); whether one went.
    pub async fn unsubscribe(
        &self,
        endpoint: &str,
        by: &Owner,
    ) -> Result<bool, crate::store::StoreError> {
        let removed = self.list().remove(endpoint, by);
        if removed {
            self.save().await?;
        }
        Ok(removed)
    }

    /// Removes every subscription a credential made (it logged out).
    pub async fn forget(&self, owner: &Owner) {
        let removed = self.list().remove_owner(owner);
        if removed && let Err(e) = self.save().await {
            tracing::warn!("forgetting push subscriptions: {e}");
        }
    }

    /// Writes the list as it is once the previous write is done.
    async fn save(&self) -> Result<(), crate::store::StoreError> {
        let _saving = self.inner.saving.lock().await;
        let list = self.list().clone();
        let path = self.inner.path.clone();
        tokio::task::spawn_blocking(move || list.save(&path))
            .await
            .unwrap_or_else(|e| {
                Err(crate::store::StoreError::Io {
                    path: PathBuf::new(),
                    source: std::io::Error::other(e.to_string()),
                })
            })
    }

    /// Pushes `message` to every subscription, at once; how each went.
    /// Gone subscriptions are removed.
    pub async fn send(&self, message: &Message, timeout: Duration) -> Vec<Sent> {
        let subscriptions = self.list().all().to_vec();
        let plaintext = serde_json::to_vec(message).unwrap_or_default();
        let sends = subscriptions
            .iter()
            .map(|s| self.send_one(s, &plaintext, message.tag.as_str(), timeout));
        let outcomes = futures::future::join_all(sends).await;
        let gone: Vec<&str> = subscriptions
            .iter()
            .zip(&outcomes)
            .filter(|(_, o)| **o == Sent::Gone)
            .map(|(s, _)| s.endpoint.as_str())
            .collect();
        if !gone.is_empty() {
            {
                let mut list = self.list();
                for endpoint in &gone {
                    list.prune(endpoint);
                }
            }
            if let Err(e) = self.save().await {
                tracing::warn!("removing gone push subscriptions: {e}");
            }
        }
        outcomes
    }

    async fn send_one(
        &self,
        subscription: &Subscription,
        plaintext: &[u8],
        tag: &str,
        timeout: Duration,
    ) -> Sent {
        // The endpoint is a capability: logs name its origin only.
        let Ok(url) = reqwest::Url::parse(&subscription.endpoint) else {
            return Sent::Failed;
        };
        let service = url.origin().ascii_serialization();
        let body = match subscription
            .keys()
            .map(|keys| ece::encrypt(&keys, plaintext))
        {
            Ok(Ok(body)) => body,
            Ok(Err(e)) => {
                tracing::warn!(%service, "push not encrypted: {e}");
                return Sent::Failed;
            }
            Err(e) => {
                tracing::warn!(%service, "push subscription unusable: {e}");
                return Sent::Failed;
            }
        };
        let now = chrono::Utc::now().timestamp();
        let headers = [
            (
                "authorization",
                self.inner
                    .vapid
                    .authorization(&url, &self.inner.contact, now),
            ),
            ("content-encoding", "aes128gcm".to_owned()),
            ("content-type", "application/octet-stream".to_owned()),
            ("ttl", TTL_S.to_string()),
            ("urgency", "high".to_owned()),
            // A newer push about the same session replaces one not yet
            // delivered (RFC 8030 section 5.4: base64url, 32 characters).
            ("topic", topic(tag)),
        ];
        let poster = self.inner.poster.get_or_init(http::Poster::new);
        match poster.post(url.as_str(), &headers, body, timeout).await {
            Ok(status) if status.is_success() => Sent::Delivered,
            Ok(status) if status == 404 || status == 410 => {
                tracing::info!(%service, %status, "push subscription gone; removed");
                Sent::Gone
            }
            Ok(status) => {
                tracing::warn!(%service, %status, "push service refused a push");
                Sent::Failed
            }
            Err(e) => {
                tracing::warn!(%service, "push service unreachable: {e}");
                Sent::Failed
            }
        }
    }
}

/// A push's `Topic`: the tag's characters that base64url allows, at most 32.
fn topic(tag: &str) -> String {
    let kept: String = tag
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    if kept.is_empty() {
        "tmuxd".to_owned()
    } else {
        kept
    }
}

/// This machine's name, as pushes say where a session runs.
pub fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is writable for its length; gethostname writes a
    // NUL-terminated name into it (truncated if too long).
    let ok = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) } == 0;
    let end = buffer.iter().position(|b| *b == 0).unwrap_or(0);
    match ok {
        true if end > 0 => String::from_utf8_lossy(&buffer[..end]).into_owned(),
        _ => "localhost".to_owned(),
    }
}
