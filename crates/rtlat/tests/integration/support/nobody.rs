//! Runs as `nobody` without capabilities (root drops them with `setpriv`):
//! the missing-privilege tests of every tool.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Run, rtlat_path, run_with_timeout};

/// Whether `setpriv` (util-linux) is there to drop privilege with.
pub fn has_setpriv() -> bool {
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .iter()
        .any(|p| Path::new(p).exists())
}

/// A copy of rtlat that `nobody` can read and execute, in a 0755 tempdir
/// (the build's own may sit under a directory `nobody` cannot enter).
struct NobodyBinary {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn nobody_binary() -> NobodyBinary {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("rtlat");
    std::fs::copy(rtlat_path(), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    NobodyBinary { _dir: dir, path }
}

/// `setpriv --reuid=65534 ... <copy of rtlat> ARGS` (ARGS start with the
/// tool), run from /, bounded by 5 s. The copy's exec fails with ETXTBSY
/// ("Text file busy") while a child another test thread forked meanwhile
/// still holds the copy's write descriptor (until that child's own exec):
/// the run is tried again then, up to 5 times.
pub fn run_as_nobody(args: &[&str]) -> Run {
    let bin = nobody_binary();
    let mut attempt = 0;
    loop {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin.path)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null());
        let r = run_with_timeout(&mut cmd, Duration::from_secs(5));
        attempt += 1;
        if !r.stderr.contains("Text file busy") || attempt == 5 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Skips (with a SKIPPED line) unless the test runs as root with `setpriv`.
macro_rules! require_root_and_setpriv {
    () => {
        require_root!();
        if !$crate::support::nobody::has_setpriv() {
            skip_note!("SKIPPED (needs setpriv): {}", function_name!());
            return;
        }
    };
}
