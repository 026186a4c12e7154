//! The Python tools some tests drive (a Prometheus parser, schemathesis),
//! from the virtualenv `scripts/test` installs (`ensure_python_tools` in
//! scripts/lib.sh). A test that needs them fails, never skips, without them.

use std::path::PathBuf;

/// `$TMUXD_TEST_VENV`, else `~/.cache/tmuxd/py-venv`.
pub fn venv() -> PathBuf {
    if let Some(dir) = std::env::var_os("TMUXD_TEST_VENV") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    PathBuf::from(home).join(".cache/tmuxd/py-venv")
}

/// A program of the virtualenv (`python`, `st`), which must exist.
pub fn venv_bin(name: &str) -> PathBuf {
    let path = venv().join("bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/test (or scripts/py-tools) to install the test tools",
        path.display()
    );
    path
}

/// A file under tests/py.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}
