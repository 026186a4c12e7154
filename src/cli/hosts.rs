//! `hosts`: the fleet's peers as a table (`GET /v1/hosts`), or its JSON.

use serde::Deserialize;
use serde_json::Value;

use super::args::HostsArgs;
use super::client::{Client, ClientError};
use super::output::{print, print_json, table};

/// The columns `hosts` shows of a peer. Read here rather than with the
/// fleet's own `HostView`, which is written by the daemon and not read
/// back; `--json` prints the daemon's answer whole.
#[derive(Debug, Deserialize)]
struct HostRow {
    name: String,
    url: String,
    transport: String,
    status: String,
    since: String,
    rtt_ms: Option<f64>,
    version: Option<String>,
    sessions: usize,
    last_error: Option<String>,
}

pub async fn hosts(client: &Client, args: HostsArgs) -> Result<(), ClientError> {
    let body: Value = client.get("/v1/hosts").await?;
    if args.format.json {
        return print_json(&body);
    }
    let rows: Vec<HostRow> = serde_json::from_value(body["hosts"].clone())
        .map_err(|e| ClientError::Protocol(format!("/v1/hosts: {e}")))?;
    if rows.is_empty() {
        eprintln!("tmuxd: no fleet peers are configured ([[fleet.peers]] in the config file)");
    }
    print(&host_table(&rows))
}

/// NAME STATUS SINCE RTT SESSIONS VERSION URL ERROR.
fn host_table(hosts: &[HostRow]) -> String {
    let rows: Vec<[String; 8]> = hosts
        .iter()
        .map(|h| {
            let url = match h.transport.as_str() {
                "http" => h.url.clone(),
                other => format!("{} ({other})", h.url),
            };
            [
                h.name.clone(),
                h.status.clone(),
                h.since.clone(),
                h.rtt_ms.map(|ms| format!("{ms:.0}ms")).unwrap_or_default(),
                h.sessions.to_string(),
                h.version.clone().unwrap_or_default(),
                url,
                super::output::one_line(h.last_error.as_deref().unwrap_or_default(), 60),
            ]
        })
        .collect();
    table(
        [
            "NAME", "STATUS", "SINCE", "RTT", "SESSIONS", "VERSION", "URL", "ERROR",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_the_api_shape() {
        let body = serde_json::json!([{
            "name": "gpu1", "url": "http://10.0.0.2:7420", "transport": "ssh", "ssh": "me@gpu1",
            "status": "down", "since": "2024-05-01T10:00:00Z", "last_error": "connect\nrefused",
            "rtt_ms": 3.4, "version": "0.1.0", "sessions": 2, "cursor": 9, "ssh_error": null
        }]);
        let rows: Vec<HostRow> = serde_json::from_value(body).unwrap();
        let out = host_table(&rows);
        let line = out.lines().nth(1).unwrap();
        assert_eq!(
            line,
            "gpu1  down    2024-05-01T10:00:00Z  3ms  2         0.1.0    http://10.0.0.2:7420 (ssh)  connect refused"
        );
    }
}
