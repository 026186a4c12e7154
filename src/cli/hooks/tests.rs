use super::*;

const CMD: &str = "/usr/local/bin/tmuxd hooks send claude";

fn commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap().iter())
        .map(|h| h["command"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn claude_settings_are_created() {
    let text = merge_claude(None, CMD, "s.json").unwrap().unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    for event in ClaudeEvent::ALL {
        assert_eq!(commands(&settings, event.name()), [CMD], "{event:?}");
    }
    let installed = settings["hooks"].as_object().unwrap().len();
    assert_eq!(installed, ClaudeEvent::ALL.len(), "{settings}");
    assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "*");
    assert_eq!(settings["hooks"]["Stop"][0].get("matcher"), None);
    assert_eq!(
        merge_claude(Some("  \n"), CMD, "s.json").unwrap(),
        Some(text)
    );
}

/// Other settings and other hooks stay; a second install changes nothing;
/// a tmuxd at another path is updated, not added twice.
#[test]
fn claude_settings_are_merged_and_the_install_is_idempotent() {
    let mine = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}]
        }
    })
    .to_string();
    let text = merge_claude(Some(&mine), CMD, "s.json").unwrap().unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(settings["model"], "opus");
    assert_eq!(settings["permissions"]["allow"][0], "Bash(npm test)");
    assert_eq!(commands(&settings, "Stop"), ["notify-send done", CMD]);
    assert_eq!(commands(&settings, "PostToolUse"), ["fmt"]);
    assert_eq!(merge_claude(Some(&text), CMD, "s.json").unwrap(), None);
    let moved = "'/opt/my tools/tmuxd' hooks send claude";
    let again = merge_claude(Some(&text), moved, "s.json").unwrap().unwrap();
    let settings: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(commands(&settings, "Stop"), ["notify-send done", moved]);
    assert_eq!(commands(&settings, "Notification"), [moved]);
}

#[test]
fn claude_settings_tmuxd_cannot_read_are_left_alone() {
    let cases: [(&str, &str); 4] = [
        ("{ not json", "is not valid JSON"),
        ("[1, 2]", "`(top level)` is not an object"),
        (r#"{"hooks": []}"#, "`hooks` is not an object"),
        (r#"{"hooks": {"Stop": {}}}"#, "`hooks.Stop` is not a list"),
    ];
    for (text, said) in cases {
        let err = merge_claude(Some(text), CMD, "s.json").unwrap_err();
        assert!(err.to_string().contains(said), "{text}: {err}");
    }
}

fn argv(exe: &str) -> Vec<String> {
    [exe, "hooks", "send", "codex"].map(str::to_owned).to_vec()
}

#[test]
fn codex_notify_is_added_above_the_tables_keeping_the_text() {
    let mine = "# my settings\nmodel = \"o3\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";
    let text = merge_codex(Some(mine), &argv("/bin/tmuxd"), "c.toml")
        .unwrap()
        .unwrap();
    assert!(text.ends_with(mine), "{text}");
    let table: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        table["notify"],
        toml::Value::from(argv("/bin/tmuxd")),
        "{text}"
    );
    assert_eq!(table["profiles"]["fast"]["model"].as_str(), Some("o4-mini"));
    assert_eq!(
        merge_codex(Some(&text), &argv("/bin/tmuxd"), "c.toml").unwrap(),
        None
    );
    let moved = merge_codex(Some(&text), &argv("/opt/tmuxd"), "c.toml")
        .unwrap()
        .unwrap();
    let table: toml::Table = toml::from_str(&moved).unwrap();
    assert_eq!(table["notify"], toml::Value::from(argv("/opt/tmuxd")));
    assert!(moved.contains("# my settings"), "{moved}");
    assert!(
        merge_codex(None, &argv("/bin/tmuxd"), "c.toml")
            .unwrap()
            .is_some()
    );
}

#[test]
fn codex_notify_of_another_program_is_not_replaced() {
    let mine = "notify = [\"notify-send\", \"codex\"]\n";
    let err = merge_codex(Some(mine), &argv("/bin/tmuxd"), "c.toml").unwrap_err();
    assert!(
        matches!(&err, MergeError::NotifyTaken { current, .. } if current.contains("notify-send")),
        "{err}"
    );
    let err = merge_codex(Some("model = "), &argv("/bin/tmuxd"), "c.toml").unwrap_err();
    assert!(err.to_string().contains("not valid TOML"), "{err}");
}

#[test]
fn shell_words() {
    assert_eq!(shell_word("/usr/bin/tmuxd"), "/usr/bin/tmuxd");
    assert_eq!(shell_word("/opt/my tools/tmuxd"), "'/opt/my tools/tmuxd'");
    assert_eq!(shell_word("/o'k/tmuxd"), r"'/o'\''k/tmuxd'");
}

#[test]
fn events_are_slimmed_to_what_the_daemon_reads() {
    let big = "x".repeat(100_000);
    let event = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/a", "content": big},
        "message": big,
    });
    let slim = slim_event(&event).unwrap();
    assert_eq!(slim["hook_event_name"], "PreToolUse");
    assert_eq!(slim["tool_name"], "Write");
    assert_eq!(slim.get("tool_input"), None);
    assert_eq!(slim["message"].as_str().unwrap().len(), MAX_FIELD_BYTES);
    assert_eq!(slim_event(&json!([1])), None);
}

/// A hook must outlive `cargo clean`: a build in a target dir hands over
/// to an installed tmuxd on PATH (not another build), or says it cannot.
#[test]
fn hooks_run_a_binary_that_outlives_cargo_clean() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let make = |path: &Path| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let checkout = root.path().join("src/app");
    std::fs::create_dir_all(&checkout).unwrap();
    std::fs::write(checkout.join("Cargo.toml"), "").unwrap();
    let build = checkout.join("target/release/tmuxd");
    make(&build);
    let other_build = root.path().join("elsewhere/out");
    std::fs::create_dir_all(&other_build).unwrap();
    std::fs::write(other_build.join("CACHEDIR.TAG"), "Signature").unwrap();
    make(&other_build.join("debug/tmuxd"));
    let installed = root.path().join("bin/tmuxd");
    make(&installed);
    let not_runnable = root.path().join("noexec/tmuxd");
    make(&not_runnable);
    std::fs::set_permissions(&not_runnable, std::fs::Permissions::from_mode(0o644)).unwrap();

    let dir = |p: &Path| p.parent().unwrap().display().to_string();
    let on_path = |dirs: &[&Path]| dirs.iter().map(|d| dir(d)).collect::<Vec<_>>().join(":");
    // (binary, PATH, hook runs)
    let table = [
        (&installed, on_path(&[&build]), Lasting::Itself),
        (
            &build,
            on_path(&[&not_runnable, &other_build.join("debug/tmuxd"), &installed]),
            Lasting::Installed(installed.clone()),
        ),
        (&build, on_path(&[&build]), Lasting::BuildOnly),
        (&build, String::new(), Lasting::BuildOnly),
    ];
    for (exe, path, want) in table {
        assert_eq!(lasting_binary(exe, Some(&path)), want, "{exe:?} {path}");
    }
}
