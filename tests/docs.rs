//! Keeps the documentation true: every `tmuxd ...` command in a fenced
//! block of README.md and docs/*.md parses with the CLI, and every relative
//! link points to a file that exists (and to a heading there, when it names
//! one), also where docs/openapi.json names one. No daemon, no tmux.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Parser;
use tmuxd::cli::Cli;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file in docs/.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    docs
}

/// A line of a Markdown file and whether it sits in a fenced block, with
/// the block's info string (`sh`, `console`, `toml`, or empty).
struct Line<'a> {
    number: usize,
    text: &'a str,
    fence: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut fence = None;
    let mut out = Vec::new();
    for (index, text) in text.lines().enumerate() {
        if let Some(info) = text.trim_start().strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim()),
                Some(_) => None,
            };
            continue;
        }
        out.push(Line {
            number: index + 1,
            text,
            fence,
        });
    }
    out
}

/// Blocks whose `tmuxd` lines are commands a reader would type. A `text`
/// block holds synopses (`tmuxd new [--name N]`), not commands.
fn is_shell_block(info: &str) -> bool {
    matches!(info, "" | "sh" | "bash" | "console" | "shell")
}

/// The words of a shell command line, as a POSIX shell splits them, with a
/// trailing comment and a final `&` dropped; `None` for a line this small
/// reader cannot follow (pipes, redirections, substitutions, `&&`...).
fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '#' if !in_word => break,
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '|' | ';' | '<' | '>' | '`' | '(' | ')' | '$' | '*' | '?' => return None,
            '&' => {
                let rest: String = chars.collect();
                let rest = rest.trim_start();
                if !rest.is_empty() && !rest.starts_with('#') {
                    return None;
                }
                break;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[test]
fn shell_words_split_as_a_shell_does() {
    let cases: [(&str, Option<&[&str]>); 9] = [
        ("tmuxd ls", Some(&["tmuxd", "ls"])),
        (
            "tmuxd send build --enter 'cargo test'   # a comment",
            Some(&["tmuxd", "send", "build", "--enter", "cargo test"]),
        ),
        ("tmuxd serve &", Some(&["tmuxd", "serve"])),
        (
            r#"tmuxd wait b --match "a \"b\"""#,
            Some(&["tmuxd", "wait", "b", "--match", "a \"b\""]),
        ),
        ("tmuxd serve &   # or a service", Some(&["tmuxd", "serve"])),
        ("tmuxd serve & tmuxd ls", None),
        ("tmuxd events | head -3", None),
        ("tmuxd open > link", None),
        ("TMUXD_TOKEN=$(cat t) tmuxd ls", None),
    ];
    for (line, expected) in cases {
        let expected = expected.map(|words| words.iter().map(|w| w.to_string()).collect());
        assert_eq!(shell_words(line), expected, "{line}");
    }
}

#[test]
fn every_documented_command_parses() {
    let mut checked = 0;
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        for line in lines(&text) {
            if !line.fence.is_some_and(is_shell_block) {
                continue;
            }
            let command = line.text.trim();
            let command = command.strip_prefix("$ ").unwrap_or(command);
            if !command.starts_with("tmuxd ") && command != "tmuxd" {
                continue;
            }
            let Some(words) = shell_words(command) else {
                skipped.push(format!("{name}:{}: {command}", line.number));
                continue;
            };
            checked += 1;
            if let Err(error) = Cli::try_parse_from(&words) {
                failures.push(format!("{name}:{}: {command}\n{error}", line.number));
            }
        }
    }
    println!("{checked} documented commands parsed; skipped (shell constructs): {skipped:#?}");
    assert!(checked > 0, "no `tmuxd ...` command found in the docs");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors a Markdown file defines: its headings' slugs (a repeated
/// one gets `-1`, `-2`... as on GitHub) and explicit `<a id="...">`s.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in lines(text) {
        if line.fence.is_some() {
            continue;
        }
        let heading = line.text.trim_start_matches('#');
        if heading.len() < line.text.len() && heading.starts_with(' ') {
            let base = slug(&heading.replace('`', ""));
            let mut anchor = base.clone();
            let mut n = 0;
            while !found.insert(anchor.clone()) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
        }
        for part in line.text.split("<a id=\"").skip(1) {
            if let Some((id, _)) = part.split_once('"') {
                found.insert(id.to_owned());
            }
        }
    }
    found
}

/// The targets of `[text](target)` links outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for line in lines(text) {
        if line.fence.is_some() {
            continue;
        }
        // Drop inline code: `[y/N]` followed by `(yes/no)` is not a link.
        let prose: String = line.text.split('`').step_by(2).collect::<Vec<_>>().join("");
        for part in prose.split("](").skip(1) {
            if let Some((target, _)) = part.split_once(')') {
                out.push((line.number, target.to_owned()));
            }
        }
    }
    out
}

/// Whether `path` exists and, for a Markdown file, has the heading
/// `anchor`; else what is missing.
fn points_to(path: &Path, anchor: Option<&str>) -> Result<(), &'static str> {
    if !path.exists() {
        return Err("no such file");
    }
    let is_markdown = path.extension().is_some_and(|ext| ext == "md");
    if let (Some(anchor), true) = (anchor, is_markdown) {
        let there = std::fs::read_to_string(path).unwrap();
        if !anchors(&there).contains(anchor) {
            return Err("no such heading");
        }
    }
    Ok(())
}

#[test]
fn every_relative_link_points_to_a_file_and_heading() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        for (number, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(file)
            };
            if let Err(missing) = points_to(&path, anchor) {
                broken.push(format!("{name}:{number}: {target}: {missing}"));
            }
        }
    }
    println!("{checked} relative links checked");
    assert!(checked > 0, "no relative link found in the docs");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// `docs/FILE.md#heading` references in the OpenAPI document's
/// descriptions (it says what each route does, and points to the guide
/// for the rest): each file and heading exists.
#[test]
fn the_openapi_documents_references_point_to_a_file_and_heading() {
    let text = std::fs::read_to_string(root().join("docs/openapi.json")).unwrap();
    let mut checked = 0;
    let mut broken = Vec::new();
    for part in text.split("docs/").skip(1) {
        let reference: String = part
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "._#-".contains(*c))
            .collect();
        let reference = reference.trim_end_matches('.');
        let (file, anchor) = match reference.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (reference, None),
        };
        if file.is_empty() {
            continue;
        }
        checked += 1;
        if let Err(missing) = points_to(&root().join("docs").join(file), anchor) {
            broken.push(format!("docs/{reference}: {missing}"));
        }
    }
    println!("{checked} references in docs/openapi.json checked");
    assert!(checked > 0, "no docs/ reference found in docs/openapi.json");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn slugs_match_github() {
    assert_eq!(slug("Fleet (many machines)"), "fleet-many-machines");
    assert_eq!(
        slug("When tmux is lost: restore"),
        "when-tmux-is-lost-restore"
    );
    assert_eq!(
        slug("Running against a fake tmux (CI)"),
        "running-against-a-fake-tmux-ci"
    );
    let text = "# A\n```sh\n# not a heading\n```\n## A\n<a id=\"x\"></a>";
    let found: Vec<_> = anchors(text).into_iter().collect();
    assert_eq!(found, ["a", "a-1", "x"]);
}
