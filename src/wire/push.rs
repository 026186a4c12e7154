//! The push routes' wire types (shared with tests and clients).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `GET /v1/push`: what a page needs to subscribe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PushInfo {
    /// The VAPID public key, base64url (the `applicationServerKey`).
    pub public_key: String,
    /// Subscriptions kept, all credentials together.
    pub subscriptions: usize,
}

/// A browser's keys, as `PushSubscription.toJSON()` gives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PushKeys {
    /// Its P-256 public key, base64url.
    pub p256dh: String,
    /// Its 16-byte authentication secret, base64url.
    pub auth: String,
}

/// `POST /v1/push/subscriptions` body: `PushSubscription.toJSON()`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscribeRequest {
    /// The push service's URL for this browser: https (plain http only to
    /// a loopback address).
    pub endpoint: String,
    pub keys: PushKeys,
    /// What browsers send beside the keys; ignored.
    #[serde(default, rename = "expirationTime")]
    pub expiration_time: Option<serde_json::Value>,
}

/// `POST /v1/push/subscriptions`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SubscribeResponse {
    pub subscribed: bool,
    pub subscriptions: usize,
}

/// `POST /v1/push/unsubscribe` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsubscribeRequest {
    pub endpoint: String,
}

/// `POST /v1/push/unsubscribe`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UnsubscribeResponse {
    /// False when no subscription of this credential had that endpoint.
    pub removed: bool,
}

/// `POST /v1/sessions/{id}/answer` body: what a notification's action types.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerRequest {
    /// The `since` of the attention the notification was about; nothing
    /// is typed unless that attention is still up.
    pub since: DateTime<Utc>,
    /// Typed first (no Enter).
    #[serde(default)]
    pub text: Option<String>,
    /// Key names typed after the text (`Enter`, `Escape`).
    #[serde(default)]
    pub keys: Vec<String>,
}

/// `POST /v1/sessions/{id}/answer`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AnswerResponse {
    /// Always true: an answer not typed is a 409.
    pub typed: bool,
}
