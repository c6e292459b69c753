//! Locks shared by every test process of the machine: an exclusive
//! `flock(2)` on a file under the temporary directory. What they guard is
//! the machine's (its CPUs, its global trace), and two test processes may
//! run at once: a native suite and an i686 one, or the same tests from
//! two trees.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use rustix::fs::{FlockOperation, flock};
use rustix::io::Errno;

/// Opens `path` to lock it, making it if needed, writable by every user
/// (a suite may run as root or not).
pub fn open_lock_file(path: &Path) -> File {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(path)
        .unwrap_or_else(|e| panic!("opening the lock file {}: {e}", path.display()));
    // The mode is masked by the umask; another user's suite needs to open
    // the file for writing too.
    let _ = file.set_permissions(std::fs::Permissions::from_mode(0o666));
    file
}

/// Locks `file` exclusively, waiting for the holder without a time limit
/// (a test, bounded by its own safety net); tried again when a signal
/// interrupts the wait.
pub fn lock(file: &File) {
    loop {
        match flock(file, FlockOperation::LockExclusive) {
            Ok(()) => return,
            Err(Errno::INTR) => continue,
            Err(e) => panic!("flock on a lock file: {e}"),
        }
    }
}

/// Locks `file` exclusively if nobody holds it: whether it was taken.
pub fn try_lock(file: &File) -> bool {
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => true,
        Err(Errno::WOULDBLOCK | Errno::INTR) => false,
        Err(e) => panic!("flock on a lock file: {e}"),
    }
}

/// `open_lock_file` and `lock` of `name` under the temporary directory.
pub fn lock_named(name: &str) -> File {
    let file = open_lock_file(&std::env::temp_dir().join(name));
    lock(&file);
    file
}
