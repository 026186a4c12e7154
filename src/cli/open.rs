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
    let origin = match (&args.base, client.socket()) {
        (Some(base), _) => page_base(base)?,
        (None, None) => client.base().clone(),
        (None, Some(_)) => origin_of(&login.url)?,
    };
    let link = login_link(&origin, &login.code)?;
    print(&format!("{link}\n"))?;
    if args.qr {
        print(&qr_code(&link)?)?;
        return Ok(());
    }
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

/// `--base`: an http(s) URL without credentials, its path kept.
fn page_base(base: &str) -> Result<Url, ClientError> {
    let parsed = Url::parse(base).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host_str().is_some_and(|h| !h.is_empty())
            && u.username().is_empty()
            && u.password().is_none()
    });
    parsed.ok_or_else(|| {
        ClientError::Usage(format!(
            "--base {} is not an http:// or https:// URL without a user or password",
            visible(base)
        ))
    })
}

/// The link as a QR code in text: two modules per character cell (upper
/// and lower half blocks), the light modules drawn, so that on a terminal's
/// usual light-on-dark a camera sees dark modules on a light quiet zone.
fn qr_code(link: &str) -> Result<String, ClientError> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::new(link.as_bytes())
        .map_err(|e| ClientError::Protocol(format!("cannot make a QR code of the link: {e}")))?;
    let text = code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build();
    Ok(format!("{text}\n"))
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

    /// The text's cells are the QR code's modules, two per character: a
    /// drawn half is a light module (a terminal draws in its light
    /// foreground on its dark background), inside a 4-module quiet zone.
    #[test]
    fn the_qr_code_is_the_link() {
        let link = "https://box.tailnet.example:7420/#login=0123456789abcdef0123456789abcdef";
        let text = qr_code(link).unwrap();
        let code = qrcode::QrCode::new(link.as_bytes()).unwrap();
        let (width, colors) = (code.width(), code.to_colors());
        let dark = |x: usize, y: usize| {
            let inside = (4..width + 4).contains(&x) && (4..width + 4).contains(&y);
            inside && colors[(y - 4) * width + (x - 4)] == qrcode::Color::Dark
        };
        let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
        assert_eq!(lines.len(), (width + 8).div_ceil(2));
        for (row, line) in lines.iter().enumerate() {
            assert_eq!(line.len(), width + 8, "the modules and the quiet zone");
            for (x, cell) in line.iter().enumerate() {
                // An odd last row's lower half is past the code: not drawn.
                let drawn = |y: usize| y < width + 8 && !dark(x, y);
                let (top, bottom) = (drawn(row * 2), drawn(row * 2 + 1));
                let want = match (top, bottom) {
                    (true, true) => '█',
                    (true, false) => '▀',
                    (false, true) => '▄',
                    (false, false) => ' ',
                };
                assert_eq!(*cell, want, "row {row} column {x}:\n{text}");
            }
        }
        assert!(page_base("https://box.tailnet.example:7420").is_ok());
        for bad in [
            "box:7420",
            "ftp://x/",
            "https://u:p@x/",
            "javascript:alert(1)",
        ] {
            assert!(page_base(bad).is_err(), "{bad}");
        }
        let base = page_base("https://box.example/tmuxd/").unwrap();
        assert_eq!(
            login_link(&base, "c").unwrap(),
            "https://box.example/tmuxd/#login=c"
        );
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
