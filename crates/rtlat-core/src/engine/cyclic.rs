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
//!   `latency -f`, the trace is marked and frozen (two writes);
//! - with `--explain`, a sample past the explain trigger (a new maximum, or
//!   a threshold) is offered to the candidate ring: a few plain stores.
//!
//! Semantics are cyclictest's: absolute deadlines one interval apart, the
//! first one interval after the start; latency = wake-up − deadline; the
//! first sample counts; a wake-up later than following deadlines skips them
//! (and, unlike C, counts them as overruns). A periodic timer's wake-ups
//! skip only the periods the timer itself reports missed (unlike C `-x`,
//! whose catch-up can put its deadlines one period ahead of the timer).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rtlat_sys::clock::Timespec;

use rtlat_sys::tracefs::TraceControl;

use super::source::{SmiSource, TimeSource, WaitError};
use super::time::{self, Period};
use crate::candidates::{Candidate, ExplainTrigger};
use crate::config::WaitMode;
use crate::interval::IntervalWriter;
use crate::phase::PhaseWriter;
use crate::slot::{LoopEnd, SlotWriter};
use crate::stats::{SpikeLog, ThreadChannel};
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
    /// `--explain`: the samples offered to the channel's candidate ring
    /// (the `-b` break sample is offered too).
    pub explain: Option<ExplainTrigger>,
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
        let ended = time::to_nanos(&source.now());
        intervals.finish(writer.overruns(), params.interval.as_nanos(), ended);
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
    let distribution = channel.distribution.as_deref();
    let samples = channel.samples.as_ref();
    let candidates = channel.candidates.as_ref().zip(params.explain);
    let mut explain_above = match params.explain {
        Some(ExplainTrigger::Above(threshold_ns)) => threshold_ns,
        _ => i64::MIN,
    };
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
    // A periodic timer (timerfd, POSIX timer) keeps its own schedule and
    // counts the periods it missed. Skipping more here than it counted
    // would make its next, already pending expiry look early: a wake-up
    // collected on time but read late (preempted between `sigwaitinfo` and
    // the clock read) would shift every later sample one period negative,
    // as it does in C cyclictest `-x`.
    let catch_up = !matches!(params.wait, WaitMode::Timerfd | WaitMode::PosixTimer { .. });
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
            // A new maximum keeps its deadline as its time, ns on the run's
            // clock: what the intervals and phases file a sample under, so
            // that it falls in the `--stats-file` interval that holds it
            // (its wake-up is that plus the sample).
            writer.record(units, ns, || time::to_nanos(&next));
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
            if let Some((ring, trigger)) = candidates
                && (ns > explain_above || params.break_threshold.is_some_and(|limit| units > limit))
            {
                ring.offer(Candidate {
                    deadline_ns: time::to_nanos(&next),
                    wake_ns: time::to_nanos(&now),
                    latency_ns: ns,
                });
                if trigger == ExplainTrigger::NewMaximum {
                    explain_above = explain_above.max(ns);
                }
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

#[cfg(test)]
mod simulation;

/// The loop run on its own, as the tests run it: never stopped from
/// outside, without spike log, SMI counter or trace.
#[cfg(test)]
fn measure_alone<S: TimeSource>(
    source: &mut S,
    params: &LoopParams,
    channel: &ThreadChannel,
) -> LoopEnd {
    let never = AtomicBool::new(false);
    measure(source, params, channel, &never, LoopExtras::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::CandidateRing;
    use crate::stats::SampleRing;

    const PERIOD_NS: i64 = 1_000_000;

    /// A periodic timer that signals each expiry, as the kernel does for a
    /// POSIX timer: expiries at `first + k·period`; an expiry while the
    /// previous signal is still pending only raises the overrun count,
    /// latched when that signal is collected. Each wake-up follows a script
    /// of (delay before the signal is collected, delay before the clock is
    /// read).
    struct SignallingTimer {
        first_ns: i64,
        /// Index of the last expiry whose signal was collected.
        collected: i64,
        now_ns: i64,
        overrun: u64,
        script: Vec<(i64, i64)>,
        wakes: usize,
    }

    impl SignallingTimer {
        fn new(script: Vec<(i64, i64)>) -> Self {
            SignallingTimer {
                first_ns: 0,
                collected: -1,
                now_ns: 0,
                overrun: 0,
                script,
                wakes: 0,
            }
        }
    }

    impl TimeSource for SignallingTimer {
        fn now(&mut self) -> Timespec {
            time::from_nanos(self.now_ns)
        }

        fn arm(&mut self, first: &Timespec, _interval: Period) -> Result<(), WaitError> {
            self.first_ns = time::to_nanos(first);
            Ok(())
        }

        fn sleep_until(&mut self, _deadline: &Timespec) -> Result<(), WaitError> {
            let Some(&(collect_after, read_after)) = self.script.get(self.wakes) else {
                return Err(WaitError::Exhausted);
            };
            self.wakes += 1;
            let expiry = self.collected + 1;
            let expiry_ns = self.first_ns + expiry * PERIOD_NS;
            let collected_at = expiry_ns.max(self.now_ns) + collect_after;
            let last_expired = (collected_at - self.first_ns) / PERIOD_NS;
            self.overrun = (last_expired - expiry) as u64;
            self.collected = last_expired;
            self.now_ns = collected_at + read_after;
            Ok(())
        }

        fn sleep_for(&mut self, _span: Period) -> Result<(), WaitError> {
            unreachable!("a periodic timer does not sleep for a span")
        }

        fn missed_periods(&mut self) -> u64 {
            std::mem::take(&mut self.overrun)
        }
    }

    fn samples_of(script: Vec<(i64, i64)>) -> (Vec<i64>, u64) {
        let (channel, _) = run_script(script, None, None);
        let ring = channel.samples.as_ref().unwrap();
        let cycles = channel.slot.cycles();
        let samples = (0..cycles).map(|c| ring.get(c, cycles).unwrap()).collect();
        (samples, channel.slot.precise().overruns)
    }

    /// Runs the loop over a script; returns the channel and how it ended.
    fn run_script(
        script: Vec<(i64, i64)>,
        explain: Option<ExplainTrigger>,
        break_threshold: Option<i64>,
    ) -> (ThreadChannel, LoopEnd) {
        let loops = script.len() as u64;
        let mut source = SignallingTimer::new(script);
        let channel = ThreadChannel {
            samples: SampleRing::new(64),
            candidates: explain.and_then(|_| CandidateRing::new()),
            ..ThreadChannel::default()
        };
        let params = LoopParams {
            thread: 0,
            interval: Period::from_nanos(PERIOD_NS),
            wait: WaitMode::PosixTimer {
                armed_relative: false,
            },
            resolution: Resolution::Nanos,
            loops: Some(loops),
            duration: None,
            start: Some(time::from_nanos(-PERIOD_NS)),
            break_threshold,
            spike_trigger: None,
            warmup: None,
            interval_length: None,
            explain,
        };
        let end = measure_alone(&mut source, &params, &channel);
        if break_threshold.is_none() {
            assert_eq!(end, LoopEnd::Loops);
        }
        (channel, end)
    }

    /// The latencies of the samples a run offered for explanation, and
    /// whether each one's deadline and wake-up are `latency` apart.
    fn offered(script: Vec<(i64, i64)>, trigger: ExplainTrigger, brk: Option<i64>) -> Vec<i64> {
        let (channel, _) = run_script(script, Some(trigger), brk);
        let mut offered = Vec::new();
        let mut cursor = crate::candidates::CandidateCursor::default();
        cursor.drain(channel.candidates.as_ref().unwrap(), |c| {
            assert_eq!(c.wake_ns - c.deadline_ns, c.latency_ns);
            offered.push(c.latency_ns);
        });
        offered
    }

    #[test]
    fn each_new_maximum_is_offered_for_explanation() {
        let script = vec![
            (10_000, 0),
            (5_000, 0),
            (30_000, 0),
            (20_000, 0),
            (40_000, 0),
        ];
        assert_eq!(
            offered(script.clone(), ExplainTrigger::NewMaximum, None),
            vec![10_000, 30_000, 40_000]
        );
        assert_eq!(
            offered(script, ExplainTrigger::Above(15_000), None),
            vec![30_000, 20_000, 40_000]
        );
    }

    #[test]
    fn the_break_sample_is_offered_whatever_the_trigger() {
        // -b 25 us, explaining only above 100 us: the break sample (30 us)
        // is offered all the same, and the run ends there.
        let script = vec![(10_000, 0), (30_000, 0), (50_000, 0)];
        let (channel, end) = run_script(
            script.clone(),
            Some(ExplainTrigger::Above(100_000)),
            Some(25_000),
        );
        assert_eq!(end, LoopEnd::Break(30_000));
        assert_eq!(channel.candidates.as_ref().unwrap().offered(), 1);
        assert_eq!(
            offered(script, ExplainTrigger::Above(100_000), Some(25_000)),
            vec![30_000]
        );
    }

    #[test]
    fn a_timer_signal_read_late_does_not_shift_later_deadlines() {
        // The second signal is collected on time, but the clock is read
        // 1.5 periods later (the thread was preempted in between). That
        // sample is 1.5 periods late; the next signal is already pending,
        // so the next sample is half a period late; then all is on time.
        let (samples, overruns) = samples_of(vec![
            (10_000, 0),
            (0, 1_500_000),
            (10_000, 0),
            (10_000, 0),
            (10_000, 0),
        ]);
        assert_eq!(
            samples,
            vec![10_000, 1_500_000, 510_000, 10_000, 10_000],
            "no sample may look early"
        );
        assert_eq!(overruns, 0, "the timer missed no period");
    }

    #[test]
    fn periods_the_timer_missed_are_skipped_and_counted() {
        // The second signal is collected 2.3 periods late: two expiries
        // passed while it was pending (overrun 2).
        let (samples, overruns) =
            samples_of(vec![(10_000, 0), (2_300_000, 0), (10_000, 0), (10_000, 0)]);
        assert_eq!(samples, vec![10_000, 2_300_000, 10_000, 10_000]);
        assert_eq!(overruns, 2);
    }
}
