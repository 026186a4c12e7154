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
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Stream(String),
}

impl Client {
    pub fn new(base: String, token: Option<String>) -> Self {
        Client {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_owned(),
            token,
        }
    }

    /// Sends a request; a non-2xx answer becomes the API's error.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<reqwest::Response, ClientError> {
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
        if status.is_success() {
            return Ok(response);
        }
        let body: Value = response.json().await.unwrap_or_default();
        let field = |name: &str| body["error"][name].as_str().unwrap_or("").to_owned();
        Err(ClientError::Api {
            status,
            code: field("code"),
            message: field("message"),
        })
    }

    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ClientError> {
        let text = self
            .send(method, path, body)
            .await?
            .text()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        serde_json::from_str(&text).map_err(|_| ClientError::Protocol(text))
    }
}

impl Client {
    /// The same address as a WebSocket URL.
    pub fn ws_url(&self, path: &str) -> String {
        let base = self
            .base
            .strip_prefix("https://")
            .map(|rest| format!("wss://{rest}"))
            .or_else(|| {
                self.base
                    .strip_prefix("http://")
                    .map(|rest| format!("ws://{rest}"))
            })
            .unwrap_or_else(|| self.base.clone());
        format!("{base}{path}")
    }

    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Follows an SSE feed, calling `on_data` with each event's data line.
    pub async fn follow_sse(
        &self,
        path: &str,
        mut on_data: impl FnMut(&str),
    ) -> Result<(), ClientError> {
        let mut response = self.send(Method::GET, path, None).await?;
        let mut pending = String::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))?
        {
            pending.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = pending.find("\n\n") {
                let block: String = pending.drain(..end + 2).collect();
                for line in block.lines() {
                    if let Some(data) = line.strip_prefix("data:") {
                        on_data(data.trim_start());
                    }
                }
            }
        }
        Ok(())
    }
}
