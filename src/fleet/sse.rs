//! Just enough of Server-Sent Events to follow a peer's `/v1/events`: lines
//! in, whole messages out, whatever way the bytes were cut.

/// One message of the stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseMessage {
    /// `event:`; `None` for the default (`message`).
    pub event: Option<String>,
    pub id: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Bytes received but not yet a whole line, and the message being built.
#[derive(Debug, Default)]
pub struct SseParser {
    partial: Vec<u8>,
    current: SseMessage,
    has_data: bool,
}

impl SseParser {
    /// Feeds bytes; returns the messages they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseMessage> {
        self.partial.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.partial.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                // A blank line ends the message; one without data is dropped
                // (SSE says so), which also covers keep-alive comments.
                let message = std::mem::take(&mut self.current);
                if std::mem::take(&mut self.has_data) {
                    out.push(message);
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (&*line, ""),
            };
            match field {
                "event" => self.current.event = Some(value.to_owned()),
                "id" => self.current.id = Some(value.to_owned()),
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                }
                _ => {}
            }
        }
        out
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
            let mut parser = SseParser::default();
            let mut got = parser.push(&text.as_bytes()[..cut]);
            got.extend(parser.push(&text.as_bytes()[cut..]));
            assert_eq!(got, want, "cut at {cut}");
        }
    }
}
