//! The global trace (tracefs' `tracing_on` and buffer), one test at a
//! time in every test process of the machine: the tests of `-b` (which
//! stops the global trace, as C does) and those that read it.

use std::path::{Path, PathBuf};

use super::SpawnChecked;
use super::machine_lock::lock_named;

/// Serialises every real rtlat run with `-b` (it writes `tracing_on`, a
/// global switch) and every test that reads the global trace buffer, in
/// every test process of the machine (two suites may run at once, as for
/// the CPU leases): a [`super::machine_lock`] on [`TRACEFS_LOCK`].
/// Restores `tracing_on` when dropped. A test takes it before its CPU
/// lease, never while holding one: a test holding the guard may wait for
/// a CPU, so a test holding a CPU must not wait for the guard.
pub struct TraceGuard {
    /// The locked file; closing it releases the lock.
    _lock: std::fs::File,
    /// The tracefs directory, when mounted (or mounted by us).
    pub dir: Option<PathBuf>,
    saved: Option<String>,
}

const TRACEFS_DIR: &str = "/sys/kernel/tracing";

/// The lock file of [`TraceGuard`], under the temporary directory.
const TRACEFS_LOCK: &str = "rtlat-test-tracefs.lock";

impl TraceGuard {
    /// Takes the lock; mounts tracefs at /sys/kernel/tracing when it is not
    /// there (root only). `dir` is `None` when that is impossible.
    pub fn acquire() -> TraceGuard {
        let lock = lock_named(TRACEFS_LOCK);
        let dir = Path::new(TRACEFS_DIR);
        let on = dir.join("tracing_on");
        if !on.exists() {
            let _ = std::process::Command::new("mount")
                .args(["-t", "tracefs", "nodev", TRACEFS_DIR])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status_checked();
        }
        let saved = std::fs::read_to_string(&on).ok();
        TraceGuard {
            _lock: lock,
            dir: saved.as_ref().map(|_| dir.to_path_buf()),
            saved,
        }
    }

    pub fn tracing_on(&self) -> Option<String> {
        let dir = self.dir.as_ref()?;
        std::fs::read_to_string(dir.join("tracing_on"))
            .ok()
            .map(|s| s.trim().to_owned())
    }

    pub fn set_tracing_on(&self, value: &str) {
        let dir = self.dir.as_ref().expect("tracefs");
        std::fs::write(dir.join("tracing_on"), value).expect("writing tracing_on");
    }
}

impl Drop for TraceGuard {
    fn drop(&mut self) {
        if let (Some(dir), Some(saved)) = (&self.dir, &self.saved) {
            let _ = std::fs::write(dir.join("tracing_on"), saved.trim());
        }
    }
}
