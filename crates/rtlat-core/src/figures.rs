//! The figures of a run, as plain data: the lowest layer of the crate's
//! results, which every other module may use and which uses none of them
//! but the units.
//!
//! - [`CompatStats`]: computed exactly as cyclictest computes them (each
//!   sample truncated to whole units before min/max/sum), so they compare
//!   with the C tool's numbers;
//! - [`PreciseStats`]: full nanosecond precision, for extended outputs;
//! - the histograms' data, what disturbed or stopped a thread, and the
//!   records of `-b` breaks and `--spike` spikes.

use crate::units::Nanos;

/// Figures in whole units of the run's resolution, computed as cyclictest
/// does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompatStats {
    /// Samples taken.
    pub cycles: u64,
    /// Smallest sample; meaningless when `cycles == 0`.
    pub min: i64,
    /// Largest sample; meaningless when `cycles == 0`.
    pub max: i64,
    /// Last sample (0 before the first).
    pub act: i64,
    /// Sum of the truncated samples.
    pub sum: i64,
}

impl CompatStats {
    /// The average as cyclictest displays it: `sum / cycles` truncated, 0
    /// without samples.
    pub fn avg_truncated(&self) -> i64 {
        if self.cycles == 0 {
            0
        } else {
            self.sum / self.cycles as i64
        }
    }

    /// The unrounded average (`sum / cycles`), `None` without samples.
    pub fn avg(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.sum as f64 / self.cycles as f64)
    }

    /// `min` as cyclictest shows it: 1000000 before the first sample.
    pub fn min_shown(&self) -> i64 {
        if self.cycles == 0 {
            1_000_000
        } else {
            self.min
        }
    }

    /// `max` as cyclictest shows it: 0 before the first sample.
    pub fn max_shown(&self) -> i64 {
        if self.cycles == 0 { 0 } else { self.max }
    }
}

/// Full-precision figures in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreciseStats {
    /// Smallest latency; `None` without samples.
    pub min: Option<Nanos>,
    /// Largest latency; `None` without samples.
    pub max: Option<Nanos>,
    /// Sum of all latencies in nanoseconds.
    pub sum_ns: i128,
    /// Sum of all squared latencies in ns², once the thread has left its
    /// loop; `None` where the tool does not keep it.
    pub sum_sq_ns: Option<u128>,
    /// Periods skipped because a wake-up came later than the next deadline.
    pub overruns: u64,
}

impl PreciseStats {
    /// Mean latency, `None` without samples.
    pub fn mean(&self, cycles: u64) -> Option<f64> {
        (cycles > 0).then(|| self.sum_ns as f64 / cycles as f64)
    }

    /// Sample standard deviation in ns (divided by n − 1), `None` without
    /// samples or without the sum of squares.
    pub fn stddev(&self, cycles: u64) -> Option<f64> {
        sample_stddev(cycles, self.sum_ns, self.sum_sq_ns?)
    }
}

/// The sample standard deviation (divided by n − 1; 0 for one sample) of
/// `n` values whose sum is `sum` and sum of squares `sum_sq`; `None` for no
/// value. The squared deviations are summed exactly in 128-bit integers
/// before the one division, so a small spread around a large mean loses
/// nothing to cancellation.
pub fn sample_stddev(n: u64, sum: i128, sum_sq: u128) -> Option<f64> {
    match n {
        0 => None,
        1 => Some(0.0),
        _ => {
            let n = n as i128;
            // Σ(x − mean)² = Σx² − (Σx)²/n, with the division rounded down
            // (an error below 1 ns² in total).
            let correction = (sum.unsigned_abs() * sum.unsigned_abs()) / n as u128;
            let squared_deviations = sum_sq.saturating_sub(correction);
            Some((squared_deviations as f64 / (n - 1) as f64).sqrt())
        }
    }
}

/// A per-thread histogram of one-unit buckets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistogramData {
    /// `buckets[v]` counts samples of exactly `v` units.
    pub buckets: Vec<u64>,
    /// Samples outside `0..buckets.len()`.
    pub overflows: u64,
    /// Cycle numbers (0-based) of the first overflows; at most
    /// `buckets.len()` entries are kept, as in cyclictest.
    pub overflow_cycles: Vec<u64>,
}

impl HistogramData {
    /// Samples inside the bucket range.
    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }
}

/// A histogram of signed nanosecond samples in buckets of a fixed width:
/// bucket `i` holds `[ (first + i) × width, (first + i + 1) × width )`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignedHistogramData {
    /// Bucket width in ns.
    pub width_ns: i64,
    /// Bucket number (in widths from 0) of `buckets[0]`; negative when the
    /// range reaches below zero.
    pub first: i64,
    /// Sample counts.
    pub buckets: Vec<u64>,
    /// Samples below the first bucket.
    pub below: u64,
    /// Samples at or above the end of the last bucket.
    pub above: u64,
}

impl SignedHistogramData {
    /// Bucket numbers (in widths from 0) with their counts, lowest first.
    pub fn numbered(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .map(move |(i, &count)| (self.first + i as i64, count))
    }
}

/// What disturbed one measuring thread between its first and last sample,
/// read by the thread itself just before its first wait and just after
/// its last sample (never inside the loop).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Disturbances {
    /// Involuntary context switches (`getrusage(RUSAGE_THREAD)` `ru_nivcsw`).
    pub involuntary_switches: u64,
    /// Moves to another CPU (`se.nr_migrations` of
    /// `/proc/thread-self/sched`); `None` where that file is absent.
    pub migrations: Option<u64>,
    /// Minor page faults (`ru_minflt`).
    pub minor_faults: u64,
    /// Major page faults (`ru_majflt`).
    pub major_faults: u64,
}

/// What stopped a measuring thread with an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadError {
    /// The step that failed.
    pub step: ThreadStep,
    /// The errno it returned.
    pub errno: i32,
}

/// A step of a measuring thread that can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadStep {
    /// Pinning to the CPU.
    Affinity,
    /// Setting the scheduling policy and priority.
    Scheduler,
    /// Waiting for the next deadline.
    Wait,
    /// Reading the SMI counter (`--smi`).
    SmiCounter,
    /// Creating or arming its POSIX timer (`-x`).
    Timer,
}

impl ThreadStep {
    /// The step as a thread publishes it in a shared cell (0: no error).
    pub(crate) const fn code(self) -> u8 {
        match self {
            ThreadStep::Affinity => 1,
            ThreadStep::Scheduler => 2,
            ThreadStep::Wait => 3,
            ThreadStep::SmiCounter => 4,
            ThreadStep::Timer => 5,
        }
    }

    /// The step a [`ThreadStep::code`] stands for; `None` for 0 (no error)
    /// or anything else.
    pub(crate) const fn from_code(code: u64) -> Option<ThreadStep> {
        Some(match code {
            1 => ThreadStep::Affinity,
            2 => ThreadStep::Scheduler,
            3 => ThreadStep::Wait,
            4 => ThreadStep::SmiCounter,
            5 => ThreadStep::Timer,
            _ => return None,
        })
    }
}

/// The sample that broke the run (`-b`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakReport {
    /// Thread number of the first thread that went over the threshold.
    pub thread: usize,
    /// Its kernel thread id.
    pub tid: i32,
    /// The sample, in units of run's resolution.
    pub value: i64,
}

/// One recorded spike (`--spike`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpikeRecord {
    /// Thread number.
    pub thread: usize,
    /// The sample, in units of run's resolution.
    pub value: i64,
    /// Wake-up time on the run's clock, in whole microseconds.
    pub timestamp_us: i64,
}

/// The spikes of a run, in recording order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpikeReport {
    /// The first spikes, up to the `--spike-nodes` capacity.
    pub recorded: Vec<SpikeRecord>,
    /// Every spike, recorded or not.
    pub total: u64,
}
