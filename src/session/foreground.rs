//! Who holds a pane's terminal, read from /proc without forking: the pane's
//! first process is in the foreground when the terminal's foreground process
//! group (`tpgid`) is its own group.

use super::state::Foreground;

/// Programs that count as a shell waiting at its prompt.
const SHELLS: &[&str] = &[
    "bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "elvish", "xonsh",
    "pwsh",
];

pub fn is_shell(command: &str) -> bool {
    let name = command.trim_start_matches('-');
    SHELLS.contains(&name)
}

/// From /proc when the pane's pid is known (same host, same pid namespace),
/// else from tmux's `pane_current_command` as of the last discovery tick.
pub fn probe(pane_pid: Option<u32>, current_command: &str) -> Foreground {
    if let Some(foreground) = pane_pid.and_then(from_proc) {
        return foreground;
    }
    match current_command {
        "" => Foreground::Unknown,
        command if is_shell(command) => Foreground::Shell,
        _ => Foreground::Other,
    }
}

fn from_proc(pid: u32) -> Option<Foreground> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let (pgrp, tpgid) = parse_stat(&stat)?;
    Some(if tpgid == pgrp && is_shell(comm.trim()) {
        Foreground::Shell
    } else {
        Foreground::Other
    })
}

/// What a pane's terminal runs now, as tmux's `pane_current_command` and
/// `pane_current_path` would say, read from /proc without asking tmux: the
/// leader of the terminal's foreground process group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub command: String,
    pub cwd: String,
}

pub fn running(pane_pid: u32) -> Option<Running> {
    let stat = std::fs::read_to_string(format!("/proc/{pane_pid}/stat")).ok()?;
    let (_, tpgid) = parse_stat(&stat)?;
    let leader = if tpgid > 0 { tpgid as u32 } else { pane_pid };
    let read = |pid: u32| {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
        Some(Running {
            command: comm.trim_end().to_owned(),
            cwd: cwd.to_string_lossy().into_owned(),
        })
    };
    // The group's leader may have exited while the group lives on.
    read(leader).or_else(|| read(pane_pid))
}

/// Whether `pid` is a live process (not gone, not a zombie).
pub fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace().next().map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// (pgrp, tpgid) from a /proc/PID/stat line; the command name may hold
/// spaces and parentheses, so fields are read after the last `)`.
fn parse_stat(stat: &str) -> Option<(i64, i64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((fields.get(2)?.parse().ok()?, fields.get(5)?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines() {
        let line = "4242 (ba sh) (x)) S 1 4242 4242 34816 5000 4194560 0 0";
        assert_eq!(parse_stat(line), Some((4242, 5000)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn shells() {
        assert!(is_shell("bash") && is_shell("-zsh") && is_shell("fish"));
        assert!(!is_shell("vim") && !is_shell("bash5") && !is_shell(""));
        assert_eq!(probe(None, "bash"), Foreground::Shell);
        assert_eq!(probe(None, "sleep"), Foreground::Other);
        assert_eq!(probe(None, ""), Foreground::Unknown);
    }

    #[test]
    fn running_reads_this_process() {
        let me = running(std::process::id()).expect("our own /proc entry");
        assert!(!me.command.is_empty());
        assert_eq!(
            me.cwd,
            std::env::current_dir().unwrap().to_string_lossy(),
            "{me:?}"
        );
        assert_eq!(running(u32::MAX), None);
    }

    #[test]
    fn this_test_process_is_not_a_shell() {
        assert_eq!(probe(Some(std::process::id()), "bash"), Foreground::Other);
    }
}
