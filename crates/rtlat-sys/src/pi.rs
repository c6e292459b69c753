//! Priority-inheritance mutexes (pi_stress, pip_stress) and the process
//! calls pip_stress needs: a shared anonymous mapping of 32-bit words, a
//! forked child, its reaping.
//!
//! Why futex PI operations and not `pthread_mutexattr_setprotocol`: a
//! glibc `PTHREAD_PRIO_INHERIT` mutex is a 32-bit word holding the owner's
//! thread id, taken in user space by a compare-and-swap and, when it is
//! contended, by `FUTEX_LOCK_PI`/`FUTEX_UNLOCK_PI`, with which the kernel
//! queues the waiters on an rt_mutex and boosts the owner to the highest
//! waiter's priority. That protocol is the kernel's ABI (the futex word's
//! `FUTEX_WAITERS`/`FUTEX_OWNER_DIED` bits and the owner's tid), so we use
//! it directly: the same kernel code path as C's mutexes, no `unsafe` FFI
//! and no dependence on the size and layout of `pthread_mutex_t` (which
//! differ between i686, x86-64 and aarch64), and it works unchanged in
//! memory shared between processes (without `FUTEX_PRIVATE_FLAG`), which
//! is what pip_stress needs.
#![allow(unsafe_code)]

use std::ptr::NonNull;
use std::sync::atomic::{
    AtomicU32, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};

use rustix::thread::futex;

use crate::Errno;

/// A priority-inheritance mutex on a futex word (0: free; otherwise the
/// owner's thread id, with the kernel's `FUTEX_WAITERS` bit when threads
/// wait). Not recursive; unlocking a mutex the caller does not own is
/// refused by the kernel with `EPERM`.
#[derive(Clone, Copy, Debug)]
pub struct PiMutex<'a> {
    word: &'a AtomicU32,
    flags: futex::Flags,
}

impl<'a> PiMutex<'a> {
    /// The mutex of the threads of one process on `word`.
    pub fn private(word: &'a AtomicU32) -> PiMutex<'a> {
        PiMutex {
            word,
            flags: futex::Flags::PRIVATE,
        }
    }

    /// The mutex on `word` in memory shared between processes.
    pub fn shared(word: &'a AtomicU32) -> PiMutex<'a> {
        PiMutex {
            word,
            flags: futex::Flags::empty(),
        }
    }

    /// Takes the mutex: one compare-and-swap when it is free, otherwise
    /// `FUTEX_LOCK_PI`, which lends the caller's priority to the owner
    /// until it unlocks.
    #[inline]
    pub fn lock(&self) -> Result<(), Errno> {
        let tid = own_tid();
        if self.word.compare_exchange(0, tid, Acquire, Relaxed).is_ok() {
            return Ok(());
        }
        loop {
            match futex::lock_pi(self.word, self.flags, None) {
                Ok(()) => return Ok(()),
                // A signal handler ran: the kernel restarts LOCK_PI itself,
                // but be safe.
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Releases the mutex: one compare-and-swap when nobody waits,
    /// otherwise `FUTEX_UNLOCK_PI`, which hands it to the highest-priority
    /// waiter and ends the caller's boost.
    #[inline]
    pub fn unlock(&self) -> Result<(), Errno> {
        let tid = own_tid();
        if self.word.compare_exchange(tid, 0, Release, Relaxed).is_ok() {
            return Ok(());
        }
        futex::unlock_pi(self.word, self.flags)
    }
}

/// A barrier for the threads of one process on two futex words, as
/// glibc's `pthread_barrier_t` (std's `Barrier` takes a mutex and a
/// condition variable: two more futex round trips per wait, which
/// halved pi_stress's rate of inversions). The last thread to arrive
/// starts the next round and wakes the others with one `FUTEX_WAKE`.
#[derive(Debug)]
pub struct FutexBarrier {
    count: u32,
    arrived: AtomicU32,
    round: AtomicU32,
}

impl FutexBarrier {
    /// A barrier for `count` threads (at least one).
    pub const fn new(count: u32) -> FutexBarrier {
        FutexBarrier {
            count: if count == 0 { 1 } else { count },
            arrived: AtomicU32::new(0),
            round: AtomicU32::new(0),
        }
    }

    /// Waits until `count` threads have called it; `true` for one of
    /// them (the last to arrive), as `PTHREAD_BARRIER_SERIAL_THREAD`.
    #[inline]
    pub fn wait(&self) -> bool {
        // Read before arriving: the round cannot end without us.
        let round = self.round.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.count {
            // Reset before the next round can begin (its threads wait for
            // the round to change first).
            self.arrived.store(0, Relaxed);
            self.round.fetch_add(1, Release);
            // The count is an int to the kernel: u32::MAX would be -1, one waiter.
            let _ = futex::wake(&self.round, futex::Flags::PRIVATE, i32::MAX as u32);
            return true;
        }
        while self.round.load(Acquire) == round {
            // EAGAIN: the round changed before we slept; EINTR: a handler.
            let _ = futex::wait(&self.round, futex::Flags::PRIVATE, round, None);
        }
        false
    }
}

/// The calling thread's id, as the futex word holds it.
#[inline]
fn own_tid() -> u32 {
    rustix::thread::gettid().as_raw_nonzero().get() as u32
}

/// An anonymous mapping of zeroed 32-bit words shared with the children
/// forked after it is made (`MAP_SHARED | MAP_ANONYMOUS`): no name, no file,
/// nothing left behind when the last process holding it ends.
#[derive(Debug)]
pub struct SharedWords {
    ptr: NonNull<AtomicU32>,
    len: usize,
}

// SAFETY: the mapping holds only atomics, which any thread may touch; the
// pointer stays valid until the value is dropped.
unsafe impl Send for SharedWords {}
// SAFETY: as above: access goes through `&[AtomicU32]` only.
unsafe impl Sync for SharedWords {}

impl SharedWords {
    /// A new mapping of `len` zeroed words (at least one).
    pub fn new(len: usize) -> Result<SharedWords, Errno> {
        let len = len.max(1);
        let bytes = len
            .checked_mul(std::mem::size_of::<AtomicU32>())
            .ok_or(Errno::NOMEM)?;
        // SAFETY: a new anonymous mapping at an address the kernel picks
        // aliases no Rust object; it is zero-filled, and a zero word is a
        // valid AtomicU32.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                bytes,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
            )?
        };
        let ptr = NonNull::new(ptr.cast::<AtomicU32>()).ok_or(Errno::NOMEM)?;
        Ok(SharedWords { ptr, len })
    }

    /// The words.
    pub fn words(&self) -> &[AtomicU32] {
        // SAFETY: `ptr` points to `len` initialised (zeroed) AtomicU32s that
        // stay mapped while `self` lives; atomics allow shared access.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for SharedWords {
    fn drop(&mut self) {
        let bytes = self.len * std::mem::size_of::<AtomicU32>();
        // SAFETY: the mapping was made by `new` with this address and
        // length, and no reference to it outlives `self`.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), bytes) };
    }
}

/// Forks a child that runs `child` and ends with `_exit` of what it
/// returns; returns the child's pid to the parent.
///
/// Call it while the process has one thread, or give it a `child` that
/// takes no lock and allocates nothing: in the child only the calling
/// thread exists, and a lock another thread held at the fork stays held
/// forever. The child also asks for SIGKILL when its parent ends, and
/// ends at once if the parent is already gone, so that it never outlives
/// the run.
pub fn fork_child(child: impl FnOnce() -> i32) -> Result<i32, Errno> {
    let parent = rustix::process::getpid().as_raw_nonzero().get();
    // SAFETY: fork has no memory-safety preconditions for the parent; the
    // caller guarantees the child's code is fork-safe (see above).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(crate::last_errno());
    }
    if pid == 0 {
        let code = match crate::process::die_with_parent(parent) {
            Ok(()) => child(),
            Err(_) => 1,
        };
        // SAFETY: _exit ends the child without running the parent's atexit
        // handlers or flushing its stdio buffers; it never returns.
        unsafe { libc::_exit(code) }
    }
    Ok(pid)
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildEnd {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
}

/// Waits for the child `pid` to end.
pub fn wait_child(pid: i32) -> Result<ChildEnd, Errno> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a live, writable c_int.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(if libc::WIFSIGNALED(status) {
                ChildEnd::Signaled(libc::WTERMSIG(status))
            } else {
                ChildEnd::Exited(libc::WEXITSTATUS(status))
            });
        }
        let errno = crate::last_errno();
        if errno != Errno::INTR {
            return Err(errno);
        }
    }
}

/// Sends SIGKILL to the process `pid`.
pub fn kill_child(pid: i32) -> Result<(), Errno> {
    let pid = rustix::process::Pid::from_raw(pid).ok_or(Errno::INVAL)?;
    rustix::process::kill_process(pid, rustix::process::Signal::KILL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn the_mutex_excludes_and_counts_right_between_threads() {
        let word = Arc::new(AtomicU32::new(0));
        let count = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (word, count) = (Arc::clone(&word), Arc::clone(&count));
                std::thread::spawn(move || {
                    let m = PiMutex::private(&word);
                    for _ in 0..2000 {
                        m.lock().unwrap();
                        // Not atomic as a whole: only the mutex makes it right.
                        let n = count.load(Relaxed);
                        count.store(n + 1, Relaxed);
                        m.unlock().unwrap();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(count.load(Relaxed), 8000);
        assert_eq!(word.load(Relaxed), 0);
    }

    #[test]
    fn the_barrier_holds_every_round_and_names_one_leader() {
        let barrier = Arc::new(FutexBarrier::new(3));
        let passed = Arc::new(AtomicU64::new(0));
        let leaders = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..3)
            .map(|_| {
                let (b, p, l) = (
                    Arc::clone(&barrier),
                    Arc::clone(&passed),
                    Arc::clone(&leaders),
                );
                std::thread::spawn(move || {
                    for round in 0..2000u64 {
                        p.fetch_add(1, Relaxed);
                        if b.wait() {
                            l.fetch_add(1, Relaxed);
                        }
                        // Nobody is a round ahead: all three arrived.
                        assert!(p.load(Relaxed) >= 3 * (round + 1));
                        b.wait();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(leaders.load(Relaxed), 2000);
    }

    #[test]
    fn unlocking_a_mutex_of_another_owner_is_refused() {
        let word = AtomicU32::new(0);
        let m = PiMutex::private(&word);
        m.lock().unwrap();
        let owner = word.load(Relaxed);
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(PiMutex::private(&word).unlock(), Err(Errno::PERM)));
        });
        assert_eq!(word.load(Relaxed), owner);
        m.unlock().unwrap();
    }

    #[test]
    fn a_forked_child_sees_and_changes_the_shared_words() {
        let shared = SharedWords::new(2).unwrap();
        shared.words()[0].store(41, Relaxed);
        let pid = fork_child(|| {
            let w = shared.words();
            w[1].store(w[0].load(Relaxed) + 1, Relaxed);
            7
        })
        .unwrap();
        assert_eq!(wait_child(pid).unwrap(), ChildEnd::Exited(7));
        assert_eq!(shared.words()[1].load(Relaxed), 42);
    }
}
