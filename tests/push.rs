//! Web Push and ntfy (issue 33) against fake services on loopback: the
//! push tmuxd sends is opened with the subscription's keys (RFC 8291, the
//! browser's side written here) and its VAPID token verified under the
//! key the page subscribed with (RFC 8292); an answer is typed only while
//! the attention it answers is up; a gone subscription is removed; a
//! restart pushes nothing again; ntfy gets an Open link to the session.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{Daemon, DaemonOptions, TmuxServer, wait_for};
use hkdf::Hkdf;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{PublicKey, SecretKey};
use serde_json::{Value, json};
use sha2::Sha256;

/// One request a fake service got: its path, headers (lowercase names)
/// and body.
struct Received {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }
}

/// A loopback HTTP server answering `status(path)`; each request goes over
/// the channel. Returns its base URL.
fn fake_service(status: fn(&str) -> u16) -> (String, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let path = request_line.split(' ').nth(1).unwrap_or("").to_owned();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                }
            }
            let length = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let code = status(&path);
            let answer =
                format!("HTTP/1.1 {code} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes());
            let _ = tx.send(Received {
                path,
                headers,
                body,
            });
        }
    });
    (base, rx)
}

fn created_or_gone(path: &str) -> u16 {
    if path.contains("gone") { 410 } else { 201 }
}

/// A browser's side of a subscription: its key pair and auth secret.
struct Browser {
    key: SecretKey,
    auth: [u8; 16],
}

impl Browser {
    fn new() -> Browser {
        let mut auth = [0u8; 16];
        rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut auth);
        Browser {
            key: SecretKey::random(&mut rand_core::OsRng),
            auth,
        }
    }

    /// `PushSubscription.toJSON()` for `endpoint`.
    fn subscription(&self, endpoint: &str) -> Value {
        let public = self.key.public_key().to_encoded_point(false);
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(public.as_bytes()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            },
        })
    }

    /// Opens an `aes128gcm` body as a browser does (RFC 8291 section 3.4).
    fn decrypt(&self, body: &[u8]) -> Vec<u8> {
        use aes_gcm::aead::{AeadInPlace, KeyInit};
        let salt = &body[..16];
        let record_size = u32::from_be_bytes(body[16..20].try_into().unwrap());
        assert_eq!(record_size, 4096);
        let key_len = body[20] as usize;
        assert_eq!(key_len, 65, "the sender's key is an uncompressed point");
        let sender_bytes = &body[21..21 + key_len];
        let sender = PublicKey::from_sec1_bytes(sender_bytes).unwrap();
        let shared = p256::ecdh::diffie_hellman(self.key.to_nonzero_scalar(), sender.as_affine());
        let mut info = b"WebPush: info\0".to_vec();
        info.extend_from_slice(self.key.public_key().to_encoded_point(false).as_bytes());
        info.extend_from_slice(sender_bytes);
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(&self.auth), shared.raw_secret_bytes())
            .expand(&info, &mut ikm)
            .unwrap();
        let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let (mut cek, mut nonce) = ([0u8; 16], [0u8; 12]);
        prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .unwrap();
        prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
            .unwrap();
        let mut record = body[21 + key_len..].to_vec();
        aes_gcm::Aes128Gcm::new(&cek.into())
            .decrypt_in_place(aes_gcm::Nonce::from_slice(&nonce), b"", &mut record)
            .expect("the record opens with the subscription's keys");
        assert_eq!(record.pop(), Some(2), "one record, the last");
        record
    }
}

/// Checks the push's VAPID `Authorization` (RFC 8292): signed ES256 by the
/// key tmuxd publishes, for the push service's origin, not expired.
fn check_vapid(push: &Received, public_key: &str, service: &str) {
    let header = push.header("authorization").expect("a VAPID Authorization");
    let (token, k) = header
        .strip_prefix("vapid t=")
        .and_then(|rest| rest.split_once(", k="))
        .unwrap_or_else(|| panic!("not `vapid t=..., k=...`: {header}"));
    assert_eq!(k, public_key, "k is the key the page subscribed with");
    let (signed, signature) = token.rsplit_once('.').unwrap();
    let key = VerifyingKey::from_sec1_bytes(&URL_SAFE_NO_PAD.decode(k).unwrap()).unwrap();
    let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap()).unwrap();
    key.verify(signed.as_bytes(), &signature)
        .expect("the JWT verifies under k");
    let part = |n: usize| -> Value {
        let text = URL_SAFE_NO_PAD
            .decode(signed.split('.').nth(n).unwrap())
            .unwrap();
        serde_json::from_slice(&text).unwrap()
    };
    assert_eq!(part(0), json!({"typ": "JWT", "alg": "ES256"}));
    let claims = part(1);
    assert_eq!(claims["aud"], service);
    let exp = claims["exp"].as_i64().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        exp > now && exp <= now + 24 * 3600,
        "exp within a day: {claims}"
    );
    assert!(claims["sub"].as_str().unwrap().starts_with("mailto:"));
    assert_eq!(push.header("content-encoding"), Some("aes128gcm"));
    assert!(push.header("ttl").is_some_and(|t| t.parse::<u32>().is_ok()));
}

fn next(rx: &mpsc::Receiver<Received>) -> Received {
    rx.recv_timeout(common::PATIENCE).expect("a push")
}

/// A session tmuxd started that asks a question: attention at once.
const ASKER: &str = r#"bash --norc -c 'read -p "Proceed? [y/N] " a; echo "answered-$a"; exec cat'"#;

fn file_mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_push_opens_with_the_subscription_keys_is_signed_and_its_answer_is_typed_once() {
    let tmux = TmuxServer::new();
    let (service, pushes) = fake_service(created_or_gone);
    let daemon = Daemon::start(&tmux);
    let (status, info) = daemon.get("/v1/push");
    assert_eq!(status, 200, "{info}");
    let public_key = info["public_key"].as_str().unwrap().to_owned();
    assert_eq!(file_mode(&daemon.data_dir.join("push-vapid.key")), 0o600);

    let browser = Browser::new();
    let endpoint = format!("{service}/push/browser-1");
    let (status, body) = daemon.post("/v1/push/subscriptions", &browser.subscription(&endpoint));
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        file_mode(&daemon.data_dir.join("push-subscriptions.json")),
        0o600
    );

    let session = daemon.create(&json!({ "name": "build", "command": ASKER }));
    let id = session["session_id"].as_str().unwrap().to_owned();
    let push = next(&pushes);
    assert_eq!(push.path, "/push/browser-1");
    check_vapid(&push, &public_key, &service);
    let message: Value = serde_json::from_slice(&browser.decrypt(&push.body)).unwrap();
    assert_eq!(message["trigger"], "attention", "{message}");
    assert_eq!(message["session_id"], id.as_str());
    assert_eq!(message["name"], "build");
    assert_eq!(
        message["body"],
        format!("build ({id}) asks: Proceed? [y/N]")
    );
    assert_eq!(message["url"], format!("/#/s/{id}"));
    let titles: Vec<&str> = message["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["y", "n"]);
    assert!(
        !message.to_string().contains("screen"),
        "never the screen: {message}"
    );
    let since = message["since"].as_str().unwrap().to_owned();

    // The answer a notification's `y` sends.
    let answer = json!({ "since": since, "text": "y", "keys": ["Enter"] });
    let (status, body) = daemon.post(&format!("/v1/sessions/{id}/answer"), &answer);
    assert_eq!((status.as_u16(), &body), (200, &json!({"typed": true})));
    tmux.wait_for_text("build", "answered-y");
    // An event says who acknowledged it.
    daemon.events_once("the acknowledgement's event", |events| {
        events
            .iter()
            .any(|e| e["session_id"] == id.as_str() && e["acknowledged_by"] == "push_action")
    });

    // The same answer again (a second tap, a second phone): nothing typed.
    let (status, body) = daemon.post(&format!("/v1/sessions/{id}/answer"), &answer);
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "conflict");
    let said = body["error"]["message"].as_str().unwrap();
    assert!(
        said.contains("moved on") && said.contains("nothing was typed"),
        "{said}"
    );
    // Input is typed in order: the marker's echo comes after anything the
    // stale answer could have typed.
    let (status, _) = daemon.post(
        &format!("/v1/sessions/{id}/input"),
        &json!({ "text": "MARK", "submit": true }),
    );
    assert_eq!(status, 200);
    tmux.wait_for_text("build", "MARK");
    let screen = tmux.capture("build");
    let after: Vec<&String> = screen
        .iter()
        .skip_while(|l| !l.contains("answered-y"))
        .skip(1)
        .take_while(|l| !l.contains("MARK"))
        .collect();
    assert!(after.is_empty(), "the stale answer typed: {screen:?}");

    // Bad answers change nothing.
    for (body, want) in [
        (json!({ "since": since }), 400),
        (json!({ "since": "yesterday", "text": "y" }), 400),
        (
            json!({ "since": since, "text": "y", "keys": ["NoSuchKey"] }),
            400,
        ),
        (json!({ "since": since, "text": "y", "extra": 1 }), 400),
    ] {
        let (status, answer) = daemon.post(&format!("/v1/sessions/{id}/answer"), &body);
        assert_eq!(status.as_u16(), want, "{body} -> {answer}");
    }
    let (status, _) = daemon.post(
        "/v1/sessions/sess_999/answer",
        &json!({ "since": since, "text": "y" }),
    );
    assert_eq!(status, 404);
}

/// A push service's 410 removes the subscription; a hostile or broken
/// subscription is refused and changes nothing; a page's logout takes its
/// subscriptions with it.
#[test]
fn subscriptions_are_checked_pruned_and_end_with_their_credential() {
    let tmux = TmuxServer::new();
    let (service, pushes) = fake_service(created_or_gone);
    let daemon = Daemon::start(&tmux);
    let count = || daemon.get("/v1/push").1["subscriptions"].as_u64().unwrap();
    let (live, gone) = (Browser::new(), Browser::new());
    for (browser, path) in [(&live, "live"), (&gone, "gone")] {
        let subscription = browser.subscription(&format!("{service}/push/{path}"));
        let (status, body) = daemon.post("/v1/push/subscriptions", &subscription);
        assert_eq!(status, 201, "{body}");
    }
    assert_eq!(count(), 2);

    // Refused, and nothing kept.
    let mut bad_key = live.subscription("https://push.example/x");
    bad_key["keys"]["p256dh"] = json!(URL_SAFE_NO_PAD.encode([4u8; 65]));
    let refused = [
        live.subscription("http://push.example/not-https"),
        live.subscription("file:///etc/passwd"),
        bad_key,
        json!({ "endpoint": "https://push.example/x" }),
        json!({ "endpoint": "https://push.example/x", "keys": { "p256dh": "AA", "auth": "AA" }, "more": 1 }),
    ];
    for subscription in refused {
        let (status, body) = daemon.post("/v1/push/subscriptions", &subscription);
        assert_eq!(status, 400, "{subscription} -> {body}");
    }
    assert_eq!(count(), 2);

    // Without a credential, or from another origin: refused.
    let http = reqwest::blocking::Client::new();
    let url = format!("{}/v1/push/subscriptions", daemon.base);
    let anonymous = http
        .post(&url)
        .json(&live.subscription(&format!("{service}/push/x")));
    assert_eq!(anonymous.send().unwrap().status(), 401);
    let foreign = daemon
        .authorize(http.post(&url))
        .header("Origin", "http://evil.example")
        .json(&live.subscription(&format!("{service}/push/x")));
    assert_eq!(foreign.send().unwrap().status(), 403);
    assert_eq!(count(), 2);

    tmux.new_shell("bell");
    let id = wait_for("bell tracked", || {
        let sessions = daemon.sessions();
        let found = sessions.iter().find(|s| s["tmux_name"] == "bell");
        found.map(|s| s["session_id"].as_str().unwrap().to_owned())
    });
    daemon.wait_until(&id, "idle");
    tmux.send_keys("bell", &["printf '\\a'", "Enter"]);
    let mut paths = vec![next(&pushes).path, next(&pushes).path];
    paths.sort();
    assert_eq!(paths, ["/push/gone", "/push/live"]);
    // Counted in memory first, then written.
    let file = wait_for("the gone subscription removed", || {
        let file =
            std::fs::read_to_string(daemon.data_dir.join("push-subscriptions.json")).unwrap();
        (count() == 1 && !file.contains("/push/gone")).then_some(file)
    });
    assert!(file.contains("/push/live"), "{file}");

    // A page's credential: its subscription goes when it logs out.
    let (_, code) = daemon.post("/v1/login/code", &json!({}));
    let login = http
        .post(format!("{}/v1/login", daemon.base))
        .json(&json!({ "code": code["code"] }))
        .send()
        .unwrap();
    let credential = login.json::<Value>().unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = Browser::new();
    let subscribed = http
        .post(&url)
        .bearer_auth(&credential)
        .json(&page.subscription(&format!("{service}/push/page")))
        .send()
        .unwrap();
    assert_eq!(subscribed.status(), 201);
    assert_eq!(count(), 2);
    // Another credential cannot remove it; the page's logout does.
    let (_, removed) = daemon.post(
        "/v1/push/unsubscribe",
        &json!({ "endpoint": "https://push.example/none" }),
    );
    assert_eq!(removed["removed"], false);
    let logout = http
        .post(format!("{}/v1/logout", daemon.base))
        .bearer_auth(&credential)
        .send()
        .unwrap();
    assert_eq!(logout.status(), 200);
    assert_eq!(count(), 1);
    let file = std::fs::read_to_string(daemon.data_dir.join("push-subscriptions.json")).unwrap();
    assert!(!file.contains("/push/page"), "{file}");
    assert!(!file.contains(&credential), "never the credential itself");
}

/// Issue 19's restart test, for pushes: attention up on three sessions,
/// the daemon restarted twice, and not one push again.
#[test]
fn a_restart_pushes_nothing_again() {
    let tmux = TmuxServer::new();
    let data = tempfile::tempdir().unwrap();
    let (service, pushes) = fake_service(created_or_gone);
    let options = || DaemonOptions {
        extra_config: "[notify]\ncooldown_s = 3600\n".to_owned(),
        ..DaemonOptions::in_dir(data.path())
    };
    let browser = Browser::new();
    let mut daemon = Daemon::start_with(&tmux, options());
    let (status, _) = daemon.post(
        "/v1/push/subscriptions",
        &browser.subscription(&format!("{service}/push/b")),
    );
    assert_eq!(status, 201);
    let pushed =
        |push: Received| -> Value { serde_json::from_slice(&browser.decrypt(&push.body)).unwrap() };
    let mut ids = Vec::new();
    for n in 0..3 {
        let name = format!("a{n}");
        let id = daemon.create_named(&name, common::SHELL);
        daemon.wait_until(&id, "idle");
        tmux.send_keys(&name, &["printf '\\a'", "Enter"]);
        let message = pushed(next(&pushes));
        assert_eq!(message["session_id"], id.as_str(), "{message}");
        ids.push(id);
    }
    for restart in 0..2 {
        daemon.terminate();
        daemon = Daemon::start_with(&tmux, options());
        wait_for("the sessions back with attention up", || {
            let sessions = daemon.sessions();
            let up = sessions
                .iter()
                .filter(|s| ids.iter().any(|id| s["session_id"] == id.as_str()))
                .filter(|s| !s["attention"].is_null())
                .count();
            (up == 3).then_some(())
        });
        let name = format!("m{restart}");
        let marker = daemon.create_named(&name, common::SHELL);
        daemon.wait_until(&marker, "idle");
        tmux.send_keys(&name, &["printf '\\a'", "Enter"]);
        // The notifier goes in event order: anything it would re-send for
        // the three comes before the marker's push.
        let message = pushed(next(&pushes));
        assert_eq!(
            message["session_id"],
            marker.as_str(),
            "restart {restart} re-sent: {message}"
        );
        assert!(pushes.recv_timeout(Duration::from_millis(300)).is_err());
    }
}

/// ntfy gets the same line, with a click and an Open button to the
/// session's page at `notify.page_url`, and the token as a bearer header.
#[test]
fn ntfy_gets_the_line_and_a_link_to_the_session() {
    let tmux = TmuxServer::new();
    let (server, published) = fake_service(|_| 200);
    let config = format!(
        "[notify]\npage_url = \"https://box.tailnet.example:7420/\"\nweb_push = false\n\
         ntfy = {{ url = {server:?}, topic = \"tmuxd-test\", token = \"tk_test_token\" }}\n"
    );
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            extra_config: config,
            ..Default::default()
        },
    );
    let (status, _) = daemon.get("/v1/push");
    assert_eq!(status, 404, "web push is off");
    let session = daemon.create(&json!({ "name": "build", "command": ASKER }));
    let id = session["session_id"].as_str().unwrap();
    let request = next(&published);
    assert_eq!(request.path, "/");
    assert_eq!(
        request.header("authorization"),
        Some("Bearer tk_test_token")
    );
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    let page = format!("https://box.tailnet.example:7420/#/s/{id}");
    assert_eq!(body["topic"], "tmuxd-test");
    assert_eq!(
        body["message"],
        format!("build ({id}) asks: Proceed? [y/N]")
    );
    assert!(
        body["title"].as_str().unwrap().starts_with("build on "),
        "{body}"
    );
    assert_eq!(body["click"], page.as_str());
    assert_eq!(
        body["actions"],
        json!([{ "action": "view", "label": "Open", "url": page, "clear": true }])
    );
}
