//! Names the commit a binary was built from: `TMUXD_COMMIT` is
//! `git rev-parse --short HEAD`, with `-dirty` when the work tree has
//! changes, or `unknown` where git or the repository is missing (a crate
//! tarball, a build without git).

use std::process::Command;

fn main() {
    println!("cargo:rustc-env=TMUXD_COMMIT={}", commit());
    // Rebuild when HEAD moves (a checkout, or a commit moving the branch it
    // names) or the index changes (`git add`); edits to tracked files
    // rebuild the crate anyway.
    let mut watched = vec![
        "HEAD".to_owned(),
        "index".to_owned(),
        "packed-refs".to_owned(),
    ];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        // A missing path would make cargo rerun this script on every build.
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

fn commit() -> String {
    let Some(hash) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown".to_owned();
    };
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|changes| !changes.is_empty());
    if dirty { format!("{hash}-dirty") } else { hash }
}

/// A git command's trimmed stdout, or `None` if git is missing or fails.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
}
