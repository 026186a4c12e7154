//! Where a `match` wait looks: the screen's lines as the program printed
//! them (rows that wrap read together), top to bottom.

use regex::Regex;

use crate::session::ScreenSnapshot;
use crate::supervisor::types::MatchedLine;

/// The first line `regex` matches, top to bottom, as the program printed
/// it: a row that wraps is read together with the rows it goes on in, and
/// the match's `row` is the line's first.
pub fn find_line(regex: &Regex, screen: &ScreenSnapshot) -> Option<MatchedLine> {
    logical_lines(&screen.lines, &screen.wrapped)
        .into_iter()
        .find_map(|(row, line)| {
            regex.find(&line).map(|m| MatchedLine {
                row,
                text: m.as_str().to_owned(),
                line: line.trim_end().to_owned(),
            })
        })
}

/// `lines` joined where a row wraps (`wrapped` lists such rows), each with
/// the row it starts on.
fn logical_lines(lines: &[String], wrapped: &[u16]) -> Vec<(usize, String)> {
    let mut logical: Vec<(usize, String)> = Vec::new();
    let mut goes_on = false;
    for (row, text) in lines.iter().enumerate() {
        match logical.last_mut() {
            Some((_, line)) if goes_on => line.push_str(text),
            _ => logical.push((row, text.clone())),
        }
        goes_on = u16::try_from(row).is_ok_and(|row| wrapped.contains(&row));
    }
    logical
}

/// A screen of `lines` for tests, with `wrapped` rows.
#[cfg(test)]
pub(in crate::supervisor::wait) fn screen_of(lines: &[String], wrapped: &[u16]) -> ScreenSnapshot {
    ScreenSnapshot {
        cols: 10,
        rows: lines.len() as u16,
        pane: None,
        cursor: crate::session::Cursor {
            row: 0,
            col: 0,
            visible: true,
        },
        alternate_screen: false,
        title: String::new(),
        lines: lines.to_vec(),
        wrapped: wrapped.to_vec(),
        copy_mode: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_is_found() {
        let lines: Vec<String> = ["$ make", "error: bad   ", "error: worse"]
            .map(String::from)
            .to_vec();
        let regex = Regex::new(r"error: \w+").unwrap();
        assert_eq!(
            find_line(&regex, &screen_of(&lines, &[])),
            Some(MatchedLine {
                row: 1,
                line: "error: bad".into(),
                text: "error: bad".into()
            })
        );
        assert_eq!(
            find_line(&Regex::new("nope").unwrap(), &screen_of(&lines, &[])),
            None
        );
    }

    /// Issue 20, item 3: a line longer than the pane is matched, and
    /// answered, whole.
    #[test]
    fn a_wrapped_line_is_read_whole() {
        let lines: Vec<String> = ["$ test", "0 passed; 0 ", "filtered out", "; finished", "x"]
            .map(String::from)
            .to_vec();
        let found = find_line(
            &Regex::new("filtered out; fini").unwrap(),
            &screen_of(&lines, &[1, 2]),
        );
        assert_eq!(
            found,
            Some(MatchedLine {
                row: 1,
                line: "0 passed; 0 filtered out; finished".into(),
                text: "filtered out; fini".into(),
            })
        );
        // Unwrapped rows stay apart.
        let found = find_line(&Regex::new("0 filtered").unwrap(), &screen_of(&lines, &[]));
        assert_eq!(found, None);
    }
}
