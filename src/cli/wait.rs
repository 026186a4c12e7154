//! `wait`: block until a session reaches a state. A timeout has its own
//! exit status (3); limits longer than the API's are waited in slices.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};

use super::args::{self, WaitArgs};
use super::client::{Client, ClientError, encode};
use super::duration::WaitLimit;
use super::resolve::session_id;
use super::sessions::print_session;
use crate::api::model::{SessionEnvelope, Until, WaitRequest};

/// The longest `timeout_ms` the API takes in one request.
const API_MAX_WAIT: Duration = Duration::from_secs(3600);

pub async fn wait(client: &Client, args: WaitArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let path = format!("/v1/sessions/{}/wait", encode(&id));
    let until = args.until.as_str();
    let wire_until = wire(args.until);
    let started = Instant::now();
    loop {
        let slice = match args.timeout {
            WaitLimit::Forever => API_MAX_WAIT,
            WaitLimit::For(limit) => limit.saturating_sub(started.elapsed()).min(API_MAX_WAIT),
        };
        let body = WaitRequest {
            until: wire_until,
            timeout_ms: Some(slice.as_millis() as u64),
        };
        match client
            .request::<SessionEnvelope, _>(Method::POST, &path, Some(&body))
            .await
        {
            Ok(answer) => return print_session(&answer, false, args.format.json),
            Err(ClientError::Api { status, .. }) if status == StatusCode::REQUEST_TIMEOUT => {
                let out_of_time = match args.timeout {
                    WaitLimit::Forever => false,
                    WaitLimit::For(limit) => started.elapsed() >= limit,
                };
                if out_of_time {
                    return Err(ClientError::TimedOut(format!(
                        "timed out after {} waiting for {id} to be {until}",
                        humanize(started.elapsed())
                    )));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

fn wire(until: args::Until) -> Until {
    match until {
        args::Until::Idle => Until::Idle,
        args::Until::Busy => Until::Busy,
        args::Until::Attention => Until::Attention,
        args::Until::Exited => Until::Exited,
        args::Until::Change => Until::Change,
    }
}

/// `1.2s`, `2m3s`: how long a wait took, for its timeout message.
fn humanize(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{:.1}s", elapsed.as_secs_f64())
    } else {
        format!("{}m{}s", secs / 60, secs % 60)
    }
}
