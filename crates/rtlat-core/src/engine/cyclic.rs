//! THE measuring loop of cyclic (timer wake-up) runs.
//!
//! Rules, which every line here obeys:
//! - no allocation, no lock, no formatting, no I/O;
//! - no system call but the wait itself (the clock is read through the
//!   vDSO): one per cycle with abs, rel, nanosleep, timerfd (`read`) and
//!   std-sleep, two with posix-timer (`sigwaitinfo`, `timer_getoverrun`)
//!   and with `--measure timer` (+ `timerfd_gettime`), none with busy;
//! - results go to the thread's own [`ThreadChannel`] with plain stores,
//!   only of what changed ([`SlotWriter`]);
//! - an error ends the loop and is reported as a value, never a panic.
//!
//! Semantics are cyclictest's: absolute deadlines one interval apart, the
//! first one interval after the start; latency = wake-up − deadline; the
//! first sample counts; a wake-up later than following deadlines skips them
//! (and, unlike C, counts them as overruns).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rtlat_sys::clock::Timespec;

use super::source::{SmiSource, TimeSource, WaitError};
use super::time::{self, Period};
use crate::config::WaitMode;
use crate::stats::{LoopEnd, SlotWriter, SpikeLog, ThreadChannel};
use crate::units::Resolution;

/// What one measuring loop needs to know, prepared before it starts.
#[derive(Clone, Copy, Debug)]
pub struct LoopParams {
    /// Thread number (for spike records).
    pub thread: usize,
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
    /// A common start time (`-A`, `--secaligned`); `None`: now.
    pub start: Option<Timespec>,
    /// `-b`: end the loop at the first sample above this many units.
    pub break_threshold: Option<i64>,
    /// `--spike`: record samples above this many units.
    pub spike_trigger: Option<i64>,
}

/// Runs the measuring loop on `source` until the loop count, the duration,
/// a `-b` break, the `stop` flag or an error ends it. `spikes` receives
/// `--spike` records; `smi` is read after every wake-up (`--smi`, one more
/// system call per cycle).
#[inline(never)]
pub fn measure<S: TimeSource>(
    source: &mut S,
    params: &LoopParams,
    channel: &ThreadChannel,
    stop: &AtomicBool,
    spikes: Option<&SpikeLog>,
    mut smi: Option<&mut dyn SmiSource>,
) -> LoopEnd {
    let slot = &channel.slot;
    let histogram = channel.histogram.as_ref();
    let samples = channel.samples.as_ref();
    let smi_samples = channel.smi_samples.as_ref();
    let spikes = spikes.zip(params.spike_trigger);
    let mut writer = SlotWriter::new(slot);
    let mut smi_last = 0;
    if let Some(counter) = smi.as_deref_mut() {
        match counter.read_count() {
            Ok(count) => smi_last = count,
            Err(errno) => return LoopEnd::SmiFailed(errno),
        }
    }

    let start = params.start.unwrap_or_else(|| source.now());
    let mut next = time::add(start, params.interval);
    let stop_at: Option<Timespec> = params.duration.map(|d| time::add(start, d));
    let periodic = params.wait.is_periodic();
    // A timerfd counts its own missed periods; skipping more here than it
    // counted would make its next, pending expiry look early.
    let catch_up = !matches!(params.wait, WaitMode::Timerfd);
    if let Err(WaitError::Failed(errno)) = source.arm(&next, params.interval) {
        return LoopEnd::Failed(errno);
    }

    loop {
        if stop.load(Relaxed) {
            return LoopEnd::Stopped;
        }

        let waited = match params.wait {
            WaitMode::Absolute | WaitMode::PosixTimer { .. } | WaitMode::Timerfd => {
                source.sleep_until(&next)
            }
            WaitMode::StdSleep => source.std_sleep_until(&next),
            WaitMode::Busy => source.busy_until(&next, stop),
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
        let mut smi_delta = 0;
        if let Some(counter) = smi.as_deref_mut() {
            match counter.read_count() {
                Ok(count) => {
                    smi_delta = count.wrapping_sub(smi_last);
                    smi_last = count;
                    writer.add_smis(smi_delta);
                }
                Err(errno) => return LoopEnd::SmiFailed(errno),
            }
        }
        let ns = time::diff_nanos(&now, &next);
        let units = match params.resolution {
            Resolution::Micros => time::diff_micros_c(&now, &next),
            Resolution::Nanos => ns,
        };
        let cycle = writer.cycles();
        writer.record(units, ns);
        if let Some(h) = histogram {
            h.record(units, cycle);
        }
        if let Some(ring) = samples {
            ring.record(cycle, units);
        }
        if let Some(ring) = smi_samples {
            ring.record(cycle, smi_delta as i64);
        }
        if let Some((log, trigger)) = spikes
            && units > trigger
        {
            log.record(params.thread, units, time::micros_since_epoch(&now));
        }

        if periodic {
            next = time::add(next, params.interval);
            for _ in 0..source.missed_periods() {
                next = time::add(next, params.interval);
                writer.add_overruns(1);
            }
            while catch_up && time::is_after(&now, &next) {
                next = time::add(next, params.interval);
                writer.add_overruns(1);
            }
        }

        if params.break_threshold.is_some_and(|limit| units > limit) {
            return LoopEnd::Break(units);
        }
        if stop_at.is_some_and(|end| !time::is_after(&end, &now)) {
            return LoopEnd::Duration;
        }
        if params.loops == Some(writer.cycles()) {
            return LoopEnd::Loops;
        }
    }
}
