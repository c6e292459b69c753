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
//! - an error ends the loop and is reported as a value, never a panic;
//! - once per interval (`--stats-interval`, `latency`) the interval's
//!   figures are sealed with a few plain stores, and so are a phase's
//!   (`--load-schedule`) when it ends; at a new maximum with
//!   `latency -f`, the trace is marked and frozen (two writes).
//!
//! Semantics are cyclictest's: absolute deadlines one interval apart, the
//! first one interval after the start; latency = wake-up − deadline; the
//! first sample counts; a wake-up later than following deadlines skips them
//! (and, unlike C, counts them as overruns).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rtlat_sys::clock::Timespec;

use rtlat_sys::tracefs::TraceControl;

use super::source::{SmiSource, TimeSource, WaitError};
use super::time::{self, Period};
use crate::config::WaitMode;
use crate::interval::IntervalWriter;
use crate::phase::PhaseWriter;
use crate::stats::{LoopEnd, SlotWriter, SpikeLog, ThreadChannel};
use crate::units::Resolution;

/// The trace marker written at each new maximum (`latency -f`); fixed
/// text, because the loop formats nothing. The value is in the output.
const FREEZE_MARKER: &[u8] = b"rtlat: new maximum latency";

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
    /// Samples whose deadline is less than this after the start are not
    /// recorded (warm-up).
    pub warmup: Option<Period>,
    /// Length of the intervals sealed into the channel's interval log.
    pub interval_length: Option<Period>,
}

/// The optional companions of a loop, each used only when present.
#[derive(Default)]
#[allow(missing_debug_implementations)] // holds a `dyn SmiSource`
pub struct LoopExtras<'a, 's> {
    /// Receives `--spike` records.
    pub spikes: Option<&'a SpikeLog>,
    /// Read after every wake-up (`--smi`, one more system call per cycle).
    pub smi: Option<&'s mut dyn SmiSource>,
    /// Frozen at every new maximum (`latency -f`; two system calls, only
    /// when the maximum grows).
    pub freeze: Option<&'a TraceControl>,
}

/// Runs the measuring loop on `source` until the loop count, the duration,
/// a `-b` break, the `stop` flag or an error ends it, then publishes what
/// is published only at the end (the sum of squares, the last partial
/// interval).
#[inline(never)]
pub fn measure<S: TimeSource>(
    source: &mut S,
    params: &LoopParams,
    channel: &ThreadChannel,
    stop: &AtomicBool,
    extras: LoopExtras<'_, '_>,
) -> LoopEnd {
    let mut writer = SlotWriter::new(&channel.slot);
    let start = params.start.unwrap_or_else(|| source.now());
    let recording_from = params.warmup.map(|w| time::add(start, w));
    let mut intervals =
        channel
            .intervals
            .as_ref()
            .zip(params.interval_length)
            .map(|(log, length)| {
                let origin = recording_from.unwrap_or(start);
                IntervalWriter::new(log, time::to_nanos(&origin), length.as_nanos())
            });
    let mut phases = channel.phases.as_ref().map(|log| {
        let origin = recording_from.unwrap_or(start);
        PhaseWriter::new(log, time::to_nanos(&origin))
    });
    let end = run_loop(
        source,
        params,
        channel,
        stop,
        extras,
        &mut writer,
        Recorders {
            intervals: intervals.as_mut(),
            phases: phases.as_mut(),
        },
        (start, recording_from),
    );
    writer.finish();
    if let Some(intervals) = intervals.as_mut() {
        intervals.finish(writer.overruns());
    }
    if let Some(phases) = phases.as_mut() {
        phases.finish(writer.overruns());
    }
    end
}

/// The per-interval and per-phase recorders a loop feeds, when requested.
struct Recorders<'w, 'a> {
    intervals: Option<&'w mut IntervalWriter<'a>>,
    phases: Option<&'w mut PhaseWriter<'a>>,
}

/// The loop itself; `times` is the start and the end of the warm-up.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn run_loop<S: TimeSource>(
    source: &mut S,
    params: &LoopParams,
    channel: &ThreadChannel,
    stop: &AtomicBool,
    extras: LoopExtras<'_, '_>,
    writer: &mut SlotWriter<'_>,
    recorders: Recorders<'_, '_>,
    (start, recording_from): (Timespec, Option<Timespec>),
) -> LoopEnd {
    let Recorders {
        mut intervals,
        mut phases,
    } = recorders;
    let histogram = channel.histogram.as_ref();
    let signed_histogram = channel.signed_histogram.as_ref();
    let distribution = channel.distribution.as_ref();
    let samples = channel.samples.as_ref();
    let smi_samples = channel.smi_samples.as_ref();
    let LoopExtras {
        spikes,
        mut smi,
        freeze,
    } = extras;
    let spikes = spikes.zip(params.spike_trigger);
    let mut smi_last = 0;
    if let Some(counter) = smi.as_deref_mut() {
        match counter.read_count() {
            Ok(count) => smi_last = count,
            Err(errno) => return LoopEnd::SmiFailed(errno),
        }
    }

    let mut next = time::add(start, params.interval);
    let stop_at: Option<Timespec> = params.duration.map(|d| time::add(start, d));
    // `latency -f` freezes the trace at each sample above every earlier
    // one, the warm-up's included (so not at the first sample after it).
    let mut freeze_above = i64::MIN;
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
        let warming_up = recording_from.is_some_and(|from| time::is_after(&from, &next));
        if warming_up {
            freeze_above = freeze_above.max(ns);
        } else {
            let cycle = writer.cycles();
            writer.record(units, ns);
            if let Some(h) = histogram {
                h.record(units, cycle);
            }
            if let Some(h) = signed_histogram {
                h.record(ns);
            }
            if let Some(d) = distribution {
                d.record(ns);
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
            if let Some(iv) = intervals.as_deref_mut() {
                iv.add(time::to_nanos(&next), ns, writer.overruns());
            }
            if let Some(phase) = phases.as_deref_mut() {
                phase.add(time::to_nanos(&next), units, ns, writer.overruns());
            }
            if let Some(trace) = freeze
                && ns > freeze_above
            {
                freeze_above = ns;
                // A failed write cannot be reported from here; the trace
                // simply shows no freeze.
                let _ = trace.freeze(FREEZE_MARKER);
            }
        }

        if periodic {
            next = time::add(next, params.interval);
            for _ in 0..source.missed_periods() {
                next = time::add(next, params.interval);
                if !warming_up {
                    writer.add_overruns(1);
                }
            }
            while catch_up && time::is_after(&now, &next) {
                next = time::add(next, params.interval);
                if !warming_up {
                    writer.add_overruns(1);
                }
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
