//! When each session's windows last had output, for every session in one
//! query: how tmuxd notices that a session without a control client of its
//! own (a cold one, see the heat owner) has printed. tmux stamps a window's
//! activity whenever it reads output from one of its panes (whole seconds),
//! whether or not `monitor-activity` is on; reading it sets nothing.

use std::collections::BTreeMap;

use super::command::{ParseError, TmuxCommand};
use super::control::TmuxSessionId;

/// `list-windows -a -F '#{session_id} #{window_activity}'`: each session's
/// latest window activity, in seconds since the epoch. Neither field is
/// chosen by a user, so a space separates them safely.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowActivity;

impl TmuxCommand for WindowActivity {
    type Output = BTreeMap<TmuxSessionId, u64>;

    fn args(&self) -> Vec<String> {
        [
            "list-windows",
            "-a",
            "-F",
            "#{session_id} #{window_activity}",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn parse(&self, lines: &[Vec<u8>]) -> Result<Self::Output, ParseError> {
        let mut latest = BTreeMap::new();
        for line in lines {
            let text = String::from_utf8_lossy(line);
            let row = text.split_once(' ').and_then(|(session, at)| {
                Some((
                    session.parse::<TmuxSessionId>().ok()?,
                    at.parse::<u64>().ok()?,
                ))
            });
            let Some((session, at)) = row else {
                return Err(ParseError {
                    command: "list-windows".to_owned(),
                    reason: format!("not a session id and a time: {text:?}"),
                });
            };
            let seen = latest.entry(session).or_insert(at);
            *seen = (*seen).max(at);
        }
        Ok(latest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_gets_its_latest_window() {
        let lines: Vec<Vec<u8>> = ["$1 100", "$1 250", "$7 90", "$1 200"]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        let latest = WindowActivity.parse(&lines).unwrap();
        let expected = BTreeMap::from([(TmuxSessionId(1), 250), (TmuxSessionId(7), 90)]);
        assert_eq!(latest, expected);
        assert!(WindowActivity.parse(&[b"junk".to_vec()]).is_err());
        assert!(WindowActivity.parse(&[]).unwrap().is_empty());
    }
}
