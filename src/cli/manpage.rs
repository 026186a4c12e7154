//! The parts of `man tmuxd` that clap cannot derive from the flags: the
//! session states, every config key with its variable, the environment,
//! the files, and the exit codes (a 99-line overview lacked them all).

use std::fmt::Write;

/// What each state means, in the words of `wire::SessionState`.
const STATES: [(&str, &str); 5] = [
    ("starting", "attached, not judged yet"),
    ("idle", "a shell at its prompt"),
    (
        "working",
        "output changing, or the foreground program using CPU or running",
    ),
    (
        "waiting",
        "a program blocked reading the terminal, and quiet: it waits for input",
    ),
    (
        "exited",
        "the session ended (kept readable for the retention window)",
    ),
];

/// Variables read besides the config keys' own.
const ENVIRONMENT: [(&str, &str); 6] = [
    (
        "TMUXD_CONFIG",
        "the config file, when --config is not given",
    ),
    (
        "TMUXD_URL",
        "where clients reach the daemon, when --url is not given",
    ),
    (
        "TMUXD_TOKEN",
        "the token clients send over TCP, when --token is not given",
    ),
    (
        "XDG_DATA_HOME",
        "the default data dir is $XDG_DATA_HOME/tmuxd",
    ),
    (
        "HOME",
        "~/.local/share/tmuxd and ~/.config/tmuxd/config.toml",
    ),
    (
        "TMUX_TMPDIR",
        "where tmux (and so tmuxd) finds the tmux socket",
    ),
];

const FILES: [(&str, &str); 6] = [
    ("~/.config/tmuxd/config.toml", "the config file, if present"),
    (
        "<data_dir>/registry.json",
        "tracked sessions, detached names, the id counter",
    ),
    (
        "<data_dir>/events.jsonl",
        "the event log (rotated beside it)",
    ),
    (
        "<data_dir>/thoughts.json",
        "each session's published status",
    ),
    (
        "<data_dir>/token",
        "the API token tmuxd generates when none is configured",
    ),
    (
        "<data_dir>/tmuxd.sock",
        "the unix socket: the daemon's own user needs no token there",
    ),
];

const EXIT_STATUS: [(&str, &str); 5] = [
    ("0", "ok"),
    (
        "1",
        "error: daemon unreachable or refused, no such session, a wait an ended session cannot satisfy",
    ),
    (
        "2",
        "usage: a bad flag or value, an ambiguous session; nothing was changed",
    ),
    ("3", "wait timed out"),
    ("78", "bad configuration"),
];

/// roff for the extra sections, appended to the generated page.
pub fn extra_sections() -> String {
    let mut page = String::new();
    section(&mut page, "STATES", &STATES);
    let keys: Vec<(String, String)> = crate::config::keys()
        .iter()
        .map(|key| {
            let var = crate::config::ENV_VARS
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, var)| format!("environment: {var}"))
                .unwrap_or_default();
            ((*key).to_owned(), var)
        })
        .collect();
    let keys: Vec<(&str, &str)> = keys.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let _ = writeln!(
        page,
        ".SH CONFIGURATION\nDefaults < config file < TMUXD_* variables < flags. \
         `tmuxd config` prints the effective value of each key and where it came from."
    );
    entries(&mut page, &keys);
    section(&mut page, "ENVIRONMENT", &ENVIRONMENT);
    section(&mut page, "FILES", &FILES);
    section(&mut page, "EXIT STATUS", &EXIT_STATUS);
    page
}

fn section(page: &mut String, title: &str, rows: &[(&str, &str)]) {
    let _ = writeln!(page, ".SH \"{title}\"");
    entries(page, rows);
}

fn entries(page: &mut String, rows: &[(&str, &str)]) {
    for (name, text) in rows {
        let _ = writeln!(page, ".TP\n\\fB{}\\fR\n{}", escape(name), escape(text));
    }
}

/// Backslashes and dashes as roff wants them; a line starting with `.` or
/// `'` would be a request.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_text_is_escaped() {
        assert_eq!(escape("a-b"), "a\\-b");
        assert_eq!(escape(".x"), "\\&.x");
        assert_eq!(escape("c:\\d"), "c:\\ed");
    }

    #[test]
    fn every_key_and_state_is_in_the_page() {
        let page = extra_sections();
        for key in crate::config::keys() {
            assert!(page.contains(&escape(key)), "{key}");
        }
        assert!(page.contains("environment: TMUXD_TMUX_BIN"));
        for heading in [
            "STATES",
            "CONFIGURATION",
            "ENVIRONMENT",
            "FILES",
            "EXIT STATUS",
        ] {
            assert!(page.contains(heading), "{heading}");
        }
    }
}
