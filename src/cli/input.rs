//! `send`, `keys`, `resize`, `thought`: what changes a session.

use reqwest::Method;

use super::args::{KeysArgs, QueueWhen, ResizeArgs, SendArgs, ThoughtArgs};
use super::client::{Client, ClientError, encode};
use super::output::{print_either, table};
use super::resolve::session_id;
use super::sessions::{print_session, wire_word};
use crate::wire::{
    InputRequest, InputResponse, ResizeRequest, SessionEnvelope, ThoughtRequest, ThoughtResponse,
    When,
};

pub async fn send(client: &Client, args: SendArgs) -> Result<(), ClientError> {
    let when = match args.when {
        Some(QueueWhen::Idle) => When::Idle,
        Some(QueueWhen::Waiting) => When::Waiting,
        None => when(args.when_idle),
    };
    let body = InputRequest {
        text: Some(args.text),
        submit: args.enter,
        when,
        ..InputRequest::default()
    };
    input(client, &args.target.session, &body, args.format.json).await
}

pub async fn keys(client: &Client, args: KeysArgs) -> Result<(), ClientError> {
    let body = InputRequest {
        keys: args.keys,
        when: when(args.when_idle),
        ..InputRequest::default()
    };
    input(client, &args.target.session, &body, args.format.json).await
}

fn when(idle: bool) -> When {
    if idle { When::Idle } else { When::Now }
}

async fn input(
    client: &Client,
    session: &str,
    body: &InputRequest,
    json: bool,
) -> Result<(), ClientError> {
    let id = session_id(client, session).await?;
    let path = format!("/v1/sessions/{}/input", encode(&id));
    let outcome: InputResponse = client.request(Method::POST, &path, Some(body)).await?;
    print_either(json, &outcome, |o| {
        let what = if o.queued {
            format!("queued until {}", wire_word(&body.when))
        } else {
            "typed".to_owned()
        };
        table(["ID", "INPUT"], &[[id.clone(), what]])
    })
}

pub async fn resize(client: &Client, args: ResizeArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let (cols, rows) = args.size;
    let path = format!("/v1/sessions/{}/resize", encode(&id));
    let body = ResizeRequest { cols, rows };
    let resized: SessionEnvelope = client.request(Method::POST, &path, Some(&body)).await?;
    print_session(&resized, false, args.format.json)
}

pub async fn thought(client: &Client, args: ThoughtArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let body = ThoughtRequest {
        text: args.text,
        state: args.state,
        tokens_in: None,
        tokens_out: None,
        updated_at: None,
    };
    let path = format!("/v1/sessions/{}/thought", encode(&id));
    let answer: ThoughtResponse = client.request(Method::PUT, &path, Some(&body)).await?;
    print_either(args.format.json, &answer, |a| {
        let applied = if a.applied {
            "yes"
        } else {
            "no (a newer thought is stored)"
        };
        let row = [a.session_id.to_string(), applied.to_owned()];
        table(["ID", "APPLIED"], &[row])
    })
}
