//! The screen rules tmuxd ships for coding agents: each one's permission
//! or question prompt (`waiting`, which raises attention) and its working
//! indicator (`working`: a spinner with "esc to interrupt", a timer). They
//! apply only while their agent is in the foreground, after the config's
//! own rules (which can therefore override them), and each can be turned
//! off by name, by agent, or all at once (`state.disabled_presets`).
//!
//! The patterns follow the agents' documented and commonly shown screens;
//! the fixtures that test them (`fixtures/screens/agents/`) are hand-made
//! from those, not recorded from the agents themselves.

use regex::Regex;

use super::ScreenRule;
use crate::session::agents::Agent;
use crate::session::state::SessionState;

/// One shipped rule: its name is also the state's reason.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub agent: Agent,
    pub regex: &'static str,
    /// The last rows with text it looks at.
    pub rows: usize,
    pub state: SessionState,
}

/// `disabled_presets` word that turns every preset off.
pub const ALL_PRESETS: &str = "all";

const fn preset(
    name: &'static str,
    agent: Agent,
    state: SessionState,
    rows: usize,
    regex: &'static str,
) -> Preset {
    Preset {
        name,
        agent,
        regex,
        rows,
        state,
    }
}

use SessionState::{Waiting, Working};

/// Every shipped preset, in the order they are tried (questions first: a
/// question drawn while a timer still shows is a question).
pub const PRESETS: [Preset; 10] = [
    // A framed menu under the question, the cursor `❯` on a numbered
    // option: "Do you want to proceed?", "Do you want to make this edit to
    // x?", "Would you like to proceed?" (plan mode).
    preset(
        "claude_permission",
        Agent::Claude,
        Waiting,
        16,
        r"(?s)(?:Do you want|Would you like) to [^\n]{1,200}\?.{0,800}?❯ ?\d\. \S",
    ),
    // The spinner line above the input box: a glyph, a gerund with `…`, and
    // "(… esc to interrupt …)" with the elapsed time and tokens.
    preset(
        "claude_working",
        Agent::Claude,
        Working,
        14,
        r"(?m)^\s*\S \S[^\n]*…[^\n]*\([^\n]*esc to interrupt",
    ),
    // The approval overlay: "Would you like to run the following
    // command?" (or make edits, grant permissions) over its options.
    preset(
        "codex_approval",
        Agent::Codex,
        Waiting,
        24,
        r"(?s)(?:Would you like to (?:run the following command|make the following edits|grant these permissions)\?|Allow command\?).{0,1500}?(?:Yes, proceed|Press enter to confirm)",
    ),
    // The status line: "• Working (12s • esc to interrupt)".
    preset(
        "codex_working",
        Agent::Codex,
        Working,
        10,
        r"(?i)\((?:\d+[hms] ?)+ *• *esc to interrupt\)",
    ),
    // A tool confirmation box: "Allow execution of: 'npm'?", "Apply this
    // change?" over "● 1. Yes, allow once".
    preset(
        "gemini_confirmation",
        Agent::Gemini,
        Waiting,
        24,
        r"(?s)(?:Allow execution[^\n]*\?|Apply this change\?|Do you want to proceed\?).{0,1000}?(?:\d\. |● )Yes, allow once",
    ),
    // The loading line: "⠼ Thinking about it (esc to cancel, 12s)".
    preset(
        "gemini_working",
        Agent::Gemini,
        Working,
        12,
        r"\(esc to cancel, (?:\d+[hm] )*\d+s\)",
    ),
    // Its line-mode question, the cursor after it: "Run shell command?
    // (Y)es/(N)o/(D)on't ask again [Yes]: ".
    preset(
        "aider_question",
        Agent::Aider,
        Waiting,
        3,
        r"\(Y\)es/\(N\)o[^\n]*\[(?:Yes|No)\]:\s*\z",
    ),
    // Its spinner while the model answers: "░█        Waiting for gpt-4o".
    preset(
        "aider_working",
        Agent::Aider,
        Working,
        2,
        r"(?m)^[^\w\n]*Waiting for [\w./:@-]+\s*\z",
    ),
    // The permission dialog: "Permission required" over "Allow once" (or
    // the older "Allow (a)").
    preset(
        "opencode_permission",
        Agent::Opencode,
        Waiting,
        24,
        r"(?is)permission required.{0,1000}?(?:allow once|allow \(a\))",
    ),
    // The footer while a session runs: "esc interrupt".
    preset(
        "opencode_working",
        Agent::Opencode,
        Working,
        4,
        r"(?i)\besc (?:again )?(?:to )?interrupt\b",
    ),
];

/// A word in `state.disabled_presets` that names nothing; it says the
/// words that may be listed.
#[derive(Debug, thiserror::Error)]
#[error(
    "{word:?} is no preset: use \"{ALL_PRESETS}\", an agent ({}) or a preset ({})",
    Agent::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", "),
    PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
)]
pub struct UnknownPreset {
    pub word: String,
}

/// Whether `word` may be listed in `state.disabled_presets`.
pub fn check_disabled(word: &str) -> Result<(), UnknownPreset> {
    let known = word == ALL_PRESETS
        || Agent::from_name(word).is_some()
        || PRESETS.iter().any(|p| p.name == word);
    match known {
        true => Ok(()),
        false => Err(UnknownPreset {
            word: word.to_owned(),
        }),
    }
}

/// The presets not disabled, compiled, in order.
pub fn presets(disabled: &[String]) -> Vec<ScreenRule> {
    let off = |p: &Preset| {
        disabled
            .iter()
            .any(|w| w == ALL_PRESETS || w == p.name || w == p.agent.as_str())
    };
    PRESETS
        .iter()
        .filter(|p| !off(p))
        .map(|p| ScreenRule {
            regex: Regex::new(p.regex).expect("shipped presets compile"),
            rows: p.rows,
            state: p.state,
            reason: p.name,
            agent: Some(p.agent),
        })
        .collect()
}

#[cfg(test)]
mod tests;
