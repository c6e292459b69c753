//! The 64-bit time interfaces of the C library, on every target.
//!
//! `libc::timespec` has a 32-bit `tv_sec` on 32-bit glibc targets (armv7,
//! i686): a deadline after 2038-01-19 would not fit, and an absolute
//! CLOCK_REALTIME timer or timeout would be refused or fire at once. glibc
//! 2.34 and later export a 64-bit variant of each call taking a
//! `struct __timespec64` (`__timer_settime64`, ...; what `-D_TIME_BITS=64`
//! selects in C); on 64-bit targets the plain calls are already 64-bit.
//! rustix's own calls (clock reads, `clock_nanosleep`, timerfd) use the
//! kernel's 64-bit time system calls by themselves.
#![allow(unsafe_code)]

use crate::clock::Timespec;

#[cfg(all(
    target_pointer_width = "32",
    not(all(target_env = "gnu", target_endian = "little"))
))]
compile_error!(
    "rtlat-sys knows the 64-bit time calls of little-endian glibc only on 32-bit targets"
);

#[cfg(target_pointer_width = "64")]
mod imp {
    #[cfg(test)]
    pub(crate) use libc::timer_gettime;
    pub(crate) use libc::{itimerspec as Itimerspec, timespec as RawTimespec};
    pub(crate) use libc::{mq_timedreceive, timer_settime};

    pub(crate) const fn raw(t: &super::Timespec) -> RawTimespec {
        RawTimespec {
            tv_sec: t.tv_sec,
            tv_nsec: t.tv_nsec,
        }
    }

    #[cfg(test)]
    pub(crate) const fn from_raw(t: &RawTimespec) -> super::Timespec {
        super::Timespec {
            tv_sec: t.tv_sec,
            tv_nsec: t.tv_nsec,
        }
    }
}

#[cfg(target_pointer_width = "32")]
mod imp {
    /// glibc's `struct __timespec64` on a little-endian 32-bit target:
    /// 64-bit seconds, 32-bit nanoseconds, 32 bits of padding.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct RawTimespec {
        pub(crate) tv_sec: i64,
        pub(crate) tv_nsec: i32,
        padding: i32,
    }

    /// glibc's `struct __itimerspec64`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Itimerspec {
        pub(crate) it_interval: RawTimespec,
        pub(crate) it_value: RawTimespec,
    }

    pub(crate) const fn raw(t: &super::Timespec) -> RawTimespec {
        RawTimespec {
            tv_sec: t.tv_sec,
            // A normalised tv_nsec is below 10^9 and fits; the kernel
            // refuses anything else (EINVAL), whatever its high bits were.
            tv_nsec: t.tv_nsec as i32,
            padding: 0,
        }
    }

    #[cfg(test)]
    pub(crate) const fn from_raw(t: &RawTimespec) -> super::Timespec {
        super::Timespec {
            tv_sec: t.tv_sec,
            tv_nsec: t.tv_nsec as i64,
        }
    }

    // SAFETY: these are glibc's exported 64-bit time symbols (GLIBC_2.34)
    // with the C prototypes of the calls they stand for, `struct timespec`
    // and `struct itimerspec` replaced by the 64-bit structs above.
    unsafe extern "C" {
        #[link_name = "__timer_settime64"]
        pub(crate) fn timer_settime(
            timer: libc::timer_t,
            flags: libc::c_int,
            new: *const Itimerspec,
            old: *mut Itimerspec,
        ) -> libc::c_int;
        #[cfg(test)]
        #[link_name = "__timer_gettime64"]
        pub(crate) fn timer_gettime(timer: libc::timer_t, value: *mut Itimerspec) -> libc::c_int;
        #[link_name = "__mq_timedreceive_time64"]
        pub(crate) fn mq_timedreceive(
            mqd: libc::mqd_t,
            buf: *mut libc::c_char,
            len: libc::size_t,
            priority: *mut libc::c_uint,
            deadline: *const RawTimespec,
        ) -> libc::ssize_t;
    }
}

pub(crate) use imp::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_after_2038_keeps_its_seconds() {
        // 2040-01-01T00:00:00Z: past 2^31 s, where a 32-bit time_t wraps.
        let t = Timespec {
            tv_sec: 2_208_988_800,
            tv_nsec: 999_999_999,
        };
        let back = from_raw(&raw(&t));
        assert_eq!((back.tv_sec, back.tv_nsec), (t.tv_sec, t.tv_nsec));
        assert_eq!(std::mem::size_of::<RawTimespec>(), 16);
    }
}
