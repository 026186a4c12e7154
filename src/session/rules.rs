//! Screen rules: a regex over the last rows of the active pane that says
//! what a program is doing when its screen says so better than /proc can
//! (an agent's permission prompt, a "press any key"). The config's
//! (`[[state.rules]]`) come first, then the shipped agent presets
//! (`presets`); the first rule that matches wins. A rule for an agent
//! applies only while that agent holds the terminal, so a shell printing
//! the same words is not taken for it.

mod presets;

use regex::Regex;

pub use presets::{check_disabled as check_disabled_preset, presets};

use super::agents::Agent;
use super::state::SessionState;

/// One compiled rule.
#[derive(Clone, Debug)]
pub struct ScreenRule {
    pub regex: Regex,
    /// How many rows it looks at: the last ones with text on them.
    pub rows: usize,
    pub state: SessionState,
    /// Reported as the state's reason. Rules live as long as the daemon, so
    /// the text is kept `'static` and state views stay `Copy`.
    pub reason: &'static str,
    /// The agent that must be in the foreground for the rule to apply;
    /// `None`: whatever runs.
    pub agent: Option<Agent>,
}

/// The state and reason of the first rule matching `rows` (the pane's
/// rows, top to bottom) among those that apply to `agent`, the coding
/// agent in the pane's foreground.
pub fn evaluate(
    rules: &[ScreenRule],
    agent: Option<Agent>,
    rows: &[String],
) -> Option<(SessionState, &'static str)> {
    if rules.is_empty() {
        return None;
    }
    let used = rows
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .map_or(0, |last| last + 1);
    let rows = &rows[..used];
    let applies = |rule: &&ScreenRule| rule.agent.is_none_or(|a| Some(a) == agent);
    rules.iter().filter(applies).find_map(|rule| {
        let text = rows[rows.len().saturating_sub(rule.rows)..].join("\n");
        rule.regex
            .is_match(&text)
            .then_some((rule.state, rule.reason))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(regex: &str, rows: usize, state: SessionState, reason: &'static str) -> ScreenRule {
        ScreenRule {
            regex: Regex::new(regex).unwrap(),
            rows,
            state,
            reason,
            agent: None,
        }
    }

    #[test]
    fn the_first_matching_rule_over_the_last_rows_wins() {
        let rules = [
            rule(
                r"(?m)^Do you want to proceed\?",
                6,
                SessionState::Waiting,
                "permission_prompt",
            ),
            rule(
                r"(?i)press any key",
                2,
                SessionState::Waiting,
                "press_any_key",
            ),
        ];
        let screen = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
        let asking = screen(&["log", "Do you want to proceed?", "1. Yes", "2. No", "", ""]);
        assert_eq!(
            evaluate(&rules, None, &asking),
            Some((SessionState::Waiting, "permission_prompt"))
        );
        let any_key = screen(&["Press any key to continue", "", ""]);
        assert_eq!(
            evaluate(&rules, None, &any_key),
            Some((SessionState::Waiting, "press_any_key"))
        );
        // Out of the rule's rows: no match.
        let old = screen(&["Press any key", "a", "b", "c"]);
        assert_eq!(evaluate(&rules, None, &old), None);
        assert_eq!(evaluate(&[], None, &asking), None);
    }

    /// A rule for an agent is skipped unless that agent is in the foreground.
    #[test]
    fn an_agents_rule_applies_only_to_that_agent() {
        let mut only_claude = rule(r"esc to interrupt", 3, SessionState::Working, "busy");
        only_claude.agent = Some(Agent::Claude);
        let rules = [only_claude];
        let rows = vec!["✻ Thinking… (esc to interrupt)".to_owned()];
        let working = Some((SessionState::Working, "busy"));
        assert_eq!(evaluate(&rules, Some(Agent::Claude), &rows), working);
        assert_eq!(evaluate(&rules, Some(Agent::Codex), &rows), None);
        assert_eq!(evaluate(&rules, None, &rows), None);
    }
}
