//! Runs as `nobody` without capabilities (root drops them with `setpriv`):
//! the missing-privilege tests of every tool.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Run, SpawnChecked, rtlat_path, run_with_timeout};

/// Whether `setpriv` and `prlimit` (util-linux) are there to drop
/// privilege and pin limits with.
pub fn has_setpriv() -> bool {
    ["setpriv", "prlimit"].iter().all(|tool| {
        ["/usr/bin", "/bin"]
            .iter()
            .any(|dir| Path::new(dir).join(tool).exists())
    })
}

/// A copy of rtlat that `nobody` can read and execute, in a 0755 tempdir
/// (the build's own may sit under a directory `nobody` cannot enter).
struct NobodyBinary {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

/// The copy is written by `install(1)`, a process of its own that has
/// ended before the copy runs. Written from this process, the copy's
/// write descriptor would be inherited by every child another test
/// thread forks meanwhile, until that child's exec, and the copy's exec
/// would fail with ETXTBSY ("Text file busy") now and then.
fn nobody_binary() -> NobodyBinary {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("rtlat");
    let status = Command::new("install")
        .args(["-m", "0755"])
        .arg(rtlat_path())
        .arg(&path)
        .stdin(Stdio::null())
        .status_checked()
        .expect("install(1)");
    assert!(
        status.success(),
        "install(1) could not copy rtlat to {}",
        path.display()
    );
    NobodyBinary { _dir: dir, path }
}

/// Who a restricted run is.
#[derive(Clone, Copy)]
pub enum Who {
    /// `nobody` (uid and gid 65534) without capabilities.
    Nobody,
    /// root without CAP_IPC_LOCK (dropped from the bounding set): it may
    /// use real-time priorities but not lock beyond RLIMIT_MEMLOCK, as a
    /// user given `rtprio` in limits.conf but a small `memlock`.
    RootWithoutIpcLock,
}

/// `setpriv --reuid=65534 ... <copy of rtlat> ARGS` (ARGS start with the
/// tool), run from /, bounded by 5 s, with the limits the test runner has.
pub fn run_as_nobody(args: &[&str]) -> Run {
    run_restricted(Who::Nobody, None, args)
}

/// The hard RLIMIT_MEMLOCK of this process in bytes (None: unlimited).
fn memlock_hard_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max locked memory"))?;
    line.split_whitespace().nth(4)?.parse().ok()
}

/// Runs `<copy of rtlat> ARGS` as `who` from /, bounded by 5 s, with
/// RLIMIT_MEMLOCK (soft and hard) lowered to `memlock` bytes when given
/// (to the hard limit the runner has when that is lower: raising it needs
/// CAP_SYS_RESOURCE, which a container may not give even to root).
pub fn run_restricted(who: Who, memlock: Option<u64>, args: &[&str]) -> Run {
    let bin = nobody_binary();
    let mut cmd = Command::new("prlimit");
    if let Some(wanted) = memlock {
        let bytes = memlock_hard_limit().map_or(wanted, |hard| hard.min(wanted));
        cmd.arg(format!("--memlock={bytes}:{bytes}"));
    }
    cmd.arg("setpriv");
    match who {
        Who::Nobody => cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ]),
        Who::RootWithoutIpcLock => cmd.args(["--bounding-set=-ipc_lock", "--inh-caps=-all"]),
    };
    cmd.arg(&bin.path)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null());
    run_with_timeout(&mut cmd, Duration::from_secs(5))
}

/// Skips (with a SKIPPED line) unless the test runs as root with `setpriv`
/// and `prlimit`.
macro_rules! require_root_and_setpriv {
    () => {
        require_root!();
        if !$crate::support::nobody::has_setpriv() {
            skip_note!("SKIPPED (needs setpriv and prlimit): {}", function_name!());
            return;
        }
    };
}
