//! Typing into the active pane: an input request as `send-keys` commands
//! small enough for tmux to take one at a time, in order, answered once
//! tmux took all of them.

use std::collections::BTreeMap;

use tokio::sync::oneshot;

use super::{HEX_CHUNK_BYTES, TEXT_CHUNK_BYTES};
use crate::session::{CommandError, Input};
use crate::tmux::command::{ParseError, SendHex, SendKeys, SendLiteral, Target, TmuxCommand};

/// Key names per `send-keys`. tmux parses a control client's command line
/// with a yacc grammar whose stack holds one entry per word: measured with
/// tmux 3.3a, a command of 9,998 words is taken and one of 9,999 fails with
/// "yacc stack overflow". A thousand keeps far from it.
const KEYS_PER_COMMAND: usize = 1000;

/// An input request being typed in pieces.
struct InputJob {
    pieces_left: usize,
    error: Option<CommandError>,
    reply: oneshot::Sender<Result<(), CommandError>>,
}

/// The input requests being typed, by job number; each is answered once
/// tmux has taken (or refused) all its pieces.
#[derive(Default)]
pub(super) struct Jobs {
    jobs: BTreeMap<u64, InputJob>,
    next: u64,
}

impl Jobs {
    /// A request of `pieces` pieces (at least one) starts; its number.
    pub(super) fn start(
        &mut self,
        pieces: usize,
        reply: oneshot::Sender<Result<(), CommandError>>,
    ) -> u64 {
        let job = self.next;
        self.next += 1;
        let entry = InputJob {
            pieces_left: pieces,
            error: None,
            reply,
        };
        self.jobs.insert(job, entry);
        job
    }

    /// Nothing of `job` was written: it fails as a whole.
    pub(super) fn failed(&mut self, job: u64, error: CommandError) {
        if let Some(done) = self.jobs.remove(&job) {
            let _ = done.reply.send(Err(error));
        }
    }

    /// tmux answered one piece of `job`; the last answers the request,
    /// with the first error if any piece failed.
    pub(super) fn piece_done(&mut self, job: u64, result: Result<(), CommandError>) {
        let Some(entry) = self.jobs.get_mut(&job) else {
            return;
        };
        entry.pieces_left -= 1;
        if let Err(e) = result {
            entry.error.get_or_insert(e);
        }
        if entry.pieces_left == 0
            && let Some(done) = self.jobs.remove(&job)
        {
            let _ = done.reply.send(done.error.map_or(Ok(()), Err));
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

/// One `send-keys` of an input request.
pub(super) enum Piece {
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
pub(super) fn pieces(input: Input, target: &Target) -> Vec<Piece> {
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
    use crate::tmux::control::{ControlError, PaneId};

    #[test]
    fn a_request_is_answered_once_all_its_pieces_are_in_with_the_first_error() {
        let failed = |why: &str| {
            Err(CommandError::Tmux(ControlError::Attach {
                session: "s".to_owned(),
                message: why.to_owned(),
            }))
        };
        let text = |r: Answer| r.map_err(|e| e.to_string());
        // (each piece's result, the answer)
        type Answer = Result<(), CommandError>;
        let cases: [(Vec<Answer>, Answer); 3] = [
            (vec![Ok(()), Ok(())], Ok(())),
            (vec![failed("first"), failed("second")], failed("first")),
            (vec![Ok(()), failed("late")], failed("late")),
        ];
        for (results, want) in cases {
            let mut jobs = Jobs::default();
            let (reply, mut answer) = oneshot::channel();
            let job = jobs.start(results.len(), reply);
            let last = results.len() - 1;
            for (i, result) in results.into_iter().enumerate() {
                assert!(answer.try_recv().is_err(), "answered before piece {i}");
                assert!(!jobs.is_empty());
                jobs.piece_done(job, result);
                assert_eq!(jobs.is_empty(), i == last);
            }
            assert_eq!(text(answer.try_recv().unwrap()), text(want));
        }
        // A reply for a job no longer there (or never) changes nothing.
        let mut jobs = Jobs::default();
        jobs.piece_done(7, Ok(()));
        let (reply, mut answer) = oneshot::channel();
        let job = jobs.start(2, reply);
        jobs.failed(job, CommandError::ClientGone);
        assert!(jobs.is_empty());
        let gone = Err(CommandError::ClientGone);
        assert_eq!(text(answer.try_recv().unwrap()), text(gone));
    }

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
