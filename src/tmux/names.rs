//! Which session names tmuxd accepts, and why it refuses the others.
//!
//! tmux silently rewrites some names (`a:b` becomes `a_b`, `$` and `\` gain a
//! backslash), expands `#` in `new-session -s` as a format (`#(cmd)` runs a
//! shell command, `#H` becomes the host name), and reads others as targets
//! or flags, so a name that passes here round-trips exactly through
//! `new-session -s NAME` and `-t =NAME`. Discovery applies the same rule, so
//! an existing session whose name tmuxd could not address exactly is left
//! alone rather than adopted under a name that means something else.

/// Longest name accepted, in bytes.
const MAX_NAME_BYTES: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("session name is empty")]
    Empty,
    #[error("session name is longer than {MAX_NAME_BYTES} bytes")]
    TooLong,
    #[error("session name contains `{0}`, which tmux reads as a target separator")]
    Separator(char),
    #[error("session name starts with `-`, which tmux would read as an option")]
    LeadingDash,
    #[error("session name starts with `=`, which tmux reads as an exact-match marker")]
    LeadingEquals,
    #[error(
        "session name contains `{0}`, which tmux stores escaped (the name would not round-trip)"
    )]
    Escaped(char),
    #[error(
        "session name contains `#`, which tmux expands as a format (`#(cmd)` would run a command)"
    )]
    Format,
    #[error("session name contains a control character ({0:?})")]
    Control(char),
    #[error("session name has leading or trailing whitespace")]
    OuterWhitespace,
}

pub fn validate_session_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(NameError::TooLong);
    }
    if name.starts_with('-') {
        return Err(NameError::LeadingDash);
    }
    if name.starts_with('=') {
        return Err(NameError::LeadingEquals);
    }
    if name.trim() != name {
        return Err(NameError::OuterWhitespace);
    }
    for c in name.chars() {
        if c == ':' || c == '.' {
            return Err(NameError::Separator(c));
        }
        if c == '$' || c == '\\' {
            return Err(NameError::Escaped(c));
        }
        if c == '#' {
            return Err(NameError::Format);
        }
        if c.is_control() {
            return Err(NameError::Control(c));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let cases: &[(&str, Result<(), NameError>)] = &[
            ("build", Ok(())),
            ("0", Ok(())),
            ("my session", Ok(())),
            ("a=b", Ok(())),
            ("日本語-🚀", Ok(())),
            ("", Err(NameError::Empty)),
            ("a:b", Err(NameError::Separator(':'))),
            ("a.b", Err(NameError::Separator('.'))),
            ("$HOME", Err(NameError::Escaped('$'))),
            ("a\\b", Err(NameError::Escaped('\\'))),
            ("xy'\"~{}", Ok(())),
            ("x#y", Err(NameError::Format)),
            ("job#(touch pwned)x", Err(NameError::Format)),
            ("a#Hb", Err(NameError::Format)),
            ("a##b", Err(NameError::Format)),
            ("#S", Err(NameError::Format)),
            ("-x", Err(NameError::LeadingDash)),
            ("=x", Err(NameError::LeadingEquals)),
            ("a\nb", Err(NameError::Control('\n'))),
            ("a\tb", Err(NameError::Control('\t'))),
            ("a\u{7f}", Err(NameError::Control('\u{7f}'))),
            (" x", Err(NameError::OuterWhitespace)),
            ("x ", Err(NameError::OuterWhitespace)),
        ];
        for (name, want) in cases {
            assert_eq!(&validate_session_name(name), want, "name {name:?}");
        }
        assert_eq!(
            validate_session_name(&"x".repeat(201)),
            Err(NameError::TooLong)
        );
        assert_eq!(validate_session_name(&"x".repeat(200)), Ok(()));
    }
}
