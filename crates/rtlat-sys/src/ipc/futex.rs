//! A binary semaphore on a futex word, for ptsematest.
//!
//! ptsematest hands off by unlocking a mutex the receiver blocks on, which
//! the sender does not own (undefined for POSIX mutexes; it works with
//! glibc's default ones). A binary semaphore may be posted by any thread and
//! keeps the same wake-up path: the waiter sleeps in `FUTEX_WAIT`, the
//! poster's `FUTEX_WAKE` makes it runnable. Posting to a semaphore nobody
//! waits on costs no system call.

use std::sync::atomic::{AtomicU32, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};

use rustix::thread::futex;

use crate::Errno;

const EMPTY: u32 = 0;
const POSTED: u32 = 1;
/// Empty, and a waiter is (or is about to be) asleep on the word.
const WAITING: u32 = 2;

/// A binary semaphore for threads of one process.
#[derive(Debug, Default)]
pub struct BinarySemaphore {
    word: AtomicU32,
}

impl BinarySemaphore {
    /// An empty semaphore.
    pub const fn new() -> BinarySemaphore {
        BinarySemaphore {
            word: AtomicU32::new(EMPTY),
        }
    }

    /// Makes the semaphore posted and wakes its waiter, if any (one
    /// `FUTEX_WAKE` then).
    #[inline]
    pub fn post(&self) -> Result<(), Errno> {
        if self.word.swap(POSTED, Release) == WAITING {
            futex::wake(&self.word, futex::Flags::PRIVATE, 1)?;
        }
        Ok(())
    }

    /// Waits until the semaphore is posted and takes it. `Err(Errno::INTR)`
    /// when a signal handler ran while it slept.
    #[inline]
    pub fn wait(&self) -> Result<(), Errno> {
        loop {
            if self
                .word
                .compare_exchange(POSTED, EMPTY, Acquire, Relaxed)
                .is_ok()
            {
                return Ok(());
            }
            // Announce the sleeper; if a post came in between, take it.
            match self.word.compare_exchange(EMPTY, WAITING, Relaxed, Relaxed) {
                Ok(_) | Err(WAITING) => {}
                Err(_) => continue,
            }
            match futex::wait(&self.word, futex::Flags::PRIVATE, WAITING, None) {
                Ok(()) | Err(Errno::AGAIN) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn ping_pong_between_two_threads() {
        let there = Arc::new(BinarySemaphore::new());
        let back = Arc::new(BinarySemaphore::new());
        let (t2, b2) = (Arc::clone(&there), Arc::clone(&back));
        let peer = std::thread::spawn(move || {
            for _ in 0..1000 {
                t2.wait().unwrap();
                b2.post().unwrap();
            }
        });
        for _ in 0..1000 {
            there.post().unwrap();
            back.wait().unwrap();
        }
        peer.join().unwrap();
    }

    #[test]
    fn a_post_before_the_wait_is_kept() {
        let s = BinarySemaphore::new();
        s.post().unwrap();
        s.post().unwrap();
        s.wait().unwrap();
        assert_eq!(s.word.load(Relaxed), EMPTY);
    }
}
