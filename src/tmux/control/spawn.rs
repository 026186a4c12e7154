//! Starting the `tmux -C attach-session` child: a clean environment, pipes,
//! its own process group, and a link to tmuxd's life.

use std::process::Stdio;

use tokio::process::Child;

use super::error::ControlError;
use crate::tmux::command::ClientFlag;
use crate::tmux::{Tmux, session_target};

/// `tmux [global options] -N -C attach-session [-f FLAGS] -t =NAME`.
/// `-N`: `attach-session` would start a server when none runs (after a
/// crash, say), and that server would hold the client's pipes; with `-N`
/// the attach fails instead.
pub(super) fn spawn_client(
    tmux: &Tmux,
    name: &str,
    flags: &[ClientFlag],
) -> Result<Child, ControlError> {
    let mut command = tmux.command();
    command.args(["-N", "-C", "attach-session"]);
    if !flags.is_empty() {
        command.args(["-f", &ClientFlag::list(flags)]);
    }
    command
        .args(["-t", &session_target(name)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // tmux reports control-mode errors on stdout (`%error`, `%exit REASON`).
        .stderr(Stdio::null())
        // Not in tmuxd's process group: a Ctrl-C meant for tmuxd must not
        // reach its clients before it closes them itself.
        .process_group(0);
    die_with_parent(&mut command);
    command.spawn().map_err(|source| ControlError::Spawn {
        bin: tmux.bin().to_owned(),
        source,
    })
}

/// If tmuxd dies (even by SIGKILL) the tmux client must die too. Its pipes
/// close, but tmux 3.3a does not drop a control client whose stdout pipe
/// broke while output was pending: it keeps it attached forever (the pane
/// freezes without `pause-after`, `kill-server` hangs, the server never
/// exits). The client process exiting is what makes the server let go.
/// Linux delivers SIGTERM on the death of the spawning *thread*, so spawn
/// from a thread that lives as long as the client (a runtime worker).
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: only async-signal-safe calls (prctl, getppid, raise) run
    // between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() as u32 != parent {
                libc::raise(libc::SIGTERM);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut tokio::process::Command) {}
