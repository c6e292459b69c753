//! Worker processes forked by `hackbench` (the tool and the load kind):
//! each a copy of the forking process that runs one job and `_exit`s, in a
//! process group of the run's own, killed with its parent thread.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, BorrowedFd};

use crate::Errno;

/// How a worker process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WorkerEnd {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
}

/// Forks a worker that runs `job` and exits (status 0 when `job` returns
/// true, 1 when false, 2 when it panics). Before `job` the child asks to
/// be killed (SIGKILL) when the forking thread ends and checks that its
/// parent is still the forking process (so a parent killed between the
/// fork and that request leaves no worker behind), and sets SIGINT and
/// SIGTERM back to their default action, unblocked (as C hackbench's
/// workers do). The parent puts the child in process group `pgid`, or in
/// a new group of its own (its pid) when `pgid` is `None`, so that one
/// signal reaches every worker and none of a terminal's.
///
/// `job` runs in a copy of a process that may have other threads: it must
/// take no lock another thread may hold (no allocation, no `println!`):
/// plain reads and writes of descriptors.
pub fn fork_worker(pgid: Option<i32>, job: &mut dyn FnMut() -> bool) -> Result<i32, Errno> {
    let parent = crate::system::current_pid();
    // SAFETY: fork has no memory-safety preconditions for the parent; the
    // child only makes async-signal-safe calls and runs `job`, which the
    // caller keeps to plain descriptor reads and writes, then `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(crate::last_errno());
    }
    if pid == 0 {
        // SAFETY: prctl(PR_SET_PDEATHSIG) and getppid take no pointers and
        // are async-signal-safe.
        let orphan = unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent
        };
        if orphan {
            // SAFETY: _exit is async-signal-safe and never returns.
            unsafe { libc::_exit(1) }
        }
        // SAFETY: a zeroed sigset_t is a valid argument to sigemptyset and
        // sigaddset, which fill it; signal() with SIG_DFL installs no
        // handler; sigprocmask reads the set and writes nothing back
        // (null old set). All are async-signal-safe.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGINT, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
                libc::sigaddset(&mut set, sig);
            }
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
        let status = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(_) => 2,
        };
        // SAFETY: _exit ends the child without running the parent's
        // destructors or atexit handlers; it never returns.
        unsafe { libc::_exit(status) }
    }
    let group = pgid.unwrap_or(pid);
    // SAFETY: setpgid takes no pointers; `pid` is our child, which has not
    // exec'd, so it may be moved into `group` (its own, or one made by an
    // earlier child of ours). The child cannot have ended the group.
    unsafe { libc::setpgid(pid, group) };
    Ok(pid)
}

/// Waits for any process of group `pgid` that is our child to end,
/// through interruptions; returns its pid and how it ended (`ECHILD` when
/// none is left).
pub fn wait_group_member(pgid: i32) -> Result<(i32, WorkerEnd), Errno> {
    if pgid < 2 {
        return Err(Errno::INVAL);
    }
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a live, writable c_int; -pgid names a group.
        let rc = unsafe { libc::waitpid(-pgid, &mut status, 0) };
        if rc > 0 {
            let end = if libc::WIFSIGNALED(status) {
                WorkerEnd::Signaled(libc::WTERMSIG(status))
            } else {
                WorkerEnd::Exited(libc::WEXITSTATUS(status))
            };
            return Ok((rc, end));
        }
        let errno = crate::last_errno();
        if errno != Errno::INTR {
            return Err(errno);
        }
    }
}

/// Blocks until `fd` is readable (or hung up), through interruptions; or
/// at most `timeout_ms` milliseconds when not negative. True when ready.
pub fn wait_readable(fd: BorrowedFd<'_>, timeout_ms: i32) -> Result<bool, Errno> {
    loop {
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one live, writable pollfd, and we pass 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if rc >= 0 {
            return Ok(rc > 0);
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
    fn workers_run_in_one_group_and_are_reaped_with_their_status() {
        let first = fork_worker(None, &mut || true).unwrap();
        let second = fork_worker(Some(first), &mut || false).unwrap();
        let mut ends = [
            wait_group_member(first).unwrap(),
            wait_group_member(first).unwrap(),
        ];
        ends.sort();
        let mut want = [
            (first, WorkerEnd::Exited(0)),
            (second, WorkerEnd::Exited(1)),
        ];
        want.sort();
        assert_eq!(ends, want);
        assert_eq!(wait_group_member(first), Err(Errno::CHILD));
    }
}
