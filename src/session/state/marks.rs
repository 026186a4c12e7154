//! What a pane's output carries besides text: BEL outside escape strings,
//! OSC 133 prompt marks (`A` prompt, `B` input, `C` command output,
//! `D;STATUS` command done), and a program's own notifications (OSC 9,
//! OSC 777 `notify`, OSC 99), found across chunk boundaries. tmux does not
//! pass notifications on to its clients' terminals; the raw `%output`
//! bytes still hold them.

/// Bytes of an OSC string kept: a notification's text past this is cut.
const OSC_KEEP: usize = 512;

/// Where the scanner is, across chunk boundaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
    #[default]
    Ground,
    Escape,
    Osc,
    OscEscape,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Scan {
    mode: Mode,
    /// The OSC string so far (its first `OSC_KEEP` bytes), and its length.
    osc: Vec<u8>,
    osc_len: usize,
    /// An OSC 99 title whose body is still to come (`d=0`).
    pending_title: Option<String>,
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
    /// The text of the last notification in the chunk.
    pub notification: Option<String>,
}

impl Scan {
    /// Scans `bytes`; a BEL that ends an OSC string is not a bell.
    pub(super) fn scan(&mut self, bytes: &[u8]) -> Marks {
        let mut marks = Marks::default();
        for &b in bytes {
            self.mode = match (self.mode, b) {
                (Mode::Ground, 0x07) => {
                    marks.bell = true;
                    Mode::Ground
                }
                (Mode::Ground, 0x1b) => Mode::Escape,
                (Mode::Ground, _) => Mode::Ground,
                (Mode::Escape, b']') => self.start_osc(),
                (Mode::Escape, 0x1b) => Mode::Escape,
                (Mode::Escape, _) => Mode::Ground,
                (Mode::Osc, 0x07) => self.end_osc(&mut marks),
                (Mode::Osc, 0x1b) => Mode::OscEscape,
                (Mode::Osc, b) => {
                    if self.osc.len() < OSC_KEEP {
                        self.osc.push(b);
                    }
                    self.osc_len += 1;
                    Mode::Osc
                }
                (Mode::OscEscape, b'\\') => self.end_osc(&mut marks),
                (Mode::OscEscape, b']') => self.start_osc(),
                (Mode::OscEscape, _) => Mode::Ground,
            };
        }
        marks
    }

    fn start_osc(&mut self) -> Mode {
        self.osc.clear();
        self.osc_len = 0;
        Mode::Osc
    }

    fn end_osc(&mut self, marks: &mut Marks) -> Mode {
        let whole = self.osc_len <= OSC_KEEP;
        let text = std::mem::take(&mut self.osc);
        if let Some(mark) = prompt_mark(&text, whole) {
            if let PromptMark::Done(Some(status)) = mark {
                marks.status = Some(status);
            }
            marks.prompt = Some(mark);
        } else if let Some(note) = self.notification(&text) {
            marks.notification = Some(note);
        }
        self.osc = text;
        self.osc.clear();
        Mode::Ground
    }

    /// The text of a notification OSC: `9;TEXT` (iTerm2; not ConEmu's
    /// `9;N;...` commands), `777;notify;TITLE;BODY` (urxvt, foot,
    /// Ghostty), `99;META;PAYLOAD` (kitty: a `d=0` part waits for the rest;
    /// only title and body parts count; a base64 payload, `e=1`, gives no
    /// text).
    fn notification(&mut self, osc: &[u8]) -> Option<String> {
        let osc = String::from_utf8_lossy(osc);
        let (code, rest) = osc.split_once(';')?;
        match code {
            "9" => {
                let command = rest.split(';').next().unwrap_or("");
                let conemu = !command.is_empty() && command.bytes().all(|b| b.is_ascii_digit());
                (!conemu).then(|| rest.to_owned())
            }
            "777" => {
                let mut parts = rest.splitn(3, ';');
                if parts.next() != Some("notify") {
                    return None;
                }
                let title = parts.next().unwrap_or("").trim();
                let body = parts.next().unwrap_or("").trim();
                Some(match (title.is_empty(), body.is_empty()) {
                    (false, false) => format!("{title}: {body}"),
                    (false, true) => title.to_owned(),
                    _ => body.to_owned(),
                })
            }
            "99" => {
                let (meta, payload) = rest.split_once(';')?;
                let key = |k: &str| {
                    meta.split(':')
                        .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
                };
                if !matches!(key("p"), None | Some("title") | Some("body")) {
                    return None;
                }
                let payload = match key("e") {
                    Some("1") => "",
                    _ => payload.trim(),
                };
                let text = match self.pending_title.take() {
                    Some(title) if !payload.is_empty() => format!("{title}: {payload}"),
                    Some(title) => title,
                    None => payload.to_owned(),
                };
                if key("d") == Some("0") {
                    self.pending_title = Some(text);
                    return None;
                }
                Some(text)
            }
            _ => None,
        }
    }
}

/// `133;X[;...]` → the mark; `D;N` carries N when the string is `whole`.
fn prompt_mark(text: &[u8], whole: bool) -> Option<PromptMark> {
    let rest = text.strip_prefix(b"133;")?;
    let (&kind, params) = rest.split_first()?;
    if !params.is_empty() && params[0] != b';' {
        return None;
    }
    Some(match kind {
        b'A' | b'B' => PromptMark::Prompt,
        b'C' => PromptMark::Command,
        b'D' => {
            // A status cut off by the kept length would be misread: only a
            // string that fits whole counts.
            let status = params
                .get(1..)
                .filter(|_| whole)
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
                status: None,
                notification: None,
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

    /// (chunks fed in order, the notification text the last one gives)
    #[test]
    fn notifications_and_their_text() {
        let table: &[(&[&[u8]], Option<&str>)] = &[
            (&[b"\x1b]9;Build finished\x07"], Some("Build finished")),
            (&[b"\x1b]9;3 tests failed\x1b\\"], Some("3 tests failed")),
            (&[b"\x1b]9;Bui", b"ld done\x07"], Some("Build done")),
            // ConEmu's OSC 9 commands (a progress bar) are not notifications.
            (&[b"\x1b]9;4;1;50\x07"], None),
            (&[b"\x1b]9;4\x07"], None),
            (
                &[b"\x1b]777;notify;Claude;Needs your permission\x07"],
                Some("Claude: Needs your permission"),
            ),
            (&[b"\x1b]777;notify;;Only a body\x07"], Some("Only a body")),
            (&[b"\x1b]777;preexec\x07"], None),
            (&[b"\x1b]99;;Hello\x1b\\"], Some("Hello")),
            (
                &[
                    b"\x1b]99;i=1:d=0;Title\x1b\\",
                    b"\x1b]99;i=1:p=body;Body\x1b\\",
                ],
                Some("Title: Body"),
            ),
            (&[b"\x1b]99;i=1:d=0;Title\x1b\\"], None),
            (&[b"\x1b]99;i=1:p=close;\x1b\\"], None),
            (&[b"\x1b]99;e=1;SGVsbG8=\x1b\\"], Some("")),
            (&[b"\x1b]0;a title\x07"], None),
        ];
        for (chunks, want) in table {
            let mut scan = Scan::default();
            let mut got = None;
            for chunk in *chunks {
                let marks = scan.scan(chunk);
                assert!(!marks.bell, "{chunks:?}");
                got = marks.notification;
            }
            assert_eq!(got.as_deref(), *want, "{chunks:?}");
        }
        // A long text is kept up to OSC_KEEP bytes.
        let mut long = b"\x1b]9;".to_vec();
        long.extend(std::iter::repeat_n(b'x', 2000));
        long.push(0x07);
        let got = Scan::default().scan(&long).notification.unwrap();
        assert_eq!(got.len(), OSC_KEEP - 2);
    }
}
