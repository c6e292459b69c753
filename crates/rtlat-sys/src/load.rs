//! Calls the background load generator needs that std does not offer:
//! the nice value of one thread, and a child process that exits at once.
#![allow(unsafe_code)]

use crate::Errno;

/// Sets the calling thread's nice value (-20 to 19). Linux keeps the nice
/// value per thread; `setpriority(PRIO_PROCESS, tid, n)` sets one thread's.
/// Lowering it below the current value needs CAP_SYS_NICE or
/// RLIMIT_NICE.
pub fn set_current_thread_nice(nice: i32) -> Result<(), Errno> {
    let tid = rustix::thread::gettid();
    rustix::process::setpriority_process(Some(tid), nice)
}

/// Creates a child process that calls `_exit(0)` at once, and waits for
/// it. The child runs no Rust code (no allocation, no lock, no handler),
/// so forking from a multithreaded process is sound.
pub fn fork_exit_wait() -> Result<(), Errno> {
    // SAFETY: fork has no memory-safety preconditions for the parent; the
    // child below only calls _exit, which is async-signal-safe, so it never
    // touches locks or state the other threads held at the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(crate::last_errno());
    }
    if pid == 0 {
        // SAFETY: _exit ends the child without running atexit handlers or
        // destructors; it is async-signal-safe and never returns.
        unsafe { libc::_exit(0) }
    }
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a live, writable c_int; `pid` is our child.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(());
        }
        let errno = crate::last_errno();
        if errno != Errno::INTR {
            return Err(errno);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_created_and_reaped() {
        for _ in 0..10 {
            fork_exit_wait().unwrap();
        }
    }

    #[test]
    fn raising_the_nice_value_works_unprivileged() {
        std::thread::spawn(|| set_current_thread_nice(19).unwrap())
            .join()
            .unwrap();
    }
}

/// The end of an input the caller polls without blocking: after
/// [`InputEnd::watch`], [`InputEnd::reached`] tells whether the writer has
/// closed it (data that arrives is read and dropped).
#[derive(Debug)]
pub struct InputEnd<F: std::os::fd::AsFd>(F);

impl<F: std::os::fd::AsFd> InputEnd<F> {
    /// Makes `input` non-blocking, to be polled.
    pub fn watch(input: F) -> Result<InputEnd<F>, Errno> {
        let flags = rustix::fs::fcntl_getfl(&input)?;
        rustix::fs::fcntl_setfl(&input, flags | rustix::fs::OFlags::NONBLOCK)?;
        Ok(InputEnd(input))
    }

    /// Whether the writer has closed the input (or it failed).
    pub fn reached(&self) -> bool {
        let mut buf = [0u8; 64];
        loop {
            match rustix::io::read(&self.0, &mut buf) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(Errno::AGAIN) => return false,
                Err(Errno::INTR) => continue,
                Err(_) => return true,
            }
        }
    }
}
