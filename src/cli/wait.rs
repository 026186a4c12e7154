//! `wait`: block until a session reaches a state, is quiet, or shows a
//! line matching a regex. A timeout has its own exit status (3); limits
//! longer than the API's are waited in slices.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::args::{Until, WaitArgs};
use super::client::{Client, ClientError, encode};
use super::duration::WaitLimit;
use super::output::{print, print_json, text};
use super::resolve::session_id;
use super::sessions::print_session;

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
        let mut body = condition.clone();
        body["timeout_ms"] = json!(slice.as_millis() as u64);
        match client.request(Method::POST, &path, Some(&body)).await {
            Ok(answer) => return print_outcome(&answer, args.format.json),
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

/// The request body (without its timeout), and how a timeout message says it.
fn condition(args: &WaitArgs) -> (Value, String) {
    match (&args.pattern, args.until) {
        (Some(pattern), _) => (
            json!({ "match": pattern }),
            format!("to show a line matching {pattern:?}"),
        ),
        (None, Some(Until::Quiet(quiet))) => (
            json!({ "until": "quiet", "quiet_ms": quiet.as_millis() as u64 }),
            format!("to be quiet for {}", humanize(quiet)),
        ),
        (None, Some(Until::State(state))) => (json!({ "until": state }), format!("to be {state}")),
        (None, None) => unreachable!("clap requires --until or --match"),
    }
}

/// The matching line for `--match`, else the session's row.
fn print_outcome(answer: &Value, json: bool) -> Result<(), ClientError> {
    if json {
        return print_json(answer);
    }
    match answer.get("match") {
        Some(matched) => print(&format!("{}\n", text(&matched["line"]))),
        None => print_session(answer, false, false),
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
