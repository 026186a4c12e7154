//! `snap` and `scrollback`: a session's screen and history as lines.

use serde_json::Value;

use super::args::{Pane, ScrollbackArgs, SnapArgs};
use super::client::{Client, ClientError, encode};
use super::output::{print_either, text};
use super::resolve::session_id;

pub async fn snap(client: &Client, args: SnapArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mut path = format!("/v1/sessions/{}/snapshot", encode(&id));
    path.push_str(if args.ansi {
        "?format=ansi"
    } else {
        "?format=text"
    });
    if args.pane == Pane::Active {
        path.push_str("&pane=active");
    }
    let snapshot = client.get(&path).await?;
    print_lines(args.format.json, &snapshot)
}

pub async fn scrollback(client: &Client, args: ScrollbackArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mut path = format!("/v1/sessions/{}/scrollback", encode(&id));
    if let Some(lines) = args.lines {
        path.push_str(&format!("?lines={lines}"));
    }
    let body = client.get(&path).await?;
    print_lines(args.format.json, &body)
}

/// The body's `lines`, one per line of output.
fn print_lines(json: bool, body: &Value) -> Result<(), ClientError> {
    if !json && !body["lines"].is_array() {
        return Err(ClientError::Protocol(format!("no lines in {body}")));
    }
    print_either(json, body, |body| {
        let lines = body["lines"].as_array().map_or(&[][..], Vec::as_slice);
        lines.iter().map(|l| format!("{}\n", text(l))).collect()
    })
}
