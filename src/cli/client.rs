//! A small HTTP client for the daemon: base URL, bearer token, and the
//! API's JSON errors turned into plain messages with a hint where one helps.
//! It sends nothing that matters, and gives no answer to act on, before it
//! knows the daemon is the user's own (`super::trust`): checked once, at
//! the first request.

use std::path::{Path, PathBuf};

use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::OnceCell;

pub use super::error::{ClientError, TOKEN_HINT};
use super::output::visible;
use super::trust::{self, Place};
use crate::wire::ErrorBody;

pub struct Client {
    http: reqwest::Client,
    base: Url,
    /// Sent only to a daemon that has shown it is ours (see [`Client::trusted`]).
    token: Option<String>,
    place: Place,
    /// Set once the daemon has shown it is the user's own.
    trusted: OnceCell<()>,
}

/// The daemon's base URL from `--url`/`TMUXD_URL`: `http://` is assumed
/// when no scheme is given (`127.0.0.1:7420`).
pub fn base_url(text: &str) -> Result<Url, ClientError> {
    let text = text.trim();
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let bad = |why: String| {
        ClientError::Usage(format!(
            "--url/TMUXD_URL {text:?} is not a daemon address ({why}); use e.g. http://127.0.0.1:7420"
        ))
    };
    let url = Url::parse(&with_scheme).map_err(|e| bad(e.to_string()))?;
    // tmuxd serves plain HTTP, and this client is built without TLS.
    if url.scheme() != "http" {
        return Err(bad(format!("scheme {} is not http", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host".into()));
    }
    Ok(url)
}

impl Client {
    /// A client of the daemon at `base` over TCP, which must prove it holds
    /// `token` before it is sent anything else.
    pub fn over_tcp(base: Url, token: String) -> Self {
        Client {
            http: http_builder().build().unwrap_or_default(),
            base,
            token: Some(token),
            place: Place::Tcp,
            trusted: OnceCell::new(),
        }
    }

    /// A client of the daemon's unix socket (`http://localhost` on it),
    /// which must be ours (see `trust::check_socket`).
    pub fn over_socket(socket: PathBuf, token: Option<String>) -> Self {
        let http = http_builder()
            .unix_socket(socket.as_path())
            .build()
            .unwrap_or_default();
        Client {
            http,
            base: Url::parse("http://localhost/").expect("a valid URL"),
            token,
            place: Place::Socket(socket),
            trusted: OnceCell::new(),
        }
    }

    /// The unix socket requests go to, if not TCP.
    pub fn socket(&self) -> Option<&Path> {
        match &self.place {
            Place::Socket(socket) => Some(socket),
            Place::Tcp => None,
        }
    }

    /// Where the daemon is, as errors name it.
    fn place(&self) -> String {
        match &self.place {
            Place::Socket(socket) => format!("unix socket {}", socket.display()),
            Place::Tcp => self.base.to_string(),
        }
    }

    /// The base URL requests go to: over TCP, the host the user named.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// Checks once, before anything else is sent, that the daemon is the
    /// user's own: the socket's peer runs as us, or the daemon over TCP
    /// proves it holds the token (the proof request carries no token).
    pub async fn trusted(&self) -> Result<(), ClientError> {
        self.trusted
            .get_or_try_init(|| async {
                match (&self.place, &self.token) {
                    (Place::Socket(socket), _) => trust::check_peer(socket).await,
                    (Place::Tcp, Some(token)) => {
                        trust::check_proof(&self.http, &self.base, token).await
                    }
                    (Place::Tcp, None) => Err(trust::needs_token()),
                }
            })
            .await
            .map(|_| ())
    }

    /// `path` (starting with `/`, with any query) under the base URL.
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base.as_str().trim_end_matches('/'))
    }

    /// Sends a request; a non-2xx answer becomes the API's error.
    pub async fn send<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<reqwest::Response, ClientError> {
        self.trusted().await?;
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                base: self.place(),
                source,
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.bytes().await.unwrap_or_default();
        Err(api_error(status, &body))
    }

    /// Sends a request and reads the successful answer as `T`.
    pub async fn request<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, ClientError> {
        let text = self
            .send(method, path, body)
            .await?
            .text()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        serde_json::from_str(&text)
            .map_err(|e| ClientError::Protocol(format!("{e}: {}", visible(&text))))
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.request(Method::GET, path, None::<&()>).await
    }

    /// The same address as a WebSocket URL.
    pub fn ws_url(&self, path: &str) -> String {
        format!("ws://{}", self.url(path).trim_start_matches("http://"))
    }

    /// The token, for a request this client does not make itself (a
    /// WebSocket), once the daemon has shown it is ours.
    pub async fn token(&self) -> Result<Option<&str>, ClientError> {
        self.trusted().await?;
        Ok(self.token.as_deref())
    }
}

/// Every client of the daemon follows no redirect and goes through no
/// proxy from the environment (`HTTP_PROXY`...): an answer that sends the
/// request elsewhere would carry the token there, and a redirect or a proxy
/// could relay the real daemon's proof for whoever sits in between.
fn http_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
}

/// A non-2xx answer as the API's error (`{"error": {"code", "message"}}`);
/// a body that is not one keeps its text as the message.
pub fn api_error(status: StatusCode, body: &[u8]) -> ClientError {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody { error }) => ClientError::Api {
            status,
            code: error.code.as_str(),
            message: visible(&error.message).into_owned(),
        },
        Err(_) => ClientError::Api {
            status,
            code: String::new(),
            message: visible(String::from_utf8_lossy(body).trim()).into_owned(),
        },
    }
}

/// Every byte but the unreserved ones (RFC 3986: letters, digits, `-._~`)
/// is encoded: a value stays one path segment or query value.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes user input for a URL path segment or query value.
pub fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        let ok = [
            ("127.0.0.1:7431", "http://127.0.0.1:7431/"),
            ("localhost:7420", "http://localhost:7420/"),
            ("http://127.0.0.1:1/", "http://127.0.0.1:1/"),
            ("[::1]:7420", "http://[::1]:7420/"),
            ("box", "http://box/"),
        ];
        for (text, want) in ok {
            assert_eq!(base_url(text).unwrap().as_str(), want, "{text}");
        }
        for bad in [
            "",
            "ftp://host",
            "https://tmuxd.example",
            "http://",
            "127.0.0.1:notaport",
            "http://a b",
        ] {
            let err = base_url(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}");
            assert!(err.to_string().contains("TMUXD_URL"), "{err}");
        }
    }

    #[test]
    fn ws_urls_keep_host_and_path() {
        let client = Client::over_tcp(base_url("127.0.0.1:9").unwrap(), "t".into());
        assert_eq!(client.ws_url("/v1/x"), "ws://127.0.0.1:9/v1/x");
        let client = Client::over_tcp(base_url("http://h/prefix/").unwrap(), "t".into());
        assert_eq!(client.ws_url("/v1/x"), "ws://h/prefix/v1/x");
    }

    #[test]
    fn auth_errors_mention_the_token() {
        let error = |status| ClientError::Api {
            status,
            code: "unauthorized".into(),
            message: "missing bearer token".into(),
        };
        assert!(
            error(StatusCode::UNAUTHORIZED)
                .to_string()
                .contains("TMUXD_TOKEN")
        );
        assert!(error(StatusCode::FORBIDDEN).to_string().contains("--token"));
        assert!(!error(StatusCode::NOT_FOUND).to_string().contains("TOKEN"));
    }

    #[test]
    fn refused_values_exit_2() {
        // (status, exit code)
        let table = [(400, 2), (404, 1), (409, 1), (502, 1)];
        for (status, code) in table {
            let error = api_error(StatusCode::from_u16(status).unwrap(), b"{}");
            assert_eq!(error.exit_code(), code, "{status}");
        }
    }

    #[test]
    fn error_bodies_are_read_as_the_api_writes_them() {
        let body = br#"{"error":{"code":"name_taken","message":"a tmux session named \"x\" already exists"}}"#;
        let error = api_error(StatusCode::CONFLICT, body);
        assert_eq!(
            error.to_string(),
            "a tmux session named \"x\" already exists (name_taken, HTTP 409)"
        );
        let plain = api_error(StatusCode::BAD_GATEWAY, b"upstream broke");
        assert!(plain.to_string().starts_with("upstream broke"), "{plain}");
    }

    #[test]
    fn encoding() {
        assert_eq!(encode("sess_1"), "sess_1");
        assert_eq!(encode("a/b c"), "a%2Fb%20c");
    }
}
