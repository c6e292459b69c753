//! The validated configuration of a cyclic (timer wake-up) run.
//!
//! Front ends (the cyclictest-compatible command line, later others) parse
//! their own syntax and build these types; the engine only ever sees values
//! that are already checked. Nothing here knows about command-line spelling.

use crate::distribution::DistributionPlan;
use crate::phase::PhasePlan;
use crate::units::{Nanos, Resolution};
pub use rtlat_base::TimeSourceKind;

/// The clock the deadlines are set on and read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockKind {
    /// CLOCK_MONOTONIC (cyclictest `-c 0`, the default).
    #[default]
    Monotonic,
    /// CLOCK_REALTIME (cyclictest `-c 1`).
    Realtime,
}

/// A Linux scheduling policy for the measuring threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchedPolicy {
    /// SCHED_OTHER, the default time-sharing policy.
    #[default]
    Other,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE.
    Idle,
    /// SCHED_FIFO, real-time first-in first-out.
    Fifo,
    /// SCHED_RR, real-time round robin.
    RoundRobin,
}

impl SchedPolicy {
    /// Whether this is a real-time policy that takes a priority 1..=99.
    pub const fn is_realtime(self) -> bool {
        matches!(self, SchedPolicy::Fifo | SchedPolicy::RoundRobin)
    }

    /// The name cyclictest prints in its `policy:` header.
    pub const fn name(self) -> &'static str {
        match self {
            SchedPolicy::Other => "other",
            SchedPolicy::Batch => "batch",
            SchedPolicy::Idle => "idle",
            SchedPolicy::Fifo => "fifo",
            SchedPolicy::RoundRobin => "rr",
        }
    }
}

/// How a measuring thread waits for its next period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WaitMode {
    /// `clock_nanosleep(TIMER_ABSTIME)` on an absolute deadline (default).
    #[default]
    Absolute,
    /// `clock_nanosleep` for one interval from the time read before the
    /// sleep (cyclictest `-r`).
    Relative,
    /// Plain `nanosleep` for one interval from the time read before the
    /// sleep (cyclictest `-s`).
    Nanosleep,
    /// A per-thread periodic POSIX timer delivering a signal to the thread,
    /// collected with `sigwaitinfo` (cyclictest `-x`). The deadlines are
    /// absolute; with `-r` the timer is armed relatively, as C does.
    PosixTimer {
        /// First expiry armed as a relative time (`-x -r`).
        armed_relative: bool,
    },
    /// A per-thread periodic `timerfd` armed on the absolute first
    /// deadline, waited for with a blocking `read` (`--wait timerfd`);
    /// expirations beyond one per read are overruns.
    Timerfd,
    /// `std::thread::sleep` for what is left until the absolute deadline
    /// (`--wait std-sleep`): what a plain Rust program gets.
    StdSleep,
    /// Spin reading the clock until the deadline (`--wait busy`): no system
    /// call; the latency shows preemption, not wake-up.
    Busy,
}

impl WaitMode {
    /// The `--wait` name of this mode.
    pub const fn name(self) -> &'static str {
        match self {
            WaitMode::Absolute => "abs",
            WaitMode::Relative => "rel",
            WaitMode::Nanosleep => "nanosleep",
            WaitMode::PosixTimer { .. } => "posix-timer",
            WaitMode::Timerfd => "timerfd",
            WaitMode::StdSleep => "std-sleep",
            WaitMode::Busy => "busy",
        }
    }

    /// Whether the deadlines stay one interval apart whatever the wake-up
    /// times (absolute modes), rather than restarting from each wake-up.
    pub const fn is_periodic(self) -> bool {
        !matches!(self, WaitMode::Relative | WaitMode::Nanosleep)
    }
}

/// How the wake-up time is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MeasureMode {
    /// The run's clock, read through the vDSO (default).
    #[default]
    Clock,
    /// The x86_64 time-stamp counter, converted to the run's clock with a
    /// ratio calibrated at the start (`--measure tsc`).
    Tsc,
    /// The timer's own time left to its next expiry, read with
    /// `timerfd_gettime` right after the wake-up (`--measure timer`, only
    /// with [`WaitMode::Timerfd`]).
    Timer,
}

impl MeasureMode {
    /// The `--measure` name of this mode.
    pub const fn name(self) -> &'static str {
        match self {
            MeasureMode::Clock => "clock",
            MeasureMode::Tsc => "tsc",
            MeasureMode::Timer => "timer",
        }
    }
}

/// `-b`: stop the run at the first sample above a threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakPlan {
    /// A sample strictly above this many units breaks the run.
    pub threshold: i64,
}

/// `--spike`: record every sample above a trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpikePlan {
    /// A sample strictly above this many units is a spike.
    pub trigger: i64,
    /// How many spikes are kept (all of them are counted).
    pub capacity: usize,
}

/// A common start time for all threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alignment {
    /// `-A`: thread 0 reads the clock once all threads are ready; thread `i`
    /// starts at that time + `i * offset`.
    Threads {
        /// Offset between consecutive threads.
        offset: Nanos,
    },
    /// `--secaligned`: every thread starts at the next full second (the one
    /// after, if less than 0.1 s is left) + `offset`.
    NextSecond {
        /// Offset added for every thread.
        offset: Nanos,
    },
}

/// One measuring thread as it will run (also an IPC pair: [`crate::ipc::PairPlan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    /// Thread number, 0-based (the `T:` column).
    pub index: usize,
    /// Period between deadlines.
    pub interval: Nanos,
    /// Scheduling policy applied to the thread.
    pub policy: SchedPolicy,
    /// Real-time priority (0 for non-real-time policies).
    pub priority: u8,
    /// CPU the thread is pinned to, if any.
    pub cpu: Option<usize>,
}

/// Histogram settings shared by all threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramPlan {
    /// Number of one-unit buckets (`-h US`); larger samples are overflows.
    pub buckets: usize,
}

/// Per-interval figures: each thread seals its minimum, mean, maximum and
/// overruns every `length` into a ring of `ring` intervals for a reader
/// (`latency`'s per-second lines, cyclictest's `--stats-interval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalPlan {
    /// Length of one interval.
    pub length: Nanos,
    /// How many sealed intervals are kept for a reader that falls behind.
    pub ring: usize,
}

/// A histogram of signed nanosecond samples (`latency`'s `-H`, `-B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignedHistogramPlan {
    /// Bucket width.
    pub width: Nanos,
    /// Buckets on each side of zero.
    pub per_side: usize,
}

/// What every measuring run is given, whatever its engine: when it ends,
/// in which unit it counts, on which clock, and what it keeps beyond the
/// running figures. Embedded in [`CyclicConfig`] and the IPC tools'
/// `PairConfig`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// Each thread stops after this many samples; the run stops when the
    /// first thread gets there. `None`: no limit.
    pub loops: Option<u64>,
    /// The run stops once this much time has passed since its start.
    /// `None`: no limit.
    pub duration: Option<Nanos>,
    /// Unit of the C-compatible figures and histogram buckets.
    pub resolution: Resolution,
    /// Real clock or the deterministic synthetic one.
    pub source: TimeSourceKind,
    /// The full distribution of every measuring thread (percentiles,
    /// plots, gates), if kept.
    pub distribution: Option<DistributionPlan>,
    /// Per-phase figures (`--load-schedule`), if requested. Phases start
    /// after any warm-up.
    pub phases: Option<PhasePlan>,
}

impl Default for RunConfig {
    /// No loop count or duration limit, whole microseconds, the real
    /// clock, nothing kept beyond the running figures.
    fn default() -> Self {
        RunConfig {
            loops: None,
            duration: None,
            resolution: Resolution::Micros,
            source: TimeSourceKind::Real,
            distribution: None,
            phases: None,
        }
    }
}

/// Everything the engine needs to run the measuring threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CyclicConfig {
    /// The threads, in index order. Never empty.
    pub threads: Vec<ThreadPlan>,
    /// Loops, duration, unit, clock source, distribution and phases.
    pub run: RunConfig,
    /// Clock for deadlines and wake-up timestamps.
    pub clock: ClockKind,
    /// How the threads wait for their deadlines.
    pub wait: WaitMode,
    /// How the wake-up time is read.
    pub measure: MeasureMode,
    /// Per-thread histogram, if requested.
    pub histogram: Option<HistogramPlan>,
    /// Keep a ring of recent samples per thread for a verbose printer.
    pub sample_ring: bool,
    /// `-b`, if given.
    pub breaktrace: Option<BreakPlan>,
    /// `--spike`, if given.
    pub spikes: Option<SpikePlan>,
    /// `-A` / `--secaligned`, if given.
    pub alignment: Option<Alignment>,
    /// `--smi`: count System Management Interrupts per thread (needs
    /// pinned threads).
    pub smi: bool,
    /// Samples whose deadline falls within this time after the start are
    /// taken but not recorded anywhere (`latency`'s warm-up second).
    pub warmup: Option<Nanos>,
    /// Per-interval figures, if requested. Intervals start after the
    /// warm-up.
    pub intervals: Option<IntervalPlan>,
    /// Signed nanosecond histogram, if requested.
    pub signed_histogram: Option<SignedHistogramPlan>,
    /// `latency -f`: at every new maximum after the warm-up, mark and
    /// freeze the kernel trace (needs the trace files of the engine).
    pub freeze_on_max: bool,
    /// `--explain`: which samples each thread offers for explanation.
    pub explain: Option<crate::candidates::ExplainTrigger>,
}

/// Capacity of the per-thread ring of recent samples kept for `-v`.
pub const SAMPLE_RING_LEN: usize = 16_384;

impl CyclicConfig {
    /// A run of `threads` with cyclictest's defaults for everything else:
    /// CLOCK_MONOTONIC, absolute sleeps, whole microseconds, no loop count
    /// or duration limit, no histogram, no extras, the real clock.
    pub fn new(threads: Vec<ThreadPlan>) -> CyclicConfig {
        CyclicConfig {
            threads,
            run: RunConfig::default(),
            clock: ClockKind::Monotonic,
            wait: WaitMode::Absolute,
            measure: MeasureMode::Clock,
            histogram: None,
            sample_ring: false,
            breaktrace: None,
            spikes: None,
            alignment: None,
            smi: false,
            warmup: None,
            intervals: None,
            signed_histogram: None,
            freeze_on_max: false,
            explain: None,
        }
    }

    /// Whether any thread runs under a real-time policy.
    pub fn needs_realtime(&self) -> bool {
        self.threads.iter().any(|t| t.policy.is_realtime())
    }

    /// The highest priority any thread asks for.
    pub fn max_priority(&self) -> u8 {
        self.threads.iter().map(|t| t.priority).max().unwrap_or(0)
    }
}
