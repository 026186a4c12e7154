//! `X-Tmuxd-Signature`: the hex HMAC-SHA256 of a webhook body under
//! `notify.secret`, so a receiver can tell tmuxd's calls from anyone else's.

use crate::secret::{hex, hmac_sha256};

/// The hex HMAC-SHA256 of `body` under `secret`.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    hex(&hmac_sha256(secret, body))
}
