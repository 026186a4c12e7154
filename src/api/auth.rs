//! Who may talk to the daemon. Without a token only loopback clients may:
//! the Host and Origin checks stop DNS rebinding and cross-site requests
//! from a browser. With tokens, a bearer token is required (the read token
//! allows GET and streams only); a WebSocket may instead authenticate with
//! its first message.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// Paths anyone who can connect may read.
const OPEN_PATHS: [&str; 2] = ["/healthz", "/version"];

#[derive(Clone, Debug, Default)]
pub struct AuthPolicy {
    pub token: Option<String>,
    pub read_token: Option<String>,
}

/// What a request may do, as decided by the guard (a request extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anything.
    Full,
    /// GET and streams; no input.
    ReadOnly,
    /// A WebSocket without a bearer header: it must send
    /// `{"type":"auth","token":"..."}` first (browsers cannot set headers).
    WebSocketPending,
}

pub async fn guard(
    State(policy): State<std::sync::Arc<AuthPolicy>>,
    mut request: Request,
    next: Next,
) -> Response {
    match check(
        &policy,
        request.method(),
        request.uri().path(),
        request.headers(),
    ) {
        Ok(access) => {
            request.extensions_mut().insert(access);
            next.run(request).await
        }
        Err(error) => error.into_response(),
    }
}

fn check(
    policy: &AuthPolicy,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<Access, ApiError> {
    if policy.token.is_none() {
        return check_loopback(headers).map(|()| Access::Full);
    }
    if OPEN_PATHS.contains(&path) || crate::web::is_open_path(path) {
        return Ok(Access::ReadOnly);
    }
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(presented) = presented else {
        if is_websocket_upgrade(headers) {
            return Ok(Access::WebSocketPending);
        }
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing bearer token",
        ));
    };
    match (policy.access_for(presented), method == Method::GET) {
        (Some(Access::Full), _) => Ok(Access::Full),
        (Some(_), true) => Ok(Access::ReadOnly),
        (Some(_), false) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the read token allows GET only",
        )),
        (None, _) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "invalid token",
        )),
    }
}

impl AuthPolicy {
    /// What a presented token allows, compared in constant time.
    pub fn access_for(&self, presented: &str) -> Option<Access> {
        let matches = |t: &Option<String>| {
            t.as_ref()
                .is_some_and(|t| constant_time_eq(presented.as_bytes(), t.as_bytes()))
        };
        if matches(&self.token) {
            Some(Access::Full)
        } else if matches(&self.read_token) {
            Some(Access::ReadOnly)
        } else {
            None
        }
    }
}

fn is_websocket_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

fn check_loopback(headers: &HeaderMap) -> Result<(), ApiError> {
    let forbidden = |what: &str| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("{what} is not a loopback address"),
        )
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !is_loopback_host(host) {
        return Err(forbidden("Host"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        if !host.is_some_and(is_loopback_host) {
            return Err(forbidden("Origin"));
        }
    }
    Ok(())
}

/// `127.0.0.1`, `localhost` or `[::1]`, with or without a port.
fn is_loopback_host(host_port: &str) -> bool {
    let host = match host_port.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, "")) => inside,
            Some((inside, port)) if port.strip_prefix(':').is_some_and(is_port) => inside,
            _ => return false,
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => host_port,
        },
    };
    matches!(host, "127.0.0.1" | "localhost" | "::1")
}

fn is_port(digits: &str) -> bool {
    !digits.is_empty() && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1:7420",
            "localhost:1",
            "[::1]",
            "[::1]:80",
            "localhost",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.com",
            "127.0.0.1.evil.com",
            "localhost.evil:80",
            "[::1]x",
            "127.0.0.1:",
            "10.0.0.1:80",
            "127.0.0.1:abc",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), v.parse().unwrap()))
            .collect()
    }

    #[test]
    fn no_token_means_loopback_only() {
        let open = AuthPolicy::default();
        let ok = headers(&[
            (header::HOST, "127.0.0.1:9"),
            (header::ORIGIN, "http://localhost:3000"),
        ]);
        assert!(check(&open, &Method::POST, "/v1/sessions", &ok).is_ok());
        let rebound = headers(&[(header::HOST, "attacker.example")]);
        assert_eq!(
            check(&open, &Method::GET, "/", &rebound)
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
        let cross_site = headers(&[
            (header::HOST, "127.0.0.1"),
            (header::ORIGIN, "https://evil.example"),
        ]);
        assert_eq!(
            check(&open, &Method::GET, "/", &cross_site)
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
        let null_origin = headers(&[(header::HOST, "127.0.0.1"), (header::ORIGIN, "null")]);
        assert!(check(&open, &Method::GET, "/", &null_origin).is_err());
    }

    #[test]
    fn tokens() {
        let policy = AuthPolicy {
            token: Some("rw".into()),
            read_token: Some("ro".into()),
        };
        let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
        assert!(check(&policy, &Method::POST, "/v1/sessions", &bearer("rw")).is_ok());
        assert!(check(&policy, &Method::GET, "/v1/sessions", &bearer("ro")).is_ok());
        assert_eq!(
            check(&policy, &Method::POST, "/v1/sessions", &bearer("ro"))
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            check(&policy, &Method::GET, "/v1/sessions", &bearer("nope"))
                .unwrap_err()
                .status,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            check(&policy, &Method::GET, "/v1/sessions", &HeaderMap::new())
                .unwrap_err()
                .status,
            StatusCode::UNAUTHORIZED
        );
        assert!(check(&policy, &Method::GET, "/healthz", &HeaderMap::new()).is_ok());
        let access = |method: Method, h: HeaderMap| {
            check(&policy, &method, "/v1/sessions/sess_1/stream", &h).unwrap()
        };
        assert_eq!(access(Method::POST, bearer("rw")), Access::Full);
        assert_eq!(access(Method::GET, bearer("ro")), Access::ReadOnly);
        let upgrade = headers(&[(header::UPGRADE, "websocket")]);
        assert_eq!(access(Method::GET, upgrade), Access::WebSocketPending);
        assert_eq!(policy.access_for("ro"), Some(Access::ReadOnly));
        assert_eq!(policy.access_for("r"), None);
    }
}
