//! Printing: the API's JSON as is, or aligned tables for people. A closed
//! stdout (`tmuxd events | head -3`) ends the command quietly and
//! successfully instead of panicking. Text a server sent reaches the
//! person's terminal through [`visible`]: sessions control their cwd, title,
//! process name and tmux name, and a terminal obeys escape sequences.

use std::borrow::Cow;
use std::io::{ErrorKind, Write};

use serde::Serialize;
use serde_json::Value;

use super::error::ClientError;

/// Writes all of `bytes` to stdout and flushes, so output reaches a pipe
/// as it comes; a reader that has gone becomes [`ClientError::StdoutClosed`].
pub fn write_stdout(bytes: &[u8]) -> Result<(), ClientError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            ErrorKind::BrokenPipe => ClientError::StdoutClosed,
            _ => ClientError::Io(e),
        })
}

pub fn print(text: &str) -> Result<(), ClientError> {
    write_stdout(text.as_bytes())
}

/// Pretty JSON and a newline.
pub fn print_json(value: &impl Serialize) -> Result<(), ClientError> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| ClientError::Protocol(e.to_string()))?;
    print(&format!("{text}\n"))
}

/// The API's JSON with `--json`, else what `human` renders from it.
pub fn print_either<T: Serialize>(
    json: bool,
    body: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), ClientError> {
    if json {
        print_json(body)
    } else {
        print(&human(body))
    }
}

/// Text for a terminal: every control character a terminal acts on (C0,
/// DEL, and C1 as UTF-8 encodes it, U+0080..U+009F, which many terminals
/// take as CSI, OSC...) is written as a visible escape, as `ls -b` and git
/// do: `\e`, `\t`, `\n`, `\r`, else `\xNN` (`\x9b` for U+009B). A
/// backslash is left as it is: the escapes are for safety, and `--json`
/// gives the exact text.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A line of JSON the daemon sent, printed for `--json`: as it is when it
/// is JSON (which holds no raw control character), else made [`visible`].
pub fn json_line(text: &str) -> Cow<'_, str> {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => Cow::Borrowed(text),
        Err(_) => visible(text),
    }
}

/// Columns padded to their widest cell, two spaces apart, no trailing
/// blanks; each cell made [`visible`].
pub fn table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let rows: Vec<[String; N]> = rows
        .iter()
        .map(|row| row.clone().map(|cell| visible(&cell).into_owned()))
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header = header.map(str::to_owned);
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// A string field, or "" (absent, null).
pub fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// One line of at most `max` characters: newlines and tabs become spaces,
/// and a cut is marked with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    if flat.chars().count() <= max {
        return flat.to_owned();
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let rows = [
            ["sess_1".to_owned(), "build".to_owned(), "idle".to_owned()],
            ["sess_10".to_owned(), "é".to_owned(), String::new()],
        ];
        let out = table(["ID", "NAME", "STATE"], &rows);
        assert_eq!(
            out,
            "ID       NAME   STATE\nsess_1   build  idle\nsess_10  é\n"
        );
    }

    #[test]
    fn control_characters_are_made_visible() {
        // (server text, as printed)
        let cases = [
            ("plain /home/u/src é 中", "plain /home/u/src é 中"),
            ("proj\x1b]0;X\x07\x1b[2J", "proj\\e]0;X\\x07\\e[2J"),
            ("a\tb\nc\rd", "a\\tb\\nc\\rd"),
            ("nul\0 del\x7f", "nul\\x00 del\\x7f"),
            (
                "csi\u{9b}2J osc\u{9d}52 \u{80}\u{9f}",
                "csi\\x9b2J osc\\x9d52 \\x80\\x9f",
            ),
            ("back\\slash", "back\\slash"),
            ("\u{a0}nbsp", "\u{a0}nbsp"),
        ];
        for (text, shown) in cases {
            assert_eq!(visible(text), shown, "{text:?}");
            assert!(
                !visible(text)
                    .chars()
                    .any(|c| c.is_control() || c == '\u{7f}'),
                "{text:?}"
            );
        }
        assert!(matches!(visible("clean"), Cow::Borrowed(_)));
        let cells = [["s\x1b[2J".to_owned(), "ok".to_owned()]];
        assert_eq!(table(["A", "B"], &cells), "A       B\ns\\e[2J  ok\n");
    }

    #[test]
    fn one_lines() {
        assert_eq!(one_line("a\nb\tc", 10), "a b c");
        assert_eq!(one_line("abcdefgh", 5), "abcd…");
        assert_eq!(one_line("  x  ", 5), "x");
    }
}
