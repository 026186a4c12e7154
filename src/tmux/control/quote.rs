//! Turning an argv into text for tmux's own command parser (a control
//! client's input line), and the one escape argv needs when forking `tmux`.
//!
//! tmux's parser (man tmux, PARSING SYNTAX) splits commands at unquoted `;`
//! and at newlines, drops unquoted `#` comments, and expands `$VAR`, a
//! leading `~` and `\` escapes outside single quotes. Inside single quotes
//! everything is literal except the closing quote; a newline cannot appear
//! at all (it ends the control line), and tmux 3.3 splits a token at bytes
//! that are not UTF-8. So: plain words go bare, anything else in single
//! quotes (`'\''` for a quote), and an argument with a newline or non-UTF-8
//! bytes in double quotes with `\ooo` escapes. NUL cannot be sent: tmux
//! arguments are C strings (use `send-keys -H 00` for such bytes).

use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuoteError {
    #[error("a tmux argument cannot contain a NUL byte")]
    Nul,
    #[error("a tmux command needs at least a command name")]
    Empty,
}

/// Bytes that need no quoting inside a word. `=` is safe past the command
/// name (the only place `NAME=value` means anything).
fn is_plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-_./:=@%,+^".contains(&byte)
}

/// A word that may go bare. An unquoted word starting with `%` is read as
/// a directive (`%if`, `%hidden`) unless the rest is digits (`%12`), so
/// `%0:continue` must be quoted.
fn is_plain_word(arg: &[u8]) -> bool {
    match arg {
        [] => false,
        [b'%', rest @ ..] => !rest.is_empty() && rest.iter().all(u8::is_ascii_digit),
        _ => arg.iter().copied().all(is_plain),
    }
}

/// One argument, quoted for tmux's parser.
pub fn quote_arg(arg: &[u8]) -> Result<String, QuoteError> {
    if arg.contains(&0) {
        return Err(QuoteError::Nul);
    }
    if is_plain_word(arg) {
        return Ok(String::from_utf8_lossy(arg).into_owned());
    }
    match std::str::from_utf8(arg) {
        Ok(text) if !text.contains('\n') => Ok(single_quoted(text)),
        _ => Ok(double_quoted(arg)),
    }
}

fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Double quotes with every byte that could mean something escaped: `\`,
/// `"`, `$`, `~` by backslash; control bytes and bytes of invalid UTF-8 as
/// `\ooo`; valid multi-byte characters raw.
fn double_quoted(arg: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in arg.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\\' | '"' | '$' | '~' => {
                    out.push('\\');
                    out.push(ch);
                }
                c if (c as u32) < 0x20 || c == '\x7f' => {
                    let _ = write!(out, "\\{:03o}", c as u32);
                }
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\{byte:03o}");
        }
    }
    out.push('"');
    out
}

/// A whole control-mode input line: the quoted args, spaces, `\n`. One line
/// is one command, so it gets exactly one reply block.
pub fn command_line<S: AsRef<[u8]>>(args: &[S]) -> Result<Vec<u8>, QuoteError> {
    if args.is_empty() {
        return Err(QuoteError::Empty);
    }
    let mut line = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        line.extend_from_slice(quote_arg(arg.as_ref())?.as_bytes());
    }
    line.push(b'\n');
    Ok(line)
}

/// For `tmux ARGS...` run as a child: tmux re-reads each argv word only to
/// split command sequences at a trailing `;` (`tmux neww foo\;` is one
/// argument `foo;`), so an argument ending in `;` gets a `\` before it.
pub fn argv_arg(arg: &[u8]) -> Vec<u8> {
    match arg.strip_suffix(b";") {
        Some(head) => [head, b"\\;"].concat(),
        None => arg.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_table() {
        let table: &[(&[u8], &str)] = &[
            (b"send-keys", "send-keys"),
            (b"%12", "%12"),
            (b"%12:continue", "'%12:continue'"),
            (b"%if", "'%if'"),
            (b"%", "'%'"),
            (b"a%b", "a%b"),
            (b"=my-session:", "=my-session:"),
            (b"", "''"),
            (b"a b", "'a b'"),
            (b"it's", r"'it'\''s'"),
            (b"'", r"''\'''"),
            (b"a;b", "'a;b'"),
            (b";", "';'"),
            (b"#{pane_id}", "'#{pane_id}'"),
            (b"~", "'~'"),
            (b"$HOME", "'$HOME'"),
            (b"a\\b", r"'a\b'"),
            (b"tab\there\r", "'tab\there\r'"),
            ("héllo ✓".as_bytes(), "'héllo ✓'"),
            (b"a\nb", r#""a\012b""#),
            (b"~/x\n$y \"q\" \\", r#""\~/x\012\$y \"q\" \\""#),
            (b"\xff\xfe\n\xc3\xa9", r#""\377\376\012é""#),
            (b"\x1b\x7f\n", r#""\033\177\012""#),
        ];
        for (arg, want) in table {
            assert_eq!(
                quote_arg(arg).unwrap(),
                *want,
                "{:?}",
                String::from_utf8_lossy(arg)
            );
        }
        assert_eq!(quote_arg(b"a\0b"), Err(QuoteError::Nul));
    }

    #[test]
    fn a_command_is_one_line() {
        let line = command_line(&["display-message", "-p", "--", "a\nb; c"]).unwrap();
        assert_eq!(line, b"display-message -p -- \"a\\012b; c\"\n");
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(command_line::<&str>(&[]), Err(QuoteError::Empty));
    }

    #[test]
    fn argv_escapes_only_a_trailing_semicolon() {
        for (arg, want) in [
            ("ls;", r"ls\;"),
            (";", r"\;"),
            (r"a\;", r"a\\;"),
            ("a;b", "a;b"),
            ("", ""),
        ] {
            assert_eq!(argv_arg(arg.as_bytes()), want.as_bytes(), "{arg:?}");
        }
    }
}
