use axum::http::StatusCode;

use super::*;

const RW: &str = "rw-token-rw-token-rw-token";
const RO: &str = "ro-token-ro-token-ro-token";

fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
    pairs
        .iter()
        .map(|(k, v)| (k.clone(), v.parse().unwrap()))
        .collect()
}

fn status(refusal: Refusal) -> StatusCode {
    match refusal {
        Refusal::WrongCredential(e) | Refusal::Other(e) => e.status(),
    }
}

const STRANGER: Peer = Peer::Tcp(IpAddr::V4(Ipv4Addr::LOCALHOST));

/// A runtime for the async exchange of a login code (its backoff sleeps).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn without_a_token_only_the_daemons_own_user_gets_in_unless_insecure() {
    let policy = AuthPolicy::new(Some(RW.into()), None, HostNames::default());
    let none = HeaderMap::new();
    for need in [Need::Read, Need::Write, Need::Socket] {
        let own = admit(&policy, need, Peer::OwnUser, &Method::POST, &none).unwrap();
        assert!(
            matches!(
                own,
                Admission::Caller(Access::ReadWrite)
                    | Admission::Socket(Gate::Verified(Access::ReadWrite))
            ),
            "{need:?}"
        );
        let stranger = admit(&policy, need, STRANGER, &Method::POST, &none).unwrap_err();
        assert_eq!(status(stranger), StatusCode::UNAUTHORIZED, "{need:?}");
    }
    let insecure = AuthPolicy::new(None, None, HostNames::default());
    let open = admit(&insecure, Need::Write, STRANGER, &Method::POST, &none).unwrap();
    assert_eq!(open, Admission::Caller(Access::ReadWrite));
}

#[test]
fn each_group_admits_what_it_needs() {
    use Admission::{Caller, Socket};
    let policy = AuthPolicy::new(Some(RW.into()), Some(RO.into()), HostNames::default());
    let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
    let none = HeaderMap::new();
    let upgrade = headers(&[(header::UPGRADE, "websocket")]);
    let mut wrong_upgrade = bearer("nope");
    wrong_upgrade.insert(header::UPGRADE, "websocket".parse().unwrap());
    let basic = headers(&[(header::AUTHORIZATION, "Basic cnc6cnc=")]);
    let (get, post) = (&Method::GET, &Method::POST);
    let admit = |need, method, headers: &HeaderMap| admit(&policy, need, STRANGER, method, headers);
    #[rustfmt::skip]
    let cases: [(Need, &Method, &HeaderMap, Result<Admission, StatusCode>); 20] = [
        (Need::Open, get, &none, Ok(Caller(Access::ReadOnly))),
        (Need::Open, get, &bearer("nope"), Ok(Caller(Access::ReadOnly))),
        (Need::Read, get, &bearer(RO), Ok(Caller(Access::ReadOnly))),
        (Need::Read, get, &bearer(RW), Ok(Caller(Access::ReadWrite))),
        (Need::Read, get, &none, Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, get, &upgrade, Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, get, &bearer("nope"), Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, get, &basic, Err(StatusCode::UNAUTHORIZED)),
        (Need::Read, post, &bearer(RO), Err(StatusCode::FORBIDDEN)),
        (Need::Write, post, &bearer(RW), Ok(Caller(Access::ReadWrite))),
        (Need::Write, post, &bearer(RO), Err(StatusCode::FORBIDDEN)),
        (Need::Write, get, &bearer(RO), Err(StatusCode::FORBIDDEN)),
        (Need::Write, post, &none, Err(StatusCode::UNAUTHORIZED)),
        (Need::Write, post, &upgrade, Err(StatusCode::UNAUTHORIZED)),
        (Need::Socket, get, &upgrade, Ok(Socket(Gate::FirstMessage))),
        (Need::Socket, get, &bearer(RO), Ok(Socket(Gate::Verified(Access::ReadOnly)))),
        (Need::Socket, get, &bearer(RW), Ok(Socket(Gate::Verified(Access::ReadWrite)))),
        (Need::Socket, get, &none, Err(StatusCode::UNAUTHORIZED)),
        (Need::Socket, get, &wrong_upgrade, Err(StatusCode::UNAUTHORIZED)),
        (Need::Socket, get, &basic, Err(StatusCode::UNAUTHORIZED)),
    ];
    for (need, method, headers, want) in cases {
        let got = admit(need, method, headers).map_err(status);
        assert_eq!(got, want, "{need:?} {method} {headers:?}");
    }
    assert_eq!(policy.access_for(RO), Some(Access::ReadOnly));
    assert_eq!(policy.access_for("r"), None);
}

#[test]
fn only_a_wrong_credential_is_slowed() {
    let policy = AuthPolicy::new(Some(RW.into()), None, HostNames::default());
    let wrong = headers(&[(header::AUTHORIZATION, "Bearer guess")]);
    let missing = HeaderMap::new();
    let refused = |h: &HeaderMap| admit(&policy, Need::Read, STRANGER, &Method::GET, h);
    assert!(matches!(refused(&wrong), Err(Refusal::WrongCredential(_))));
    assert!(matches!(refused(&missing), Err(Refusal::Other(_))));
}

#[test]
fn a_login_code_becomes_a_read_write_credential() {
    let policy = AuthPolicy::new(Some(RW.into()), None, HostNames::default());
    let code = policy.issue_login_code();
    assert_eq!(policy.access_for(&code), None, "a code is not a credential");
    let runtime = runtime();
    let metrics = Metrics::new();
    let credential = runtime
        .block_on(policy.exchange_login_code(&code, STRANGER, &metrics))
        .unwrap();
    assert_eq!(policy.access_for(&credential), Some(Access::ReadWrite));
    let again = runtime.block_on(policy.exchange_login_code(&code, STRANGER, &metrics));
    assert!(again.is_none(), "a code works once");
}

#[test]
fn a_page_credential_is_read_write_but_no_token_holder_and_can_end() {
    let policy = AuthPolicy::new(Some(RW.into()), None, HostNames::default());
    let code = policy.issue_login_code();
    let runtime = runtime();
    let metrics = Metrics::new();
    let credential = runtime
        .block_on(policy.exchange_login_code(&code, STRANGER, &metrics))
        .unwrap();
    let page = headers(&[(header::AUTHORIZATION, &format!("Bearer {credential}"))]);
    let admit = |need, method| admit(&policy, need, STRANGER, method, &page);
    assert_eq!(admit(Need::Write, &Method::POST).unwrap(), Admission::Page);
    assert_eq!(admit(Need::Read, &Method::GET).unwrap(), Admission::Page);
    assert_eq!(
        admit(Need::Socket, &Method::GET).unwrap(),
        Admission::Socket(Gate::Verified(Access::ReadWrite))
    );
    assert!(policy.end_page_credential(&PageCredential(credential.clone())));
    assert_eq!(policy.access_for(&credential), None, "ended");
    let refused = admit(Need::Read, &Method::GET).unwrap_err();
    assert_eq!(status(refused), StatusCode::UNAUTHORIZED);
    let token = PageCredential(RW.into());
    assert!(
        !policy.end_page_credential(&token),
        "the token is no page's"
    );
    assert_eq!(policy.access_for(RW), Some(Access::ReadWrite));
}

#[test]
fn debug_masks_the_tokens() {
    let policy = AuthPolicy::new(Some(RW.into()), Some(RO.into()), HostNames::default());
    let shown = format!("{policy:?}");
    assert!(!shown.contains(RW) && !shown.contains(RO), "{shown}");
}
