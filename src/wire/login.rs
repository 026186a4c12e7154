//! The dashboard's login (`tmuxd open`) and what a credential may do.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/login/code`: a one-time code and the link that uses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LoginCode {
    /// Works once, until `expires_at`.
    pub code: String,
    /// The dashboard with the code in its fragment (never sent to a server
    /// or kept in a log): open it in a browser.
    pub url: String,
    pub expires_at: DateTime<Utc>,
}

/// `POST /v1/login` body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub code: String,
}

/// `POST /v1/login`: the dashboard's credential, used as a bearer token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LoginGrant {
    pub token: String,
    pub access: AccessLevel,
    pub expires_at: DateTime<Utc>,
}

/// `POST /v1/logout`: whether a credential was ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LogoutResponse {
    /// True when the presented dashboard credential was ended; false for
    /// the token or the daemon's own user, which a logout does not end.
    pub ended: bool,
}

/// What a credential allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccessLevel {
    /// GET and watching streams.
    Read,
    /// Everything.
    Write,
}

/// `GET /v1/whoami`: what the presented credential may do, so a client
/// need not probe with a request that fails.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WhoAmI {
    pub access: AccessLevel,
}
