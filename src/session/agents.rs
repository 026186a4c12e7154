//! Which coding agent holds a pane's terminal, from its foreground process:
//! a pure guess over the process's name and argv (`identify`), and the
//! /proc reads that feed it (`detect`). Agents are often scripts (Claude
//! Code and Gemini CLI run under node, aider under python), so the
//! interpreter's script or module counts, not only the program's name.

mod hooks;

pub use crate::wire::Agent;
pub use hooks::{HookError, HookEvent, interpret};

/// Programs that run an agent's script: the script (or `-m` module) names
/// the agent, not the interpreter.
fn is_interpreter(name: &str) -> bool {
    matches!(name, "node" | "nodejs" | "bun" | "deno" | "pypy" | "pypy3")
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Package directories an agent's script lives in, whatever the script's
/// own name (`cli.js`, `dist/index.js`).
const PACKAGES: [(&str, Agent); 5] = [
    ("@anthropic-ai/claude-code", Agent::Claude),
    ("@openai/codex", Agent::Codex),
    ("@google/gemini-cli", Agent::Gemini),
    ("aider-chat", Agent::Aider),
    ("opencode-ai", Agent::Opencode),
];

/// The agent a program name stands for: `claude`, `codex.js`, `.opencode`,
/// or a native build named after its target (`codex-x86_64-unknown-linux-musl`,
/// cut to 15 bytes in `comm`).
fn agent_named(name: &str) -> Option<Agent> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.trim_start_matches('.');
    let base = [".js", ".mjs", ".cjs", ".py", ".exe"]
        .iter()
        .find_map(|ext| base.strip_suffix(ext))
        .unwrap_or(base);
    if let Some(agent) = Agent::from_name(base) {
        return Some(agent);
    }
    let native = |prefix: &str| {
        base.strip_prefix(prefix).is_some_and(|rest| {
            ["-x86_64", "-aarch64", "-arm64", "-x64", "-linux", "-darwin"]
                .iter()
                .any(|arch| rest.starts_with(arch))
        })
    };
    [Agent::Codex, Agent::Opencode, Agent::Claude]
        .into_iter()
        .find(|a| native(a.as_str()))
}

/// The script an interpreter runs: its first argument that is not an
/// option, or the module of `-m`.
fn script_of(args: &[String]) -> Option<&str> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-m" => return args.next().map(|m| m.split('.').next().unwrap_or(m)),
            // Code on the command line: no script to name the program.
            "-c" | "-e" | "--eval" | "-p" | "--print" => return None,
            a if a.starts_with('-') => {}
            a => return Some(a),
        }
    }
    None
}

/// The agent a process is, from its `comm` (the kernel's 15-byte name: a
/// script's name for a `#!` script run directly, `node` under `env node`)
/// and its argv. Pure, so the table of real command lines is a test.
pub fn identify(comm: &str, argv: &[String]) -> Option<Agent> {
    let program = argv.first().map(String::as_str).unwrap_or(comm);
    let program_name = program.rsplit('/').next().unwrap_or(program);
    if is_interpreter(program_name) || (argv.is_empty() && is_interpreter(comm)) {
        let script = script_of(argv.get(1..).unwrap_or_default())?;
        let package = PACKAGES
            .iter()
            .find(|(dir, _)| script.contains(dir))
            .map(|(_, agent)| *agent);
        return package.or_else(|| agent_named(script));
    }
    agent_named(program_name).or_else(|| agent_named(comm))
}

/// Processes looked at below the foreground leader (`npx claude` runs the
/// agent as a child of `npm exec`).
const MAX_CHILDREN: usize = 8;

/// The agent in the foreground of `pane_pid`'s terminal: the foreground
/// group's leader, or one of its children in that group (not a shell's
/// background job).
pub fn detect(pane_pid: u32) -> Option<Agent> {
    let (leader, _) = stat_groups(pane_pid)?;
    let foreground = |pid: &u32| stat_groups(*pid).is_some_and(|(_, group)| group == leader);
    let children = children(leader);
    std::iter::once(leader)
        .chain(children.into_iter().take(MAX_CHILDREN).filter(foreground))
        .find_map(process_agent)
}

fn process_agent(pid: u32) -> Option<Agent> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    identify(comm.trim_end(), &argv)
}

/// A process's terminal foreground group (`tpgid`: its leader's pid) and
/// its own group (`pgrp`). Fields are read after the last `)` (the name
/// may hold anything).
fn stat_groups(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let number = |i: usize| {
        let n: i64 = fields.get(i)?.parse().ok()?;
        u32::try_from(n).ok().filter(|&n| n > 0)
    };
    Some((number(5)?, number(2)?))
}

fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &str) -> Vec<String> {
        words.split_whitespace().map(str::to_owned).collect()
    }

    /// Command lines as these agents are started (npm, pip, native
    /// installs), and near misses that must stay `None`.
    #[test]
    fn agents_from_their_command_lines() {
        use Agent::*;
        #[rustfmt::skip]
        let cases: &[(&str, &str, Option<Agent>)] = &[
            // Claude Code: npm's `#!/usr/bin/env node` script, node's own
            // process title, the native installer's binary, npx.
            ("node", "node /usr/local/bin/claude", Some(Claude)),
            ("node", "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js --resume", Some(Claude)),
            ("claude", "claude", Some(Claude)),
            ("claude", "/home/u/.local/share/claude/versions/2.0.1", Some(Claude)),
            ("node", "node /home/u/.npm/_npx/1/node_modules/.bin/claude", Some(Claude)),
            // Codex: the native binary, the npm wrapper and the binary it runs.
            ("codex", "codex", Some(Codex)),
            ("node", "node /usr/lib/node_modules/@openai/codex/bin/codex.js", Some(Codex)),
            ("codex-x86_64-un", "/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex", Some(Codex)),
            ("codex-x86_64-un", "", Some(Codex)),
            // Gemini CLI, also as it relaunches itself with a larger heap.
            ("node", "node /usr/bin/gemini", Some(Gemini)),
            ("node", "/usr/bin/node --max-old-space-size=8192 /usr/lib/node_modules/@google/gemini-cli/dist/index.js", Some(Gemini)),
            // aider: pip's script (the kernel names the process after it), -m.
            ("aider", "/usr/bin/python3 /home/u/.local/bin/aider --model sonnet", Some(Aider)),
            ("python3", "python3 -m aider --yes", Some(Aider)),
            ("python3.12", "/home/u/venv/bin/python3.12 /home/u/venv/bin/aider", Some(Aider)),
            // opencode: the binary, the npm wrapper's hidden binary.
            ("opencode", "opencode", Some(Opencode)),
            (".opencode", "/home/u/.bun/install/global/node_modules/opencode-linux-x64/bin/.opencode", Some(Opencode)),
            ("node", "node /usr/lib/node_modules/opencode-ai/bin/opencode", Some(Opencode)),
            // Near misses: other programs that mention an agent.
            ("vim", "vim claude.md", None),
            ("less", "less codex.log", None),
            ("node", "node server.js", None),
            ("node", "node -e require('claude')", None),
            ("python3", "python3 -c import aider", None),
            ("python3", "python3", None),
            ("bash", "bash", None),
            ("claude-monitor", "claude-monitor", None),
            ("codexer", "codexer", None),
            ("sh", "sh -c claude", None),
        ];
        for (comm, line, want) in cases {
            assert_eq!(identify(comm, &argv(line)), *want, "{comm:?} {line:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for agent in Agent::ALL {
            assert_eq!(Agent::from_name(agent.as_str()), Some(agent));
            let json = serde_json::to_string(&agent).unwrap();
            assert_eq!(json, format!("\"{}\"", agent.as_str()));
        }
        assert_eq!(Agent::from_name("cursor"), None);
    }

    #[test]
    fn this_process_is_no_agent() {
        assert_eq!(detect(std::process::id()), None);
        assert_eq!(detect(u32::MAX), None);
    }
}
