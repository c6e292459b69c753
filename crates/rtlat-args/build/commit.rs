//! The commit a tree was built from, for `--version` (the build script
//! uses it; its tests run with the library's).

use std::path::{Path, PathBuf};
use std::process::Command;

/// What `--version` says when the commit is not known.
pub const UNKNOWN: &str = "unknown";

/// `git -C root ARGS`'s output, trimmed, if it succeeded. Never takes
/// git's optional locks: a build must not write the index that another
/// git command may be using.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `root` is the top of a git checkout: not a packaged source
/// tree (no `.git`) or one unpacked inside another repository (whose
/// commit would not be this tree's).
fn is_checkout(root: &Path) -> bool {
    let top = git(root, &["rev-parse", "--show-toplevel"]);
    match (top.map(std::fs::canonicalize), std::fs::canonicalize(root)) {
        (Some(Ok(top)), Ok(root)) => top == root,
        _ => false,
    }
}

/// The commit of the tree at `root`: its short hash, with `-dirty` when
/// a tracked file differs from it (as `git describe --dirty`: untracked
/// files do not count), or [`UNKNOWN`] outside a git checkout.
pub fn describe(root: &Path) -> String {
    if !is_checkout(root) {
        return UNKNOWN.to_string();
    }
    let Some(hash) = git(root, &["rev-parse", "--short=7", "HEAD"]) else {
        return UNKNOWN.to_string();
    };
    let changes = git(root, &["status", "--porcelain", "--untracked-files=no"]);
    match changes {
        Some(c) if c.is_empty() => hash,
        _ => format!("{hash}-dirty"),
    }
}

/// What the answer depends on, for `cargo:rerun-if-changed`: git's HEAD,
/// the branch it names, the packed refs and the index (a commit, a
/// checkout, a `git add`), and each tracked file (a change to one is what
/// makes the tree dirty). Files, not the directories that hold them: cargo
/// scans a directory for any newer entry, so a file made and removed in
/// one (a test's output, a probe of its directory, an editor's swap file,
/// none of which changes the answer) ran the script again, and every
/// crate after it was built again (rtlat and rtlat-plot, for each target).
/// A tracked file removed since the last run runs the script again too
/// (cargo finds a listed path gone); the new list leaves it out. Nothing
/// outside a checkout.
pub fn watched(root: &Path) -> Vec<PathBuf> {
    if !is_checkout(root) {
        return Vec::new();
    }
    let git_path = |name: &str| git(root, &["rev-parse", "--git-path", name]).map(|p| root.join(p));
    let branch = git(root, &["symbolic-ref", "-q", "HEAD"]);
    let mut paths: Vec<PathBuf> = ["HEAD", "index", "packed-refs"]
        .into_iter()
        .chain(branch.as_deref())
        .filter_map(git_path)
        .filter(|p| p.exists())
        .collect();
    let tracked = git(root, &["ls-files", "-z"]).unwrap_or_default();
    paths.extend(
        tracked
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(|f| root.join(f))
            .filter(|p| p.is_file()),
    );
    paths
}
