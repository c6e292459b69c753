//! SCHED_DEADLINE: `sched_setattr(2)` and `sched_getattr(2)` for the calling
//! thread, and `sched_yield`, which ends a deadline task's job until its
//! next period.
//!
//! glibc 2.36 has no wrapper for either call and rustix none either: they
//! are made with `libc::syscall`, with the kernel's `struct sched_attr`
//! (its first version, 48 bytes, `SCHED_ATTR_SIZE_VER0`; the utilisation
//! clamps of version 1 are not used).
#![allow(unsafe_code)]

use crate::Errno;

/// `SCHED_DEADLINE` (include/uapi/linux/sched.h).
pub const SCHED_DEADLINE: u32 = 6;
/// `SCHED_FLAG_RESET_ON_FORK`: children do not inherit the policy.
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
/// `SCHED_FLAG_RECLAIM`: may reclaim bandwidth left unused (GRUB).
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;
/// `SCHED_FLAG_DL_OVERRUN`: SIGXCPU on a runtime overrun.
pub const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;

/// The kernel's `struct sched_attr`, version 0 (48 bytes): the same layout
/// on every architecture (fixed-width fields, no padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAttr {
    /// The size of this structure, in bytes.
    pub size: u32,
    /// The policy (`SCHED_DEADLINE`, or `SCHED_OTHER` = 0, ...).
    pub sched_policy: u32,
    /// `SCHED_FLAG_*`.
    pub sched_flags: u64,
    /// SCHED_OTHER/BATCH nice value.
    pub sched_nice: i32,
    /// SCHED_FIFO/RR priority.
    pub sched_priority: u32,
    /// SCHED_DEADLINE: the budget per period, ns.
    pub sched_runtime: u64,
    /// SCHED_DEADLINE: the relative deadline, ns.
    pub sched_deadline: u64,
    /// SCHED_DEADLINE: the period, ns (0: the deadline).
    pub sched_period: u64,
}

/// `SCHED_ATTR_SIZE_VER0`.
pub const SCHED_ATTR_SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;

const _: () = assert!(SCHED_ATTR_SIZE == 48);

impl SchedAttr {
    /// A SCHED_DEADLINE attribute: `runtime` ns every `period` ns, due
    /// `deadline` ns after each period starts.
    pub const fn deadline(runtime: u64, deadline: u64, period: u64, flags: u64) -> SchedAttr {
        SchedAttr {
            size: SCHED_ATTR_SIZE,
            sched_policy: SCHED_DEADLINE,
            sched_flags: flags,
            sched_nice: 0,
            sched_priority: 0,
            sched_runtime: runtime,
            sched_deadline: deadline,
            sched_period: period,
        }
    }

    /// SCHED_OTHER at nice 0: what a deadline thread goes back to.
    pub const fn other() -> SchedAttr {
        SchedAttr {
            size: SCHED_ATTR_SIZE,
            sched_policy: 0,
            sched_flags: 0,
            sched_nice: 0,
            sched_priority: 0,
            sched_runtime: 0,
            sched_deadline: 0,
            sched_period: 0,
        }
    }
}

/// Sets the calling thread's scheduling attributes.
pub fn set_current_thread(attr: &SchedAttr) -> Result<(), Errno> {
    // SAFETY: `attr` is a live, fully initialised `struct sched_attr` whose
    // `size` field says how many bytes the kernel may read; pid 0 is the
    // calling thread and the flags argument must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0 as libc::pid_t,
            attr as *const SchedAttr,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_errno())
    }
}

/// The scheduling attributes of thread `tid` (0: the calling thread).
pub fn of_thread(tid: i32) -> Result<SchedAttr, Errno> {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is a live, writable `struct sched_attr` of
    // SCHED_ATTR_SIZE bytes, the size passed, so the kernel writes within
    // it; the flags argument must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid as libc::pid_t,
            &mut attr as *mut SchedAttr,
            SCHED_ATTR_SIZE as libc::c_uint,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(attr)
    } else {
        Err(crate::last_errno())
    }
}

/// Gives up the processor; for a SCHED_DEADLINE thread, ends the current
/// job: the thread sleeps until its next period.
#[inline]
pub fn yield_now() {
    rustix::thread::sched_yield();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calling_thread_reads_its_own_attributes() {
        let attr = of_thread(0).expect("sched_getattr");
        assert_eq!(attr.size, SCHED_ATTR_SIZE);
        assert_ne!(attr.sched_policy, SCHED_DEADLINE);
    }

    #[test]
    fn a_bad_attribute_is_einval() {
        // A runtime longer than the deadline is never admitted.
        let attr = SchedAttr::deadline(2_000_000, 1_000_000, 1_000_000, 0);
        let e = std::thread::spawn(move || set_current_thread(&attr))
            .join()
            .unwrap();
        assert_eq!(e, Err(Errno::INVAL));
    }
}
