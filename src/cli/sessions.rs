//! `ls`, `show`, `new`, `adopt`, `rm`: sessions as tables, or the API's JSON.

use reqwest::Method;
use serde_json::Value;

use super::args::{AdoptArgs, LsArgs, NewArgs, RmArgs, ShowArgs};
use super::client::{Client, ClientError, encode};
use super::hints;
use super::output::{one_line, print, print_either, table, text, visible};
use super::resolve::session_id;
use crate::wire::{
    AdoptRequest, CreateSessionRequest, DeleteResponse, SessionEnvelope, SessionList, SessionState,
    SessionSummary, UntrackedList, UntrackedSession,
};

/// Longest thought shown in a table cell.
const THOUGHT_WIDTH: usize = 60;

pub async fn ls(client: &Client, args: LsArgs) -> Result<(), ClientError> {
    // Ended sessions are always asked for: without `--all` they are only
    // counted, so `ls` can say they are there.
    let mut query = vec!["include=ended".to_owned()];
    if let Some(host) = &args.host {
        query.push(format!("host={}", encode(host)));
    }
    let path = format!("/v1/sessions?{}", query.join("&"));
    let mut body: SessionList = client.get(&path).await?;
    let ended = body
        .sessions
        .iter()
        .filter(|s| s.ended_at.is_some())
        .count();
    if !args.all {
        body.sessions.retain(|s| s.ended_at.is_none());
    }
    print_either(args.format.json, &body, |body| {
        session_table(&body.sessions)
    })?;
    let lost = hints::tmux_lost(client).await;
    let hidden = if args.all { 0 } else { ended };
    for line in hints::ls_lines(lost.as_ref(), hidden) {
        eprintln!("{line}");
    }
    Ok(())
}

pub async fn show(client: &Client, args: ShowArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let body: SessionEnvelope = client.get(&format!("/v1/sessions/{}", encode(&id))).await?;
    print_either(args.format.json, &body, |body| fields(&body.session))
}

pub async fn new(client: &Client, args: NewArgs) -> Result<(), ClientError> {
    let cwd = match args.cwd {
        Some(cwd) => Some(std::path::absolute(&cwd).unwrap_or(cwd)),
        None if same_machine(client) => std::env::current_dir().ok(),
        None => None,
    };
    let body = CreateSessionRequest {
        name: args.name,
        cwd: cwd.map(|cwd| cwd.to_string_lossy().into_owned()),
        command: command_line(&args.command),
        initial_input: args.input,
        cols: args.size.map(|(cols, _)| cols),
        rows: args.size.map(|(_, rows)| rows),
        restore: args.restore.map(|what| match what {
            super::args::RestoreWhat::Shell => crate::wire::RestoreMode::Shell,
            super::args::RestoreWhat::Rerun => crate::wire::RestoreMode::Rerun,
        }),
        resume_command: args.resume_command,
    };
    let mut created: SessionEnvelope = client
        .request(Method::POST, "/v1/sessions", Some(&body))
        .await?;
    // A person reads the table: tell them if the program ended at once.
    // Scripts (`-q`, `--json`) get the answer without the wait.
    if !args.quiet && !args.format.json {
        let id = created.session.session_id.to_string();
        if let Some((now, warning)) = hints::early_exit(client, &id).await {
            created.session = now;
            if let Some(warning) = warning {
                eprintln!("{warning}");
            }
        }
    }
    print_session(&created, args.quiet, args.format.json)
}

/// Whether the daemon surely runs on this machine, where this directory
/// means the same: its unix socket, or TCP to a loopback address.
fn same_machine(client: &Client) -> bool {
    if client.socket().is_some() {
        return true;
    }
    let Some(host) = client.base().host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The API's `command`, a shell command line, from the words after `--`:
/// one word is a command line already (`'htop -d 10'`), as tmux takes a
/// single argument; several are an argv, each quoted for the shell.
fn command_line(words: &[String]) -> Option<String> {
    match words {
        [] => None,
        [line] => Some(line.clone()),
        argv => Some(shell_join(argv)),
    }
}

pub async fn adopt(client: &Client, args: AdoptArgs) -> Result<(), ClientError> {
    let Some(tmux_name) = args.name else {
        let body: UntrackedList = client.get("/v1/sessions/untracked").await?;
        return print_either(args.format.json, &body, |body| {
            untracked_table(&body.sessions)
        });
    };
    let body = AdoptRequest {
        tmux_name,
        session_id: args.id,
    };
    let adopted = client
        .request(Method::POST, "/v1/sessions/adopt", Some(&body))
        .await?;
    print_session(&adopted, args.quiet, args.format.json)
}

/// `tmuxd adopt` without a name: the tmux sessions tmuxd does not track.
fn untracked_table(sessions: &[UntrackedSession]) -> String {
    let rows: Vec<[String; 6]> = sessions
        .iter()
        .map(|s| {
            [
                s.tmux_name.clone(),
                s.windows.to_string(),
                s.attached_clients.to_string(),
                s.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                s.session_id.clone().unwrap_or_default(),
                wire_word(&s.reason),
            ]
        })
        .collect();
    table(
        ["NAME", "WINDOWS", "ATTACHED", "CREATED", "ID", "WHY"],
        &rows,
    )
}

pub async fn rm(client: &Client, args: RmArgs) -> Result<(), ClientError> {
    let id = session_id(client, &args.target.session).await?;
    let mode = if args.kill { "kill" } else { "detach" };
    let path = format!("/v1/sessions/{}?mode={mode}", encode(&id));
    let outcome: DeleteResponse = client.request(Method::DELETE, &path, None::<&()>).await?;
    print_either(args.format.json, &outcome, |o| {
        let tmux = if o.tmux_alive { "running" } else { "gone" };
        let row = [
            o.session_id.to_string(),
            wire_word(&o.mode),
            tmux.to_owned(),
        ];
        table(["ID", "MODE", "TMUX SESSION"], &[row])
    })
}

/// `{"session": summary}` as JSON, as a one-row table, or just its id.
pub fn print_session(body: &SessionEnvelope, quiet: bool, json: bool) -> Result<(), ClientError> {
    if quiet {
        return print(&format!(
            "{}\n",
            visible(&body.session.session_id.to_string())
        ));
    }
    print_either(json, body, |body| {
        session_table(std::slice::from_ref(&body.session))
    })
}

/// A wire enum's word (`idle`, `kill`), as the API spells it.
pub fn wire_word(value: &impl serde::Serialize) -> String {
    let value = serde_json::to_value(value).unwrap_or_default();
    text(&value).to_owned()
}

/// The `ls` table.
/// A HOST column comes first once any session is a fleet peer's (`-` for
/// this daemon's own); a single host's table is as it always was.
pub fn session_table(sessions: &[SessionSummary]) -> String {
    let rows: Vec<[String; 9]> = sessions
        .iter()
        .map(|s| {
            [
                s.session_id.to_string(),
                s.tmux_name.clone(),
                state(s),
                s.state_reason.clone(),
                format!("{}x{}", s.cols, s.rows),
                s.queued_inputs.to_string(),
                s.current_command.clone(),
                s.cwd.clone(),
                thought(s),
            ]
        })
        .collect();
    let header = [
        "ID", "NAME", "STATE", "REASON", "SIZE", "QUEUED", "COMMAND", "CWD", "THOUGHT",
    ];
    if sessions.iter().all(|s| s.host.is_none()) {
        return table(header, &rows);
    }
    let hosted: Vec<[String; 10]> = sessions
        .iter()
        .zip(rows)
        .map(|(s, row)| {
            let host = s
                .host
                .as_ref()
                .map_or_else(|| "-".to_owned(), ToString::to_string);
            let [a, b, c, d, e, f, g, h, i] = row;
            [host, a, b, c, d, e, f, g, h, i]
        })
        .collect();
    let mut with_host = ["HOST"; 10];
    with_host[1..].copy_from_slice(&header);
    table(with_host, &hosted)
}

/// The state, with the attention flag (`idle!`) or the exit status
/// (`exited(3)`) beside it.
fn state(session: &SessionSummary) -> String {
    let state = wire_word(&session.state);
    let exit = match (session.exit_status, session.exit_signal) {
        (Some(status), _) => format!("({status})"),
        (None, Some(signal)) => format!("(signal {signal})"),
        _ => String::new(),
    };
    let attention = if session.attention.is_some() && session.state != SessionState::Exited {
        "!"
    } else {
        ""
    };
    // A down peer's session: the last known state, marked so.
    let stale = if session.stale { " (stale)" } else { "" };
    format!("{state}{exit}{attention}{stale}")
}

/// `[state] text` of a session's thought, on one line.
fn thought(session: &SessionSummary) -> String {
    let Some(thought) = &session.thought else {
        return String::new();
    };
    let line = one_line(&thought.text, THOUGHT_WIDTH);
    match thought.state.as_deref() {
        Some(state) if !state.is_empty() => format!("[{state}] {line}"),
        _ => line,
    }
}

/// `show`: one `key: value` line per field of the summary (in the API's
/// names), the thought in full; each value made [`visible`].
fn fields(session: &SessionSummary) -> String {
    let value = serde_json::to_value(session).unwrap_or_default();
    let Some(map) = value.as_object() else {
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
        let key = visible(key);
        let shown = visible(&shown);
        out.push_str(&format!("{:<width$} {shown}\n", format!("{key}:")));
    }
    out
}

/// Joins argv words into one shell command, quoting what the shell would split.
pub(super) fn shell_join(words: &[String]) -> String {
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
    fn one_word_is_a_command_line_several_an_argv() {
        let words = |ws: &[&str]| ws.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        // (words after --, the API's command)
        let table: [(&[&str], Option<&str>); 4] = [
            (&[], None),
            (&["htop -d 10"], Some("htop -d 10")),
            (&["./ask.sh"], Some("./ask.sh")),
            (&["printf", "%s\n", "a b"], Some("printf '%s\n' 'a b'")),
        ];
        for (given, want) in table {
            assert_eq!(command_line(&words(given)).as_deref(), want, "{given:?}");
        }
    }

    #[test]
    fn the_table_shows_reason_queue_and_thought() {
        let at = "2024-05-01T10:00:00Z";
        let sessions =
            vec![serde_json::from_value(serde_json::json!({
            "session_id": "sess_1", "tmux_name": "build", "state": "idle",
            "state_reason": "foreground_process", "state_since": at, "cols": 80, "rows": 24,
            "queued_inputs": 2, "current_command": "bash", "cwd": "/", "title": "",
            "created_at": at, "last_activity_at": null, "transport": "attached",
            "subscribers": 0, "latest_seq": 0,
            "thought": {"text": "compiling\ncrate 3/9", "state": "working", "tokens_in": null,
                        "tokens_out": null, "updated_at": at}
        }))
        .unwrap()];
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
