//! The results of an IPC run as plain data: one [`PairResult`] per pair,
//! for the live display (taken while the run goes on) and the final
//! outputs.

use crate::config::SchedPolicy;
use crate::report::{
    BreakReport, CompatStats, Disturbances, EndReason, HistogramData, PreciseStats, ThreadError,
};
use crate::units::{Nanos, Resolution};

/// One side of a pair.
#[derive(Clone, Debug, PartialEq)]
pub struct SideResult {
    /// Kernel thread id (threads mode) or process id (fork mode); 0 before
    /// the side started.
    pub id: i32,
    /// Scheduling policy it ran under.
    pub policy: SchedPolicy,
    /// Real-time priority (0 for non-real-time policies).
    pub priority: u8,
    /// CPU it was pinned to, if any.
    pub cpu: Option<usize>,
    /// C-compatible figures (the receiver's latencies; for the sender only
    /// `cycles`, its hand-off count, means anything).
    pub compat: CompatStats,
    /// Full-precision figures (receiver).
    pub precise: PreciseStats,
    /// Why the side stopped with an error, if it did.
    pub error: Option<ThreadError>,
    /// What disturbed the side between its first and last hand-off, once
    /// it has left its loop (real runs only).
    pub disturbances: Option<Disturbances>,
    /// The side has left its loop (normally or not).
    pub ended: bool,
}

/// One pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PairResult {
    /// Pair number, 0-based.
    pub index: usize,
    /// The receiver's sleep between hand-offs.
    pub interval: Nanos,
    /// The receiver: latencies.
    pub receiver: SideResult,
    /// The sender: hand-off count.
    pub sender: SideResult,
    /// pmqtest: time-outs counted by the receiver (`-f`).
    pub timeouts: u64,
    /// The receiver's histogram (`--histogram`; final reports only).
    pub histogram: Option<HistogramData>,
    /// The receiver's full distribution (final reports only; not in fork
    /// mode).
    pub distribution: Option<crate::distribution::Distribution>,
    /// The receiver's figures per phase (`--load-schedule`; final reports
    /// only, thread mode).
    pub phases: Vec<crate::phase::PhaseReport>,
}

/// Everything an IPC run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct PairReport {
    /// Unit of the C-compatible figures and histogram buckets.
    pub resolution: Resolution,
    /// Why the run ended.
    pub end: EndReason,
    /// The pairs, in index order.
    pub pairs: Vec<PairResult>,
    /// The sample that broke the run (`-b`); `thread` is the pair number.
    pub break_info: Option<BreakReport>,
}

impl PairReport {
    /// The first side that failed: (pair, side, error).
    pub fn first_error(&self) -> Option<(usize, super::Side, ThreadError)> {
        self.pairs.iter().find_map(|p| {
            p.receiver
                .error
                .map(|e| (p.index, super::Side::Receiver, e))
                .or_else(|| p.sender.error.map(|e| (p.index, super::Side::Sender, e)))
        })
    }
}

/// The end reason of a run whose sides stopped by themselves (or were
/// stopped: `external`), from the sides' states.
pub(crate) fn end_reason(
    external: Option<EndReason>,
    failed: bool,
    broke: bool,
    looped: bool,
) -> EndReason {
    if failed {
        EndReason::ThreadError
    } else if broke {
        EndReason::Break
    } else if let Some(reason) = external {
        reason
    } else if looped {
        EndReason::Loops
    } else {
        EndReason::Stopped
    }
}
