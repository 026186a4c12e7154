//! Each shipped preset against its fixture screens
//! (`fixtures/screens/agents/`, hand-made: see the README there): it
//! matches its screen while its agent is in the foreground, not while
//! another program shows the same screen, and not its near miss.

use super::*;
use crate::session::rules::evaluate;

fn screen(file: &str) -> Vec<String> {
    let path = format!(
        "{}/fixtures/screens/agents/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines().map(str::to_owned).collect()
}

fn shipped(name: &str) -> Preset {
    *PRESETS
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no preset {name}"))
}

/// The whole shipped set, as the daemon runs it by default.
fn check_preset(name: &str) {
    let preset = shipped(name);
    let rules = presets(&[]);
    let matching = screen(&format!("{name}.txt"));
    assert_eq!(
        evaluate(&rules, Some(preset.agent), &matching),
        Some((preset.state, name)),
        "{name}.txt with {:?} in the foreground",
        preset.agent
    );
    // A shell (or another agent) printing the same screen is not the agent.
    assert_eq!(
        evaluate(&rules, None, &matching),
        None,
        "{name}.txt, no agent"
    );
    for other in Agent::ALL.into_iter().filter(|a| *a != preset.agent) {
        let found = evaluate(&rules, Some(other), &matching);
        assert!(
            found.is_none_or(|(_, reason)| reason != name),
            "{name}.txt under {other:?}: {found:?}"
        );
    }
    let near_miss = screen(&format!("{name}.near_miss.txt"));
    let found = evaluate(&rules, Some(preset.agent), &near_miss);
    assert!(
        found.is_none_or(|(_, reason)| reason != name),
        "{name}.near_miss.txt matched: {found:?}"
    );
}

macro_rules! preset_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_preset(stringify!($name));
            }
        )*

        /// Every shipped preset has its test above.
        #[test]
        fn every_preset_is_tested() {
            let tested = [$(stringify!($name)),*];
            let shipped: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            assert_eq!(tested.to_vec(), shipped);
        }
    };
}

preset_tests!(
    claude_permission,
    claude_working,
    codex_approval,
    codex_working,
    gemini_confirmation,
    gemini_working,
    aider_question,
    aider_working,
    opencode_permission,
    opencode_working,
);

#[test]
fn presets_turn_off_by_name_by_agent_or_all() {
    let names = |disabled: &[&str]| {
        let disabled: Vec<String> = disabled.iter().map(|w| (*w).to_owned()).collect();
        presets(&disabled)
            .iter()
            .map(|r| r.reason)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&[]).len(), PRESETS.len());
    assert!(names(&["all"]).is_empty());
    let without_claude = names(&["claude"]);
    assert_eq!(without_claude.len(), PRESETS.len() - 2);
    assert!(without_claude.iter().all(|n| !n.starts_with("claude_")));
    let without_one = names(&["aider_working"]);
    assert!(!without_one.contains(&"aider_working") && without_one.contains(&"aider_question"));
}

#[test]
fn disabled_words_are_checked() {
    assert!(check_disabled("all").is_ok());
    assert!(check_disabled("codex").is_ok());
    assert!(check_disabled("gemini_working").is_ok());
    let err = check_disabled("claude_prompt").unwrap_err().to_string();
    assert!(
        err.contains("claude_permission") && err.contains("opencode"),
        "{err}"
    );
}

/// A user's `[[state.rules]]` come before the presets, so one for the
/// same screen overrides them.
#[test]
fn config_rules_override_presets() {
    let mut rules = vec![ScreenRule {
        regex: Regex::new("esc to interrupt").unwrap(),
        rows: 20,
        state: SessionState::Idle,
        reason: "mine",
        agent: Some(Agent::Claude),
    }];
    rules.extend(presets(&[]));
    let working = screen("claude_working.txt");
    assert_eq!(
        evaluate(&rules, Some(Agent::Claude), &working),
        Some((SessionState::Idle, "mine"))
    );
}
