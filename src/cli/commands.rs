//! What each client subcommand sends and prints.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};

use super::Command;
use super::client::{Client, ClientError};

/// Runs a client subcommand against the daemon at `base`.
pub async fn run_client(
    command: Command,
    base: String,
    token: Option<String>,
) -> Result<(), ClientError> {
    let client = Client::new(base, token);
    match command {
        Command::Ls { json } => {
            let body = client.request(Method::GET, "/v1/sessions", None).await?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&body).unwrap_or_default()
                );
            } else {
                print!(
                    "{}",
                    render_table(
                        body["sessions"]
                            .as_array()
                            .map(Vec::as_slice)
                            .unwrap_or(&[])
                    )
                );
            }
        }
        Command::New {
            name,
            cwd,
            input,
            command,
        } => {
            let mut body = BTreeMap::new();
            if let Some(name) = name {
                body.insert("name", json!(name));
            }
            if let Some(cwd) = cwd {
                let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
                body.insert("cwd", json!(cwd));
            }
            if let Some(input) = input {
                body.insert("initial_input", json!(input));
            }
            if !command.is_empty() {
                body.insert("command", json!(shell_join(&command)));
            }
            let created = client
                .request(Method::POST, "/v1/sessions", Some(json!(body)))
                .await?;
            let session = &created["session"];
            println!(
                "{}\t{}",
                text(&session["session_id"]),
                text(&session["tmux_name"])
            );
        }
        Command::Rm { id, kill } => {
            let mode = if kill { "kill" } else { "detach" };
            let path = format!("/v1/sessions/{}?mode={mode}", segment(&id));
            let outcome = client.request(Method::DELETE, &path, None).await?;
            let alive = if outcome["tmux_alive"].as_bool() == Some(true) {
                "still running"
            } else {
                "ended"
            };
            println!("{id}: {mode}ed; tmux session {alive}");
        }
        Command::Adopt { name } => {
            let adopted = client
                .request(
                    Method::POST,
                    "/v1/sessions/adopt",
                    Some(json!({ "tmux_name": name })),
                )
                .await?;
            println!("{}", text(&adopted["session"]["session_id"]));
        }
        Command::Send {
            id,
            text: typed,
            enter,
            when_idle,
        } => {
            let when = if when_idle { "idle" } else { "now" };
            let body = json!({ "text": typed, "submit": enter, "when": when });
            send_input(&client, &id, body).await?;
        }
        Command::Keys { id, keys } => {
            send_input(&client, &id, json!({ "keys": keys })).await?;
        }
        Command::Wait { id, until, timeout } => {
            let timeout_ms = parse_duration_ms(&timeout).ok_or_else(|| {
                ClientError::Usage(format!(
                    "--timeout {timeout:?}: use a duration like 30s, 500ms, 2m"
                ))
            })?;
            let body = json!({ "until": until, "timeout_ms": timeout_ms });
            let path = format!("/v1/sessions/{}/wait", segment(&id));
            let answer = client.request(Method::POST, &path, Some(body)).await?;
            let session = &answer["session"];
            println!(
                "{id}\t{}\t{}",
                text(&session["state"]),
                text(&session["state_reason"])
            );
        }
        Command::Watch { id } => super::watch::watch(&client, &id).await?,
        Command::Events { since } => {
            let path = match since {
                Some(since) => format!("/v1/events?since={since}"),
                None => "/v1/events".to_owned(),
            };
            client
                .follow_sse(&path, |data| {
                    println!("{data}");
                })
                .await?;
        }
        Command::Snap { id, ansi } => {
            let format = if ansi { "ansi" } else { "text" };
            let path = format!("/v1/sessions/{}/snapshot?format={format}", segment(&id));
            let snapshot = client.request(Method::GET, &path, None).await?;
            let lines = snapshot["lines"]
                .as_array()
                .ok_or_else(|| ClientError::Protocol("snapshot has no lines".into()))?;
            for line in lines {
                println!("{}", text(line));
            }
        }
        Command::Serve(_) | Command::Config(_) | Command::Doctor(_) => {
            unreachable!("not a client command")
        }
    }
    Ok(())
}

/// `30s`, `500ms`, `2m`, `1h`, or plain seconds.
fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let scale = match unit {
        "ms" => 1,
        "" | "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

async fn send_input(client: &Client, id: &str, body: Value) -> Result<(), ClientError> {
    let path = format!("/v1/sessions/{}/input", segment(id));
    client
        .request(Method::POST, &path, Some(body))
        .await
        .map(drop)
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// Percent-encodes an id for a URL path segment (ids are plain, but user
/// input reaches here).
fn segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn render_table(sessions: &[Value]) -> String {
    let header = ["ID", "NAME", "STATE", "SIZE", "COMMAND", "CWD"].map(String::from);
    let rows: Vec<[String; 6]> = sessions
        .iter()
        .map(|s| {
            [
                text(&s["session_id"]).to_owned(),
                text(&s["tmux_name"]).to_owned(),
                text(&s["state"]).to_owned(),
                format!("{}x{}", s["cols"], s["rows"]),
                text(&s["current_command"]).to_owned(),
                text(&s["cwd"]).to_owned(),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// Joins argv words into one shell command, quoting what the shell would split.
fn shell_join(words: &[String]) -> String {
    let quote = |word: &String| {
        let plain = !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
        if plain {
            word.clone()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    words.iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted() {
        let words = |ws: &[&str]| ws.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            shell_join(&words(&["cargo", "build", "--release"])),
            "cargo build --release"
        );
        assert_eq!(
            shell_join(&words(&["echo", "a b", "it's", ""])),
            r"echo 'a b' 'it'\''s' ''"
        );
    }

    #[test]
    fn durations() {
        let cases = [
            ("30s", Some(30_000)),
            ("500ms", Some(500)),
            ("2m", Some(120_000)),
            ("1h", Some(3_600_000)),
            ("7", Some(7000)),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration_ms(text), want, "{text}");
        }
        for bad in ["", "s", "-1s", "1d", "1.5s", "ms"] {
            assert_eq!(parse_duration_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn segments_are_encoded() {
        assert_eq!(segment("sess_1"), "sess_1");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn table_aligns_columns() {
        let sessions = vec![
            json!({"session_id": "sess_1", "tmux_name": "build", "state": "idle", "cols": 80, "rows": 24, "current_command": "bash", "cwd": "/"}),
        ];
        let table = render_table(&sessions);
        assert_eq!(table.lines().count(), 2);
        assert!(
            table
                .lines()
                .nth(1)
                .unwrap()
                .starts_with("sess_1  build  idle ")
        );
    }
}
