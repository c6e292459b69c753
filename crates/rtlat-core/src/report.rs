//! The result of a run as plain owned data, for the output formats.
//!
//! A [`RunReport`] is built once, after the measuring threads have stopped.
//! It holds two families of figures per thread:
//! - [`CompatStats`]: computed exactly as cyclictest computes them (each sample
//!   truncated to whole units before min/max/sum), so they compare with the C
//!   tool's numbers;
//! - [`PreciseStats`]: full nanosecond precision, for extended outputs.

use crate::config::{ClockKind, SchedPolicy};
use crate::units::{Nanos, Resolution};

/// Why the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// A thread completed its loop count (`-l`).
    Loops,
    /// A thread's duration elapsed (`-D`).
    Duration,
    /// A stop was requested from outside (signal, closed output).
    Stopped,
    /// A measuring thread failed; see its `error`.
    ThreadError,
    /// A sample exceeded the `-b` threshold; see [`RunReport::break_info`].
    Break,
}

/// Figures in whole units of [`Resolution`], computed as cyclictest does.
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
    /// Periods skipped because a wake-up came later than the next deadline.
    pub overruns: u64,
}

impl PreciseStats {
    /// Mean latency, `None` without samples.
    pub fn mean(&self, cycles: u64) -> Option<f64> {
        (cycles > 0).then(|| self.sum_ns as f64 / cycles as f64)
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

/// One measuring thread's results.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadReport {
    /// Thread number, 0-based.
    pub index: usize,
    /// Kernel thread id (0 if the thread never started).
    pub tid: i32,
    /// Scheduling policy it ran under.
    pub policy: SchedPolicy,
    /// Real-time priority (0 for non-real-time policies).
    pub priority: u8,
    /// Period between deadlines.
    pub interval: Nanos,
    /// CPU it was pinned to, if any.
    pub cpu: Option<usize>,
    /// NUMA node of that CPU, when known.
    pub node: Option<u32>,
    /// System Management Interrupts counted while it measured (`--smi`).
    pub smi_count: Option<u64>,
    /// C-compatible figures.
    pub compat: CompatStats,
    /// Full-precision figures.
    pub precise: PreciseStats,
    /// Histogram, when one was requested.
    pub histogram: Option<HistogramData>,
    /// The errno a failing wait or set-up call returned, if the thread failed.
    pub error: Option<ThreadError>,
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
    /// The sample, in units of [`RunReport::resolution`].
    pub value: i64,
}

/// One recorded spike (`--spike`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpikeRecord {
    /// Thread number.
    pub thread: usize,
    /// The sample, in units of [`RunReport::resolution`].
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

/// Everything a run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// Unit of [`CompatStats`] and histogram buckets.
    pub resolution: Resolution,
    /// Clock the run used.
    pub clock: ClockKind,
    /// Why the run ended.
    pub end: EndReason,
    /// One entry per thread, in index order.
    pub threads: Vec<ThreadReport>,
    /// The sample that broke the run, with `-b`.
    pub break_info: Option<BreakReport>,
    /// The spikes, with `--spike`.
    pub spikes: Option<SpikeReport>,
}
