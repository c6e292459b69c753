//! rtlat's measuring engine.
//!
//! A front end builds a validated [`CyclicConfig`], the [`Engine`] runs the
//! measuring threads under it, live readers look at the shared per-thread
//! [`ThreadChannel`]s while it runs, and the run ends in a [`RunReport`] of
//! plain data for the output formats.
//!
//! # The facade
//!
//! The modules are private; what a front end (the `rtlat` binary) or an
//! embedding program uses is named here:
//!
//! - at the crate root: the cyclic engine and everything it takes and
//!   gives (configuration, per-thread slots and channels, distributions,
//!   phases, intervals, the report, the footprint check), the signal ring
//!   (`Ring*`), the units and CPU lists (from `rtlat-base`) and `time`'s
//!   arithmetic on `timespec` values as cyclictest does it;
//! - [`ipc`]: the IPC pairs (svsematest, pmqtest, ptsematest,
//!   sigwaittest), a facade over its own private modules;
//! - [`load`]: background load and its phases, also a facade;
//! - [`helper`] and [`janitor`]: the processes this binary starts again as
//!   helpers, and the janitor that cleans up after a killed run.
//!
//! `hot_loops` (hidden) opens the loops' parts to this crate's own tests
//! of their promises (no allocation, no lock); no program needs it.
//!
//! Inside, the modules are layered, each using only those below it: the
//! units; the figures (plain records) and the distributions; a thread's
//! slot of running figures; phases and intervals; the configuration; the
//! per-thread channels; the report; then the engines (cyclic threads, the
//! signal ring, the IPC pairs), the loads and the footprint check.
//!
//! The crate has no `unsafe` code: everything that touches the kernel goes
//! through `rtlat-sys`.
//!
//! # Measuring latency in your own loop
//!
//! A program with a periodic loop of its own can keep cyclictest's figures
//! and a full distribution of its lateness: a [`ThreadSlot`] holds the
//! running figures (another thread may read them while the loop runs) and
//! a [`LatencyHistogram`] every sample. Neither allocates or locks once
//! made.
//!
//! ```
//! use std::time::{Duration, Instant};
//!
//! use rtlat_core::{DistributionPlan, LatencyHistogram, Nanos, SlotWriter, ThreadSlot};
//!
//! let slot = ThreadSlot::default();
//! let mut writer = SlotWriter::new(&slot);
//! // 1 µs buckets up to 2 ms, log-linear beyond.
//! let plan = DistributionPlan::new(1_000, Nanos::ZERO).expect("a valid plan");
//! let histogram = LatencyHistogram::new(plan).expect("memory for the buckets");
//!
//! let period = Duration::from_micros(200);
//! let start = Instant::now();
//! let mut deadline = start + period;
//! for _ in 0..300 {
//!     std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
//!     let late_ns = Instant::now().duration_since(deadline).as_nanos() as i64;
//!     // Whole microseconds as cyclictest counts them, the nanoseconds, and
//!     // when (here the deadline, ns since the start), asked for only when
//!     // the sample is the largest yet: the slot keeps its time.
//!     let at_ns = || deadline.duration_since(start).as_nanos() as i64;
//!     writer.record(late_ns / 1_000, late_ns, at_ns);
//!     histogram.record(late_ns);
//!     deadline += period;
//! }
//! writer.finish();
//!
//! let compat = slot.compat();
//! let precise = slot.precise();
//! let distribution = histogram.snapshot(precise.min, precise.max);
//! assert_eq!(compat.cycles, 300);
//! assert_eq!(distribution.count(), 300);
//! assert!(compat.min <= compat.avg_truncated() && compat.avg_truncated() <= compat.max);
//! let p99 = distribution.value_at(0.99).expect("samples");
//! assert!(precise.min.unwrap() <= p99 && p99 <= precise.max.unwrap());
//! let max_at = slot.max_at().expect("samples").as_nanos();
//! assert!(max_at > 0 && max_at <= 300 * 200_000);
//! println!("min {} avg {} max {} us, p99 {p99:?}", compat.min, compat.avg_truncated(), compat.max);
//! ```
//!
//! # Running the engine
//!
//! The engine runs cyclictest's measuring threads itself; without a
//! real-time policy it needs no privilege.
//!
//! ```
//! use rtlat_core::{CyclicConfig, Engine, EndReason, Nanos, RunConfig, SchedPolicy, ThreadPlan};
//!
//! let thread = ThreadPlan {
//!     index: 0,
//!     interval: Nanos::from_micros(500),
//!     policy: SchedPolicy::Other,
//!     priority: 0,
//!     cpu: None,
//! };
//! let config = CyclicConfig {
//!     run: RunConfig {
//!         loops: Some(200),
//!         ..RunConfig::default()
//!     },
//!     ..CyclicConfig::new(vec![thread])
//! };
//! let running = Engine::new(config).expect("buffers").start().expect("threads");
//! while !running.reached_end() {
//!     std::thread::sleep(std::time::Duration::from_millis(5));
//! }
//! let report = running.finish(false);
//! assert_eq!(report.end, EndReason::Loops);
//! assert_eq!(report.threads[0].compat.cycles, 200);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod buffers;
mod candidates;
mod config;
pub mod deadline;
pub mod deadline_work;
mod distribution;
mod engine;
mod figures;
mod footprint;
pub mod hackbench;
pub mod helper;
mod interval;
pub mod inversion;
pub mod ipc;
pub mod janitor;
pub mod load;
pub mod migrate;
pub mod oslat;
mod phase;
pub mod pip;
pub mod queuelat;
mod report;
mod ring;
mod slot;
mod stats;
use rtlat_base::units;

pub use candidates::{CandidateCursor, CandidateRing, ExplainTrigger};
pub use config::{
    Alignment, BreakPlan, ClockKind, CyclicConfig, HistogramPlan, IntervalPlan, MeasureMode,
    RunConfig, SAMPLE_RING_LEN, SchedPolicy, SignedHistogramPlan, SpikePlan, ThreadPlan, WaitMode,
};
pub use distribution::{
    Distribution, DistributionPlan, LatencyHistogram, STANDARD_PERCENTILES, SUB_BUCKETS,
    SparseCounts,
};
pub use engine::source::{SYNTHETIC_START, WaitError};
pub use engine::time;
pub use engine::{Engine, EngineError, Running, Shared, THREAD_STACK_BYTES, sys_clock, sys_policy};
pub use figures::{CompatStats, PreciseStats};
pub use footprint::Footprint;
pub use interval::{IntervalLog, IntervalReader, IntervalRecord, IntervalWriter};
pub use phase::{PhaseLog, PhasePlan, PhaseReport};
pub use report::{
    BreakReport, Disturbances, EndReason, HistogramData, RunReport, SignedHistogramData,
    SpikeRecord, SpikeReport, ThreadError, ThreadReport, ThreadStep, WakeupLatencies,
    sample_stddev,
};
pub use ring::port::SYNTHETIC_RING_START;
pub use ring::{
    C_PACING, RingConfig, RingEngine, RingError, RingRunning, RingShared, RingThreadPlan,
};
pub use rtlat_base::{Bytes, ClockInstant, Nanos, Resolution, RtTests, TimeSourceKind};
pub use rtlat_base::{format_cpu_list, parse_cpu_list};
pub use slot::{SlotWriter, ThreadSlot};
pub use stats::{Histogram, LoopEnd, SampleRing, SignedHistogram, SpikeLog, Tally, ThreadChannel};

/// The hot loops' parts, for this crate's own tests of their promises (no
/// allocation, no lock, one system call a cycle: `tests/no_alloc*.rs`),
/// which drive a loop without an engine around it. No program needs them;
/// they are not part of the facade.
#[doc(hidden)]
pub mod hot_loops {
    pub use crate::engine::{cyclic, source};
    pub use crate::ipc::engine::{CountSink, SlotSink};
    pub use crate::ring::{port, relay};

    /// The IPC pairs' two loops ([`crate::ipc`]'s `handoff`).
    pub mod handoff {
        pub use crate::ipc::handoff::*;
    }

    /// The IPC mechanisms as loop ends ([`crate::ipc`]'s `links`).
    pub mod links {
        pub use crate::ipc::links::*;
    }
}

impl helper::HelperRole {
    /// Does the role's job; returns the exit status. (Here, above the
    /// modules that do the jobs, which start their helpers through
    /// [`helper`].)
    pub fn run(self, parent: i32) -> u8 {
        rtlat_sys::system::set_thread_name(self.argv0());
        match self {
            helper::HelperRole::ForkLoad => load::fork_helper_main(parent),
            helper::HelperRole::Janitor => janitor::janitor_main(parent),
            helper::HelperRole::Workload => load::workload_helper_main(parent),
            helper::HelperRole::HackbenchLoad => load::hackbench_helper_main(parent),
        }
    }
}
