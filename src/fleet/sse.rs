//! Just enough of Server-Sent Events to follow a peer's `/v1/events`: lines
//! in, whole messages out, whatever way the bytes were cut.
//!
//! A peer may be compromised, so the parser holds at most `max_bytes` of a
//! line and of a message's `data`, and looks at each byte once (the scan
//! resumes where the last chunk ended): a peer that sends an endless line
//! or `data:` lines with no blank line gets an error, not the hub's memory
//! or a core.

/// One message of the stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseMessage {
    /// `event:`; `None` for the default (`message`).
    pub event: Option<String>,
    pub id: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// A peer sent more than the parser holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SseTooLarge {
    #[error("a line longer than {0} bytes")]
    Line(usize),
    #[error("a message longer than {0} bytes")]
    Message(usize),
}

/// Bytes received but not yet a whole line, and the message being built.
#[derive(Debug)]
pub struct SseParser {
    max_bytes: usize,
    partial: Vec<u8>,
    /// How much of `partial` is known to hold no `\n`.
    scanned: usize,
    current: SseMessage,
    has_data: bool,
}

impl SseParser {
    /// A parser that refuses a line, or a message's data, over `max_bytes`.
    pub fn new(max_bytes: usize) -> SseParser {
        SseParser {
            max_bytes,
            partial: Vec::new(),
            scanned: 0,
            current: SseMessage::default(),
            has_data: false,
        }
    }

    /// Feeds bytes; returns the messages they completed, or why the stream
    /// is refused (the parser is then of no further use).
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseMessage>, SseTooLarge> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            // Take at most what could still complete the current line, so
            // the buffer never grows past the limit however big the chunk.
            let room = self.max_bytes + 2 - self.partial.len();
            let take = rest.len().min(room);
            self.partial.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            let mut start = 0;
            while let Some(at) = self.partial[self.scanned..]
                .iter()
                .position(|&b| b == b'\n')
            {
                let end = self.scanned + at;
                self.line(start, end, &mut out)?;
                start = end + 1;
                self.scanned = start;
            }
            self.partial.drain(..start);
            self.scanned = self.partial.len();
            if self.partial.len() > self.max_bytes + 1 {
                return Err(SseTooLarge::Line(self.max_bytes));
            }
        }
        Ok(out)
    }

    /// One line, `partial[start..end]` without its `\n`.
    fn line(
        &mut self,
        start: usize,
        end: usize,
        out: &mut Vec<SseMessage>,
    ) -> Result<(), SseTooLarge> {
        let mut line = &self.partial[start..end];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        if line.len() > self.max_bytes {
            return Err(SseTooLarge::Line(self.max_bytes));
        }
        if line.is_empty() {
            // A blank line ends the message; one without data is dropped
            // (SSE says so), which also covers keep-alive comments.
            let message = std::mem::take(&mut self.current);
            if std::mem::take(&mut self.has_data) {
                out.push(message);
            }
            return Ok(());
        }
        if line.starts_with(b":") {
            return Ok(());
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => self.current.event = Some(value.to_owned()),
            "id" => self.current.id = Some(value.to_owned()),
            "data" => {
                let grown = self.current.data.len() + usize::from(self.has_data) + value.len();
                if grown > self.max_bytes {
                    return Err(SseTooLarge::Message(self.max_bytes));
                }
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(event: Option<&str>, id: Option<&str>, data: &str) -> SseMessage {
        SseMessage {
            event: event.map(str::to_owned),
            id: id.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    #[test]
    fn messages_survive_any_cut() {
        let text = ": keep-alive\n\nid: 1\ndata: {\"a\":1}\n\nevent: replay_truncated\r\ndata: {\"since\": 4}\r\n\r\nid: 2\ndata: x\ndata: y\n\n";
        let want = vec![
            message(None, Some("1"), "{\"a\":1}"),
            message(Some("replay_truncated"), None, "{\"since\": 4}"),
            message(None, Some("2"), "x\ny"),
        ];
        for cut in 0..text.len() {
            for max_bytes in [32, 1 << 20] {
                let mut parser = SseParser::new(max_bytes);
                let mut got = parser.push(&text.as_bytes()[..cut]).unwrap();
                got.extend(parser.push(&text.as_bytes()[cut..]).unwrap());
                assert_eq!(got, want, "cut at {cut}, max {max_bytes}");
            }
        }
    }

    #[test]
    fn a_line_or_a_message_past_the_limit_is_refused() {
        // (what is sent, in chunks of `chunk` bytes; what the parser says)
        let line_at_limit = format!("data:{}\n\n", "x".repeat(10));
        let line_past_limit = format!("data: {}\n\n", "x".repeat(10));
        let long_line = format!("data: {}", "x".repeat(100));
        let many_lines = "data: xx\n".repeat(10);
        let cases: [(&str, usize, Result<usize, SseTooLarge>); 6] = [
            (&line_past_limit, 1, Err(SseTooLarge::Line(15))),
            (&line_at_limit, 3, Ok(1)),
            (&long_line, 1, Err(SseTooLarge::Line(15))),
            (&long_line, 1000, Err(SseTooLarge::Line(15))),
            (&many_lines, 4, Err(SseTooLarge::Message(15))),
            (": comment\n\n", 1, Ok(0)),
        ];
        for (text, chunk, want) in cases {
            let mut parser = SseParser::new(15);
            let mut got = Ok(0);
            for piece in text.as_bytes().chunks(chunk) {
                match parser.push(piece) {
                    Ok(messages) => got = got.map(|n| n + messages.len()),
                    Err(e) => {
                        got = Err(e);
                        break;
                    }
                }
            }
            assert_eq!(got, want, "{text:?} by {chunk}");
        }
    }

    #[test]
    fn the_work_per_byte_is_linear() {
        // 16 MiB of one endless line in 64-byte chunks, as a trickling peer
        // sends it: a rescan from the start on every chunk would take
        // minutes; one pass takes milliseconds.
        let mut parser = SseParser::new(16 << 20);
        let chunk = [b'x'; 64];
        let started = std::time::Instant::now();
        for _ in 0..(16 << 20) / 64 - 1 {
            parser.push(&chunk).unwrap();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
