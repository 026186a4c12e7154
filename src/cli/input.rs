//! `send`, `keys`, `resize`, `thought`: what changes a session.

use reqwest::Method;
use serde_json::{Value, json};

use super::args::{KeysArgs, QueueWhen, ResizeArgs, SendArgs, ThoughtArgs};
use super::client::{Client, ClientError, encode};
use super::output::{print_either, table, text};
use super::resolve::session_id;
use super::sessions::print_session;

pub async fn send(client: &Client, args: SendArgs) -> Result<(), ClientError> {
    let when = match args.when {
        Some(QueueWhen::Idle) => "idle",
        Some(QueueWhen::Waiting) => "waiting",
        None => when(args.when_idle),
    };
    let body = json!({
        "text": args.text,
        "submit": args.enter,
        "when": when,
    });
    input(client, &args.target.session, &body, args.format.json).await
}

pub async fn keys(client: &Client, args: KeysArgs) -> Result<(), ClientError> {
    let body = json!({ "keys": args.keys, "when": when(args.when_idle) });
    input(client, &args.target.session, &body, args.format.json).await
}

fn when(idle: bool) -> &'static str {
    if idle { "idle" } else { "now" }
}

async fn input(
    client: &Client,
    session: &str,
    body: &Value,
    json: bool,
) -> Result<(), ClientError> {
    let id = session_id(client, session).await?;
    let path = format!("/v1/sessions/{}/input", encode(&id));
    let outcome = client.request(Method::POST, &path, Some(body)).await?;
    print_either(json, &outcome, |o| {
        let what = match (o["queued"].as_bool(), body["when"].as_str()) {
            (Some(true), Some(when)) => format!("queued until {when}"),
            _ => "typed".to_owned(),
        };
        table(["ID", "INPUT"], &[[id.clone(), what]])
    })
}

pub async fn resize(client: &Client, args: ResizeArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let (cols, rows) = args.size;
    let path = format!("/v1/sessions/{}/resize", encode(&id));
    let body = json!({ "cols": cols, "rows": rows });
    let resized = client.request(Method::POST, &path, Some(&body)).await?;
    print_session(&resized, false, args.format.json)
}

pub async fn thought(client: &Client, args: ThoughtArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mut body = json!({ "text": args.text });
    if let Some(state) = args.state {
        body["state"] = json!(state);
    }
    let path = format!("/v1/sessions/{}/thought", encode(&id));
    let answer = client.request(Method::PUT, &path, Some(&body)).await?;
    print_either(args.format.json, &answer, |a| {
        let applied = if a["applied"].as_bool() == Some(false) {
            "no (a newer thought is stored)"
        } else {
            "yes"
        };
        let row = [text(&a["session_id"]).to_owned(), applied.to_owned()];
        table(["ID", "APPLIED"], &[row])
    })
}
