//! The line a daemon started at a terminal ends its banner with: how to run
//! the CLI from another shell. After `scripts/serve` the binary is
//! `target/release/tmuxd`, not on PATH, and a bare `tmuxd ls` fails.

use std::ffi::OsStr;
use std::path::Path;

/// `CLI: ...` for the binary at `exe`, given the PATH the user has.
pub fn cli_hint(exe: &Path, path: Option<&OsStr>) -> String {
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let on_path = path.is_some_and(|p| std::env::split_paths(p).any(|d| d == dir));
    let named_tmuxd = exe.file_name() == Some(OsStr::new("tmuxd"));
    if on_path && named_tmuxd {
        return "CLI (from another shell): tmuxd ls, tmuxd new NAME, tmuxd --help".to_owned();
    }
    format!(
        "CLI (from another shell): {exe} ls, {exe} --help; or put it on PATH: export PATH=\"{dir}:$PATH\"",
        exe = exe.display(),
        dir = dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_says_how_to_reach_the_binary() {
        let release = Path::new("/src/tmuxd/target/release/tmuxd");
        let table: [(&Path, Option<&str>, &str); 4] = [
            (
                release,
                Some("/usr/bin:/bin"),
                "CLI (from another shell): /src/tmuxd/target/release/tmuxd ls, \
                 /src/tmuxd/target/release/tmuxd --help; or put it on PATH: \
                 export PATH=\"/src/tmuxd/target/release:$PATH\"",
            ),
            (
                release,
                None,
                "CLI (from another shell): /src/tmuxd/target/release/tmuxd ls, \
                 /src/tmuxd/target/release/tmuxd --help; or put it on PATH: \
                 export PATH=\"/src/tmuxd/target/release:$PATH\"",
            ),
            (
                Path::new("/home/u/.cargo/bin/tmuxd"),
                Some("/usr/bin:/home/u/.cargo/bin"),
                "CLI (from another shell): tmuxd ls, tmuxd new NAME, tmuxd --help",
            ),
            (
                Path::new("/opt/x/tmuxd-dev"),
                Some("/opt/x"),
                "CLI (from another shell): /opt/x/tmuxd-dev ls, /opt/x/tmuxd-dev --help; \
                 or put it on PATH: export PATH=\"/opt/x:$PATH\"",
            ),
        ];
        for (exe, path, want) in table {
            assert_eq!(
                cli_hint(exe, path.map(OsStr::new)),
                want,
                "{exe:?} {path:?}"
            );
        }
    }
}
