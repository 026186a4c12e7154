//! Text that crosses tmux's format language, both ways: a value tmuxd
//! passes where tmux expands formats, kept literal (`Literal`), and a
//! free-text field read back in a row of fields (`free_text!`,
//! `read_free_text`).
//!
//! tmux expands formats in more arguments than `-F`: in 3.3a and 3.7c,
//! `new-session -s`, `-n` and `-c`, `new-window`/`split-window`/
//! `respawn-*` `-c` (in `spawn.c`), `new-window -n`, `rename-session`,
//! `rename-window`, `select-pane -T`, a `set-option` name and `-F` value,
//! `set-environment -F`. There `#(cmd)` runs a shell command, so a
//! directory named `#(touch x)` would run when tmuxd passed it as `-c`.
//! Not expanded, and so passed as they are: `send-keys` keys and `-l`
//! text, the shell command after `--`, a `set-option` value without `-F`,
//! `set-environment` values without `-F`, `select-layout` layouts and
//! targets.

/// A value tmux expands as a format where tmuxd means the text itself (a
/// cwd, a session or window name): its only way into an argv is `arg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal(String);

impl Literal {
    pub fn new(text: impl Into<String>) -> Self {
        Literal(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The argument that tmux's format expansion turns back into the text.
    ///
    /// `##` expands to `#`, so every `#` is doubled, except a run of `#`
    /// just before `[`: tmux copies such a run and the `[` as they are (a
    /// style, `format_expand1` in `format.c` of 3.3a and 3.7c), so
    /// doubling it would change the text. Nothing else is special outside
    /// a `#` sequence (`%` only where tmux asks for time formats, which no
    /// command taking a `Literal` does).
    pub fn arg(&self) -> String {
        let text = &self.0;
        let mut out = String::with_capacity(text.len() + 8);
        let mut rest = text.as_str();
        while let Some(at) = rest.find('#') {
            out.push_str(&rest[..at]);
            let run = rest[at..].len() - rest[at..].trim_start_matches('#').len();
            let hashes = &rest[at..at + run];
            rest = &rest[at + run..];
            out.push_str(hashes);
            if !rest.starts_with('[') {
                out.push_str(hashes);
            }
        }
        out.push_str(rest);
        out
    }
}

/// The format of a free-text field (a path, a name, a command) in a row
/// of tab-separated fields, one row a line: tmux escapes `\` as `\\`, tab
/// as `\t` and newline as `\n` (three `s/…/…/` substitutions, applied in
/// order to the value read once; tmux 3.2 and later), so no value can
/// shift a field or start a line. File names hold any byte but NUL and
/// `/`, which leaves no separator a path cannot contain (and tmux cannot
/// print NUL); window names and commands are any text. `read_free_text`
/// undoes it.
macro_rules! free_text {
    ($variable:literal) => {
        concat!(
            "#{s/\\\\/\\\\\\\\/;s/\t/\\\\t/;s/\n/\\\\n/:",
            $variable,
            "}"
        )
    };
}
pub(crate) use free_text;

/// A field printed by `free_text!`, as it was; `None` when it is not in
/// that form (a `\` before anything but `\`, `t` or `n`: a tmux that did
/// not substitute).
pub fn read_free_text(field: &str) -> Option<String> {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            't' => '\t',
            'n' => '\n',
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_every_hash_tmux_would_expand() {
        let cases = [
            ("/home/me/repo", "/home/me/repo"),
            ("#(touch x)", "##(touch x)"),
            ("/a/#{pane_id}/#H/b#", "/a/##{pane_id}/##H/b##"),
            ("##", "####"),
            ("a#,b#}c", "a##,b##}c"),
            // tmux keeps a run of `#` before `[` as it is.
            ("x#[fg=red]y", "x#[fg=red]y"),
            ("x##[y", "x##[y"),
            ("#[a#(b)]", "#[a##(b)]"),
            ("", ""),
            ("é#ü", "é##ü"),
        ];
        for (text, arg) in cases {
            assert_eq!(Literal::new(text).arg(), arg, "{text:?}");
        }
    }

    #[test]
    fn free_text_is_read_back_exactly() {
        assert_eq!(
            free_text!("pane_current_path"),
            "#{s/\\\\/\\\\\\\\/;s/\t/\\\\t/;s/\n/\\\\n/:pane_current_path}"
        );
        let cases: [(&str, Option<&str>); 6] = [
            ("/plain", Some("/plain")),
            ("a\\tb\\nc\\\\d", Some("a\tb\nc\\d")),
            ("\\\\t", Some("\\t")),
            ("", Some("")),
            ("bad\\x", None),
            ("trailing\\", None),
        ];
        for (field, text) in cases {
            assert_eq!(read_free_text(field).as_deref(), text, "{field:?}");
        }
    }
}
