//! `queue ls` and `queue rm`: the inputs queued for a session.

use reqwest::Method;

use super::args::{QueueRmArgs, ShowArgs};
use super::client::{Client, ClientError, encode};
use super::output::{one_line, print_either, table};
use super::resolve::session_id;
use super::sessions::wire_word;
use crate::wire::{QueueCancelled, QueueList};

/// Longest text shown in a table cell.
const TEXT_WIDTH: usize = 60;

pub async fn ls(client: &Client, args: ShowArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let body: QueueList = client
        .get(&format!("/v1/sessions/{}/input/queue", encode(&id)))
        .await?;
    print_either(args.format.json, &body, |body| {
        let rows: Vec<[String; 4]> = body
            .items
            .iter()
            .map(|item| {
                let typing = if item.started { "typing" } else { "queued" };
                [
                    item.id.to_string(),
                    wire_word(&item.when),
                    typing.to_owned(),
                    one_line(&item.text, TEXT_WIDTH),
                ]
            })
            .collect();
        table(["N", "WHEN", "STATUS", "TEXT"], &rows)
    })
}

pub async fn rm(client: &Client, args: QueueRmArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let path = format!("/v1/sessions/{}/input/queue/{}", encode(&id), args.number);
    let body: QueueCancelled = client.request(Method::DELETE, &path, None::<&()>).await?;
    print_either(args.format.json, &body, |body| {
        let item = &body.cancelled;
        let row = [
            id.clone(),
            item.id.to_string(),
            one_line(&item.text, TEXT_WIDTH),
        ];
        table(["ID", "CANCELLED", "TEXT"], &[row])
    })
}
