//! `tmuxd restore [ID...]`: the sessions lost with their tmux server, made
//! again under their names and ids.

use reqwest::Method;

use super::args::RestoreArgs;
use super::client::{Client, ClientError};
use super::output::{print_either, table};
use crate::wire::{RestoreRequest, RestoreResponse};

/// Prints what was restored and what not; exits non-zero (1) when any
/// session could not be restored.
pub async fn restore(client: &Client, args: RestoreArgs) -> Result<(), ClientError> {
    let body = RestoreRequest {
        session_ids: (!args.ids.is_empty()).then_some(args.ids),
    };
    let outcome: RestoreResponse = client
        .request(Method::POST, "/v1/sessions/restore", Some(&body))
        .await?;
    print_either(args.format.json, &outcome, render)?;
    match outcome.failed.len() {
        0 => Ok(()),
        n => Err(ClientError::Stream(format!(
            "{n} session(s) could not be restored"
        ))),
    }
}

fn render(outcome: &RestoreResponse) -> String {
    if outcome.restored.is_empty() && outcome.failed.is_empty() {
        return "nothing to restore: no session was lost with its tmux server\n".to_owned();
    }
    let restored = outcome.restored.iter().map(|s| {
        [
            s.session_id.to_string(),
            s.tmux_name.clone(),
            "restored".to_owned(),
        ]
    });
    let failed = outcome.failed.iter().map(|f| {
        [
            f.session_id.clone(),
            f.tmux_name.clone(),
            format!("failed: {}", f.message),
        ]
    });
    let rows: Vec<[String; 3]> = restored.chain(failed).collect();
    table(["ID", "NAME", "RESULT"], &rows)
}
