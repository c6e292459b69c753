//! Clock reads and sleeps: the only system calls of the measuring loop.
//!
//! `now` reads through the vDSO (no system call); `sleep_until` is one
//! `clock_nanosleep(TIMER_ABSTIME)`; `sleep_for` one relative
//! `clock_nanosleep`. None of them allocates.

use rustix::thread::NanosleepRelativeResult;
pub use rustix::time::Timespec;

use crate::Errno;

/// The clocks rtlat measures on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// CLOCK_MONOTONIC.
    Monotonic,
    /// CLOCK_REALTIME.
    Realtime,
}

impl Clock {
    const fn id(self) -> rustix::time::ClockId {
        match self {
            Clock::Monotonic => rustix::time::ClockId::Monotonic,
            Clock::Realtime => rustix::time::ClockId::Realtime,
        }
    }
}

/// The current time of `clock`.
#[inline]
pub fn now(clock: Clock) -> Timespec {
    rustix::time::clock_gettime(clock.id())
}

/// The nanoseconds from `start` to now on CLOCK_MONOTONIC (the timer
/// tests' check that periods really elapsed).
#[cfg(test)]
pub(crate) fn monotonic_ns_since(start: &Timespec) -> i64 {
    let end = now(Clock::Monotonic);
    (end.tv_sec - start.tv_sec) * 1_000_000_000 + (end.tv_nsec - start.tv_nsec)
}

/// Sleeps until `deadline` on `clock`. `Err(Errno::INTR)` when a signal
/// handler ran first.
#[inline]
pub fn sleep_until(clock: Clock, deadline: &Timespec) -> Result<(), Errno> {
    rustix::thread::clock_nanosleep_absolute(clock.id(), deadline)
}

/// Sleeps for `span` on `clock`. `Err(Errno::INTR)` when a signal handler
/// ran first.
#[inline]
pub fn sleep_for(clock: Clock, span: &Timespec) -> Result<(), Errno> {
    match rustix::thread::clock_nanosleep_relative(clock.id(), span) {
        NanosleepRelativeResult::Ok => Ok(()),
        NanosleepRelativeResult::Interrupted(_) => Err(Errno::INTR),
        NanosleepRelativeResult::Err(e) => Err(e),
    }
}

/// Sleeps for `span` with plain `nanosleep` (CLOCK_MONOTONIC in the
/// kernel). `Err(Errno::INTR)` when a signal handler ran first.
#[inline]
pub fn nanosleep(span: &Timespec) -> Result<(), Errno> {
    match rustix::thread::nanosleep(span) {
        NanosleepRelativeResult::Ok => Ok(()),
        NanosleepRelativeResult::Interrupted(_) => Err(Errno::INTR),
        NanosleepRelativeResult::Err(e) => Err(e),
    }
}

/// The resolution the kernel reports for `clock`.
pub fn resolution(clock: Clock) -> Timespec {
    rustix::time::clock_getres(clock.id())
}
