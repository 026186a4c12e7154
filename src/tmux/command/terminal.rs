//! A pane's terminal as tmux reports it in formats: size, cursor, modes,
//! scroll region and title. A seed takes it from `list-panes`, a
//! settled-screen check from `display-message`; both read it here.

use std::str::FromStr;

/// The format's fields, tab-separated, in `PaneState::parse`'s order. The
/// title comes last, as it alone may hold a tab: a format that includes
/// this one ends with it.
macro_rules! pane_state_format {
    () => {
        "#{pane_width}\t#{pane_height}\t#{cursor_x}\t#{cursor_y}\t#{cursor_flag}\t#{alternate_on}\t#{scroll_region_upper}\t#{scroll_region_lower}\t#{origin_flag}\t#{pane_title}"
    };
}
pub(super) use pane_state_format;

/// How many fields `pane_state_format!` has.
pub(super) const PANE_STATE_FIELDS: usize = 10;

/// What tmux knows about a pane's terminal beyond its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PaneState {
    pub cols: u16,
    pub rows: u16,
    pub cursor_x: u16,
    pub cursor_y: u16,
    pub cursor_visible: bool,
    pub alternate_on: bool,
    /// The scroll region, inclusive rows.
    pub scroll_upper: u16,
    pub scroll_lower: u16,
    pub origin_mode: bool,
    pub title: String,
}

impl PaneState {
    /// The fields of `pane_state_format!`, in order.
    pub(super) fn parse(fields: &[&str]) -> Option<PaneState> {
        let [
            cols,
            rows,
            cursor_x,
            cursor_y,
            cursor_flag,
            alternate,
            upper,
            lower,
            origin,
            title,
        ] = fields
        else {
            return None;
        };
        Some(PaneState {
            cols: cols.parse().ok()?,
            rows: rows.parse().ok()?,
            cursor_x: number(cursor_x)?,
            cursor_y: number(cursor_y)?,
            cursor_visible: flag(cursor_flag),
            alternate_on: flag(alternate),
            scroll_upper: number(upper)?,
            scroll_lower: number(lower)?,
            origin_mode: flag(origin),
            title: (*title).to_owned(),
        })
    }
}

/// A format's flag: `1` is set.
pub(super) fn flag(v: &str) -> bool {
    v == "1"
}

/// A format's number. tmux leaves a format empty where it does not apply
/// (no copy mode), as a fake or older tmux may: that reads as 0.
pub(super) fn number<T: FromStr + Default>(v: &str) -> Option<T> {
    if v.is_empty() {
        Some(T::default())
    } else {
        v.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_empty_as_zero_and_refuse_the_rest() {
        assert_eq!(number::<u16>(""), Some(0));
        assert_eq!(number::<u16>("42"), Some(42));
        for bad in ["-1", "x", "70000", " 1"] {
            assert_eq!(number::<u16>(bad), None, "{bad:?}");
        }
        assert_eq!(pane_state_format!().split('\t').count(), PANE_STATE_FIELDS);
    }
}
