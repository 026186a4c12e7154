//! `new-session`: the one command that makes a session (`Tmux::new_session`
//! runs it, with what `keep_exit` and `tag` add in the same call).

use super::{ParseError, TmuxCommand, expect_empty, owned};
use crate::tmux::format::Literal;

/// What `new-session` needs; tmux picks the defaults for what is `None`.
#[derive(Clone, Debug, Default)]
pub struct NewSession<'a> {
    pub name: &'a str,
    pub cwd: Option<&'a str>,
    pub size: Option<(u16, u16)>,
    /// A shell command run in the first window instead of the default shell.
    pub command: Option<&'a str>,
    /// Keep the panes of programs that exit (`remain-on-exit`, without the
    /// "Pane is dead" line) and mark the session, so its actor reads the
    /// exit status before ending the pane. Set in the same tmux call as
    /// the session is made, so a program that exits at once is kept too.
    pub keep_exit: bool,
    /// Mark the session with this id and list its panes, in the same call.
    pub tag: Option<&'a str>,
    /// Variables of the session's environment (`-e NAME=VALUE`), which
    /// every pane of it inherits; tmux expands nothing in them.
    pub env: &'a [(String, String)],
}

impl TmuxCommand for NewSession<'_> {
    type Output = ();

    /// `new-session -d -s NAME [-x C -y R] [-c CWD] [-e VAR=VALUE...] [-- COMMAND]`: tmux
    /// expands `-s` and `-c` as formats (`Literal`), not the command.
    fn args(&self) -> Vec<String> {
        let mut args = owned(&["new-session", "-d", "-s"]);
        args.push(Literal::new(self.name).arg());
        if let Some((cols, rows)) = self.size {
            args.extend(owned(&["-x", &cols.to_string(), "-y", &rows.to_string()]));
        }
        if let Some(cwd) = self.cwd {
            args.extend(["-c".to_owned(), Literal::new(cwd).arg()]);
        }
        for (name, value) in self.env {
            args.extend(["-e".to_owned(), format!("{name}={value}")]);
        }
        if let Some(command) = self.command {
            args.extend(["--".to_owned(), command.to_owned()]);
        }
        args
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<(), ParseError> {
        expect_empty("new-session", lines)
    }
}
