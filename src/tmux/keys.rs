//! tmux key names accepted by the input endpoint.
//!
//! `send-keys` types any word it does not know as literal text, so a typo
//! like `Entr` would be typed into the session. Keys are checked here first.

/// Named keys tmux understands (compared case-insensitively, as tmux does).
const NAMED_KEYS: &[&str] = &[
    "Enter", "Escape", "Tab", "BTab", "BSpace", "Space", "Up", "Down", "Left", "Right", "Home",
    "End", "IC", "Insert", "DC", "Delete", "PageUp", "PgUp", "PPage", "PageDown", "PgDn", "NPage",
    "Any", "KP/", "KP*", "KP-", "KP7", "KP8", "KP9", "KP+", "KP4", "KP5", "KP6", "KP1", "KP2",
    "KP3", "KPEnter", "KP0", "KP.",
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown key `{key}` (use tmux key names such as Enter, C-c, Up, F5, M-x)")]
pub struct KeyError {
    pub key: String,
}

/// Accepts `[C-|M-|S-]*` followed by a named key, a function key `F1`-`F24`,
/// or one printable character.
pub fn validate_key(key: &str) -> Result<(), KeyError> {
    let mut rest = key;
    while rest.chars().count() > 2 {
        match rest.get(..2) {
            Some("C-" | "c-" | "M-" | "m-" | "S-" | "s-") => rest = &rest[2..],
            _ => break,
        }
    }
    if let Some(stripped) = rest.strip_prefix('^').filter(|r| r.chars().count() == 1) {
        rest = stripped;
    }
    let known = NAMED_KEYS.iter().any(|k| k.eq_ignore_ascii_case(rest))
        || is_function_key(rest)
        || is_single_printable(rest);
    if known {
        Ok(())
    } else {
        Err(KeyError {
            key: key.to_owned(),
        })
    }
}

fn is_function_key(key: &str) -> bool {
    let Some(number) = key.strip_prefix(['F', 'f']) else {
        return false;
    };
    matches!(number.parse::<u8>(), Ok(1..=24)) && !number.starts_with('0')
}

fn is_single_printable(key: &str) -> bool {
    let mut chars = key.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if !c.is_control() && !c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        for ok in [
            "Enter", "enter", "C-c", "M-x", "C-M-Left", "F5", "F12", "Up", "a", "^C", "S-Tab", "é",
            "KP5",
        ] {
            assert_eq!(validate_key(ok), Ok(()), "{ok}");
        }
        for bad in [
            "", "Entr", "F0", "F25", "F05", "C-", "hello", "C-Entr", " ", "\n", "ab",
        ] {
            assert!(validate_key(bad).is_err(), "{bad:?}");
        }
    }
}
