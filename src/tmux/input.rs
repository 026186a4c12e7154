//! Splitting input into `send-keys` commands tmux accepts.
//!
//! A tmux client sends its whole command line to the server in one message
//! of at most 16 KiB; beyond that tmux answers `command too long`. Text is
//! cut well under that, on character boundaries, and sent piece by piece.

/// Bytes of literal text per `send-keys -l`.
pub const LITERAL_CHUNK_BYTES: usize = 8 * 1024;
/// Bytes per `send-keys -H` (each byte becomes a three-byte argument).
pub const HEX_CHUNK_BYTES: usize = 2 * 1024;

/// `text` in pieces of at most `LITERAL_CHUNK_BYTES`, never splitting a
/// character.
pub fn literal_chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(LITERAL_CHUNK_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        Some(chunk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_characters_whole_and_everything_in_order() {
        let text = "é".repeat(LITERAL_CHUNK_BYTES) + "tail";
        let chunks: Vec<&str> = literal_chunks(&text).collect();
        assert!(chunks.iter().all(|c| c.len() <= LITERAL_CHUNK_BYTES));
        assert_eq!(chunks.concat(), text);
        assert_eq!(literal_chunks("").count(), 0);
        assert_eq!(literal_chunks("abc").collect::<Vec<_>>(), ["abc"]);
    }
}
