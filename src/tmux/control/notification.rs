//! Control-mode notifications (`%output`, `%layout-change`, `%exit`...):
//! one line in, one typed value out, and `%output`'s octal unescaping.

use super::ids::{PaneId, TmuxSessionId, WindowId};

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
        session: TmuxSessionId,
        name: String,
    },
    /// tmux 3.3 prints the id before the name; the man page shows only the name.
    SessionRenamed {
        session: Option<TmuxSessionId>,
        name: String,
    },
    /// A session was created or destroyed, anywhere on the server.
    SessionsChanged,
    SessionWindowChanged {
        session: TmuxSessionId,
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
        session: TmuxSessionId,
        name: String,
    },
    ClientDetached {
        client: String,
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
