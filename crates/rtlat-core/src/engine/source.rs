//! Where a measuring thread gets its time: the real clock, or a seeded
//! synthetic one.
//!
//! The measuring loop is generic over [`TimeSource`], so each source gets its
//! own monomorphised loop and the real one pays nothing for the seam.

use rtlat_sys::Errno;
use rtlat_sys::clock::{self, Clock, Timespec};
use rtlat_sys::msr::SmiCounter;
use rtlat_sys::timer::ThreadTimer;
use rtlat_sys::timerfd::PeriodicTimerFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

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

    /// Sleeps with `std::thread::sleep` for what is left until `deadline`
    /// (`--wait std-sleep`). Sources without a real clock just sleep until
    /// the deadline.
    fn std_sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        self.sleep_until(deadline)
    }

    /// Spins reading the clock until `deadline` (`--wait busy`), giving up
    /// with [`WaitError::Interrupted`] once `stop` is set. Sources without
    /// a real clock just sleep until the deadline.
    fn busy_until(&mut self, deadline: &Timespec, _stop: &AtomicBool) -> Result<(), WaitError> {
        self.sleep_until(deadline)
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

    #[inline(always)]
    fn std_sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        let left = time::diff_nanos(deadline, &clock::now(self.0));
        if left > 0 {
            // One nanosleep (clock_nanosleep in glibc); a signal does not
            // end it early: std retries until the time is up.
            std::thread::sleep(std::time::Duration::from_nanos(left as u64));
        }
        Ok(())
    }

    #[inline(always)]
    fn busy_until(&mut self, deadline: &Timespec, stop: &AtomicBool) -> Result<(), WaitError> {
        while time::is_after(deadline, &clock::now(self.0)) {
            if stop.load(Relaxed) {
                return Err(WaitError::Interrupted);
            }
            core::hint::spin_loop();
        }
        Ok(())
    }
}

/// The real clock, woken by a per-thread periodic `timerfd`
/// (`--wait timerfd`): the wait is one blocking `read`, whose expiration
/// count beyond one tells the loop how many periods were missed. With
/// `--measure timer` the wake-up time comes from the timer itself: its
/// next expiry minus the time it has left (`timerfd_gettime`, one more
/// system call per cycle).
#[derive(Debug)]
pub struct TimerfdClock {
    clock: Clock,
    timer: PeriodicTimerFd,
    measure_timer: bool,
    interval_ns: i64,
    missed: u64,
    woke: Option<Timespec>,
}

impl TimerfdClock {
    /// Wraps `timer` (created on `clock`); `measure_timer` reads the
    /// wake-up time from the timer instead of the clock.
    pub fn new(clock: Clock, timer: PeriodicTimerFd, measure_timer: bool) -> Self {
        TimerfdClock {
            clock,
            timer,
            measure_timer,
            interval_ns: 0,
            missed: 0,
            woke: None,
        }
    }
}

impl TimeSource for TimerfdClock {
    #[inline(always)]
    fn now(&mut self) -> Timespec {
        match self.woke.take() {
            Some(t) => t,
            None => clock::now(self.clock),
        }
    }

    #[inline(always)]
    fn sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        let count = self.timer.wait().map_err(WaitError::from)?;
        self.missed = count.saturating_sub(1);
        if self.measure_timer {
            let left = self.timer.remaining().map_err(WaitError::from)?;
            // The read consumed `count` expiries from `deadline` on; the
            // next one is `count` periods after it.
            let next_ns = time::to_nanos(deadline)
                .saturating_add(self.interval_ns.saturating_mul(count as i64));
            let left_ns = left.tv_sec * 1_000_000_000 + left.tv_nsec;
            self.woke = Some(time::from_nanos(next_ns - left_ns));
        }
        Ok(())
    }

    fn sleep_for(&mut self, span: Period) -> Result<(), WaitError> {
        clock::sleep_for(self.clock, &span.as_timespec()).map_err(WaitError::from)
    }

    fn arm(&mut self, first: &Timespec, interval: Period) -> Result<(), WaitError> {
        let period = interval.as_timespec();
        self.interval_ns = period.tv_sec * 1_000_000_000 + period.tv_nsec;
        self.timer
            .arm_absolute(first, &period)
            .map_err(|e| WaitError::Failed(e.raw_os_error()))
    }

    #[inline(always)]
    fn missed_periods(&mut self) -> u64 {
        std::mem::take(&mut self.missed)
    }
}

/// Reads the wake-up time from the time-stamp counter (`--measure tsc`)
/// around any waiting source. Before every wait it takes an anchor: one
/// clock read (vDSO) and one TSC read; a time is then the anchor plus the
/// TSC ticks since, converted with the calibrated ratio. Re-anchoring every
/// cycle keeps a calibration error from adding up over a long run (1 ppm is
/// 1 ns over a 1 ms period).
#[derive(Debug)]
pub struct TscTime<S> {
    inner: S,
    /// Nanoseconds per tick, times 2^32.
    ns_per_tick_q32: u64,
    anchor_ns: i64,
    anchor_tsc: u64,
}

impl<S: TimeSource> TscTime<S> {
    /// Wraps `inner`; `ns_per_tick_q32` comes from [`calibrate_tsc`].
    pub fn new(inner: S, ns_per_tick_q32: u64) -> Self {
        let mut t = TscTime {
            inner,
            ns_per_tick_q32,
            anchor_ns: 0,
            anchor_tsc: 0,
        };
        t.anchor();
        t
    }

    #[inline(always)]
    fn anchor(&mut self) {
        let now = self.inner.now();
        self.anchor_tsc = rtlat_sys::tsc::read();
        self.anchor_ns = time::to_nanos(&now);
    }
}

/// How many nanoseconds of `clock` one TSC tick lasts, times 2^32,
/// measured over about `span_ms` milliseconds.
pub fn calibrate_tsc(clock: Clock, span_ms: u64) -> u64 {
    let pair = || {
        let a = rtlat_sys::tsc::read();
        let t = clock::now(clock);
        let b = rtlat_sys::tsc::read();
        (time::to_nanos(&t), a / 2 + b / 2)
    };
    let (ns0, tsc0) = pair();
    std::thread::sleep(std::time::Duration::from_millis(span_ms));
    let (ns1, tsc1) = pair();
    let ticks = tsc1.saturating_sub(tsc0).max(1);
    let ns = (ns1 - ns0).max(1) as u128;
    ((ns << 32) / u128::from(ticks)) as u64
}

impl<S: TimeSource> TimeSource for TscTime<S> {
    #[inline(always)]
    fn now(&mut self) -> Timespec {
        let ticks = rtlat_sys::tsc::read().wrapping_sub(self.anchor_tsc);
        let ns = ((u128::from(ticks) * u128::from(self.ns_per_tick_q32)) >> 32) as i64;
        time::from_nanos(self.anchor_ns + ns)
    }

    #[inline(always)]
    fn sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        self.anchor();
        self.inner.sleep_until(deadline)
    }

    #[inline(always)]
    fn sleep_for(&mut self, span: Period) -> Result<(), WaitError> {
        self.anchor();
        self.inner.sleep_for(span)
    }

    #[inline(always)]
    fn nanosleep(&mut self, span: Period) -> Result<(), WaitError> {
        self.anchor();
        self.inner.nanosleep(span)
    }

    #[inline(always)]
    fn std_sleep_until(&mut self, deadline: &Timespec) -> Result<(), WaitError> {
        self.anchor();
        self.inner.std_sleep_until(deadline)
    }

    #[inline(always)]
    fn busy_until(&mut self, deadline: &Timespec, stop: &AtomicBool) -> Result<(), WaitError> {
        self.anchor();
        self.inner.busy_until(deadline, stop)
    }

    fn arm(&mut self, first: &Timespec, interval: Period) -> Result<(), WaitError> {
        self.anchor();
        self.inner.arm(first, interval)
    }

    #[inline(always)]
    fn missed_periods(&mut self) -> u64 {
        self.inner.missed_periods()
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
/// numbers for the same seed; with the engine's turnstile (virtual time),
/// the threads of a run take their samples in virtual-time order.
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
    pub(crate) fn retire(&mut self, ends_run: bool) {
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
