//! The `--version` line of rtlat's programs: the version, the commit of
//! the sources (short hash, `-dirty` if tracked files differed from it,
//! `unknown` outside a git checkout) and the target the program was built
//! for, from the build script (`build.rs`).

/// The commit the program was built from: `1a2b3c4`, `1a2b3c4-dirty` or
/// `unknown`.
pub const COMMIT: &str = env!("RTLAT_COMMIT");

/// The target triple the program was built for.
pub const TARGET: &str = env!("RTLAT_TARGET");

/// `PROGRAM 0.1.0 (commit 1a2b3c4, x86_64-unknown-linux-gnu)` and a
/// newline.
pub fn line(program: &str) -> String {
    format!(
        "{program} {} (commit {COMMIT}, {TARGET})\n",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
#[path = "../build/commit.rs"]
mod commit;

#[cfg(test)]
mod tests {
    use super::commit::{UNKNOWN, describe, watched};
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    }

    fn has_git() -> bool {
        Command::new("git").arg("--version").output().is_ok()
    }

    #[test]
    fn the_line() {
        let line = line("rtlat");
        assert!(line.starts_with(&format!("rtlat {} (commit ", env!("CARGO_PKG_VERSION"))));
        assert!(line.ends_with(&format!(", {TARGET})\n")), "{line}");
        assert_eq!(line.lines().count(), 1);
        assert!(TARGET.contains("-linux-"), "{TARGET}");
        let hash = COMMIT.strip_suffix("-dirty").unwrap_or(COMMIT);
        assert!(
            hash == UNKNOWN || (hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit())),
            "{COMMIT}"
        );
    }

    #[test]
    fn the_commit_of_a_checkout_clean_dirty_or_unknown() {
        if !has_git() {
            eprintln!("SKIPPED (needs git): the_commit_of_a_checkout_clean_dirty_or_unknown");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(describe(root), UNKNOWN, "not a checkout");
        assert!(watched(root).is_empty());

        git(root, &["init", "-q"]);
        std::fs::create_dir(root.join("crates")).unwrap();
        std::fs::write(root.join("crates/a.rs"), "one").unwrap();
        assert_eq!(describe(root), UNKNOWN, "no commit yet");
        git(root, &["add", "."]);
        git(root, &["commit", "-q", "-m", "one"]);
        let out = Command::new("git")
            .args(["rev-parse", "--short=7", "HEAD"])
            .current_dir(root)
            .output()
            .unwrap();
        let hash = String::from_utf8(out.stdout).unwrap().trim().to_string();
        assert_eq!(describe(root), hash);

        std::fs::write(root.join("untracked.txt"), "x").unwrap();
        assert_eq!(describe(root), hash, "untracked files do not count");
        std::fs::write(root.join("crates/a.rs"), "two").unwrap();
        assert_eq!(describe(root), format!("{hash}-dirty"));

        let w = watched(root);
        for want in [
            ".git/HEAD",
            ".git/index",
            ".git/refs/heads/main",
            "crates/a.rs",
        ] {
            assert!(w.iter().any(|p| p.ends_with(want)), "{want} in {w:?}");
        }
        assert!(
            !w.iter()
                .any(|p| p.ends_with("untracked.txt") || p.ends_with("crates")),
            "tracked files only, no directory: {w:?}"
        );

        // A source tree unpacked inside another repository: not its commit.
        let inner = root.join("crates/packaged");
        std::fs::create_dir(&inner).unwrap();
        assert_eq!(describe(&inner), UNKNOWN);
        assert!(watched(&inner).is_empty());
    }
}
