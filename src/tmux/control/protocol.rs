//! A pure, incremental parser for what a tmux (3.2+) control client prints:
//! `%begin`/`%end`/`%error` reply blocks, `%output` with its octal escapes,
//! and the notifications. Bytes in, events out; no I/O, no clock.
//!
//! It works on bytes, not `str`: pane output and names are whatever the
//! program wrote, not necessarily UTF-8. Chunks may split anywhere (inside a
//! line, an escape, a multi-byte character): only whole lines are parsed.

pub use super::notification::{Notification, parse_notification, unescape_output};

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

#[cfg(test)]
mod tests;
