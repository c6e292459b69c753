//! Where a measuring thread gets its time: the real clock, or a seeded
//! synthetic one.
//!
//! The measuring loop is generic over [`TimeSource`], so each source gets its
//! own monomorphised loop and the real one pays nothing for the seam.

use rtlat_sys::Errno;
use rtlat_sys::clock::{self, Clock, Timespec};
use rtlat_sys::msr::SmiCounter;
use rtlat_sys::timer::ThreadTimer;

use super::time::{self, Period};
use super::virtual_time::Turnstile;
use std::sync::Arc;

/// Why a wait did not end at its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitError {
    /// A signal interrupted the sleep (the run may be stopping).
    Interrupted,
    /// The synthetic source has nothing more to give.
    Exhausted,
    /// The sleep failed with this errno.
    Failed(i32),
}

impl From<Errno> for WaitError {
    fn from(e: Errno) -> Self {
        if e == Errno::INTR {
            WaitError::Interrupted
        } else {
            WaitError::Failed(e.raw_os_error())
        }
    }
}

/// A clock a measuring thread can read and sleep on.
pub trait TimeSource {
    /// The current time.
    fn now(&mut self) -> Timespec;
    /// Sleeps until the absolute `deadline`.
    fn sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError>;
    /// Sleeps for `span`.
    fn sleep_for(&mut self, span: Period) -> Result<(), WaitError>;

    /// Sleeps for `span` with plain `nanosleep` (cyclictest `-s`).
    fn nanosleep(&mut self, span: Period) -> Result<(), WaitError> {
        self.sleep_for(span)
    }

    /// Called once before the loop with the first deadline and the period;
    /// a timer-driven source arms its timer here.
    fn arm(&mut self, _first: &Timespec, _interval: Period) -> Result<(), WaitError> {
        Ok(())
    }

    /// Periods the source knows were missed since the last wake-up beyond
    /// the one it woke for (a POSIX timer's overrun count).
    fn missed_periods(&mut self) -> u64 {
        0
    }
}

/// The real clock: vDSO reads and `clock_nanosleep`.
#[derive(Clone, Copy, Debug)]
pub struct RealClock(pub Clock);

impl TimeSource for RealClock {
    #[inline(always)]
    fn now(&mut self) -> Timespec {
        clock::now(self.0)
    }

    #[inline(always)]
    fn sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        clock::sleep_until(self.0, deadline).map_err(WaitError::from)
    }

    #[inline(always)]
    fn sleep_for(&mut self, span: Period) -> Result<(), WaitError> {
        clock::sleep_for(self.0, &span.as_timespec()).map_err(WaitError::from)
    }

    #[inline(always)]
    fn nanosleep(&mut self, span: Period) -> Result<(), WaitError> {
        clock::nanosleep(&span.as_timespec()).map_err(WaitError::from)
    }
}

/// The real clock, woken by a per-thread periodic POSIX timer's signal
/// (cyclictest `-x`): the wait is `sigwaitinfo`, and the timer's overrun
/// count tells the loop how many periods went by unsignalled.
#[derive(Debug)]
pub struct PosixTimerClock {
    clock: Clock,
    timer: ThreadTimer,
    armed_relative: bool,
}

impl PosixTimerClock {
    /// Wraps `timer` (created by this thread on `clock`). With
    /// `armed_relative` the first expiry is armed as "one interval from
    /// now", as cyclictest `-x -r` does; otherwise at the absolute first
    /// deadline.
    pub fn new(clock: Clock, timer: ThreadTimer, armed_relative: bool) -> Self {
        PosixTimerClock {
            clock,
            timer,
            armed_relative,
        }
    }
}

impl TimeSource for PosixTimerClock {
    #[inline(always)]
    fn now(&mut self) -> Timespec {
        clock::now(self.clock)
    }

    #[inline(always)]
    fn sleep_until(&mut self, _deadline: &Timespec) -> Result<(), WaitError> {
        self.timer.wait().map_err(WaitError::from)
    }

    fn sleep_for(&mut self, span: Period) -> Result<(), WaitError> {
        clock::sleep_for(self.clock, &span.as_timespec()).map_err(WaitError::from)
    }

    fn arm(&mut self, first: &Timespec, interval: Period) -> Result<(), WaitError> {
        let period = interval.as_timespec();
        let armed = if self.armed_relative {
            self.timer.arm(&period, &period, false)
        } else {
            self.timer.arm(first, &period, true)
        };
        armed.map_err(|e| WaitError::Failed(e.raw_os_error()))
    }

    #[inline(always)]
    fn missed_periods(&mut self) -> u64 {
        self.timer.overruns().map_or(0, u64::from)
    }
}

/// A counter of System Management Interrupts (`--smi`), read after every
/// wake-up.
pub trait SmiSource {
    /// The current count, or the errno of a failed read.
    fn read_count(&mut self) -> Result<u64, i32>;
}

impl SmiSource for SmiCounter {
    #[inline]
    fn read_count(&mut self) -> Result<u64, i32> {
        self.read().map_err(|e| e.raw_os_error())
    }
}

/// A deterministic stand-in for the SMI counter (the synthetic seam): about
/// one interrupt every hundred reads, the same for the same seed.
#[derive(Clone, Debug)]
pub struct FakeSmiCounter {
    state: u64,
    count: u64,
}

impl FakeSmiCounter {
    /// The fake counter of thread `index` in a run seeded with `seed`.
    pub fn new(seed: u64, index: usize) -> Self {
        FakeSmiCounter {
            state: splitmix64(splitmix64(seed ^ 0x5A17) ^ index as u64) | 1,
            count: 0,
        }
    }
}

impl SmiSource for FakeSmiCounter {
    fn read_count(&mut self) -> Result<u64, i32> {
        self.state = splitmix64(self.state);
        if self.state.is_multiple_of(100) {
            self.count += 1;
        }
        Ok(self.count)
    }
}

/// A deterministic clock: every sleep "wakes" without sleeping, late by a
/// latency drawn from a seeded pseudo-random sequence (xorshift64*). Mostly
/// a few microseconds, sometimes tens or hundreds, rarely more than a period
/// (so overruns happen too). Runs need no privilege and give the same
/// numbers for the same seed; with a [`Turnstile`], the threads of a run
/// take their samples in virtual-time order.
#[derive(Debug)]
pub struct SyntheticClock {
    now: Timespec,
    state: u64,
    interval_ns: i64,
    turnstile: Option<(Arc<Turnstile>, usize)>,
}

/// The virtual time every synthetic thread starts at.
pub const SYNTHETIC_START: Timespec = Timespec {
    tv_sec: 1_000,
    tv_nsec: 0,
};

impl SyntheticClock {
    /// A synthetic clock for the thread `index` of a run seeded with `seed`,
    /// whose period is `interval_ns`; `turnstile` orders it with the other
    /// threads of the run (`None`: a lone thread).
    pub fn new(
        seed: u64,
        index: usize,
        interval_ns: i64,
        turnstile: Option<Arc<Turnstile>>,
    ) -> Self {
        // Every bit of the seed and the thread index matters; xorshift needs
        // a non-zero state.
        let state = match splitmix64(splitmix64(seed) ^ index as u64) {
            0 => 0x9E37_79B9_7F4A_7C15,
            s => s,
        };
        SyntheticClock {
            now: SYNTHETIC_START,
            state,
            interval_ns,
            turnstile: turnstile.map(|t| (t, index)),
        }
    }

    /// Leaves the turnstile once the loop has ended; `ends_run` when the
    /// loop count, the duration or a break ended it.
    pub fn retire(&mut self, ends_run: bool) {
        if let Some((turnstile, index)) = self.turnstile.take() {
            turnstile.retire(index, ends_run);
        }
    }

    fn next_random(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn latency_ns(&mut self) -> i64 {
        let r = self.next_random();
        let pick = r % 4096;
        let spread = (r >> 16) as i64;
        if pick == 0 {
            // A wake-up more than one period late.
            self.interval_ns + spread % (2 * self.interval_ns.max(1))
        } else if pick < 16 {
            30_000 + spread % 270_000
        } else {
            1_000 + spread % 29_000
        }
    }

    fn wake_at(&mut self, deadline: Timespec) -> Result<(), WaitError> {
        let late = self.latency_ns();
        let wake = time::add(deadline, Period::from_nanos(late));
        if let Some((turnstile, index)) = &self.turnstile {
            turnstile
                .wait_turn(*index, wake)
                .map_err(|_| WaitError::Exhausted)?;
        }
        self.now = wake;
        Ok(())
    }
}

impl Drop for SyntheticClock {
    fn drop(&mut self) {
        self.retire(false);
    }
}

/// One step of SplitMix64: spreads every input bit over the whole output,
/// so that neighbouring seeds give unrelated sequences.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl TimeSource for SyntheticClock {
    fn now(&mut self) -> Timespec {
        self.now
    }

    fn sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        let deadline = if time::is_after(&self.now, deadline) {
            self.now
        } else {
            *deadline
        };
        self.wake_at(deadline)
    }

    fn sleep_for(&mut self, span: Period) -> Result<(), WaitError> {
        let deadline = time::add(self.now, span);
        self.wake_at(deadline)
    }
}
