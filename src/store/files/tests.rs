//! Tests for the data directory: locking, modes, atomic writes, corrupt files.

use super::*;
use chrono::TimeZone;
use serde_json::{Value, json};

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn corrupt_file_names() {
    let at = Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap();
    let cases = [
        ("registry.json", 0, "registry.json.corrupt-20250304T050607Z"),
        (
            "registry.json",
            1,
            "registry.json.corrupt-20250304T050607Z-1",
        ),
        (
            "thoughts.json",
            12,
            "thoughts.json.corrupt-20250304T050607Z-12",
        ),
    ];
    for (name, attempt, expected) in cases {
        assert_eq!(corrupt_file_name(OsStr::new(name), at, attempt), expected);
    }
}

#[test]
fn temp_names_are_recognised() {
    let temp = temp_file_name(OsStr::new("registry.json"), 42, 7);
    assert_eq!(temp, ".registry.json.tmp-42-7");
    let cases = [
        (temp.to_str().unwrap(), true),
        ("registry.json", false),
        ("events.jsonl.1", false),
        ("lock", false),
        ("registry.json.corrupt-20250304T050607Z", false),
    ];
    for (name, expected) in cases {
        assert_eq!(is_temp_name(OsStr::new(name)), expected, "{name}");
    }
}

#[test]
fn parent_dir_of_bare_name_is_cwd() {
    let cases = [("a.json", "."), ("d/a.json", "d"), ("/d/e/a.json", "/d/e")];
    for (path, expected) in cases {
        assert_eq!(parent_dir(Path::new(path)), Path::new(expected));
    }
}

#[test]
fn write_atomic_replaces_content_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.json");
    write_atomic(&path, b"first").unwrap();
    write_atomic(&path, b"second").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"second");
    assert_eq!(dir_entries(dir.path()), ["registry.json"]);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn write_atomic_tightens_a_world_readable_target() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.json");
    fs::write(&path, b"old").unwrap();
    fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
    write_atomic(&path, b"new").unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn failed_write_atomic_leaves_target_and_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    // Renaming a file over a non-empty directory fails after the temp
    // file has been written.
    let path = dir.path().join("target");
    fs::create_dir(&path).unwrap();
    fs::write(path.join("inside"), b"keep").unwrap();
    let err = write_atomic(&path, b"new").unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    assert_eq!(dir_entries(dir.path()), ["target"]);
    assert_eq!(fs::read(path.join("inside")).unwrap(), b"keep");
}

#[test]
fn open_creates_private_dir_and_nothing_in_it() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("a/b/data");
    let data = DataDir::open(&path).unwrap();
    assert_eq!(data.path(), path);
    assert_eq!(mode(&path), 0o700);
    assert!(dir_entries(&path).is_empty(), "{:?}", dir_entries(&path));
    assert_eq!(data.registry_path(), path.join("registry.json"));
    assert_eq!(data.thoughts_path(), path.join("thoughts.json"));
    assert_eq!(data.events_path(), path.join("events.jsonl"));
}

#[test]
fn open_tightens_existing_dir() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("data");
    fs::create_dir(&path).unwrap();
    fs::set_permissions(&path, Permissions::from_mode(0o755)).unwrap();
    let _data = DataDir::open(&path).unwrap();
    assert_eq!(mode(&path), 0o700);
}

#[test]
fn open_removes_stale_temp_files() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join(".registry.json.tmp-1-0"), b"half").unwrap();
    fs::write(root.path().join("registry.json"), b"{}").unwrap();
    let _data = DataDir::open(root.path()).unwrap();
    assert_eq!(dir_entries(root.path()), ["registry.json"]);
}

#[test]
fn second_open_is_locked_until_first_drops() {
    let root = tempfile::tempdir().unwrap();
    let first = DataDir::open(root.path()).unwrap();
    let err = DataDir::open(root.path()).unwrap_err();
    assert!(matches!(&err, StoreError::Locked { path } if path == root.path()));
    let expected = format!(
        "another tmuxd is already using data dir {} (it holds the lock on the directory)",
        root.path().display()
    );
    assert_eq!(err.to_string(), expected);
    drop(first);
    DataDir::open(root.path()).unwrap();
}

/// The lock is on the directory: deleting every file in it (as `rm lock`
/// did to the old lock file) leaves the first holder the only one.
#[test]
fn the_lock_survives_emptying_the_dir() {
    let root = tempfile::tempdir().unwrap();
    let first = DataDir::open(root.path()).unwrap();
    first.save_json(&first.registry_path(), &1).unwrap();
    for name in dir_entries(root.path()) {
        fs::remove_file(root.path().join(name)).unwrap();
    }
    let err = DataDir::open(root.path()).unwrap_err();
    assert!(matches!(&err, StoreError::Locked { .. }), "{err}");
}

#[test]
fn load_json_refuses_a_symbolic_link_and_leaves_its_target() {
    let root = tempfile::tempdir().unwrap();
    let data = DataDir::open(&root.path().join("data")).unwrap();
    let target = root.path().join("victim.json");
    fs::write(&target, b"{}").unwrap();
    std::os::unix::fs::symlink(&target, data.registry_path()).unwrap();
    let err = data.load_json::<serde_json::Value>(&data.registry_path());
    let err = err.unwrap_err();
    assert!(matches!(&err, StoreError::Link { path } if *path == data.registry_path()));
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    assert_eq!(fs::read(&target).unwrap(), b"{}");
    assert!(
        fs::symlink_metadata(data.registry_path())
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn load_json_refuses_what_is_not_a_regular_file() {
    let root = tempfile::tempdir().unwrap();
    let data = DataDir::open(root.path()).unwrap();
    fs::create_dir(data.registry_path()).unwrap();
    let err = data.load_json::<serde_json::Value>(&data.registry_path());
    assert!(
        err.unwrap_err().to_string().contains("not a regular file"),
        "a directory in place of a file"
    );
}

#[test]
fn load_json_missing_found_and_saved() {
    let root = tempfile::tempdir().unwrap();
    let data = DataDir::open(root.path()).unwrap();
    let path = data.registry_path();
    assert_eq!(data.load_json::<Value>(&path).unwrap(), Loaded::Missing);
    data.save_json(&path, &json!({"a": [1, 2]})).unwrap();
    assert_eq!(
        data.load_json::<Value>(&path).unwrap(),
        Loaded::Found(json!({"a": [1, 2]}))
    );
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn load_json_moves_corrupt_file_aside() {
    let root = tempfile::tempdir().unwrap();
    let data = DataDir::open(root.path()).unwrap();
    let path = data.registry_path();
    for round in 0..2 {
        fs::write(&path, b"{\"version\": 1,").unwrap();
        let Loaded::Corrupt { moved_to, error } = data.load_json::<Value>(&path).unwrap() else {
            panic!("round {round}: expected Corrupt");
        };
        assert!(!path.exists());
        assert_eq!(fs::read(&moved_to).unwrap(), b"{\"version\": 1,");
        assert!(error.to_string().contains("EOF"), "{error}");
        let moved_name = moved_to.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            moved_name.starts_with("registry.json.corrupt-"),
            "{moved_name}"
        );
    }
    // Both corrupt copies are kept, even within the same second.
    let corrupt = dir_entries(root.path())
        .into_iter()
        .filter(|n| n.contains(".corrupt-"))
        .count();
    assert_eq!(corrupt, 2);
}

#[test]
fn load_json_reports_unreadable_path_as_io_error() {
    let root = tempfile::tempdir().unwrap();
    let data = DataDir::open(root.path()).unwrap();
    let err = data.load_json::<Value>(root.path()).unwrap_err();
    assert!(matches!(&err, StoreError::Io { path, .. } if path == root.path()));
}
