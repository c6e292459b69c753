//! The result of a run as plain owned data, for the output formats.
//!
//! A [`RunReport`] is built once, after the measuring threads have stopped:
//! one [`ThreadReport`] per thread, with its figures (the crate's figure
//! types, re-exported here) and its distributions, read in place.

use crate::config::{ClockKind, SchedPolicy};
use crate::units::{ClockInstant, Nanos, Resolution};

pub use crate::figures::{
    BreakReport, CompatStats, Disturbances, HistogramData, PreciseStats, SignedHistogramData,
    SpikeRecord, SpikeReport, ThreadError, ThreadStep, sample_stddev,
};

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
    /// When the largest sample (`precise.max`) was taken, on the run's
    /// clock: its deadline in cyclic runs (cyclictest, latency), its
    /// reception in the signal ring; the first of equal largest samples.
    /// `None` without samples, and for the IPC tools (whose reports do
    /// not carry it).
    pub max_at: Option<ClockInstant>,
    /// Histogram, when one was requested.
    pub histogram: Option<HistogramData>,
    /// The signed nanosecond histogram (`latency`), if one was kept.
    pub signed_histogram: Option<SignedHistogramData>,
    /// The full distribution, if one was kept.
    pub distribution: Option<crate::distribution::Distribution>,
    /// Each phase's figures (`--load-schedule`), in order; empty without
    /// phases.
    pub phases: Vec<crate::phase::PhaseReport>,
    /// The errno a failing wait or set-up call returned, if the thread failed.
    pub error: Option<ThreadError>,
    /// What disturbed the thread between its first and last sample, where
    /// it was counted.
    pub disturbances: Option<Disturbances>,
    /// `--explain`: the thread's wake-ups split as the kernel events show
    /// them: IRQ latency (programmed expiry to the timer's handler) and
    /// thread latency (wake-up to the switch into the thread).
    pub wakeup_latencies: Option<WakeupLatencies>,
}

/// A thread's IRQ and thread latencies over a run, from kernel events
/// (`--explain`).
#[derive(Clone, Debug, PartialEq)]
pub struct WakeupLatencies {
    /// Programmed expiry to the start of the timer's handler.
    pub irq_latency: crate::distribution::Distribution,
    /// The thread's wake-up (`sched_waking`) to the switch into it.
    pub thread_latency: crate::distribution::Distribution,
    /// Wake-ups followed from the timer's handler to a traced switch into
    /// the thread (those in `thread_latency`).
    pub switch_traced: u64,
    /// Wake-ups whose switch into the thread was not traced (some kernels
    /// record none out of idle): in `irq_latency` only.
    pub switch_not_traced: u64,
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

impl RunReport {
    /// All threads' samples as one: their total count and their combined
    /// full-precision figures (the sum of squares only when every thread
    /// kept one).
    pub fn all_threads_precise(&self) -> (u64, PreciseStats) {
        let threads = &self.threads;
        let cycles = threads.iter().map(|t| t.compat.cycles).sum();
        let precise = PreciseStats {
            min: threads.iter().filter_map(|t| t.precise.min).min(),
            max: threads.iter().filter_map(|t| t.precise.max).max(),
            sum_ns: threads.iter().map(|t| t.precise.sum_ns).sum(),
            sum_sq_ns: threads.iter().map(|t| t.precise.sum_sq_ns).sum(),
            overruns: threads.iter().map(|t| t.precise.overruns).sum(),
        };
        (cycles, precise)
    }

    /// The distributions of all threads merged into one; `None` when a
    /// thread kept none.
    pub fn merged_distribution(&self) -> Option<crate::distribution::Distribution> {
        let mut threads = self.threads.iter().map(|t| t.distribution.as_ref());
        let mut merged = threads.next()??.clone();
        for d in threads {
            merged.merge(d?);
        }
        Some(merged)
    }
}
