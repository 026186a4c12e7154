//! What holds a pane's terminal and what it is doing, read from /proc
//! without forking: the terminal's foreground process group (`tpgid` of
//! the pane's first process), each member's scheduler state and CPU ticks
//! (`stat`), and where a sleeping member waits (`syscall`: a read of the
//! terminal, a select/poll/epoll, with or without a timeout; an epoll's
//! descriptors from `fdinfo`; `wchan` when `syscall` is not readable).

use std::path::PathBuf;

use super::state::Activity;

/// Programs that count as a shell.
const SHELLS: &[&str] = &[
    "bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "elvish", "xonsh",
    "pwsh",
];

/// Processes looked at per probe at most: the descendants of a pane are
/// walked to find the foreground group's members.
const MAX_PROCESSES: usize = 256;

pub fn is_shell(command: &str) -> bool {
    SHELLS.contains(&command.trim_start_matches('-'))
}

/// The foreground group of `pane_pid`'s terminal: what it does, its id and
/// the CPU ticks its members (and their reaped children) used so far.
/// `Unknown` when /proc says nothing (another pid namespace, a fake tmux).
pub fn look(pane_pid: u32) -> (Activity, Option<(u32, u64)>) {
    let Some(pane) = read_stat(pane_pid) else {
        return (Activity::Unknown, None);
    };
    let Ok(group) = u32::try_from(pane.tpgid) else {
        return (Activity::Unknown, None);
    };
    let mut members = group_members(pane_pid, group);
    if members.is_empty() {
        // Not a descendant of the pane's process (or no `children` files).
        match read_stat(group) {
            Some(stat) if stat.pgrp == pane.tpgid => members.push((group, stat)),
            _ => return (Activity::Unknown, None),
        }
    }
    let ticks = members.iter().map(|(_, s)| s.ticks).sum();
    let tty = terminal_of(pane_pid);
    (classify(&members, tty.as_deref()), Some((group, ticks)))
}

/// What the members together are doing: one on a CPU makes the group
/// running; otherwise one reading the terminal makes it a reader.
fn classify(members: &[(u32, Stat)], tty: Option<&str>) -> Activity {
    if members.iter().any(|(_, s)| matches!(s.state, 'R' | 'D')) {
        return Activity::Running;
    }
    let mut event_wait = None;
    for (pid, stat) in members {
        if stat.state == 'Z' {
            continue;
        }
        match wait_of(*pid, tty) {
            Wait::Terminal(how) => return terminal_wait(*pid, how),
            Wait::Several => event_wait = event_wait.or(Some(*pid)),
            Wait::Other => {}
        }
    }
    match event_wait {
        Some(pid) if interactive_shell(pid).is_some() => Activity::ShellPrompt,
        Some(_) => Activity::EventWait,
        None => Activity::Blocked,
    }
}

/// What a process waiting on its terminal alone is doing.
fn terminal_wait(pid: u32, how: TerminalWait) -> Activity {
    match (interactive_shell(pid), how) {
        (Some(shell), how) => shell_wait(&shell, how),
        (None, TerminalWait::Timed) => Activity::TerminalTimed,
        (None, _) => Activity::TerminalRead,
    }
}

/// An interactive shell reading its terminal: at its prompt, or in its
/// `read` builtin, as measured: bash's readline waits in select at the
/// prompt and its `read` in read(2) (`read -e` uses readline: a prompt);
/// dash reads 8 KiB at its prompt and one byte in `read`. Other shells
/// are taken to be at their prompt (OSC 133 marks tell them apart, see
/// the detector).
fn shell_wait(shell: &str, how: TerminalWait) -> Activity {
    match (shell, how) {
        ("bash", TerminalWait::Read { .. }) => Activity::ShellRead,
        ("dash", TerminalWait::Read { count: 1 }) => Activity::ShellRead,
        _ => Activity::ShellPrompt,
    }
}

/// Where a sleeping process waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// On the terminal alone.
    Terminal(TerminalWait),
    /// In poll/epoll/select over several descriptors, the terminal its input.
    Several,
    Other,
}

/// How a process waits on its terminal alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TerminalWait {
    /// In read(2), for `count` bytes.
    Read { count: u64 },
    /// In select/epoll until it is readable.
    Ready,
    /// In select/epoll with a timeout: it wakes by itself.
    Timed,
    /// As `wchan` says, which tells no more.
    Unknown,
}

fn wait_of(pid: u32, tty: Option<&str>) -> Wait {
    let is_tty = |fd: u64| fd_is_terminal(pid, fd, tty);
    if let Ok(line) = std::fs::read_to_string(format!("/proc/{pid}/syscall"))
        && let Some((nr, args)) = parse_syscall(&line)
    {
        let ready = |timed: bool| match timed {
            true => Wait::Terminal(TerminalWait::Timed),
            false => Wait::Terminal(TerminalWait::Ready),
        };
        return match syscall_kind(nr) {
            Some(Call::Read) if is_tty(args[0]) => {
                Wait::Terminal(TerminalWait::Read { count: args[2] })
            }
            // Only descriptors below nfds can be in the sets: 1..=3 means
            // stdio. The fifth argument is the timeout, NULL for none.
            Some(Call::Select) if (1..=3).contains(&args[0]) && is_tty(0) => ready(args[4] != 0),
            Some(Call::Epoll { timeout_ptr }) if epoll_watches_only(pid, args[0], &is_tty) => {
                let timed = match timeout_ptr {
                    true => args[3] != 0,
                    false => args[3] as u32 != u32::MAX,
                };
                ready(timed)
            }
            Some(Call::Select | Call::Poll | Call::Epoll { .. }) if is_tty(0) => Wait::Several,
            _ => Wait::Other,
        };
    }
    // `syscall` needs ptrace rights (Yama may refuse); `wchan` does not.
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    match wchan.trim() {
        "n_tty_read" | "wait_woken" if is_tty(0) => Wait::Terminal(TerminalWait::Unknown),
        w if is_tty(0)
            && (w.starts_with("poll_schedule_timeout")
                || ["do_select", "do_sys_poll", "ep_poll", "do_epoll_wait"].contains(&w)) =>
        {
            Wait::Several
        }
        _ => Wait::Other,
    }
}

/// The syscalls that mean waiting for input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Read,
    Select,
    Poll,
    /// `epoll_wait`/`epoll_pwait` (timeout in ms, -1 for none) or
    /// `epoll_pwait2` (`timeout_ptr`: a pointer, NULL for none), as the
    /// fourth argument.
    Epoll {
        timeout_ptr: bool,
    },
}

#[cfg(target_arch = "x86_64")]
fn syscall_kind(nr: i64) -> Option<Call> {
    match nr {
        0 | 17 | 19 | 295 => Some(Call::Read),
        23 | 270 => Some(Call::Select),
        7 | 271 => Some(Call::Poll),
        232 | 281 => Some(Call::Epoll { timeout_ptr: false }),
        441 => Some(Call::Epoll { timeout_ptr: true }),
        _ => None,
    }
}

#[cfg(target_arch = "aarch64")]
fn syscall_kind(nr: i64) -> Option<Call> {
    match nr {
        63 | 65 | 67 | 69 => Some(Call::Read),
        72 => Some(Call::Select),
        73 => Some(Call::Poll),
        22 => Some(Call::Epoll { timeout_ptr: false }),
        441 => Some(Call::Epoll { timeout_ptr: true }),
        _ => None,
    }
}

/// Whether the epoll instance `epfd` of `pid` watches the terminal and
/// nothing else (its `fdinfo` lists a `tfd:` line per descriptor).
fn epoll_watches_only(pid: u32, epfd: u64, is_tty: &dyn Fn(u64) -> bool) -> bool {
    let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
        return false;
    };
    epoll_targets(&info).is_some_and(|fds| !fds.is_empty() && fds.into_iter().all(is_tty))
}

/// The descriptors an epoll's `fdinfo` lists (`tfd:        5 events: ...`).
fn epoll_targets(info: &str) -> Option<Vec<u64>> {
    info.lines()
        .filter_map(|l| l.strip_prefix("tfd:"))
        .map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn syscall_kind(_: i64) -> Option<Call> {
    None
}

/// `NR ARG0 ARG1 ...` (hex arguments): the number and the first five;
/// `running` reads as None.
fn parse_syscall(line: &str) -> Option<(i64, [u64; 5])> {
    let mut words = line.split_whitespace();
    let nr: i64 = words.next()?.parse().ok()?;
    let mut arg = || u64::from_str_radix(words.next()?.trim_start_matches("0x"), 16).ok();
    Some((nr, [arg()?, arg()?, arg()?, arg()?, arg()?]))
}

/// The pane's terminal, as its first process has it open.
fn terminal_of(pane_pid: u32) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/{pane_pid}/fd/0")).ok()?;
    Some(link.to_string_lossy().into_owned()).filter(|l| l.starts_with("/dev/"))
}

fn fd_is_terminal(pid: u32, fd: u64, tty: Option<&str>) -> bool {
    let Ok(link) = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) else {
        return false;
    };
    let link = link.to_string_lossy();
    match tty {
        Some(tty) => link == tty || link == "/dev/tty",
        None => link.starts_with("/dev/pts/") || link == "/dev/tty",
    }
}

/// A shell at its prompt, not one running a script or `-c` command: its
/// name.
fn interactive_shell(pid: u32) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let program = args.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    let name = name.trim_start_matches('-');
    (is_shell(name) && interactive_args(&args[1..])).then(|| name.to_owned())
}

/// No `-c`, and no script to run: the shell reads commands from its terminal.
fn interactive_args(args: &[String]) -> bool {
    for arg in args {
        if arg == "-i" || arg.starts_with("--") {
            continue;
        }
        match arg.strip_prefix('-') {
            Some(flags) if flags.contains('c') && !flags.contains('i') => return false,
            Some(_) => {}
            None => return false,
        }
    }
    true
}

/// The members of process group `group` among `root` and its descendants.
fn group_members(root: u32, group: u32) -> Vec<(u32, Stat)> {
    let mut members = Vec::new();
    let mut queue = vec![root];
    let mut seen = 0;
    while let Some(pid) = queue.pop() {
        seen += 1;
        if seen > MAX_PROCESSES {
            break;
        }
        let Some(stat) = read_stat(pid) else {
            continue;
        };
        if u32::try_from(stat.pgrp) == Ok(group) {
            members.push((pid, stat));
        }
        queue.extend(children(pid));
    }
    members
}

fn children(pid: u32) -> Vec<u32> {
    let path = PathBuf::from(format!("/proc/{pid}/task/{pid}/children"));
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The fields of /proc/PID/stat a probe needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    state: char,
    pgrp: i64,
    tpgid: i64,
    /// utime + stime + cutime + cstime, in clock ticks.
    ticks: u64,
}

/// How process `pid` ended, while it is a zombie nobody has reaped yet:
/// (exit status, signal), from `/proc/PID/stat`'s `exit_code` (field 52,
/// a wait status). None once it is reaped, or while it runs.
pub fn zombie_exit(pid: u32) -> Option<(Option<i32>, Option<i32>)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first()? != &"Z" {
        return None;
    }
    // Fields after the name start at field 3 (the state).
    let code: i32 = fields.get(52 - 3)?.parse().ok()?;
    Some(wait_status(code))
}

/// A wait status as (exit status, signal).
fn wait_status(code: i32) -> (Option<i32>, Option<i32>) {
    match code & 0x7f {
        0 => (Some((code >> 8) & 0xff), None),
        signal => (None, Some(signal)),
    }
}

fn read_stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The command name may hold spaces and parentheses, so fields are read
/// after the last `)`.
fn parse_stat(stat: &str) -> Option<Stat> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let number = |i: usize| fields.get(i)?.parse::<i64>().ok();
    let ticks = [11, 12, 13, 14]
        .iter()
        .map(|&i| number(i).map(|n| n.max(0) as u64))
        .sum::<Option<u64>>()?;
    Some(Stat {
        state: fields.first()?.chars().next()?,
        pgrp: number(2)?,
        tpgid: number(5)?,
        ticks,
    })
}

/// What a pane's terminal runs now, as tmux's `pane_current_command` and
/// `pane_current_path` would say, read from /proc without asking tmux: the
/// leader of the terminal's foreground process group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Running {
    pub command: String,
    pub cwd: String,
    /// Its whole command line (`command_line`).
    pub argv: Vec<String>,
}

pub fn running(pane_pid: u32) -> Option<Running> {
    let stat = read_stat(pane_pid)?;
    let leader = u32::try_from(stat.tpgid)
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(pane_pid);
    let read = |pid: u32| {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        let command = comm.trim_end().to_owned();
        if is_unexecuted_fork(&command) {
            return None;
        }
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
        let argv = command_line(pid)
            .filter(|argv| !argv.is_empty())
            .unwrap_or_else(|| vec![command.clone()]);
        Some(Running {
            command,
            cwd: cwd.to_string_lossy().into_owned(),
            argv,
        })
    };
    // The group's leader may have exited while the group lives on.
    read(leader).or_else(|| read(pane_pid))
}

/// Whether a pane's process is still the tmux server's fork, before it
/// runs the pane's program: it has the server's name and the server's
/// argv (the `tmux new-session ...` that started the server), which are
/// not what the pane runs. A program that ends at once may never be seen
/// otherwise; better nothing than the server. (A tmux server of its own is
/// never a pane's foreground: it leaves the terminal.)
fn is_unexecuted_fork(comm: &str) -> bool {
    comm == "tmux: server"
}

/// Longest command line kept, in bytes: an argv may be huge (a linker's),
/// and the summary carries it in every listing.
const COMMAND_LINE_MAX_BYTES: usize = 4096;

/// A process's argv, from /proc (empty for a zombie), the arguments past
/// `COMMAND_LINE_MAX_BYTES` left out.
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(parse_command_line(&bytes, COMMAND_LINE_MAX_BYTES))
}

/// NUL-terminated arguments; an empty one (`sh -c ''`) is kept.
fn parse_command_line(bytes: &[u8], max_bytes: usize) -> Vec<String> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    let mut used = 0;
    bytes
        .split(|&b| b == 0)
        .take_while(|arg| {
            used += arg.len() + 1;
            used <= max_bytes
        })
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tmux_server_fork_is_not_a_program() {
        // (comm, a fork of the server that has not run its program yet)
        let table = [
            ("tmux: server", true),
            ("tmux: client", false),
            ("tmux", false),
            ("bash", false),
        ];
        for (comm, fork) in table {
            assert_eq!(is_unexecuted_fork(comm), fork, "{comm}");
        }
    }

    #[test]
    fn command_lines() {
        let cases: [(&[u8], usize, &[&str]); 6] = [
            (
                b"python3\0-c\0print(1)\0",
                100,
                &["python3", "-c", "print(1)"],
            ),
            (b"sh\0-c\0\0", 100, &["sh", "-c", ""]),
            (b"", 100, &[]),
            (b"no-terminator", 100, &["no-terminator"]),
            (b"aaaa\0bbbb\0cccc\0", 10, &["aaaa", "bbbb"]),
            (b"caf\xc3\xa9\0\xff\0", 100, &["caf\u{e9}", "\u{fffd}"]),
        ];
        for (bytes, max, want) in cases {
            assert_eq!(parse_command_line(bytes, max), want, "{bytes:?}");
        }
    }

    /// Issue 19: tmux 3.3a sometimes leaves a dead pane's program unreaped
    /// for seconds; its zombie still says how it ended.
    #[test]
    fn a_zombie_says_how_it_ended() {
        assert_eq!(wait_status(5 << 8), (Some(5), None));
        assert_eq!(wait_status(0), (Some(0), None));
        assert_eq!(wait_status(15), (None, Some(15)));
        let child = std::process::Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let exit = loop {
            if let Some(exit) = zombie_exit(pid) {
                break exit;
            }
            assert!(std::time::Instant::now() < deadline, "never a zombie");
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(exit, (Some(7), None));
        let mut child = child;
        child.wait().unwrap();
        assert_eq!(zombie_exit(pid), None, "reaped");
        assert_eq!(zombie_exit(std::process::id()), None, "running");
    }

    #[test]
    fn stat_lines() {
        let line = "4242 (ba sh) (x)) S 1 4242 4242 34816 5000 4194560 0 0 0 0 7 3 2 1 20 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: 'S',
                pgrp: 4242,
                tpgid: 5000,
                ticks: 13
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn syscall_lines() {
        // vim (no timeout) and top (a timeout) in pselect6 on the terminal.
        assert_eq!(
            parse_syscall("270 0x1 0x7ffc219dcd70 0x0 0x0 0x0 0x0 0x7ff 0x7ff"),
            Some((270, [1, 0x7ffc219dcd70, 0, 0, 0]))
        );
        assert_eq!(
            parse_syscall("270 0x1 0x7ffc3605d4e0 0x0 0x0 0x7ffc3605d440 0x7ffc3605d450 0x7f 0x7f"),
            Some((270, [1, 0x7ffc3605d4e0, 0, 0, 0x7ffc3605d440]))
        );
        assert_eq!(parse_syscall("running"), None);
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f"), None, "too short");
        assert_eq!(
            parse_syscall("-1 0x7ffd 0x7f 0x0 0x0 0x0 0x0 0x7ffd 0x7f"),
            Some((-1, [0x7ffd, 0x7f, 0, 0, 0]))
        );
    }

    /// (shell, how it waits, what it is doing), as measured with bash 5.2
    /// and dash 0.5 at their prompt and in `read`.
    #[test]
    fn shells_at_their_prompt_and_in_read() {
        let table = [
            ("bash", TerminalWait::Ready, Activity::ShellPrompt),
            (
                "bash",
                TerminalWait::Read { count: 4096 },
                Activity::ShellRead,
            ),
            (
                "dash",
                TerminalWait::Read { count: 8192 },
                Activity::ShellPrompt,
            ),
            ("dash", TerminalWait::Read { count: 1 }, Activity::ShellRead),
            (
                "zsh",
                TerminalWait::Read { count: 1 },
                Activity::ShellPrompt,
            ),
            ("bash", TerminalWait::Unknown, Activity::ShellPrompt),
        ];
        for (shell, how, activity) in table {
            assert_eq!(shell_wait(shell, how), activity, "{shell} {how:?}");
        }
    }

    #[test]
    fn epoll_fdinfo_lists_its_descriptors() {
        let info = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:18\n\
tfd:        5 events:       19 data:                5  pos:0 ino:2a1 sdev:e\n";
        assert_eq!(epoll_targets(info), Some(vec![0, 5]));
        assert_eq!(epoll_targets("pos:\t0\n"), Some(vec![]));
        assert_eq!(epoll_targets("tfd: x events: 1\n"), None);
    }

    /// This test process waits on an epoll of its own: /proc lists what it watches.
    #[test]
    fn epoll_of_this_process() {
        let epfd = unsafe { libc::epoll_create1(0) };
        assert!(epfd >= 0);
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        use std::os::fd::AsRawFd;
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 0,
        };
        let added =
            unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, a.as_raw_fd(), &mut event) };
        assert_eq!(added, 0);
        let me = std::process::id();
        let sock = a.as_raw_fd() as u64;
        assert!(epoll_watches_only(me, epfd as u64, &|fd| fd == sock));
        assert!(!epoll_watches_only(me, epfd as u64, &|fd| fd != sock));
        unsafe { libc::close(epfd) };
        drop(b);
    }

    #[test]
    fn shells_and_their_arguments() {
        assert!(is_shell("bash") && is_shell("-zsh") && is_shell("fish"));
        assert!(!is_shell("vim") && !is_shell("bash5") && !is_shell(""));
        let args = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert!(interactive_args(&args(&[])));
        assert!(interactive_args(&args(&["--norc", "--noprofile"])));
        assert!(interactive_args(&args(&["-l"])));
        assert!(interactive_args(&args(&["-i"])));
        assert!(!interactive_args(&args(&["-c", "echo hi"])));
        assert!(!interactive_args(&args(&["-lc", "echo hi"])));
        assert!(!interactive_args(&args(&["script.sh"])));
    }

    #[test]
    fn running_reads_this_process() {
        let me = running(std::process::id()).expect("our own /proc entry");
        assert!(!me.command.is_empty());
        let args: Vec<String> = std::env::args().collect();
        assert_eq!(me.argv, args, "{me:?}");
        assert_eq!(
            me.cwd,
            std::env::current_dir().unwrap().to_string_lossy(),
            "{me:?}"
        );
        assert_eq!(running(u32::MAX), None);
    }

    #[test]
    fn a_process_that_does_not_exist_is_unknown() {
        assert_eq!(look(u32::MAX), (Activity::Unknown, None));
    }
}
