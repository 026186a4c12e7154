//! `tmuxd open`: a one-time link that logs a browser into the dashboard.
//! The code rides in the link's fragment, which a browser never sends to a
//! server, and works once, for a minute; the page trades it for a
//! credential of its own, so the long-lived token never appears in a URL.

use std::io::IsTerminal;
use std::process::{Command, Stdio};

use reqwest::Method;

use super::args::OpenArgs;
use super::client::{Client, ClientError};
use super::output::print;
use crate::api::model::LoginCode;

pub async fn open(client: &Client, args: OpenArgs) -> Result<(), ClientError> {
    let login: LoginCode = client
        .request(Method::POST, "/v1/login/code", None::<&()>)
        .await?;
    print(&format!("{}\n", login.url))?;
    let graphical = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
    if !args.print && graphical && std::io::stdout().is_terminal() {
        // Best effort: the link is printed either way.
        let started = Command::new("xdg-open")
            .arg(&login.url)
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
