//! Build script: the commit and the target triple of the build, for the
//! `--version` line of both programs ([`version`](src/version.rs)).
//!
//! The commit is read with git from the workspace's checkout and is
//! `unknown` outside one (a packaged source tree). The script runs again
//! when the commit, the index or a tracked file changes, so that `-dirty`
//! follows the tree (`target/` is not watched).

#[path = "build/commit.rs"]
mod commit;

use std::path::Path;

fn main() {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it");
    let root = Path::new(&manifest)
        .ancestors()
        .nth(2)
        .expect("crates/rtlat-args is two levels below the workspace");
    let target = std::env::var("TARGET").expect("cargo sets it");
    println!("cargo:rustc-env=RTLAT_COMMIT={}", commit::describe(root));
    println!("cargo:rustc-env=RTLAT_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/commit.rs");
    for path in commit::watched(root) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
