//! Shared memory between the main process and the child processes of the
//! IPC tools' fork mode (`-f`).
//!
//! The C tools create a POSIX shared-memory object with a fixed name
//! (`/sigwaittest`, for svsematest too), so two runs in fork mode cannot
//! coexist. Here the parent makes an anonymous `memfd` (no name anybody
//! could open) and its children inherit the descriptor across `exec`. The
//! mapping is seen as an array of 64-bit atomic cells: every bit pattern is
//! a valid cell, so a process can never read an invalid value from it.
#![allow(unsafe_code)]

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};

use crate::Errno;

/// A shared mapping of 64-bit atomic cells, backed by a memfd.
#[derive(Debug)]
pub struct SharedCells {
    ptr: NonNull<AtomicU64>,
    len: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping holds only atomics, which any thread may touch; the
// pointer stays valid until the value is dropped.
unsafe impl Send for SharedCells {}
// SAFETY: as above: shared access goes through `&[AtomicU64]` only.
unsafe impl Sync for SharedCells {}

const CELL: usize = std::mem::size_of::<AtomicU64>();

impl SharedCells {
    /// A new mapping of `len` zeroed cells whose descriptor child processes
    /// inherit (it is not close-on-exec).
    pub fn create(len: usize) -> Result<SharedCells, Errno> {
        let fd = rustix::fs::memfd_create("rtlat-ipc", MemfdFlags::ALLOW_SEALING)?;
        let bytes = len.max(1).checked_mul(CELL).ok_or(Errno::NOMEM)?;
        rustix::fs::ftruncate(&fd, bytes as u64)?;
        // The size is fixed from now on: a child cannot shrink it under us.
        let _ = rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW);
        SharedCells::map(fd, len.max(1))
    }

    /// Maps the memfd a parent process passed down as descriptor `raw`.
    ///
    /// The descriptor must be one this process inherited for this purpose
    /// and uses nowhere else: the returned value owns and closes it. A
    /// descriptor that is not open is refused with `EBADF`.
    pub fn open_inherited(raw: i32) -> Result<SharedCells, Errno> {
        if raw < 0 {
            return Err(Errno::BADF);
        }
        // SAFETY: F_GETFD on any integer is harmless; it tells whether the
        // descriptor is open before we take ownership of it.
        let open = unsafe { libc::fcntl(raw, libc::F_GETFD) } >= 0;
        if !open {
            return Err(Errno::BADF);
        }
        // SAFETY: the descriptor is open (checked above) and, by this
        // function's contract, inherited for this mapping alone, so owning
        // (and eventually closing) it takes it from nobody.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let stat = rustix::fs::fstat(&fd)?;
        let bytes = usize::try_from(stat.st_size).map_err(|_| Errno::INVAL)?;
        if bytes == 0 || bytes % CELL != 0 {
            return Err(Errno::INVAL);
        }
        SharedCells::map(fd, bytes / CELL)
    }

    fn map(fd: OwnedFd, len: usize) -> Result<SharedCells, Errno> {
        // SAFETY: a fresh shared mapping of the whole file at an address the
        // kernel picks; it aliases no Rust object. It is only ever viewed
        // as atomics, valid for any content and page-aligned.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len * CELL,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd.as_fd(),
                0,
            )?
        };
        let ptr = NonNull::new(ptr.cast::<AtomicU64>()).ok_or(Errno::NOMEM)?;
        Ok(SharedCells { ptr, len, fd })
    }

    /// The cells.
    pub fn cells(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` points to `len` mapped, aligned cells that stay
        // mapped as long as `self`; atomics permit shared mutation.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The descriptor number, to pass to a child process.
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
}

impl Drop for SharedCells {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `map` with this address and
        // length and no reference into it outlives `self`.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len * CELL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn create_write_and_map_again() {
        let a = SharedCells::create(16).unwrap();
        a.cells()[3].store(42, Relaxed);
        let dup = rustix::io::dup(&a.fd).unwrap();
        let raw = dup.as_raw_fd();
        std::mem::forget(dup);
        let b = SharedCells::open_inherited(raw).unwrap();
        assert_eq!(b.cells().len(), 16);
        assert_eq!(b.cells()[3].load(Relaxed), 42);
        b.cells()[4].store(7, Relaxed);
        assert_eq!(a.cells()[4].load(Relaxed), 7);
        assert_eq!(SharedCells::open_inherited(-1).unwrap_err(), Errno::BADF);
    }
}
