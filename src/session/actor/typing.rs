//! Typing into the active pane: an input request as `send-keys` commands
//! small enough for tmux to take one at a time, in order, answered once
//! tmux took all of them.

use tokio::sync::oneshot;

use super::{HEX_CHUNK_BYTES, InputJob, Purpose, SessionActor, TEXT_CHUNK_BYTES};
use crate::session::state::Signal;
use crate::session::{CommandError, Input};
use crate::tmux::command::{ParseError, SendHex, SendKeys, SendLiteral, Target, TmuxCommand};
use crate::tmux::control::{ControlClient, PaneId};

/// Key names per `send-keys`. tmux parses a control client's command line
/// with a yacc grammar whose stack holds one entry per word: measured with
/// tmux 3.3a, a command of 9,998 words is taken and one of 9,999 fails with
/// "yacc stack overflow". A thousand keeps far from it.
const KEYS_PER_COMMAND: usize = 1000;

impl SessionActor {
    pub(super) async fn type_input(
        &mut self,
        input: Input,
        reply: oneshot::Sender<Result<(), CommandError>>,
        client: &mut ControlClient,
    ) {
        // Raw bytes come from someone at a keyboard (a stream client); text
        // and keys from a request that gives the session something to do.
        let typed = input.text.is_some() || !input.keys.is_empty();
        self.signal(if typed {
            Signal::Input
        } else {
            Signal::Keystrokes
        });
        let pieces = pieces(input, &Target::Pane(PaneId(self.window.active)));
        if pieces.is_empty() {
            let _ = reply.send(Ok(()));
            return;
        }
        let job = self.next_job;
        self.next_job += 1;
        self.jobs.insert(
            job,
            InputJob {
                pieces_left: pieces.len(),
                error: None,
                reply,
            },
        );
        // In one write: a daemon killed part way must not leave a line
        // typed without its Enter for the next input to run into.
        match client.send_all(&pieces).await {
            Ok(tickets) => {
                for ticket in tickets {
                    self.purposes.insert(ticket, Purpose::Input { job });
                }
            }
            // Nothing was written: the request fails as a whole.
            Err(e) => {
                if let Some(done) = self.jobs.remove(&job) {
                    let _ = done.reply.send(Err(e.into()));
                }
            }
        }
    }
}

/// One `send-keys` of an input request.
enum Piece {
    Text(SendLiteral),
    Hex(SendHex),
    Keys(SendKeys),
}

impl TmuxCommand for Piece {
    type Output = ();

    fn args(&self) -> Vec<String> {
        match self {
            Piece::Text(c) => c.args(),
            Piece::Hex(c) => c.args(),
            Piece::Keys(c) => c.args(),
        }
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<(), ParseError> {
        match self {
            Piece::Text(c) => c.parse(lines),
            Piece::Hex(c) => c.parse(lines),
            Piece::Keys(c) => c.parse(lines),
        }
    }
}

/// Text, then raw bytes, then keys, as `send-keys` commands small enough
/// for tmux to take one at a time.
fn pieces(input: Input, target: &Target) -> Vec<Piece> {
    let text = input.text.filter(|t| !t.is_empty());
    let bytes = input.bytes.filter(|b| !b.is_empty());
    let mut pieces: Vec<Piece> = text
        .map(|t| SendLiteral::chunked(target, &t, TEXT_CHUNK_BYTES))
        .unwrap_or_default()
        .into_iter()
        .map(Piece::Text)
        .collect();
    if let Some(bytes) = bytes {
        pieces.extend(
            SendHex::chunked(target, &bytes, HEX_CHUNK_BYTES)
                .into_iter()
                .map(Piece::Hex),
        );
    }
    pieces.extend(input.keys.chunks(KEYS_PER_COMMAND).map(|keys| {
        Piece::Keys(SendKeys {
            target: target.clone(),
            keys: keys.to_vec(),
        })
    }));
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sent_a_thousand_to_a_command() {
        let target = Target::Pane(PaneId(1));
        // (keys, commands, the words of the longest)
        let cases = [
            (0, 0, 0),
            (1, 1, 5),
            (1000, 1, 1004),
            (1001, 2, 1004),
            (10_001, 11, 1004),
        ];
        for (n, commands, longest) in cases {
            let input = Input {
                keys: vec!["a".to_owned(); n],
                ..Default::default()
            };
            let pieces = pieces(input, &target);
            assert_eq!(pieces.len(), commands, "{n} keys");
            let words = pieces.iter().map(|p| p.args().len()).max().unwrap_or(0);
            assert_eq!(words, longest, "{n} keys");
            let sent: usize = pieces.iter().map(|p| p.args().len() - 4).sum();
            assert_eq!(sent, n);
        }
    }
}
