//! Printing: the API's JSON as is, or aligned tables for people. A closed
//! stdout (`tmuxd events | head -3`) ends the command quietly and
//! successfully instead of panicking.

use std::io::{ErrorKind, Write};

use serde::Serialize;
use serde_json::Value;

use super::client::ClientError;

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

/// Columns padded to their widest cell, two spaces apart, no trailing blanks.
pub fn table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header = header.map(str::to_owned);
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
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
    fn one_lines() {
        assert_eq!(one_line("a\nb\tc", 10), "a b c");
        assert_eq!(one_line("abcdefgh", 5), "abcd…");
        assert_eq!(one_line("  x  ", 5), "x");
    }
}
