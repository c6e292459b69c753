//! Memory locking and stack pre-faulting, so that the measuring loop never
//! takes a page fault.
#![allow(unsafe_code)]

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

/// Makes every thread allocate from glibc's main malloc arena.
///
/// By default glibc gives each new thread that allocates its own arena; the
/// thread start-up code of the Rust standard library allocates, and under
/// `mlockall(MCL_FUTURE)` each such arena pins its first 132 KiB. The
/// measuring threads never allocate after their start, so one arena costs
/// nothing and saves that memory for every thread. Returns whether the
/// setting was accepted (always false on a C library other than glibc).
pub fn use_single_malloc_arena() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes a malloc tunable; M_ARENA_MAX with a
        // positive value is a documented glibc setting, valid at any time.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// The size of a memory page (the unit of stacks' guard pages).
pub fn page_size() -> usize {
    rustix::param::page_size()
}

/// The soft RLIMIT_AS (address space) in bytes (`None`: unlimited).
pub fn address_space_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

/// The soft RLIMIT_NPROC (processes and threads of the user) (`None`:
/// unlimited).
pub fn task_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nproc).current
}
