//! `ls`, `show`, `new`, `adopt`, `rm`: sessions as tables, or the API's JSON.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};

use super::args::{AdoptArgs, LsArgs, NewArgs, RmArgs, ShowArgs};
use super::client::{Client, ClientError, encode};
use super::output::{one_line, print, print_either, table, text};
use super::resolve::session_id;

/// Longest thought shown in a table cell.
const THOUGHT_WIDTH: usize = 60;

pub async fn ls(client: &Client, args: LsArgs) -> Result<(), ClientError> {
    let path = if args.all {
        "/v1/sessions?include=ended"
    } else {
        "/v1/sessions"
    };
    let body = client.get(path).await?;
    print_either(args.format.json, &body, |body| {
        session_table(body["sessions"].as_array().map_or(&[], Vec::as_slice))
    })
}

pub async fn show(client: &Client, args: ShowArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let body = client.get(&format!("/v1/sessions/{}", encode(&id))).await?;
    print_either(args.format.json, &body, |body| fields(&body["session"]))
}

pub async fn new(client: &Client, args: NewArgs) -> Result<(), ClientError> {
    let mut body = BTreeMap::new();
    if let Some(name) = args.name {
        body.insert("name", json!(name));
    }
    if let Some(cwd) = args.cwd {
        let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
        body.insert("cwd", json!(cwd));
    }
    if let Some(input) = args.input {
        body.insert("initial_input", json!(input));
    }
    if let Some((cols, rows)) = args.size {
        body.insert("cols", json!(cols));
        body.insert("rows", json!(rows));
    }
    if !args.command.is_empty() {
        body.insert("command", json!(shell_join(&args.command)));
    }
    let created = client
        .request(Method::POST, "/v1/sessions", Some(&json!(body)))
        .await?;
    print_session(&created, args.quiet, args.format.json)
}

pub async fn adopt(client: &Client, args: AdoptArgs) -> Result<(), ClientError> {
    let mut body = json!({ "tmux_name": args.name });
    if let Some(id) = args.id {
        body["session_id"] = json!(id);
    }
    let adopted = client
        .request(Method::POST, "/v1/sessions/adopt", Some(&body))
        .await?;
    print_session(&adopted, args.quiet, args.format.json)
}

pub async fn rm(client: &Client, args: RmArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mode = if args.kill { "kill" } else { "detach" };
    let path = format!("/v1/sessions/{}?mode={mode}", encode(&id));
    let outcome = client.request(Method::DELETE, &path, None).await?;
    print_either(args.format.json, &outcome, |o| {
        let tmux = match o["tmux_alive"].as_bool() {
            Some(true) => "running",
            _ => "gone",
        };
        let row = [
            text(&o["session_id"]).to_owned(),
            text(&o["mode"]).to_owned(),
            tmux.to_owned(),
        ];
        table(["ID", "MODE", "TMUX SESSION"], &[row])
    })
}

/// `{"session": summary}` as JSON, as a one-row table, or just its id.
pub fn print_session(body: &Value, quiet: bool, json: bool) -> Result<(), ClientError> {
    if quiet {
        return print(&format!("{}\n", text(&body["session"]["session_id"])));
    }
    print_either(json, body, |body| {
        session_table(std::slice::from_ref(&body["session"]))
    })
}

/// The `ls` table.
pub fn session_table(sessions: &[Value]) -> String {
    let rows: Vec<[String; 9]> = sessions
        .iter()
        .map(|s| {
            [
                text(&s["session_id"]).to_owned(),
                text(&s["tmux_name"]).to_owned(),
                state(s),
                text(&s["state_reason"]).to_owned(),
                format!("{}x{}", s["cols"], s["rows"]),
                s["queued_inputs"].as_u64().unwrap_or(0).to_string(),
                text(&s["current_command"]).to_owned(),
                text(&s["cwd"]).to_owned(),
                thought(s),
            ]
        })
        .collect();
    let header = [
        "ID", "NAME", "STATE", "REASON", "SIZE", "QUEUED", "COMMAND", "CWD", "THOUGHT",
    ];
    table(header, &rows)
}

/// The state, with the attention flag (`idle!`) or the exit status
/// (`exited(3)`) beside it.
fn state(session: &Value) -> String {
    let state = text(&session["state"]);
    let exit = match (
        session["exit_status"].as_i64(),
        session["exit_signal"].as_i64(),
    ) {
        (Some(status), _) => format!("({status})"),
        (None, Some(signal)) => format!("(signal {signal})"),
        _ => String::new(),
    };
    let attention = if session["attention"].is_object() && state != "exited" {
        "!"
    } else {
        ""
    };
    format!("{state}{exit}{attention}")
}

/// `[state] text` of a session's thought, on one line.
fn thought(session: &Value) -> String {
    let thought = &session["thought"];
    let line = one_line(text(&thought["text"]), THOUGHT_WIDTH);
    match thought["state"].as_str() {
        Some(state) if !state.is_empty() => format!("[{state}] {line}"),
        _ => line,
    }
}

/// `show`: one `key: value` line per field of the summary, the thought in full.
fn fields(session: &Value) -> String {
    let Some(map) = session.as_object() else {
        return String::new();
    };
    let width = map.keys().map(String::len).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (key, value) in map {
        let shown = match value {
            Value::String(s) => s.clone(),
            Value::Null => "-".to_owned(),
            Value::Object(_) if key == "thought" => thought(session),
            other => other.to_string(),
        };
        out.push_str(&format!("{:<width$} {shown}\n", format!("{key}:")));
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
    fn the_table_shows_reason_queue_and_thought() {
        let sessions = vec![json!({
            "session_id": "sess_1", "tmux_name": "build", "state": "idle",
            "state_reason": "foreground_process", "cols": 80, "rows": 24,
            "queued_inputs": 2, "current_command": "bash", "cwd": "/",
            "thought": {"text": "compiling\ncrate 3/9", "state": "working"}
        })];
        let table = session_table(&sessions);
        let mut lines = table.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("ID      NAME   STATE  REASON")
        );
        assert_eq!(
            lines.next().unwrap(),
            "sess_1  build  idle   foreground_process  80x24  2       bash     /    [working] compiling crate 3/9"
        );
    }
}
