use axum::http::StatusCode;

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

fn status(result: Result<Admission, ApiError>) -> StatusCode {
    result.unwrap_err().status()
}

#[test]
fn no_token_means_loopback_only_on_every_group() {
    let open = AuthPolicy::default();
    let ok = headers(&[
        (header::HOST, "127.0.0.1:9"),
        (header::ORIGIN, "http://localhost:3000"),
    ]);
    let rebound = headers(&[(header::HOST, "attacker.example")]);
    let cross_site = headers(&[
        (header::HOST, "127.0.0.1"),
        (header::ORIGIN, "https://evil.example"),
    ]);
    let null_origin = headers(&[(header::HOST, "127.0.0.1"), (header::ORIGIN, "null")]);
    for need in [Need::Open, Need::Read, Need::Write, Need::Socket] {
        assert!(admit(&open, need, &Method::POST, &ok).is_ok());
        for bad in [&rebound, &cross_site, &null_origin] {
            let mut bad = bad.clone();
            bad.insert(header::UPGRADE, "websocket".parse().unwrap());
            assert_eq!(
                status(admit(&open, need, &Method::GET, &bad)),
                StatusCode::FORBIDDEN
            );
        }
    }
    assert_eq!(
        admit(&open, Need::Socket, &Method::GET, &ok).unwrap(),
        Admission::Socket(Gate::Verified(Access::ReadWrite))
    );
}

#[test]
fn each_group_admits_what_it_needs() {
    use Admission::{Caller, Socket};
    let policy = AuthPolicy::new(Some("rw".into()), Some("ro".into()));
    let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
    let none = HeaderMap::new();
    let upgrade = headers(&[(header::UPGRADE, "websocket")]);
    let mut wrong_upgrade = bearer("nope");
    wrong_upgrade.insert(header::UPGRADE, "websocket".parse().unwrap());
    let basic = headers(&[(header::AUTHORIZATION, "Basic cnc6cnc=")]);
    let (get, post) = (&Method::GET, &Method::POST);
    let admit = |need, method, headers: &HeaderMap| admit(&policy, need, method, headers);
    #[rustfmt::skip]
    let cases: [(Need, &Method, &HeaderMap, Result<Admission, StatusCode>); 20] = [
        (Need::Open, get, &none, Ok(Caller(Access::ReadOnly))),
        (Need::Open, get, &bearer("nope"), Ok(Caller(Access::ReadOnly))),
        (Need::Read, get, &bearer("ro"), Ok(Caller(Access::ReadOnly))),
        (Need::Read, get, &bearer("rw"), Ok(Caller(Access::ReadWrite))),
        (Need::Read, get, &none, Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, get, &upgrade, Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, get, &bearer("nope"), Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, get, &basic, Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, post, &bearer("ro"), Err(StatusCode::FORBIDDEN)),
        (Need::Write, post, &bearer("rw"), Ok(Caller(Access::ReadWrite))),
        (Need::Write, post, &bearer("ro"), Err(StatusCode::FORBIDDEN)),
        (Need::Write, get, &bearer("ro"), Err(StatusCode::FORBIDDEN)),
        (Need::Write, post, &none, Err(StatusCode::UNAUTHORIZED)),
        (Need::Write, post, &upgrade, Err(StatusCode::UNAUTHORIZED)),
        (Need::Socket, get, &upgrade, Ok(Socket(Gate::FirstMessage))),
        (Need::Socket, get, &bearer("ro"), Ok(Socket(Gate::Verified(Access::ReadOnly)))),
        (Need::Socket, get, &bearer("rw"), Ok(Socket(Gate::Verified(Access::ReadWrite)))),
        (Need::Socket, get, &none, Err(StatusCode::UNAUTHORIZED)),
        (Need::Socket, get, &wrong_upgrade, Err(StatusCode::UNAUTHORIZED)),
        (Need::Socket, get, &basic, Err(StatusCode::UNAUTHORIZED)),
    ];
    for (need, method, headers, want) in cases {
        let got = admit(need, method, headers).map_err(|e| e.status());
        assert_eq!(got, want, "{need:?} {method} {headers:?}");
    }
    assert_eq!(policy.access_for("ro"), Some(Access::ReadOnly));
    assert_eq!(policy.access_for("r"), None);
}

#[test]
fn debug_masks_the_tokens() {
    let policy = AuthPolicy::new(Some("s3cret".into()), Some("r3ad".into()));
    let shown = format!("{policy:?}");
    assert!(
        !shown.contains("s3cret") && !shown.contains("r3ad"),
        "{shown}"
    );
}
