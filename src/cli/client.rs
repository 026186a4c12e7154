//! A small HTTP client for the daemon: base URL, bearer token, and the
//! API's JSON errors turned into plain messages.

use reqwest::{Method, StatusCode};
use serde_json::Value;

pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(
        "cannot reach tmuxd at {base}: {source} (is `tmuxd serve` running? set TMUXD_URL to point elsewhere)"
    )]
    Unreachable {
        base: String,
        source: reqwest::Error,
    },
    #[error("{message} ({code}, HTTP {status})")]
    Api {
        status: StatusCode,
        code: String,
        message: String,
    },
    #[error("unexpected answer from tmuxd: {0}")]
    Protocol(String),
}

impl Client {
    pub fn new(base: String, token: Option<String>) -> Self {
        Client {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_owned(),
            token,
        }
    }

    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ClientError> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                base: self.base.clone(),
                source,
            })?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        let body: Value =
            serde_json::from_str(&text).map_err(|_| ClientError::Protocol(text.clone()))?;
        if status.is_success() {
            return Ok(body);
        }
        let field = |name: &str| body["error"][name].as_str().unwrap_or("").to_owned();
        Err(ClientError::Api {
            status,
            code: field("code"),
            message: field("message"),
        })
    }
}
