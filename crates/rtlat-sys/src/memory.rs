//! Memory locking and stack pre-faulting, so that the measuring loop never
//! takes a page fault.

use rustix::mm::MlockAllFlags;

use crate::Errno;

/// Locks all current and future mappings of the process (`mlockall`).
pub fn lock_all() -> Result<(), Errno> {
    rustix::mm::mlockall(MlockAllFlags::CURRENT | MlockAllFlags::FUTURE)
}

/// Undoes [`lock_all`].
pub fn unlock_all() -> Result<(), Errno> {
    rustix::mm::munlockall()
}

/// Touches `BYTES` of the calling thread's stack below the current frame,
/// so that those pages are mapped (and, after [`lock_all`], locked) before
/// the measuring loop runs.
#[inline(never)]
pub fn prefault_stack<const BYTES: usize>() {
    let mut region = [0u8; BYTES];
    std::hint::black_box(&mut region);
}

/// The soft RLIMIT_MEMLOCK in bytes (`None`: unlimited).
pub fn memlock_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Memlock).current
}
