//! Screen rules from the config (`[[state.rules]]`): a regex over the last
//! rows of the active pane that says what a program is doing when its
//! screen says so better than /proc can (an agent's permission prompt, a
//! "press any key"). The first rule that matches wins.

use regex::Regex;

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
}

/// The state and reason of the first rule matching `rows` (the pane's
/// rows, top to bottom).
pub fn evaluate(rules: &[ScreenRule], rows: &[String]) -> Option<(SessionState, &'static str)> {
    if rules.is_empty() {
        return None;
    }
    let used = rows
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .map_or(0, |last| last + 1);
    let rows = &rows[..used];
    rules.iter().find_map(|rule| {
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
            evaluate(&rules, &asking),
            Some((SessionState::Waiting, "permission_prompt"))
        );
        let any_key = screen(&["Press any key to continue", "", ""]);
        assert_eq!(
            evaluate(&rules, &any_key),
            Some((SessionState::Waiting, "press_any_key"))
        );
        // Out of the rule's rows: no match.
        let old = screen(&["Press any key", "a", "b", "c"]);
        assert_eq!(evaluate(&rules, &old), None);
        assert_eq!(evaluate(&[], &asking), None);
    }
}
