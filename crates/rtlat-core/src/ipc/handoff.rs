//! THE hand-off loops.
//!
//! Rules, which every line here obeys:
//! - no allocation, no lock, no formatting, no I/O;
//! - one system call per side and hand-off for the hand-off itself (the
//!   sender's wake-up, the receiver's wait), one for the way back, and the
//!   receiver's interval sleep; the clock is read through the vDSO;
//! - results go through a single-writer sink (plain stores);
//! - an error ends the loop and is reported as a value, never a panic.
//!
//! The sender publishes its timestamp before it wakes the receiver and
//! writes the next one only after the receiver has released it, so the
//! receiver always reads the timestamp of the hand-off that woke it.

use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};

use rtlat_sys::clock::{self, Clock, Timespec};

use crate::engine::source::WaitError;
use crate::slot::LoopEnd;
use crate::units::Resolution;

/// How a receiver's wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The sender's hand-off arrived.
    HandOff,
    /// pmqtest `-T`: the wait timed out.
    TimedOut,
}

/// The receiver's end of a mechanism.
pub trait ReceiverLink {
    /// Blocks until the sender's hand-off (one system call).
    fn wait(&mut self) -> Result<Wake, WaitError>;
    /// Lets the sender start the next hand-off.
    fn release(&mut self) -> Result<(), WaitError>;
}

/// The sender's end of a mechanism.
pub trait SenderLink {
    /// Wakes the receiver (one system call).
    fn hand_off(&mut self) -> Result<(), WaitError>;
    /// Blocks until the receiver releases this side.
    fn wait_release(&mut self) -> Result<(), WaitError>;
}

/// Where a receiver's results go.
pub trait ReceiverSink {
    /// Records one latency (`units` in C-compatible units, `ns` in
    /// nanoseconds) received at `now_ns` (CLOCK_MONOTONIC); returns the
    /// number of samples so far.
    fn record(&mut self, units: i64, ns: i64, now_ns: i64) -> u64;
    /// Counts one time-out (pmqtest `-f`).
    fn timed_out(&mut self);
}

/// Where a sender's count goes.
pub trait SenderSink {
    /// Counts one hand-off; returns the count so far.
    fn count(&mut self) -> u64;
}

/// What a receiver loop needs, prepared before it starts.
#[derive(Clone, Copy, Debug)]
pub struct ReceiverParams {
    /// The sleep between hand-offs; `None`: none (`-i 0`).
    pub interval: Option<Timespec>,
    /// Unit of the C-compatible figures.
    pub resolution: Resolution,
    /// Stop after this many samples.
    pub loops: Option<u64>,
    /// `-b`: stop at the first sample above this many units.
    pub break_threshold: Option<i64>,
    /// pmqtest `-f`: a time-out is counted and the wait retried (otherwise
    /// it ends the loop with `ETIMEDOUT`).
    pub count_timeouts: bool,
}

/// What a sender loop needs, prepared before it starts.
#[derive(Clone, Copy, Debug)]
pub struct SenderParams {
    /// Stop after this many hand-offs.
    pub loops: Option<u64>,
    /// pmqtest `-f`: wait this long before every hand-off.
    pub delay: Option<Timespec>,
}

/// The time on CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
#[inline(always)]
pub fn now_ns() -> i64 {
    let t = clock::now(Clock::Monotonic);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// `ETIMEDOUT`, the error of a pmqtest time-out without `-f`.
pub const ETIMEDOUT: i32 = rtlat_sys::Errno::TIMEDOUT.raw_os_error();

/// The receiver's loop: wait, timestamp, record, sleep, release, until the
/// loop count, a `-b` break, the `stop` flag or an error ends it.
/// `sent_ns` is the sender's timestamp cell.
#[inline(never)]
pub fn receive<L: ReceiverLink, S: ReceiverSink>(
    link: &mut L,
    sink: &mut S,
    sent_ns: &AtomicU64,
    stop: &AtomicU64,
    p: &ReceiverParams,
) -> LoopEnd {
    loop {
        if stop.load(Relaxed) != 0 {
            return LoopEnd::Stopped;
        }
        match link.wait() {
            Ok(Wake::HandOff) => {}
            Ok(Wake::TimedOut) if p.count_timeouts => {
                sink.timed_out();
                continue;
            }
            Ok(Wake::TimedOut) => return LoopEnd::Failed(ETIMEDOUT),
            Err(WaitError::Interrupted) => continue,
            Err(WaitError::Exhausted) => return LoopEnd::Stopped,
            Err(WaitError::Failed(errno)) => return LoopEnd::Failed(errno),
        }
        let now = now_ns();
        let ns = now - sent_ns.load(Acquire) as i64;
        let units = match p.resolution {
            Resolution::Micros => ns / 1_000,
            Resolution::Nanos => ns,
        };
        let cycles = sink.record(units, ns, now);
        if p.break_threshold.is_some_and(|limit| units > limit) {
            return LoopEnd::Break(units);
        }
        if p.loops == Some(cycles) {
            return LoopEnd::Loops;
        }
        if let Some(interval) = &p.interval {
            // An interrupted sleep is cut short: the stop flag is looked at
            // below, before the next wait.
            let _ = clock::sleep_for(Clock::Monotonic, interval);
        }
        if stop.load(Relaxed) != 0 {
            return LoopEnd::Stopped;
        }
        loop {
            match link.release() {
                Ok(()) => break,
                Err(WaitError::Interrupted) if stop.load(Relaxed) == 0 => continue,
                Err(WaitError::Interrupted | WaitError::Exhausted) => return LoopEnd::Stopped,
                Err(WaitError::Failed(errno)) => return LoopEnd::Failed(errno),
            }
        }
    }
}

/// The sender's loop: timestamp, hand off, count, wait for the release,
/// until the loop count, the `stop` flag or an error ends it.
#[inline(never)]
pub fn send<L: SenderLink, S: SenderSink>(
    link: &mut L,
    sink: &mut S,
    sent_ns: &AtomicU64,
    stop: &AtomicU64,
    p: &SenderParams,
) -> LoopEnd {
    loop {
        if stop.load(Relaxed) != 0 {
            return LoopEnd::Stopped;
        }
        if let Some(delay) = &p.delay {
            let _ = clock::sleep_for(Clock::Monotonic, delay);
            if stop.load(Relaxed) != 0 {
                return LoopEnd::Stopped;
            }
        }
        sent_ns.store(now_ns() as u64, Release);
        match link.hand_off() {
            Ok(()) => {}
            Err(WaitError::Interrupted | WaitError::Exhausted) => return LoopEnd::Stopped,
            Err(WaitError::Failed(errno)) => return LoopEnd::Failed(errno),
        }
        if p.loops == Some(sink.count()) {
            return LoopEnd::Loops;
        }
        loop {
            match link.wait_release() {
                Ok(()) => break,
                Err(WaitError::Interrupted) if stop.load(Relaxed) == 0 => continue,
                Err(WaitError::Interrupted | WaitError::Exhausted) => return LoopEnd::Stopped,
                Err(WaitError::Failed(errno)) => return LoopEnd::Failed(errno),
            }
        }
    }
}
