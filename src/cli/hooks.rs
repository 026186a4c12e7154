//! `tmuxd hooks`: connecting coding agents' own hooks to tmuxd. `install`
//! merges tmuxd into the agent's configuration (Claude Code's
//! `settings.json` hooks, Codex's `notify` in `config.toml`), never
//! replacing what else is there, with a backup, and does nothing when it is
//! there already. `send` is what those hooks run: it posts the event for
//! `$TMUX_PANE`'s session and never fails the agent.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Map, Value, json};

use super::args::{HookAgent, HooksInstallArgs, HooksSendArgs};
use super::client::{Client, ClientError, encode};
use super::output::print;
use crate::config::Env;
use crate::wire::{ClaudeEvent, HookResponse};

/// "Notification, Stop, ...": the events `install` installs.
fn claude_event_names() -> String {
    let names: Vec<&str> = ClaudeEvent::ALL.map(ClaudeEvent::name).to_vec();
    names.join(", ")
}

/// Seconds Claude Code gives the hook command (its default is 60): tmuxd
/// answers in milliseconds, and an agent must not hang on a daemon that is
/// down.
const CLAUDE_HOOK_TIMEOUT_S: u64 = 5;

/// How long `send` waits for the daemon, all told.
const SEND_TIMEOUT: Duration = Duration::from_secs(3);

/// Most bytes of an event `send` reads (Claude Code's `PreToolUse` carries
/// the tool's input: a whole file being written).
const MAX_EVENT_READ_BYTES: u64 = 32 * 1024 * 1024;

/// Longest text field `send` passes on; the rest of the event is dropped.
const MAX_FIELD_BYTES: usize = 4096;

/// The fields of an event the daemon reads (see `session::agents::hooks`).
const KEPT_FIELDS: [&str; 9] = [
    "hook_event_name",
    "message",
    "notification_type",
    "tool_name",
    "session_id",
    "cwd",
    "type",
    "turn-id",
    "last-assistant-message",
];

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("{path} is not valid {format}: {reason}; fix or move it, then run this again")]
    Unreadable {
        path: String,
        format: &'static str,
        reason: String,
    },
    #[error("{path}: `{key}` is not {expected}; tmuxd will not rewrite it")]
    Shape {
        path: String,
        key: String,
        expected: &'static str,
    },
    #[error(
        "{path} already sets notify = {current}; Codex runs one notify program, and tmuxd will not replace yours: remove that line (or make your program also run `tmuxd hooks send codex \"$1\"`), then run this again"
    )]
    NotifyTaken { path: String, current: String },
}

/// Whether a hook command is tmuxd's for `agent`, whatever path it runs.
fn is_ours(words: &[&str], agent: &str) -> bool {
    words.ends_with(&["hooks", "send", agent])
}

/// `settings.json` with tmuxd's command on each event tmuxd listens to;
/// `None` when it is there already. Other settings and other hooks are
/// kept (keys come back sorted).
pub fn merge_claude(
    current: Option<&str>,
    command: &str,
    path: &str,
) -> Result<Option<String>, MergeError> {
    let mut settings: Value = match current.map(str::trim).filter(|t| !t.is_empty()) {
        None => json!({}),
        Some(text) => serde_json::from_str(text).map_err(|e| MergeError::Unreadable {
            path: path.to_owned(),
            format: "JSON",
            reason: e.to_string(),
        })?,
    };
    let shape = |key: &str, expected| MergeError::Shape {
        path: path.to_owned(),
        key: key.to_owned(),
        expected,
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| shape("(top level)", "an object"))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| shape("hooks", "an object"))?;
    let mut changed = false;
    for event in ClaudeEvent::ALL {
        let groups = hooks
            .entry(event.name())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| shape(&format!("hooks.{}", event.name()), "a list"))?;
        changed |= place_command(groups, event, command);
    }
    if !changed {
        return Ok(None);
    }
    let text = serde_json::to_string_pretty(&settings).expect("JSON values serialize");
    Ok(Some(format!("{text}\n")))
}

/// Puts `command` in an event's matcher groups: updates tmuxd's own hook
/// (another path to tmuxd) or adds a group for it. Whether it changed.
fn place_command(groups: &mut Vec<Value>, event: ClaudeEvent, command: &str) -> bool {
    let words = |v: &Value| {
        v.get("command")
            .and_then(Value::as_str)
            .map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut found = false;
    let mut changed = false;
    for group in groups.iter_mut() {
        let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            continue;
        };
        for hook in list.iter_mut() {
            let w = words(hook);
            let w: Vec<&str> = w.iter().map(String::as_str).collect();
            if !is_ours(&w, "claude") {
                continue;
            }
            found = true;
            if hook.get("command").and_then(Value::as_str) != Some(command) {
                hook["command"] = json!(command);
                changed = true;
            }
        }
    }
    if found {
        return changed;
    }
    let mut group = Map::new();
    if event == ClaudeEvent::PreToolUse {
        group.insert("matcher".into(), json!("*"));
    }
    group.insert(
        "hooks".into(),
        json!([{ "type": "command", "command": command, "timeout": CLAUDE_HOOK_TIMEOUT_S }]),
    );
    groups.push(Value::Object(group));
    true
}

/// `config.toml` with `notify = argv`; `None` when it is set so already.
/// The text is kept as written (comments, order): a line is added at the
/// top (top-level keys must come before any table), or tmuxd's own line
/// (another path to tmuxd) is replaced.
pub fn merge_codex(
    current: Option<&str>,
    argv: &[String],
    path: &str,
) -> Result<Option<String>, MergeError> {
    let text = current.unwrap_or_default();
    let unreadable = |reason: String| MergeError::Unreadable {
        path: path.to_owned(),
        format: "TOML",
        reason,
    };
    let table: toml::Table = toml::from_str(text).map_err(|e| unreadable(e.to_string()))?;
    let line = format!("notify = {}", toml::Value::from(argv.to_vec()));
    let Some(current) = table.get("notify") else {
        let header = "# tmuxd hooks install codex: tell tmuxd when a turn completes\n";
        return Ok(Some(format!("{header}{line}\n{text}")));
    };
    let words: Vec<&str> = current
        .as_array()
        .map(|a| a.iter().filter_map(toml::Value::as_str).collect())
        .unwrap_or_default();
    if words == argv.iter().map(String::as_str).collect::<Vec<_>>() {
        return Ok(None);
    }
    let taken = || MergeError::NotifyTaken {
        path: path.to_owned(),
        current: current.to_string(),
    };
    if !is_ours(&words, "codex") {
        return Err(taken());
    }
    let mut lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .take_while(|l| !l.trim_start().starts_with('['))
        .position(|l| {
            l.trim_start()
                .strip_prefix("notify")
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .ok_or_else(taken)?;
    lines[at] = &line;
    let merged = format!("{}\n", lines.join("\n"));
    let check: toml::Table = toml::from_str(&merged).map_err(|_| taken())?;
    match check.get("notify") == Some(&toml::Value::from(argv.to_vec())) {
        true => Ok(Some(merged)),
        false => Err(taken()),
    }
}

/// A word for `sh -c` (Claude Code runs hook commands with a shell).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    match !word.is_empty() && word.chars().all(plain) {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// Where an agent keeps its configuration: `CLAUDE_CONFIG_DIR` or
/// `~/.claude`; `CODEX_HOME` or `~/.codex`.
fn config_path(agent: HookAgent, env: &Env) -> Result<PathBuf, ClientError> {
    let var = |name: &str| env.get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = || {
        var("HOME").ok_or_else(|| {
            ClientError::Usage("HOME is not set: where is the agent's configuration?".into())
        })
    };
    Ok(match agent {
        HookAgent::Claude => var("CLAUDE_CONFIG_DIR")
            .map_or_else(|| home().map(|h| h.join(".claude")), Ok)?
            .join("settings.json"),
        HookAgent::Codex => var("CODEX_HOME")
            .map_or_else(|| home().map(|h| h.join(".codex")), Ok)?
            .join("config.toml"),
    })
}

pub fn install(args: HooksInstallArgs, env: &Env) -> Result<(), ClientError> {
    let exe = std::env::current_exe()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let exe = match lasting_binary(&exe, env.get("PATH").map(String::as_str)) {
        Lasting::Itself => exe,
        Lasting::Installed(installed) => {
            eprintln!(
                "tmuxd: {} is a build in a cargo target dir (`cargo clean` removes it): the hook \
                 runs the installed {} instead",
                exe.display(),
                installed.display()
            );
            installed
        }
        Lasting::BuildOnly => {
            eprintln!(
                "tmuxd: warning: {} is a build in a cargo target dir, and no tmuxd is installed \
                 on PATH: the hook stops working at `cargo clean`; `cargo install --path .`, \
                 then run this again",
                exe.display()
            );
            exe
        }
    };
    let exe = exe.to_string_lossy().into_owned();
    let path = config_path(args.agent, env)?;
    let shown = path.display().to_string();
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let (merged, what) = match args.agent {
        HookAgent::Claude => {
            let command = format!("{} hooks send claude", shell_word(&exe));
            let merged = merge_claude(current.as_deref(), &command, &shown);
            (
                merged,
                format!("{} hooks run `{command}`", claude_event_names()),
            )
        }
        HookAgent::Codex => {
            let argv: Vec<String> = [exe.as_str(), "hooks", "send", "codex"]
                .map(str::to_owned)
                .to_vec();
            let merged = merge_codex(current.as_deref(), &argv, &shown);
            (merged, format!("notify runs {argv:?}"))
        }
    };
    let merged = merged.map_err(|e| std::io::Error::other(e.to_string()))?;
    if args.print {
        // The file's text alone on stdout (so it can be saved or diffed);
        // which file, and whether it would change, on stderr.
        let would = match (&merged, &current) {
            (None, _) => format!("{shown} already has tmuxd's hooks; it would not change"),
            (Some(_), None) => format!("would create {shown} (nothing written):"),
            (Some(_), Some(_)) => format!("would change {shown} (nothing written) to:"),
        };
        eprintln!("tmuxd: {would}");
        return print(merged.as_deref().or(current.as_deref()).unwrap_or_default());
    }
    let Some(merged) = merged else {
        return print(&format!("already installed in {shown}: {what}\n"));
    };
    let backup = match current {
        Some(_) => Some(back_up(&path)?),
        None => None,
    };
    write_replacing(&path, &merged)?;
    let backup = backup
        .map(|b| format!(" (the old one is {})", b.display()))
        .unwrap_or_default();
    print(&format!("wrote {shown}{backup}: {what}\n"))
}

/// Which tmuxd a hook should run so that it keeps working.
#[derive(Debug, PartialEq, Eq)]
enum Lasting {
    /// This binary: it is not a cargo build.
    Itself,
    /// This binary is a cargo build; this installed one on PATH lasts.
    Installed(PathBuf),
    /// This binary is a cargo build, and no other tmuxd is on PATH.
    BuildOnly,
}

/// Whether `exe` lives in a cargo target dir, which `cargo clean` empties,
/// and if so the first `tmuxd` on `path` that does not.
fn lasting_binary(exe: &Path, path: Option<&str>) -> Lasting {
    if !in_cargo_target(exe) {
        return Lasting::Itself;
    }
    let installed = std::env::split_paths(path.unwrap_or_default())
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("tmuxd"))
        .find(|candidate| {
            let real = std::fs::canonicalize(candidate);
            let runnable = std::fs::metadata(candidate).is_ok_and(|m| {
                std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                    && m.is_file()
            });
            runnable && real.is_ok_and(|real| !in_cargo_target(&real))
        });
    match installed {
        Some(installed) => Lasting::Installed(installed),
        None => Lasting::BuildOnly,
    }
}

/// A cargo target dir above `exe`: one cargo marked (`CACHEDIR.TAG`), or a
/// `target` beside a `Cargo.toml`.
fn in_cargo_target(exe: &Path) -> bool {
    exe.ancestors().skip(1).any(|dir| {
        dir.join("CACHEDIR.TAG").is_file()
            || (dir.file_name() == Some("target".as_ref())
                && dir.parent().is_some_and(|p| p.join("Cargo.toml").is_file()))
    })
}

/// Copies `path` beside itself, named with the time.
fn back_up(path: &Path) -> Result<PathBuf, ClientError> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".bak-{stamp}"));
    let backup = path.with_file_name(name);
    std::fs::copy(path, &backup)?;
    Ok(backup)
}

/// Writes a temp file beside `path` with its mode, then renames it over:
/// an agent reading its settings never sees half of them.
fn write_replacing(path: &Path, text: &str) -> Result<(), ClientError> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
    temp_name.push(".tmuxd-tmp");
    let temp = path.with_file_name(temp_name);
    let mut file = std::fs::File::create(&temp)?;
    if let Ok(meta) = std::fs::metadata(path) {
        file.set_permissions(meta.permissions())?;
    }
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temp, path)?;
    Ok(())
}

/// The event as the daemon needs it: the fields it reads, each cut short.
pub fn slim_event(event: &Value) -> Option<Value> {
    let object = event.as_object()?;
    let kept = KEPT_FIELDS
        .iter()
        .filter_map(|key| {
            let mut value = object.get(*key)?.clone();
            if let Value::String(text) = &mut value {
                crate::store::cut_str(text, MAX_FIELD_BYTES);
            }
            Some(((*key).to_owned(), value))
        })
        .collect();
    Some(Value::Object(kept))
}

/// Run by the agent's hook: posts the event and says nothing, on stdout
/// (Claude Code adds a hook's output to the conversation) or stderr (Codex
/// runs `notify` on the terminal its own screen is drawn on). The exit
/// status stays 0, so a daemon that is down never blocks or fails the
/// agent; `--verbose` says why an event went nowhere, for a person
/// debugging by hand.
pub async fn send(args: HooksSendArgs, env: &Env, client: Result<Client, ClientError>) {
    let verbose = args.verbose;
    if let Err(problem) = try_send(args, env, client).await
        && verbose
    {
        eprintln!("tmuxd hooks send: {}", super::output::visible(&problem));
    }
}

async fn try_send(
    args: HooksSendArgs,
    env: &Env,
    client: Result<Client, ClientError>,
) -> Result<HookResponse, String> {
    let pane = env
        .get("TMUX_PANE")
        .filter(|p| !p.is_empty())
        .ok_or("TMUX_PANE is not set: not run inside tmux")?;
    let text = match args.event {
        Some(text) => text,
        None if std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            return Err(
                "give the event's JSON on stdin (as the agent's hook does) or as an argument"
                    .into(),
            );
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .take(MAX_EVENT_READ_BYTES)
                .read_to_string(&mut text)
                .map_err(|e| format!("reading the event from stdin: {e}"))?;
            text
        }
    };
    let event: Value =
        serde_json::from_str(&text).map_err(|e| format!("the event is not JSON: {e}"))?;
    let event = slim_event(&event).ok_or("the event is not a JSON object")?;
    let client = client.map_err(|e| e.to_string())?;
    let agent = match args.agent {
        HookAgent::Claude => "claude",
        HookAgent::Codex => "codex",
    };
    let path = format!("/v1/hooks/{agent}?pane={}", encode(pane));
    let request = client.request(Method::POST, &path, Some(&event));
    match tokio::time::timeout(SEND_TIMEOUT, request).await {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "tmuxd did not answer within {} s",
            SEND_TIMEOUT.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests;
