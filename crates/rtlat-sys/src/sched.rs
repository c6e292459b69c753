//! Scheduling policy and priority of the calling thread.
//!
//! rustix does not wrap the POSIX scheduler calls on purpose; we call
//! `pthread_setschedparam` through libc, so that glibc's view of the thread
//! stays coherent.
#![allow(unsafe_code)]

use rustix::process::{Resource, Rlimit};

use crate::Errno;

/// A Linux scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_OTHER.
    Other,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE.
    Idle,
    /// SCHED_FIFO.
    Fifo,
    /// SCHED_RR.
    RoundRobin,
}

impl Policy {
    const fn to_raw(self) -> libc::c_int {
        match self {
            Policy::Other => libc::SCHED_OTHER,
            Policy::Batch => libc::SCHED_BATCH,
            Policy::Idle => libc::SCHED_IDLE,
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::RoundRobin => libc::SCHED_RR,
        }
    }

    fn from_raw(raw: libc::c_int) -> Option<Policy> {
        [
            Policy::Other,
            Policy::Batch,
            Policy::Idle,
            Policy::Fifo,
            Policy::RoundRobin,
        ]
        .into_iter()
        .find(|p| p.to_raw() == raw)
    }
}

/// Sets the calling thread's policy and priority (0 for non-real-time
/// policies).
pub fn set_current_thread(policy: Policy, priority: i32) -> Result<(), Errno> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pthread_self() is always a valid handle for the calling thread
    // and `param` is a fully initialised sched_param that outlives the call.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), policy.to_raw(), &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw_os_error(rc))
    }
}

/// The calling thread's policy and priority.
pub fn current_thread() -> Result<(Policy, i32), Errno> {
    let mut raw_policy: libc::c_int = 0;
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: both out-pointers point to live, writable locals of the right
    // types, and pthread_self() is the calling thread.
    let rc =
        unsafe { libc::pthread_getschedparam(libc::pthread_self(), &mut raw_policy, &mut param) };
    if rc != 0 {
        return Err(Errno::from_raw_os_error(rc));
    }
    let policy = Policy::from_raw(raw_policy & !libc::SCHED_RESET_ON_FORK).ok_or(Errno::INVAL)?;
    Ok((policy, param.sched_priority))
}

/// The RLIMIT_RTPRIO limits: (soft, hard); `None` means unlimited.
pub fn rtprio_limits() -> (Option<u64>, Option<u64>) {
    let limit = rustix::process::getrlimit(Resource::Rtprio);
    (limit.current, limit.maximum)
}

/// Raises the soft RLIMIT_RTPRIO to the hard limit, as cyclictest does
/// before giving up on a priority. Returns whether the soft limit changed.
pub fn raise_rtprio_to_hard_limit() -> bool {
    let limit = rustix::process::getrlimit(Resource::Rtprio);
    if limit.current == limit.maximum {
        return false;
    }
    rustix::process::setrlimit(
        Resource::Rtprio,
        Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        },
    )
    .is_ok()
}
