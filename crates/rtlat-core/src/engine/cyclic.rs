//! THE measuring loop of cyclic (timer wake-up) runs.
//!
//! Rules, which every line here obeys:
//! - no allocation, no lock, no formatting, no I/O;
//! - no system call but the wait itself (the clock is read through the
//!   vDSO): one per cycle in absolute mode, one in relative mode;
//! - results go to the thread's own [`ThreadChannel`] with plain stores;
//! - an error ends the loop and is reported as a value, never a panic.
//!
//! Semantics are cyclictest's: absolute deadlines one interval apart, the
//! first one interval after the start; latency = wake-up − deadline; the
//! first sample counts; a wake-up later than following deadlines skips them
//! (and, unlike C, counts them as overruns).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rtlat_sys::clock::Timespec;

use super::source::{TimeSource, WaitError};
use super::time::{self, Period};
use crate::config::WaitMode;
use crate::stats::{LoopEnd, Tally, ThreadChannel};
use crate::units::Resolution;

/// What one measuring loop needs to know, prepared before it starts.
#[derive(Clone, Copy, Debug)]
pub struct LoopParams {
    /// Period between deadlines.
    pub interval: Period,
    /// Absolute or relative sleeps.
    pub wait: WaitMode,
    /// Unit of the C-compatible figures.
    pub resolution: Resolution,
    /// Stop after this many samples.
    pub loops: Option<u64>,
    /// Stop once this much time has passed since the start.
    pub duration: Option<Period>,
}

/// Runs the measuring loop on `source` until the loop count, the duration,
/// the `stop` flag or an error ends it.
#[inline(never)]
pub fn measure<S: TimeSource>(
    source: &mut S,
    params: &LoopParams,
    channel: &ThreadChannel,
    stop: &AtomicBool,
) -> LoopEnd {
    let slot = &channel.slot;
    let histogram = channel.histogram.as_ref();
    let samples = channel.samples.as_ref();
    let mut tally = Tally::default();

    let start = source.now();
    let mut next = time::add(start, params.interval);
    let stop_at: Option<Timespec> = params.duration.map(|d| time::add(start, d));
    let periodic = matches!(
        params.wait,
        WaitMode::Absolute | WaitMode::PosixTimer { .. }
    );
    if let Err(WaitError::Failed(errno)) = source.arm(&next, params.interval) {
        return LoopEnd::Failed(errno);
    }

    loop {
        if stop.load(Relaxed) {
            return LoopEnd::Stopped;
        }

        let waited = match params.wait {
            WaitMode::Absolute | WaitMode::PosixTimer { .. } => source.sleep_until(&next),
            WaitMode::Relative => {
                let before = source.now();
                next = time::add(before, params.interval);
                source.sleep_for(params.interval)
            }
            WaitMode::Nanosleep => {
                let before = source.now();
                next = time::add(before, params.interval);
                source.nanosleep(params.interval)
            }
        };
        match waited {
            Ok(()) => {}
            Err(WaitError::Interrupted) => continue,
            Err(WaitError::Exhausted) => return LoopEnd::Stopped,
            Err(WaitError::Failed(errno)) => return LoopEnd::Failed(errno),
        }

        let now = source.now();
        let ns = time::diff_nanos(&now, &next);
        let units = match params.resolution {
            Resolution::Micros => time::diff_micros_c(&now, &next),
            Resolution::Nanos => ns,
        };
        let cycle = tally.cycles;
        tally.record(units, ns);
        if let Some(h) = histogram {
            h.record(units, cycle);
        }
        if let Some(ring) = samples {
            ring.record(cycle, units);
        }

        if periodic {
            next = time::add(next, params.interval);
            for _ in 0..source.missed_periods() {
                next = time::add(next, params.interval);
                tally.overruns += 1;
            }
            while time::is_after(&now, &next) {
                next = time::add(next, params.interval);
                tally.overruns += 1;
            }
        }
        slot.publish(&tally);

        if stop_at.is_some_and(|end| !time::is_after(&end, &now)) {
            return LoopEnd::Duration;
        }
        if params.loops == Some(tally.cycles) {
            return LoopEnd::Loops;
        }
    }
}
