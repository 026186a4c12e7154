//! Whether a screen asks something: the text before the cursor on its row
//! ends in a question mark or a yes/no choice. Evidence that a program
//! blocked in poll/epoll waits for an answer, not for its model or the
//! network; on its own it says nothing (a program not waiting may print a
//! question).

/// Whether the screen asks something where its cursor is: the text before
/// the cursor on its row, or, with the cursor on a blank row (a TUI that
/// parks it below what it drew), the last row with text above it. A cursor
/// at the start of a row with text (an editor on a file's first line) asks
/// nothing, whatever that line says. `rows`: the screen's rows down to the
/// cursor's; `col`: the cursor's column.
pub fn asks_at_cursor(rows: &[String], col: usize) -> bool {
    let Some(cursor_row) = rows.last() else {
        return false;
    };
    if !cursor_row.trim().is_empty() {
        let before: String = cursor_row.chars().take(col).collect();
        return asks(&before);
    }
    rows.iter()
        .rev()
        .find(|r| !r.trim().is_empty())
        .is_some_and(|r| asks(r))
}

/// The cursor's row up to the cursor, as the screen shows it.
pub fn asks(before_cursor: &str) -> bool {
    let text = before_cursor
        .trim_end()
        .trim_end_matches([':', '>', '»', '›'])
        .trim_end()
        .to_lowercase();
    if text.ends_with('?') {
        return true;
    }
    const CHOICES: &[&str] = &[
        "[y/n]", "(y/n)", "[yes/no]", "(yes/no)", "[y/n/a]", "(y/n/a)", "[y/n/q]",
    ];
    if CHOICES.iter().any(|c| text.ends_with(c)) {
        return true;
    }
    // A hint after the question, `(default: no)` or a live `(waiting 12s)`.
    match text.strip_suffix(')').and_then(|t| t.rsplit_once('(')) {
        Some((question, _)) => question.trim_end().ends_with('?'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{asks, asks_at_cursor};

    #[test]
    fn where_the_cursor_is() {
        let rows = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let table = [
            (rows(&["Proceed? [y/N] "]), 15, true),
            (rows(&["Proceed? [y/N] y"]), 16, false),
            // A TUI parks its cursor on a blank row below its question.
            (rows(&["Apply? (y/n)", "", ""]), 0, true),
            // vim on a file whose first line is a question: the cursor is
            // at its start, nothing before it asks.
            (rows(&["What to do today?"]), 0, false),
            (rows(&["  "]), 0, false),
            (rows(&[]), 0, false),
        ];
        for (screen, col, want) in table {
            assert_eq!(asks_at_cursor(&screen, col), want, "{screen:?} at {col}");
        }
    }

    #[test]
    fn questions_and_not() {
        let table = [
            ("Proceed? [y/N] ", true),
            ("Overwrite file.txt? (y/n)", true),
            ("Continue [Y/n]: ", true),
            ("? Which template do you want? ", true),
            ("Are you sure you want to delete 3 files?", true),
            ("Type yes to confirm (yes/no) > ", true),
            ("$ ", false),
            (">>> ", false),
            ("Thinking…", false),
            ("│ > ", false),
            ("", false),
            ("Downloading 45%", false),
            ("What now? (waiting 12s)", true),
            ("Overwrite? (default: no)", true),
            ("Compiling (3/10)", false),
        ];
        for (line, want) in table {
            assert_eq!(asks(line), want, "{line:?}");
        }
    }
}
