//! tmux's object ids as they appear in control mode and targets: `$N`
//! sessions, `@N` windows, `%N` panes. Ids are never reused by a server, so
//! they name an object more safely than its (renameable) name.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a tmux {kind} id (`{sigil}N`)")]
pub struct IdError {
    text: String,
    kind: &'static str,
    sigil: char,
}

macro_rules! tmux_id {
    ($(#[$doc:meta])* $name:ident, $sigil:literal, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", $sigil, self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdError;

            fn from_str(text: &str) -> Result<Self, IdError> {
                text.strip_prefix($sigil)
                    .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|digits| digits.parse().ok())
                    .map($name)
                    .ok_or_else(|| IdError {
                        text: text.to_owned(),
                        kind: $kind,
                        sigil: $sigil,
                    })
            }
        }
    };
}

tmux_id!(
    /// `$N`: a session.
    TmuxSessionId, '$', "session"
);
tmux_id!(
    /// `@N`: a window.
    WindowId, '@', "window"
);
tmux_id!(
    /// `%N`: a pane.
    PaneId, '%', "pane"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_reject_other_sigils() {
        assert_eq!("%12".parse::<PaneId>(), Ok(PaneId(12)));
        assert_eq!(PaneId(12).to_string(), "%12");
        assert_eq!("@0".parse::<WindowId>(), Ok(WindowId(0)));
        assert_eq!("$3".parse::<TmuxSessionId>().unwrap().to_string(), "$3");
        for bad in ["", "%", "@1", "%-1", "%+1", "% 1", "%1x", "%99999999999"] {
            assert!(bad.parse::<PaneId>().is_err(), "{bad:?}");
        }
    }
}
