//! A pure, incremental parser for what a tmux (3.2+) control client prints:
//! `%begin`/`%end`/`%error` reply blocks, `%output` with its octal escapes,
//! and the notifications. Bytes in, events out; no I/O, no clock.
//!
//! It works on bytes, not `str`: pane output and names are whatever the
//! program wrote, not necessarily UTF-8. Chunks may split anywhere (inside a
//! line, an escape, a multi-byte character): only whole lines are parsed.

use super::ids::{PaneId, SessionId, WindowId};

/// What `tmux -CC` prints first: a DCS that lets a terminal emulator notice
/// control mode. Plain `-C` on pipes (what tmuxd uses) prints no wrapper.
const DCS_START: &[u8] = b"\x1bP1000p";
/// What `tmux -CC` prints last, ending the DCS.
const DCS_END: &[u8] = b"\x1b\\";

/// The three arguments shared by a `%begin` and its `%end`/`%error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// Seconds since the epoch when the command ran.
    pub time: u64,
    /// tmux's command number: server-wide, increasing, not consecutive per
    /// client, so replies are matched to requests in order, not by number.
    pub number: u64,
    /// 1 for a command read from this client's input; 0 for one tmux ran on
    /// its own (the attach itself, hooks), which answers no request.
    pub flags: u32,
}

/// One whole reply block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub guard: Guard,
    /// `%error` rather than `%end`.
    pub failed: bool,
    /// The lines between `%begin` and `%end`, raw (no unescaping).
    pub body: Vec<Vec<u8>>,
}

impl Reply {
    /// Whether this block answers a command this client sent.
    pub fn from_client(&self) -> bool {
        self.guard.flags & 1 == 1
    }

    /// The body as one message, for `%error` replies.
    pub fn message(&self) -> String {
        let lines: Vec<_> = self
            .body
            .iter()
            .map(|l| String::from_utf8_lossy(l))
            .collect();
        lines.join("\n")
    }
}

/// Something tmux said on its own. Names are lossy UTF-8; pane data is raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notification {
    /// `%output`: bytes the pane's program wrote, unescaped.
    Output {
        pane: PaneId,
        data: Vec<u8>,
    },
    /// `%extended-output` (with `pause-after`): as `Output`, plus how long
    /// tmux held the data before sending it.
    ExtendedOutput {
        pane: PaneId,
        age_ms: u64,
        data: Vec<u8>,
    },
    /// tmux stopped sending this pane's output: the client fell behind.
    Pause {
        pane: PaneId,
    },
    /// Output resumes (after `refresh-client -A '%N:continue'`).
    Continue {
        pane: PaneId,
    },
    /// The client is exiting; EOF follows.
    Exit {
        reason: Option<String>,
    },
    LayoutChange {
        window: WindowId,
        layout: String,
        visible_layout: String,
        flags: String,
    },
    WindowAdd {
        window: WindowId,
    },
    WindowClose {
        window: WindowId,
    },
    WindowRenamed {
        window: WindowId,
        name: String,
    },
    UnlinkedWindowAdd {
        window: WindowId,
    },
    UnlinkedWindowClose {
        window: WindowId,
    },
    UnlinkedWindowRenamed {
        window: WindowId,
    },
    /// This client is now attached to another session (after attach, or
    /// when its session died under `detach-on-destroy off`).
    SessionChanged {
        session: SessionId,
        name: String,
    },
    /// tmux 3.3 prints the id before the name; the man page shows only the name.
    SessionRenamed {
        session: Option<SessionId>,
        name: String,
    },
    /// A session was created or destroyed, anywhere on the server.
    SessionsChanged,
    SessionWindowChanged {
        session: SessionId,
        window: WindowId,
    },
    WindowPaneChanged {
        window: WindowId,
        pane: PaneId,
    },
    PaneModeChanged {
        pane: PaneId,
    },
    ClientSessionChanged {
        client: String,
        session: SessionId,
        name: String,
    },
    ClientDetached {
        client: String,
    },
    SubscriptionChanged {
        name: String,
        /// The ids tmux gave (`-` or absent for a session-level subscription).
        scope: Vec<String>,
        value: Vec<u8>,
    },
    PasteBufferChanged {
        name: String,
    },
    PasteBufferDeleted {
        name: String,
    },
    ConfigError {
        message: String,
    },
    Message {
        message: String,
    },
    /// A `%` line this parser does not know, or a known one it cannot read.
    Unknown {
        line: Vec<u8>,
    },
    /// A line outside any block that is not a notification (hook output
    /// tmux prints bare, for instance).
    Stray {
        line: Vec<u8>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Reply(Reply),
    Notification(Notification),
}

/// Whether the stream carries the `-CC` DCS wrapper; decided by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Undecided,
    Plain,
    Dcs,
}

/// The incremental parser. Feed it chunks; it keeps the partial last line.
#[derive(Debug)]
pub struct Parser {
    pending: Vec<u8>,
    /// Bytes of `pending` already searched for a newline.
    scanned: usize,
    block: Option<(Guard, Vec<Vec<u8>>)>,
    framing: Framing,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

impl Parser {
    pub fn new() -> Self {
        Parser {
            pending: Vec::new(),
            scanned: 0,
            block: None,
            framing: Framing::Undecided,
        }
    }

    /// Parses every whole line in `pending + bytes`, appending events to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut impl Extend<Event>) {
        self.pending.extend_from_slice(bytes);
        if !self.decide_framing() {
            return;
        }
        let mut start = 0;
        let mut search = self.scanned;
        while let Some(offset) = self.pending[search..].iter().position(|&b| b == b'\n') {
            let end = search + offset;
            let line = self.pending[start..end].to_vec();
            if let Some(event) = self.parse_line(line) {
                out.extend(std::iter::once(event));
            }
            start = end + 1;
            search = start;
        }
        self.pending.drain(..start);
        self.scanned = self.pending.len();
    }

    /// At EOF: an unterminated last line (tmux died mid-write) as `Unknown`.
    /// A block left open is dropped; no request can be answered by it.
    pub fn finish(&mut self) -> Option<Event> {
        self.block = None;
        let rest = std::mem::take(&mut self.pending);
        self.scanned = 0;
        let rest = self.strip_framing(rest);
        (!rest.is_empty()).then_some(Event::Notification(Notification::Unknown { line: rest }))
    }

    /// Strips the DCS start once enough bytes have arrived to tell; returns
    /// false while undecided.
    fn decide_framing(&mut self) -> bool {
        if self.framing != Framing::Undecided {
            return true;
        }
        let Some(&first) = self.pending.first() else {
            return false;
        };
        if first != 0x1b {
            self.framing = Framing::Plain;
            return true;
        }
        let have = self.pending.len().min(DCS_START.len());
        if self.pending[..have] != DCS_START[..have] {
            self.framing = Framing::Plain;
            return true;
        }
        if have < DCS_START.len() {
            return false;
        }
        self.pending.drain(..DCS_START.len());
        self.framing = Framing::Dcs;
        true
    }

    /// Under `-CC` a PTY may end lines with `\r\n` and the DCS end precedes
    /// EOF; neither is part of a line. Plain pipes carry neither.
    fn strip_framing(&self, mut line: Vec<u8>) -> Vec<u8> {
        if self.framing == Framing::Dcs {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.starts_with(DCS_END) {
                line.drain(..DCS_END.len());
            }
        }
        line
    }

    fn parse_line(&mut self, line: Vec<u8>) -> Option<Event> {
        let line = self.strip_framing(line);
        if let Some((guard, body)) = &mut self.block {
            // Only a guard with the same three arguments closes the block: a
            // body line that merely looks like `%end` (output of
            // `display-message -p '%end'`) stays body.
            if let Some((failed, closing)) = parse_guard_line(&line, &[b"%end", b"%error"])
                && closing == *guard
            {
                let body = std::mem::take(body);
                self.block = None;
                return Some(Event::Reply(Reply {
                    guard: closing,
                    failed: failed == 1,
                    body,
                }));
            }
            body.push(line);
            return None;
        }
        if let Some((_, guard)) = parse_guard_line(&line, &[b"%begin"]) {
            self.block = Some((guard, Vec::new()));
            return None;
        }
        if line.is_empty() && self.framing == Framing::Dcs {
            return None;
        }
        Some(Event::Notification(parse_notification(line)))
    }
}

/// `%begin TIME NUMBER FLAGS` (or `%end`/`%error`): which keyword matched and the guard.
fn parse_guard_line(line: &[u8], keywords: &[&[u8]]) -> Option<(usize, Guard)> {
    let text = std::str::from_utf8(line).ok()?;
    let mut words = text.split(' ');
    let keyword = words.next()?;
    let which = keywords.iter().position(|k| k == &keyword.as_bytes())?;
    let time = words.next()?.parse().ok()?;
    let number = words.next()?.parse().ok()?;
    let flags = words.next()?.parse().ok()?;
    if words.next().is_some() {
        return None;
    }
    Some((
        which,
        Guard {
            time,
            number,
            flags,
        },
    ))
}

/// One notification line; anything unreadable becomes `Unknown`.
pub fn parse_notification(line: Vec<u8>) -> Notification {
    if line.first() != Some(&b'%') {
        return Notification::Stray { line };
    }
    let (name, rest) = split_word(&line);
    let parsed = match name {
        b"%output" => parse_output(rest),
        b"%extended-output" => parse_extended_output(rest),
        _ => parse_named(name, rest),
    };
    parsed.unwrap_or(Notification::Unknown { line })
}

fn parse_output(rest: &[u8]) -> Option<Notification> {
    let (pane, value) = split_word(rest);
    Some(Notification::Output {
        pane: id(pane)?,
        data: unescape_output(value),
    })
}

fn parse_extended_output(rest: &[u8]) -> Option<Notification> {
    let (pane, rest) = split_word(rest);
    let (age, rest) = split_word(rest);
    let value = after_colon(rest)?;
    Some(Notification::ExtendedOutput {
        pane: id(pane)?,
        age_ms: text(age).parse().ok()?,
        data: unescape_output(value),
    })
}

fn parse_named(name: &[u8], rest: &[u8]) -> Option<Notification> {
    use Notification as N;
    let (first, tail) = split_word(rest);
    let window = || id::<WindowId>(first);
    Some(match name {
        b"%pause" => N::Pause { pane: id(rest)? },
        b"%continue" => N::Continue { pane: id(rest)? },
        b"%exit" => N::Exit {
            reason: (!rest.is_empty()).then(|| text(rest)),
        },
        b"%layout-change" => parse_layout_change(rest)?,
        b"%window-add" => N::WindowAdd { window: window()? },
        b"%window-close" => N::WindowClose { window: window()? },
        b"%window-renamed" => N::WindowRenamed {
            window: window()?,
            name: text(tail),
        },
        b"%unlinked-window-add" => N::UnlinkedWindowAdd { window: window()? },
        b"%unlinked-window-close" => N::UnlinkedWindowClose { window: window()? },
        b"%unlinked-window-renamed" => N::UnlinkedWindowRenamed { window: window()? },
        b"%session-changed" => N::SessionChanged {
            session: id(first)?,
            name: text(tail),
        },
        b"%session-renamed" => match id(first) {
            Some(session) => N::SessionRenamed {
                session: Some(session),
                name: text(tail),
            },
            None => N::SessionRenamed {
                session: None,
                name: text(rest),
            },
        },
        b"%sessions-changed" => N::SessionsChanged,
        b"%session-window-changed" => N::SessionWindowChanged {
            session: id(first)?,
            window: id(tail)?,
        },
        b"%window-pane-changed" => N::WindowPaneChanged {
            window: window()?,
            pane: id(tail)?,
        },
        b"%pane-mode-changed" => N::PaneModeChanged { pane: id(rest)? },
        b"%client-session-changed" => {
            let (session, name) = split_word(tail);
            N::ClientSessionChanged {
                client: text(first),
                session: id(session)?,
                name: text(name),
            }
        }
        b"%client-detached" => N::ClientDetached { client: text(rest) },
        b"%subscription-changed" => parse_subscription(first, tail)?,
        b"%paste-buffer-changed" => N::PasteBufferChanged { name: text(rest) },
        b"%paste-buffer-deleted" => N::PasteBufferDeleted { name: text(rest) },
        b"%config-error" => N::ConfigError {
            message: text(rest),
        },
        b"%message" => N::Message {
            message: text(rest),
        },
        _ => return None,
    })
}

fn parse_layout_change(rest: &[u8]) -> Option<Notification> {
    let (window, rest) = split_word(rest);
    let (layout, rest) = split_word(rest);
    let (visible, flags) = split_word(rest);
    Some(Notification::LayoutChange {
        window: id(window)?,
        layout: text(layout),
        visible_layout: text(visible),
        flags: text(flags),
    })
}

/// `NAME $S @W IDX %P ... : VALUE`; the scope words are kept as given.
fn parse_subscription(name: &[u8], rest: &[u8]) -> Option<Notification> {
    let value = after_colon(rest)?;
    let scope_len = rest.len() - value.len();
    let scope = text(&rest[..scope_len]);
    let scope = scope
        .split(' ')
        .take_while(|w| *w != ":")
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    Some(Notification::SubscriptionChanged {
        name: text(name),
        scope,
        value: unescape_output(value),
    })
}

/// The value after the first word that is exactly `:` (words before it are
/// "for future use"). The value itself may contain ` : `.
fn after_colon(mut rest: &[u8]) -> Option<&[u8]> {
    loop {
        let (word, tail) = split_word(rest);
        if word == b":" {
            return Some(tail);
        }
        if tail.is_empty() && word.is_empty() {
            return None;
        }
        rest = tail;
    }
}

/// The first space-separated word and everything after that one space.
fn split_word(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == b' ') {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (bytes, &[]),
    }
}

fn id<T: std::str::FromStr>(word: &[u8]) -> Option<T> {
    std::str::from_utf8(word).ok()?.parse().ok()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Undoes tmux's output escaping: `\ooo` (three octal digits, at most
/// `\377`) is one byte; tmux escapes bytes below 0x20 and `\` this way and
/// sends every other byte raw. Anything else after `\` (tmux never sends
/// it) is kept as it came rather than guessed at.
pub fn unescape_output(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        if value[i] == b'\\'
            && let Some(byte) = value.get(i + 1..i + 4).and_then(octal_byte)
        {
            out.push(byte);
            i += 4;
            continue;
        }
        out.push(value[i]);
        i += 1;
    }
    out
}

fn octal_byte(digits: &[u8]) -> Option<u8> {
    let mut value: u16 = 0;
    for &d in digits {
        if !(b'0'..=b'7').contains(&d) {
            return None;
        }
        value = value * 8 + u16::from(d - b'0');
    }
    u8::try_from(value).ok()
}

#[cfg(test)]
mod tests;
