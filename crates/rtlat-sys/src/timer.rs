//! Per-thread POSIX interval timers (cyclictest `-x`): the timer's expiry
//! sends a signal to one thread (`SIGEV_THREAD_ID`), which collects it with
//! `sigwaitinfo`. The signal must be blocked in that thread.
#![allow(unsafe_code)]

use crate::Errno;
use crate::clock::{Clock, Timespec};
use crate::signals::SignalWaiter;
use crate::time64;

/// The signal the timers send (cyclictest uses SIGALRM too).
pub const TIMER_SIGNAL: i32 = libc::SIGALRM;

/// A POSIX timer that signals the thread that created it. Not `Send`: it
/// belongs to that thread.
#[derive(Debug)]
pub struct ThreadTimer {
    id: libc::timer_t,
    waiter: SignalWaiter,
}

const fn clock_id(clock: Clock) -> libc::clockid_t {
    match clock {
        Clock::Monotonic => libc::CLOCK_MONOTONIC,
        Clock::Realtime => libc::CLOCK_REALTIME,
    }
}

impl ThreadTimer {
    /// Creates a timer on `clock` whose expiries send [`TIMER_SIGNAL`] to
    /// the calling thread. It is not armed yet.
    pub fn for_current_thread(clock: Clock) -> Result<ThreadTimer, Errno> {
        // SAFETY: an all-zero sigevent is valid (no notification, zero
        // value); the fields we need are set below.
        let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
        event.sigev_notify = libc::SIGEV_THREAD_ID;
        event.sigev_signo = TIMER_SIGNAL;
        event.sigev_notify_thread_id = crate::system::current_tid();
        let mut id: libc::timer_t = std::ptr::null_mut();
        // SAFETY: `event` and `id` are live locals of the right types; the
        // kernel writes the new timer's id into `id`.
        let rc = unsafe { libc::timer_create(clock_id(clock), &mut event, &mut id) };
        if rc != 0 {
            return Err(crate::last_errno());
        }
        Ok(ThreadTimer {
            id,
            waiter: SignalWaiter::new(&[TIMER_SIGNAL]),
        })
    }

    /// Arms the timer: first expiry at `first` (absolute on the timer's
    /// clock, or relative to now when `absolute` is false), then every
    /// `interval`.
    pub fn arm(&self, first: &Timespec, interval: &Timespec, absolute: bool) -> Result<(), Errno> {
        // 64-bit seconds on every target: an absolute CLOCK_REALTIME
        // expiry after 2038 stays what it is on armv7 and i686 too.
        let spec = time64::Itimerspec {
            it_interval: time64::raw(interval),
            it_value: time64::raw(first),
        };
        let flags = if absolute { libc::TIMER_ABSTIME } else { 0 };
        // SAFETY: `self.id` is a timer created by timer_create and not yet
        // deleted (deleted only in Drop); `spec` is a live, initialised
        // itimerspec of the call's time width; a null old-value pointer is
        // allowed.
        let rc = unsafe { time64::timer_settime(self.id, flags, &spec, std::ptr::null_mut()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(crate::last_errno())
        }
    }

    /// The time left until the next expiry (`timer_gettime`).
    #[cfg(test)]
    fn remaining(&self) -> Result<Timespec, Errno> {
        let zero = time64::raw(&Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        });
        let mut spec = time64::Itimerspec {
            it_interval: zero,
            it_value: zero,
        };
        // SAFETY: `self.id` is a live timer (see `arm`); `spec` is a live,
        // writable itimerspec of the call's time width.
        let rc = unsafe { time64::timer_gettime(self.id, &mut spec) };
        if rc == 0 {
            Ok(time64::from_raw(&spec.it_value))
        } else {
            Err(crate::last_errno())
        }
    }

    /// Waits for the next expiry. `Err(Errno::INTR)` when another signal's
    /// handler ran first.
    #[inline]
    pub fn wait(&self) -> Result<(), Errno> {
        self.waiter.wait().map(|_| ())
    }

    /// Expiries that were not delivered because the previous signal was
    /// still pending (`timer_getoverrun`).
    #[inline]
    pub fn overruns(&self) -> Result<u32, Errno> {
        // SAFETY: `self.id` is a live timer (see `arm`).
        let n = unsafe { libc::timer_getoverrun(self.id) };
        u32::try_from(n).map_err(|_| crate::last_errno())
    }
}

impl Drop for ThreadTimer {
    fn drop(&mut self) {
        // SAFETY: `self.id` was created by timer_create and is deleted
        // exactly once, here.
        unsafe { libc::timer_delete(self.id) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_expires_periodically_and_signals_this_thread() {
        // Run on a fresh thread whose SIGALRM is blocked, as a measuring
        // thread's is.
        std::thread::spawn(|| {
            crate::signals::block_all_except(crate::signals::wake_signal()).unwrap();
            let timer = ThreadTimer::for_current_thread(Clock::Monotonic).unwrap();
            let start = crate::clock::now(Clock::Monotonic);
            let period = Timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            };
            timer.arm(&period, &period, false).unwrap();
            for _ in 0..5 {
                timer.wait().unwrap();
            }
            let elapsed_ns = crate::clock::monotonic_ns_since(&start);
            assert!(
                elapsed_ns >= 10_000_000,
                "5 periods of 2 ms took {elapsed_ns} ns"
            );
            assert!(timer.overruns().is_ok());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn an_absolute_realtime_expiry_after_2038_is_kept() {
        // 2040-01-01T00:00:00Z, past 2^31 s: with a 32-bit time_t it would
        // wrap to 1904 (or be refused) and the timer would fire at once.
        let timer = ThreadTimer::for_current_thread(Clock::Realtime).unwrap();
        let first = Timespec {
            tv_sec: 2_208_988_800,
            tv_nsec: 0,
        };
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        timer.arm(&first, &zero, true).unwrap();
        let now = crate::clock::now(Clock::Realtime);
        let left = timer.remaining().unwrap();
        let expected = first.tv_sec - now.tv_sec;
        assert!(
            (left.tv_sec - expected).abs() <= 1,
            "{} s left, {expected} s expected",
            left.tv_sec
        );
    }
}
