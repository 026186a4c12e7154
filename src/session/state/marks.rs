//! What a pane's output carries besides text: BEL outside escape strings
//! and OSC 133 prompt marks (`A` prompt, `B` input, `C` command output,
//! `D;STATUS` command done), found across chunk boundaries.

/// Bytes of an OSC string kept to recognise `133;D;STATUS`.
const PREFIX: usize = 16;

/// Where the scanner is, across chunk boundaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Scan {
    #[default]
    Ground,
    Escape,
    /// Inside an OSC string; `prefix` holds its first bytes.
    Osc {
        len: u8,
        prefix: [u8; PREFIX],
    },
    OscEscape {
        len: u8,
        prefix: [u8; PREFIX],
    },
}

/// One OSC 133 mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PromptMark {
    /// `A` (prompt starts) or `B` (the user types the command).
    Prompt,
    /// `C`: the command's output begins.
    Command,
    /// `D[;STATUS]`: the command finished.
    Done(Option<i32>),
}

/// What one chunk carried.
#[derive(Default, PartialEq, Eq, Debug)]
pub(super) struct Marks {
    pub bell: bool,
    /// The last prompt mark in the chunk.
    pub prompt: Option<PromptMark>,
    /// The status of the last `D;STATUS` in the chunk.
    pub status: Option<i32>,
}

impl Scan {
    /// Scans `bytes`; a BEL that ends an OSC string is not a bell.
    pub(super) fn scan(&mut self, bytes: &[u8]) -> Marks {
        let mut marks = Marks::default();
        let mut end = |len: u8, prefix: [u8; PREFIX]| {
            if let Some(mark) = prompt_mark(len, &prefix) {
                if let PromptMark::Done(Some(status)) = mark {
                    marks.status = Some(status);
                }
                marks.prompt = Some(mark);
            }
        };
        let mut bell = false;
        for &b in bytes {
            *self = match (*self, b) {
                (Scan::Ground, 0x07) => {
                    bell = true;
                    Scan::Ground
                }
                (Scan::Ground, 0x1b) => Scan::Escape,
                (Scan::Ground, _) => Scan::Ground,
                (Scan::Escape, b']') => Scan::Osc {
                    len: 0,
                    prefix: [0; PREFIX],
                },
                (Scan::Escape, 0x1b) => Scan::Escape,
                (Scan::Escape, _) => Scan::Ground,
                (Scan::Osc { len, prefix }, 0x07) => {
                    end(len, prefix);
                    Scan::Ground
                }
                (Scan::Osc { len, prefix }, 0x1b) => Scan::OscEscape { len, prefix },
                (Scan::Osc { len, mut prefix }, b) => {
                    if usize::from(len) < PREFIX {
                        prefix[usize::from(len)] = b;
                    }
                    Scan::Osc {
                        len: len.saturating_add(1),
                        prefix,
                    }
                }
                (Scan::OscEscape { len, prefix }, b'\\') => {
                    end(len, prefix);
                    Scan::Ground
                }
                (Scan::OscEscape { .. }, b']') => Scan::Osc {
                    len: 0,
                    prefix: [0; PREFIX],
                },
                (Scan::OscEscape { .. }, _) => Scan::Ground,
            };
        }
        marks.bell = bell;
        marks
    }
}

/// `133;X[;...]` → the mark; `D;N` carries N.
fn prompt_mark(len: u8, prefix: &[u8; PREFIX]) -> Option<PromptMark> {
    let text = &prefix[..usize::from(len).min(PREFIX)];
    let rest = text.strip_prefix(b"133;")?;
    let (&kind, params) = rest.split_first()?;
    if !params.is_empty() && params[0] != b';' {
        return None;
    }
    Some(match kind {
        b'A' | b'B' => PromptMark::Prompt,
        b'C' => PromptMark::Command,
        b'D' => {
            // A status cut off by the prefix's length would be misread: only
            // a string that fits whole counts.
            let status = params
                .get(1..)
                .filter(|_| usize::from(len) <= PREFIX)
                .and_then(|p| std::str::from_utf8(p).ok())
                .and_then(|p| p.split(';').next())
                .and_then(|p| p.parse().ok());
            PromptMark::Done(status)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_bells() {
        let mut scan = Scan::default();
        assert_eq!(
            scan.scan(b"x\x07\x1b]133;A\x07$ "),
            Marks {
                bell: true,
                prompt: Some(PromptMark::Prompt),
                status: None
            }
        );
        let done = scan.scan(b"\x1b]133;D;130\x1b\\");
        assert_eq!(done.prompt, Some(PromptMark::Done(Some(130))));
        assert_eq!(done.status, Some(130));
        assert_eq!(
            scan.scan(b"\x1b]133;D\x07").prompt,
            Some(PromptMark::Done(None))
        );
        // Split across chunks; a title's BEL is not a bell.
        assert_eq!(scan.scan(b"\x1b]13").prompt, None);
        assert_eq!(scan.scan(b"3;C\x07").prompt, Some(PromptMark::Command));
        assert!(!scan.scan(b"\x1b]0;title\x07").bell);
        assert_eq!(scan.scan(b"\x1b]1337;X\x07").prompt, None);
        assert_eq!(scan.scan(b"\x1b]133;Z\x07").prompt, None);
    }
}
