//! What the shell completes beyond flags: the daemon's sessions (ids and
//! names, asked of the daemon at each TAB) and tmux key names. The shell's
//! registration (`tmuxd completions SHELL`) calls tmuxd back with
//! `COMPLETE_VAR` set; `main` answers before anything else runs.

use std::ffi::OsString;
use std::time::Duration;

use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{CompleteEnv, Shells};

use super::client::ClientError;
use crate::config::Env;
use crate::wire::SessionList;

/// The variable the registration sets when it calls tmuxd for candidates.
pub const COMPLETE_VAR: &str = "TMUXD_COMPLETE";
/// A daemon that does not answer in this long completes nothing rather
/// than hang the shell.
const ASK_WITHIN: Duration = Duration::from_secs(2);

/// Answers a completion request and exits, when the shell made one.
pub fn answer_if_asked(command: fn() -> clap::Command) {
    CompleteEnv::with_factory(command)
        .var(COMPLETE_VAR)
        .complete();
}

/// The registration script for `shell`, calling this very binary back.
pub fn registration(shell: clap_complete::Shell) -> Result<Vec<u8>, ClientError> {
    let name = shell.to_string();
    let shells = Shells::builtins();
    let Some(completer) = shells.completer(&name) else {
        return Err(ClientError::Usage(format!("no completions for {name}")));
    };
    let me: OsString = std::env::current_exe()
        .map(OsString::from)
        .unwrap_or_else(|_| "tmuxd".into());
    let mut script = Vec::new();
    completer.write_registration(
        COMPLETE_VAR,
        "tmuxd",
        "tmuxd",
        &me.to_string_lossy(),
        &mut script,
    )?;
    Ok(script)
}

/// Every session the daemon knows, live and recently ended: its id (with
/// its name and state as help) and its name. A session whose id or name
/// holds a control character is left out: the shell would put it on the
/// command line, or draw it, as it is.
pub fn sessions() -> Vec<CompletionCandidate> {
    let Some(list) = ask_sessions() else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    let plain = |text: &str| !text.chars().any(char::is_control);
    for s in list.sessions.iter().filter(|s| plain(&s.tmux_name)) {
        let id = s.session_id.to_string();
        let state = serde_json::to_value(s.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        candidates.push(
            CompletionCandidate::new(&id).help(Some(format!("{} ({state})", s.tmux_name).into())),
        );
        candidates.push(CompletionCandidate::new(&s.tmux_name).help(Some(id.into())));
    }
    candidates
}

fn ask_sessions() -> Option<SessionList> {
    let env: Env = std::env::vars().collect();
    let client = super::connect_from_env(&env).ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        tokio::time::timeout(
            ASK_WITHIN,
            client.get::<SessionList>("/v1/sessions?include=ended"),
        )
        .await
        .ok()?
        .ok()
    })
}

/// tmux's key names, as `send-keys` takes them.
pub fn key_names() -> Vec<CompletionCandidate> {
    const KEYS: &[(&str, &str)] = &[
        ("Enter", "Return"),
        ("Escape", "Esc"),
        ("Tab", ""),
        ("BTab", "Shift-Tab"),
        ("BSpace", "Backspace"),
        ("Space", ""),
        ("Up", ""),
        ("Down", ""),
        ("Left", ""),
        ("Right", ""),
        ("Home", ""),
        ("End", ""),
        ("PPage", "Page Up"),
        ("NPage", "Page Down"),
        ("IC", "Insert"),
        ("DC", "Delete"),
        ("C-c", "interrupt"),
        ("C-d", "end of input"),
        ("C-z", "suspend"),
        ("C-l", "redraw"),
        ("C-u", "erase the line"),
        ("C-r", "history search"),
        ("M-x", "Meta-x"),
    ];
    let function_keys = (1..=12).map(|n| (format!("F{n}"), String::new()));
    KEYS.iter()
        .map(|(key, help)| ((*key).to_owned(), (*help).to_owned()))
        .chain(function_keys)
        .map(|(key, help)| {
            let help = (!help.is_empty()).then(|| help.into());
            CompletionCandidate::new(key).help(help)
        })
        .collect()
}
