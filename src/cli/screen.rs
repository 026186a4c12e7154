//! `snap` and `scrollback`: a session's screen and history as lines.

use super::args::{Pane, ScrollbackArgs, SnapArgs};
use super::client::{Client, ClientError, encode};
use super::output::{print_either, visible};
use super::resolve::session_id;
use crate::wire::{ScrollbackResponse, Snapshot};

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
    let snapshot: Snapshot = client.get(&path).await?;
    match args.ansi {
        // What the session's terminal shows, colours included: asked for.
        true => print_either(args.format.json, &snapshot, |s| raw_lines(&s.lines)),
        false => print_either(args.format.json, &snapshot, |s| lines(&s.lines)),
    }
}

pub async fn scrollback(client: &Client, args: ScrollbackArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mut path = format!("/v1/sessions/{}/scrollback", encode(&id));
    if let Some(lines) = args.lines {
        path.push_str(&format!("?lines={lines}"));
    }
    let body: ScrollbackResponse = client.get(&path).await?;
    if let (false, Some(missing)) = (args.format.json, &body.missing) {
        let said = format!("{id} has ended and kept no history ({missing})");
        eprintln!("tmuxd: {}", visible(&said));
    }
    print_either(args.format.json, &body, |b| lines(&b.lines))
}

/// One line of output per line of the screen or history, made [`visible`].
fn lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{}\n", visible(l))).collect()
}

/// The lines of `--ansi`, escape sequences kept.
fn raw_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}
