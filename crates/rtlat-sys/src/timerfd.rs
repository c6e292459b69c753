//! Periodic `timerfd` timers (`rtlat cyclictest --wait timerfd`): armed once
//! on an absolute first expiry, then every period; the thread waits with a
//! blocking `read`, which returns how many periods expired since the last
//! read. `remaining` (`timerfd_gettime`) is the time left to the next
//! expiry, which `--measure timer` turns into a wake-up time.
//!
//! All through rustix's safe API: no `unsafe` here.

use std::os::fd::OwnedFd;

use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, timerfd_create, timerfd_gettime,
    timerfd_settime,
};

use crate::Errno;
use crate::clock::{Clock, Timespec};

/// A periodic timer read through a file descriptor.
#[derive(Debug)]
pub struct PeriodicTimerFd {
    fd: OwnedFd,
}

impl PeriodicTimerFd {
    /// Creates an unarmed timer on `clock` (blocking reads, close-on-exec).
    pub fn new(clock: Clock) -> Result<PeriodicTimerFd, Errno> {
        let id = match clock {
            Clock::Monotonic => TimerfdClockId::Monotonic,
            Clock::Realtime => TimerfdClockId::Realtime,
        };
        let fd = timerfd_create(id, TimerfdFlags::CLOEXEC)?;
        Ok(PeriodicTimerFd { fd })
    }

    /// Arms the timer: first expiry at the absolute time `first` on its
    /// clock, then every `interval`.
    pub fn arm_absolute(&self, first: &Timespec, interval: &Timespec) -> Result<(), Errno> {
        let spec = Itimerspec {
            it_interval: *interval,
            it_value: *first,
        };
        timerfd_settime(&self.fd, TimerfdTimerFlags::ABSTIME, &spec).map(|_| ())
    }

    /// Waits for the next expiry (one `read`); returns the number of
    /// periods that expired since the last read (at least 1).
    /// `Err(Errno::INTR)` when a signal handler ran first.
    #[inline]
    pub fn wait(&self) -> Result<u64, Errno> {
        let mut count = [0u8; 8];
        let n = rustix::io::read(&self.fd, &mut count)?;
        if n != count.len() {
            return Err(Errno::IO);
        }
        Ok(u64::from_ne_bytes(count))
    }

    /// The time left until the next expiry (one `timerfd_gettime`).
    #[inline]
    pub fn remaining(&self) -> Result<Timespec, Errno> {
        timerfd_gettime(&self.fd).map(|spec| spec.it_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timerfd_expires_periodically() {
        let timer = PeriodicTimerFd::new(Clock::Monotonic).unwrap();
        let start = crate::clock::now(Clock::Monotonic);
        let period = Timespec {
            tv_sec: 0,
            tv_nsec: 2_000_000,
        };
        let mut first = start;
        first.tv_nsec += 2_000_000;
        if first.tv_nsec >= 1_000_000_000 {
            first.tv_nsec -= 1_000_000_000;
            first.tv_sec += 1;
        }
        timer.arm_absolute(&first, &period).unwrap();
        let mut expired = 0;
        while expired < 5 {
            expired += timer.wait().unwrap();
        }
        let left = timer.remaining().unwrap();
        assert!(left.tv_sec == 0 && left.tv_nsec <= 2_000_000, "{left:?}");
        let elapsed_ns = crate::clock::monotonic_ns_since(&start);
        assert!(
            elapsed_ns >= 10_000_000,
            "5 periods of 2 ms took {elapsed_ns} ns"
        );
    }
}
