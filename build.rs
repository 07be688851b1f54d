//! Stamps the binary with the git commit it was built from, for
//! `dedupsim --version`: `DEDUPSIM_GIT` is `git rev-parse --short HEAD`,
//! with `-dirty` when tracked files differ from it, or `unknown` when git or
//! the repository is absent (a crates.io package, a tarball). Never fails
//! the build.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn main() {
    let commit = if Path::new(".git").exists() { describe() } else { None };
    println!("cargo:rustc-env=DEDUPSIM_GIT={}", commit.as_deref().unwrap_or("unknown"));
}

/// The short commit and dirty mark, and the rerun triggers that keep them
/// current: HEAD, the branch it names and the index (a commit, checkout or
/// `git add`) and the tracked sources (an edit makes the tree dirty).
fn describe() -> Option<String> {
    let hash = git(&["rev-parse", "--short", "HEAD"])?;
    for p in ["src", "tests", "benches", "presets", "Cargo.toml", "build.rs"] {
        println!("cargo:rerun-if-changed={p}");
    }
    // Only paths that exist: cargo reruns the script every time for a
    // missing one.
    let watch = |p: String| {
        if Path::new(&p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    };
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watch(format!("{dir}/HEAD"));
        watch(format!("{dir}/index"));
    }
    if let (Some(common), Some(head)) = (git(&["rev-parse", "--git-common-dir"]), git(&["symbolic-ref", "-q", "HEAD"]))
    {
        watch(format!("{common}/{head}"));
        watch(format!("{common}/packed-refs"));
    }
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{hash}-dirty") } else { hash })
}
