//! `tmuxd open`: a one-time link that logs a browser into the dashboard.
//! The code rides in the link's fragment, which a browser never sends to a
//! server, and works once, for a minute; the page trades it for a
//! credential of its own, so the long-lived token never appears in a URL.
//! The link is built here, from the code, on the daemon this CLI reached
//! (see [`login_link`]): the daemon's answer never picks what a browser opens.

use std::io::IsTerminal;
use std::process::{Command, Stdio};

use reqwest::{Method, Url};

use super::args::OpenArgs;
use super::client::{Client, ClientError};
use super::output::{print, visible};
use crate::wire::LoginCode;

pub async fn open(client: &Client, args: OpenArgs) -> Result<(), ClientError> {
    let login: LoginCode = client
        .request(Method::POST, "/v1/login/code", None::<&()>)
        .await?;
    let origin = match client.socket() {
        None => client.base().clone(),
        Some(_) => origin_of(&login.url)?,
    };
    let link = login_link(&origin, &login.code)?;
    print(&format!("{link}\n"))?;
    let graphical = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
    if !args.print && graphical && std::io::stdout().is_terminal() {
        // Best effort: the link is printed either way.
        let started = Command::new("xdg-open")
            .arg(&link)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Ok(mut child) = started {
            let _ = tokio::task::spawn_blocking(move || child.wait()).await;
        }
    }
    Ok(())
}

/// The dashboard of the daemon at `origin` (its scheme, host, port and
/// path), with the one-time code in the fragment. A code that is not a
/// plain token is refused rather than put in a link.
fn login_link(origin: &Url, code: &str) -> Result<String, ClientError> {
    let plain = !code.is_empty()
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !plain {
        return Err(ClientError::Protocol(format!(
            "the login code {} is not one tmuxd makes",
            visible(code)
        )));
    }
    let mut link = origin.clone();
    link.set_query(None);
    link.set_fragment(None);
    let base = link.as_str().trim_end_matches('/');
    Ok(format!("{base}/#login={code}"))
}

/// Over the unix socket the CLI does not know the daemon's TCP address,
/// and the daemon (ours: the socket is checked) says it in its link: only
/// its `http://HOST:PORT` is kept, nothing of its path, user or query.
fn origin_of(url: &str) -> Result<Url, ClientError> {
    let bad = || {
        ClientError::Protocol(format!(
            "the daemon's dashboard {} is not an http://HOST:PORT address",
            visible(url)
        ))
    };
    let parsed = Url::parse(url).map_err(|_| bad())?;
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(bad)?;
    if parsed.scheme() != "http" {
        return Err(bad());
    }
    let origin = match parsed.port() {
        Some(port) => format!("http://{host}:{port}/"),
        None => format!("http://{host}/"),
    };
    Url::parse(&origin).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_built_here_from_the_code() {
        let base = Url::parse("http://127.0.0.1:7420/").unwrap();
        assert_eq!(
            login_link(&base, "abc123").unwrap(),
            "http://127.0.0.1:7420/#login=abc123"
        );
        let prefixed = Url::parse("http://h:1/tmuxd/?x=1").unwrap();
        assert_eq!(
            login_link(&prefixed, "c").unwrap(),
            "http://h:1/tmuxd/#login=c"
        );
        for code in ["", "a b", "x#y", "x\x1b]52;c;", "a/../b"] {
            assert!(login_link(&base, code).is_err(), "{code:?}");
        }
    }

    #[test]
    fn over_the_socket_only_the_daemons_origin_is_kept() {
        let origin = origin_of("http://127.0.0.1:7420/#login=abc").unwrap();
        assert_eq!(origin.as_str(), "http://127.0.0.1:7420/");
        let origin = origin_of("http://user:pw@[::1]:9/evil/path?q#f").unwrap();
        assert_eq!(origin.as_str(), "http://[::1]:9/");
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "nope",
            "https://x/",
        ] {
            assert!(origin_of(bad).is_err(), "{bad}");
        }
    }
}
