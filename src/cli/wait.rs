//! `wait`: block until a session reaches a state, is quiet, or shows a
//! line matching a regex. A timeout has its own exit status (3); limits
//! longer than the API's are waited in slices.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};

use super::args::{Until, WaitArgs};
use super::client::{Client, ClientError, encode};
use super::duration::WaitLimit;
use super::output::{print, print_json, visible};
use super::resolve::session_id;
use super::sessions::{print_session, wire_word};
use crate::wire::{SessionEnvelope, WaitRequest, WaitResponse};

/// The longest `timeout_ms` the API takes in one request.
const API_MAX_WAIT: Duration = Duration::from_secs(3600);

pub async fn wait(client: &Client, args: WaitArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let path = format!("/v1/sessions/{}/wait", encode(&id));
    let (condition, what) = condition(&args);
    let started = Instant::now();
    loop {
        let slice = match args.timeout {
            WaitLimit::Forever => API_MAX_WAIT,
            WaitLimit::For(limit) => limit.saturating_sub(started.elapsed()).min(API_MAX_WAIT),
        };
        let body = WaitRequest {
            timeout_ms: Some(slice.as_millis() as u64),
            ..condition.clone()
        };
        match client
            .request::<WaitResponse, _>(Method::POST, &path, Some(&body))
            .await
        {
            Ok(answer) => return print_outcome(answer, args.format.json),
            Err(ClientError::Api { status, .. }) if status == StatusCode::REQUEST_TIMEOUT => {
                let out_of_time = match args.timeout {
                    WaitLimit::Forever => false,
                    WaitLimit::For(limit) => started.elapsed() >= limit,
                };
                if out_of_time {
                    return Err(ClientError::TimedOut(format!(
                        "timed out after {} waiting for {id} {what}",
                        humanize(started.elapsed())
                    )));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// The request (without its timeout), and how a timeout message says it.
fn condition(args: &WaitArgs) -> (WaitRequest, String) {
    match (&args.pattern, args.until) {
        (Some(pattern), _) => (
            WaitRequest {
                pattern: Some(pattern.clone()),
                ..WaitRequest::default()
            },
            format!("to show a line matching {pattern:?}"),
        ),
        (None, Some(Until::Quiet(quiet))) => (
            WaitRequest {
                until: Some(crate::wire::Until::Quiet),
                quiet_ms: Some(quiet.as_millis() as u64),
                ..WaitRequest::default()
            },
            format!("to be quiet for {}", humanize(quiet)),
        ),
        (None, Some(Until::State(until))) => (
            WaitRequest {
                until: Some(until),
                ..WaitRequest::default()
            },
            format!("to be {}", wire_word(&until)),
        ),
        (None, None) => unreachable!("clap requires --until or --match"),
    }
}

/// The matching line for `--match`, else the session's row.
fn print_outcome(answer: WaitResponse, json: bool) -> Result<(), ClientError> {
    if json {
        return print_json(&answer);
    }
    match answer.matched {
        Some(matched) => print(&format!("{}\n", visible(&matched.line))),
        None => print_session(
            &SessionEnvelope {
                session: answer.session,
            },
            false,
            false,
        ),
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
