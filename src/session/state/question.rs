//! Whether a screen asks something: the text before the cursor on its row
//! ends in a question mark or a yes/no choice. Evidence that a program
//! blocked in poll/epoll waits for an answer, not for its model or the
//! network; on its own it says nothing (a program not waiting may print a
//! question).

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
    use super::asks;

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
