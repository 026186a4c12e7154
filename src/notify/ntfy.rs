//! ntfy (`notify.ntfy`): the notification published as JSON to the
//! configured server and topic, with a click and an Open button that go
//! to the session's page. Same one line as every other target, never the
//! screen.

use std::time::Duration;

use serde_json::{Value, json};

use crate::config::{NtfyConfig, mask_urls};
use crate::push::Message;
use crate::push::http::Poster;

/// The JSON ntfy publishes (`POST /` with the topic in the body).
pub fn body(ntfy: &NtfyConfig, message: &Message, page_url: &str) -> Value {
    let open = format!("{}{}", page_url.trim_end_matches('/'), message.url);
    let attention = message.trigger == "attention";
    json!({
        "topic": ntfy.topic,
        "title": message.title,
        "message": message.body,
        "priority": if attention { 4 } else { 3 },
        "tags": [if attention { "bell" } else { "computer" }],
        "click": open,
        "actions": [{"action": "view", "label": "Open", "url": open, "clear": true}],
    })
}

/// Publishes; whether the server took it.
pub async fn publish(
    poster: &Poster,
    ntfy: &NtfyConfig,
    message: &Message,
    page_url: &str,
    timeout: Duration,
) -> bool {
    let body = serde_json::to_vec(&body(ntfy, message, page_url)).unwrap_or_default();
    let mut headers = vec![("content-type", "application/json".to_owned())];
    if let Some(token) = &ntfy.token {
        headers.push(("authorization", format!("Bearer {token}")));
    }
    let shown = mask_urls(&ntfy.url);
    match poster.post(&ntfy.url, &headers, body, timeout).await {
        Ok(status) if status.is_success() => true,
        Ok(status) => {
            tracing::warn!(server = %shown, %status, "ntfy refused a notification");
            false
        }
        Err(e) => {
            tracing::warn!(server = %shown, "ntfy unreachable: {e}");
            false
        }
    }
}
