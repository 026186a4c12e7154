//! The commands of a settled-screen check: what tmux has of one pane
//! (cursor, modes, whether a person has it in copy mode) and its rows, sent
//! together in one write so tmux answers them in one turn of its loop, with
//! no pane output read in between.

use super::terminal::{PANE_STATE_FIELDS, PaneState, flag, number, pane_state_format};
use super::{CaptureSeed, ParseError, TmuxCommand, owned, text_lines};
use crate::tmux::control::PaneId;

/// Tab-separated; the pane's terminal state (with the title) comes last.
const FORMAT: &str = concat!(
    "#{pane_in_mode}\t#{pane_mode}\t#{scroll_position}\t#{history_size}\t",
    pane_state_format!()
);

/// `display-message -p -t %N -- FORMAT`: one pane's terminal state.
#[derive(Clone, Debug)]
pub struct PaneLook {
    pub pane: PaneId,
}

/// What tmux has of a pane beyond its rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PaneFacts {
    /// Its terminal: size, cursor, modes, title.
    pub state: PaneState,
    /// A mode (copy mode, a chooser) covers the pane in some client.
    pub mode: Option<PaneMode>,
}

/// The mode a pane is in, and in copy mode how far up a person scrolled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaneMode {
    /// tmux's name of the mode: `copy-mode`, `view-mode`, `tree-mode`...
    pub name: String,
    /// Lines above the live screen the view's top row is (copy mode's
    /// `[N/M]`: this is N).
    pub scroll_position: u32,
    /// Lines of history the pane keeps (the M of `[N/M]`).
    pub history_size: u32,
}

impl TmuxCommand for PaneLook {
    type Output = PaneFacts;

    fn args(&self) -> Vec<String> {
        owned(&[
            "display-message",
            "-p",
            "-t",
            &self.pane.to_string(),
            "--",
            FORMAT,
        ])
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<PaneFacts, ParseError> {
        let line = text_lines(lines).join("\n");
        parse_facts(&line).ok_or_else(|| {
            ParseError::new(
                "display-message",
                format!("cannot read pane state {line:?}"),
            )
        })
    }
}

fn parse_facts(line: &str) -> Option<PaneFacts> {
    let fields: Vec<&str> = line.splitn(4 + PANE_STATE_FIELDS, '\t').collect();
    let [in_mode, mode, position, history, state @ ..] = fields.as_slice() else {
        return None;
    };
    Some(PaneFacts {
        state: PaneState::parse(state)?,
        mode: flag(in_mode).then(|| PaneMode {
            name: (*mode).to_owned(),
            scroll_position: number(position).unwrap_or(0),
            history_size: number(history).unwrap_or(0),
        }),
    })
}

/// One command of a check; all are sent in one write (`send_all`).
#[derive(Clone, Debug)]
pub enum CheckStep {
    /// The pane's state (`PaneLook`).
    Look(PaneLook),
    /// Its rows as a seed takes them (`CaptureSeed`).
    Rows(CaptureSeed),
}

impl CheckStep {
    /// The steps that check `pane`: its state, its rows, and the normal
    /// screen behind an alternate one when tmuxd's screen has it on.
    pub fn of_pane(pane: PaneId, alternate: bool) -> Vec<CheckStep> {
        let mut steps = vec![
            CheckStep::Look(PaneLook { pane }),
            CheckStep::Rows(CaptureSeed {
                pane,
                alternate: false,
            }),
        ];
        if alternate {
            steps.push(CheckStep::Rows(CaptureSeed {
                pane,
                alternate: true,
            }));
        }
        steps
    }
}

impl TmuxCommand for CheckStep {
    /// The reply's lines, read by the step's own command.
    type Output = Vec<Vec<u8>>;

    fn args(&self) -> Vec<String> {
        match self {
            CheckStep::Look(c) => c.args(),
            CheckStep::Rows(c) => c.args(),
        }
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, ParseError> {
        Ok(lines.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_facts_parse_with_and_without_a_mode() {
        let live = "0\t\t\t120\t80\t24\t5\t9\t1\t0\t0\t23\t0\thost\twith tab";
        let facts = parse_facts(live).unwrap();
        assert_eq!((facts.state.cols, facts.state.rows), (80, 24));
        assert_eq!((facts.state.cursor_x, facts.state.cursor_y), (5, 9));
        assert!(
            facts.state.cursor_visible && !facts.state.alternate_on && !facts.state.origin_mode
        );
        assert_eq!(
            (facts.state.scroll_upper, facts.state.scroll_lower),
            (0, 23)
        );
        assert_eq!(facts.mode, None);
        assert_eq!(facts.state.title, "host\twith tab");
        let copy = "1\tcopy-mode\t7\t277\t80\t24\t80\t0\t0\t1\t0\t23\t1\tt";
        let facts = parse_facts(copy).unwrap();
        assert_eq!(facts.state.cursor_x, 80, "a pending wrap");
        assert!(facts.state.alternate_on && facts.state.origin_mode && !facts.state.cursor_visible);
        assert_eq!(
            facts.mode,
            Some(PaneMode {
                name: "copy-mode".into(),
                scroll_position: 7,
                history_size: 277,
            })
        );
        assert!(parse_facts("80\t24").is_none());
        assert!(parse_facts("0\t\t\t0\tx\t24\t5\t9\t1\t0\t0\t23\t0\tt").is_none());
        let look = PaneLook { pane: PaneId(3) };
        assert_eq!(look.args()[..4], ["display-message", "-p", "-t", "%3"]);
        assert!(look.parse(&[b"junk".to_vec()]).is_err());
    }

    #[test]
    fn a_check_is_state_then_rows() {
        let argv = |steps: Vec<CheckStep>| -> Vec<String> {
            steps.iter().map(|s| s.args().join(" ")).collect()
        };
        let steps = argv(CheckStep::of_pane(PaneId(2), false));
        assert_eq!(steps.len(), 2);
        assert!(steps[0].starts_with("display-message -p -t %2 -- #{pane_in_mode}"));
        assert_eq!(steps[1], "capture-pane -p -e -N -t %2");
        let steps = argv(CheckStep::of_pane(PaneId(2), true));
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[2], "capture-pane -p -e -N -a -q -t %2");
    }
}
