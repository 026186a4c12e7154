//! Where a request comes from, checked before any credential: a browser
//! request must come from the daemon's own origin, and the request must
//! name the daemon by a name it answers to.
//!
//! A page on another port of the same machine is same-site to a browser
//! and its WebSockets need no preflight, so only the exact origin (scheme,
//! host and port) keeps it out. A `Host` the daemon does not answer to is
//! DNS rebinding. A request with two `Host` or `Origin` headers, or whose
//! target names another host, is one that proxies and the daemon could read
//! differently: refused rather than guessed at.

use axum::http::{HeaderMap, HeaderName, Uri, header};

use super::forbidden;
use crate::api::error::ApiError;

/// The names the daemon answers to besides loopback names and IP addresses.
#[derive(Clone, Debug, Default)]
pub struct HostNames(Vec<String>);

impl HostNames {
    pub fn new(names: Vec<String>) -> Self {
        HostNames(names.into_iter().map(|n| n.to_ascii_lowercase()).collect())
    }
}

/// Refuses what a browser on another origin, or a rebinding name, sends.
pub fn check(uri: &Uri, headers: &HeaderMap, names: &HostNames) -> Result<(), ApiError> {
    let host = single(headers, &header::HOST)?.unwrap_or("");
    if let Some(authority) = uri.authority()
        && !authority.as_str().eq_ignore_ascii_case(host)
    {
        return Err(ApiError::bad_request(
            "the request target names another host than the Host header",
        ));
    }
    if !answers_to(host, names) {
        return Err(forbidden(format!(
            "Host {host:?} is not a name this daemon answers to (loopback, an IP address, or http.allowed_hosts)"
        )));
    }
    if let Some(origin) = single(headers, &header::ORIGIN)?
        && !same_origin(origin, host)
    {
        return Err(forbidden(format!(
            "Origin {origin:?} is not this daemon's own (http://{host})"
        )));
    }
    let site = single(headers, &HeaderName::from_static("sec-fetch-site"))?;
    if site.is_some_and(|s| s.eq_ignore_ascii_case("cross-site")) {
        return Err(forbidden("cross-site requests are refused"));
    }
    Ok(())
}

/// The header's one value; two of them (or one that is not text) is a 400.
fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, ApiError> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::bad_request(format!(
            "more than one {name} header"
        )));
    }
    let text = first
        .to_str()
        .map_err(|_| ApiError::bad_request(format!("the {name} header is not text")))?;
    Ok(Some(text))
}

/// `http://HOST` or `https://HOST` (a TLS proxy in front), HOST exactly as
/// the client sent it, port included.
fn same_origin(origin: &str, host: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    rest.is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

/// Loopback names, IP literals (a rebinding attack needs a name it
/// controls) and the configured names, with an optional port.
fn answers_to(host_port: &str, names: &HostNames) -> bool {
    let Some(host) = strip_port(host_port) else {
        return false;
    };
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    let host = host.to_ascii_lowercase();
    host == "localhost" || host.parse::<std::net::Ipv4Addr>().is_ok() || names.0.contains(&host)
}

/// The host part of `host[:port]` (`[v6]:port` kept bracketed); `None` when
/// the port is not a port.
fn strip_port(host_port: &str) -> Option<&str> {
    if host_port.starts_with('[') {
        let end = host_port.find(']')?;
        let (host, rest) = host_port.split_at(end + 1);
        return match rest {
            "" => Some(host),
            port => port.strip_prefix(':').filter(|p| is_port(p)).map(|_| host),
        };
    }
    match host_port.rsplit_once(':') {
        Some((host, port)) if is_port(port) => Some(host),
        Some(_) => None,
        None => Some(host_port),
    }
}

fn is_port(digits: &str) -> bool {
    !digits.is_empty() && digits.len() <= 5 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn only_the_daemons_own_origin_and_names() {
        let names = HostNames::new(vec!["gpu1.tail.net".into()]);
        let path: Uri = "/v1/sessions".parse().unwrap();
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<StatusCode>);
        #[rustfmt::skip]
        let cases: &[Case] = &[
            (&[("host", "127.0.0.1:7420")], None),
            (&[("host", "127.0.0.1:7420"), ("origin", "http://127.0.0.1:7420")], None),
            (&[("host", "localhost:7420"), ("origin", "http://localhost:7420")], None),
            (&[("host", "[::1]:7420"), ("origin", "http://[::1]:7420")], None),
            (&[("host", "GPU1.tail.net:7420"), ("origin", "https://gpu1.tail.net:7420")], None),
            (&[("host", "10.1.2.3:7420")], None),
            (&[("host", "127.0.0.1:7420"), ("sec-fetch-site", "same-origin")], None),
            (&[("host", "127.0.0.1:7420"), ("sec-fetch-site", "none")], None),
            // Another port of the same machine: same-site, not same-origin.
            (&[("host", "127.0.0.1:7420"), ("origin", "http://localhost:8000")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:7420"), ("origin", "http://127.0.0.1:8000")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:7420"), ("origin", "http://127.0.0.1")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:7420"), ("origin", "null")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:7420"), ("origin", "https://evil.example")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:7420"), ("sec-fetch-site", "cross-site")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "attacker.example:7420")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1.evil.com")], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:abc")], Some(StatusCode::FORBIDDEN)),
            (&[], Some(StatusCode::FORBIDDEN)),
            (&[("host", "127.0.0.1:7420"), ("host", "evil.example")], Some(StatusCode::BAD_REQUEST)),
            (&[("host", "127.0.0.1:7420"), ("origin", "http://127.0.0.1:7420"), ("origin", "http://evil")], Some(StatusCode::BAD_REQUEST)),
        ];
        for (pairs, want) in cases {
            let got = check(&path, &headers(pairs), &names)
                .err()
                .map(|e| e.status());
            assert_eq!(got, *want, "{pairs:?}");
        }
    }

    #[test]
    fn a_target_naming_another_host_is_refused() {
        let names = HostNames::default();
        let host = headers(&[("host", "127.0.0.1:7420")]);
        let other: Uri = "http://evil.example/v1/sessions".parse().unwrap();
        let same: Uri = "http://127.0.0.1:7420/v1/sessions".parse().unwrap();
        let status = check(&other, &host, &names).unwrap_err().status();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(check(&same, &host, &names).is_ok());
    }
}
