//! What the tables alone do not say, said on stderr: `ls` when the tmux
//! server was lost (and how to restore) or sessions ended recently, `new`
//! when the program it started ended at once (its status and last line).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;

use super::client::{Client, ClientError, encode};
use super::output::visible;
use crate::wire::{SessionSummary, Snapshot, TmuxLost, Until, WaitRequest, WaitResponse};

/// How long `new` watches the program it started: one that ends sooner
/// was most likely not found, or failed on its arguments.
pub const EARLY_EXIT: Duration = Duration::from_secs(1);

/// What `ls` reads of `/healthz` (only this: the rest may grow).
#[derive(Debug, Default, Deserialize)]
struct HealthHint {
    #[serde(default)]
    tmux_lost: Option<TmuxLost>,
}

/// The lines `ls` adds on stderr: tmux lost with sessions to restore;
/// sessions ended recently that the table leaves out (`ended`, when
/// `--all` was not given).
pub fn ls_lines(lost: Option<&TmuxLost>, ended: usize) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(lost) = lost {
        let since = lost.since.format("%Y-%m-%d %H:%M:%S UTC");
        let sessions = match lost.restorable {
            1 => "1 session".to_owned(),
            n => format!("{n} sessions"),
        };
        lines.push(format!(
            "tmux was lost at {since} (crash, kill-server or reboot): {sessions} can be restored \
             — `tmuxd restore` (or `tmuxd restore ID...`)"
        ));
    }
    if ended > 0 {
        lines.push(format!("{ended} ended — ls --all"));
    }
    lines
}

/// Whether the tmux server is lost, as `/healthz` says (`None` when it
/// is not, or the daemon does not say).
pub async fn tmux_lost(client: &Client) -> Option<TmuxLost> {
    let health: HealthHint = client.get("/healthz").await.ok()?;
    health.tmux_lost
}

/// Waits up to [`EARLY_EXIT`] for session `id` to end. Its summary now,
/// and the warning to print when it ended; `None` if the daemon could not
/// say.
pub async fn early_exit(client: &Client, id: &str) -> Option<(SessionSummary, Option<String>)> {
    let path = format!("/v1/sessions/{}/wait", encode(id));
    let body = WaitRequest {
        until: Some(Until::Exited),
        timeout_ms: Some(EARLY_EXIT.as_millis() as u64),
        ..WaitRequest::default()
    };
    match client
        .request::<WaitResponse, _>(Method::POST, &path, Some(&body))
        .await
    {
        Ok(answer) => {
            let last = last_line(client, id).await;
            let warning = early_exit_warning(&answer.session, last.as_deref());
            Some((answer.session, Some(warning)))
        }
        Err(ClientError::Api { status, .. }) if status == StatusCode::REQUEST_TIMEOUT => {
            let path = format!("/v1/sessions/{}", encode(id));
            let now: crate::wire::SessionEnvelope = client.get(&path).await.ok()?;
            Some((now.session, None))
        }
        Err(_) => None,
    }
}

/// The last line with text on the session's last screen.
async fn last_line(client: &Client, id: &str) -> Option<String> {
    let path = format!("/v1/sessions/{}/snapshot?format=text", encode(id));
    let snapshot: Snapshot = client.get(&path).await.ok()?;
    snapshot
        .lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// `warning: build ended within 1s: exit status 127; its last line: ...`.
pub fn early_exit_warning(session: &SessionSummary, last: Option<&str>) -> String {
    let how = match (session.exit_status, session.exit_signal) {
        (Some(status), _) => format!("exit status {status}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "exit status unknown".to_owned(),
    };
    let last = match last {
        Some(line) => format!("; its last line: {}", visible(line)),
        None => "; it printed nothing".to_owned(),
    };
    format!(
        "tmuxd: warning: {} ({}) ended within {}s: {how}{last}",
        visible(&session.tmux_name),
        session.session_id,
        EARLY_EXIT.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(exit_status: Option<i32>, exit_signal: Option<i32>) -> SessionSummary {
        let at = "2024-05-01T10:00:00Z";
        serde_json::from_value(serde_json::json!({
            "session_id": "sess_4", "tmux_name": "job", "state": "exited",
            "state_reason": "process_exit", "state_since": at, "cols": 80, "rows": 24,
            "queued_inputs": 0, "current_command": "", "cwd": "/", "title": "",
            "created_at": at, "last_activity_at": null, "transport": "disconnected",
            "subscribers": 0, "latest_seq": 0, "exit_status": exit_status,
            "exit_signal": exit_signal
        }))
        .unwrap()
    }

    #[test]
    fn early_exit_warnings() {
        // (status, signal, last line, warning)
        let table = [
            (
                Some(127),
                None,
                Some("sh: 1: ./ask.sh: not found"),
                "tmuxd: warning: job (sess_4) ended within 1s: exit status 127; its last line: sh: 1: ./ask.sh: not found",
            ),
            (
                None,
                Some(9),
                None,
                "tmuxd: warning: job (sess_4) ended within 1s: killed by signal 9; it printed nothing",
            ),
            (
                Some(1),
                None,
                Some("bad\x1b[2J"),
                "tmuxd: warning: job (sess_4) ended within 1s: exit status 1; its last line: bad\\e[2J",
            ),
        ];
        for (status, signal, last, want) in table {
            assert_eq!(early_exit_warning(&summary(status, signal), last), want);
        }
    }

    #[test]
    fn ls_hint_lines() {
        let lost = TmuxLost {
            since: "2024-05-01T10:00:00Z".parse().unwrap(),
            restorable: 17,
        };
        assert_eq!(ls_lines(None, 0), Vec::<String>::new());
        assert_eq!(ls_lines(None, 3), ["3 ended — ls --all"]);
        let lines = ls_lines(Some(&lost), 2);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("tmux was lost at 2024-05-01 10:00:00 UTC")
                && lines[0].contains("17 sessions can be restored")
                && lines[0].contains("`tmuxd restore`"),
            "{lines:?}"
        );
    }
}
