//! rt-tests releases newer than the machine's package (2.6, 2.10), for
//! the side-by-side tests of rtlat's `--rt-tests` dialects. They are not
//! installed: `ci/rt-tests-newer install` (which `.ci/run` runs) unpacks
//! each release's package with the libc6, libnuma1 and libcpupower1 of
//! its Debian release into one directory of a cache, and a program starts
//! through that directory's own loader:
//!
//! ```text
//! $ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
//!     --library-path $ROOT/usr/lib/x86_64-linux-gnu $ROOT/usr/bin/cyclictest ...
//! ```
//!
//! The cache is where the script puts it: `$RTLAT_RT_TESTS_CACHE`, else
//! `$XDG_CACHE_HOME/rtlat/rt-tests`, else `$HOME/.cache/rtlat/rt-tests`,
//! one `<version>/` each, ready when its `ready` file exists. Without it
//! a test says `SKIPPED (needs rt-tests 2.10: ci/rt-tests-newer install)`.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::cpus::CpuLease;

/// Returns the unpacked root of rt-tests `$version` from the calling
/// test, or returns from it with a `SKIPPED` line when it is not there.
macro_rules! require_rt_tests {
    ($version:expr) => {
        match $crate::support::newer::Release::find($version) {
            Some(release) => release,
            None => {
                skip_note!(
                    "SKIPPED (needs rt-tests {} unpacked: ci/rt-tests-newer install): {}",
                    $version,
                    function_name!()
                );
                return;
            }
        }
    };
}

/// The cache directory of `ci/rt-tests-newer`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RTLAT_RT_TESTS_CACHE") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(Path::new(&dir).join("rtlat/rt-tests"));
    }
    let home = std::env::var_os("HOME")?;
    Some(Path::new(&home).join(".cache/rtlat/rt-tests"))
}

/// One unpacked rt-tests release.
#[derive(Clone, Debug)]
pub struct Release {
    /// `2.10`.
    pub version: &'static str,
    /// The directory the packages were unpacked into.
    pub root: PathBuf,
}

impl Release {
    /// rt-tests `version`, if `ci/rt-tests-newer install` has unpacked it.
    pub fn find(version: &'static str) -> Option<Release> {
        let dir = cache_dir()?.join(version);
        let root = dir.join("root");
        (dir.join("ready").is_file() && root.join("usr/bin/cyclictest").is_file())
            .then_some(Release { version, root })
    }

    /// The release's own loader and libraries.
    pub fn lib_dir(&self) -> PathBuf {
        self.root.join("usr/lib/x86_64-linux-gnu")
    }

    /// The path of `program` (what its JSON's `"cmdline:"` starts with).
    pub fn program(&self, program: &str) -> PathBuf {
        self.root.join("usr/bin").join(program)
    }

    /// The loader's arguments before the program's own.
    fn loader_args(&self, program: &str) -> Vec<std::ffi::OsString> {
        vec![
            "--library-path".into(),
            self.lib_dir().into(),
            self.program(program).into(),
        ]
    }

    fn loader(&self) -> PathBuf {
        self.lib_dir().join("ld-linux-x86-64.so.2")
    }

    /// `program ARGS...` of this release, started through its loader.
    pub fn command<S: AsRef<OsStr>>(&self, program: &str, args: &[S]) -> Command {
        let mut cmd = Command::new(self.loader());
        cmd.args(self.loader_args(program))
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// A Python program of the release, by its path under the root
    /// (`usr/sbin/hwlatdetect`), run by the machine's `python3` (2.10's
    /// hwlatdetect runs so on Debian 12's 3.11: seen with `--help`).
    pub fn python<S: AsRef<OsStr>>(&self, path: &str, args: &[S]) -> Command {
        let mut cmd = Command::new("python3");
        cmd.arg(self.root.join(path))
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    /// [`Release::command`] kept on the lease's CPUs (`taskset`).
    pub fn pinned<S: AsRef<OsStr>>(&self, lease: &CpuLease, program: &str, args: &[S]) -> Command {
        let mut cmd = lease.pinned(&self.loader().to_string_lossy());
        cmd.args(self.loader_args(program)).args(args);
        cmd
    }
}
