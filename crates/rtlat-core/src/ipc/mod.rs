//! The IPC hand-off engine of svsematest, pmqtest, ptsematest and
//! sigwaittest.
//!
//! Each *pair* has a receiver and a sender. The sender reads the clock and
//! at once wakes the receiver through the pair's mechanism (a SysV
//! semaphore, a POSIX message, a futex, a signal); the receiver reads the
//! clock as soon as its blocking call returns. The latency is the
//! difference, on CLOCK_MONOTONIC in nanoseconds (the C tools use
//! `gettimeofday` microseconds). The receiver then sleeps for its interval
//! and releases the sender through the same mechanism, which starts the
//! next hand-off: the interval is a gap between measurements, not a period.
//!
//! - `handoff`: THE two loops, generic over the mechanism and over where
//!   results go;
//! - `links`: the mechanisms as loop ends;
//! - `engine`: threads mode (both sides of every pair are threads of this
//!   process, results in [`ThreadSlot`](crate::stats::ThreadSlot)s);
//! - `cells`: fork mode's results in shared memory, for sides that run as
//!   separate processes;
//! - `shared`: what the sides of every pair and their readers share;
//! - `synthetic`: the deterministic seam (no threads, no IPC);
//! - `report`: the results as plain data.
//!
//! The modules are private: what a front end runs and reads is re-exported
//! here ([`PairEngine`], [`PairReport`], [`ForkCells`], …).

pub(crate) mod cells;
pub(crate) mod engine;
pub(crate) mod handoff;
pub(crate) mod links;
pub(crate) mod report;
pub(crate) mod shared;
pub(crate) mod synthetic;

pub use cells::{ForkCells, run_side};
pub use engine::{PairEngine, PairRunning};
pub use handoff::ETIMEDOUT;
pub use report::{PairReport, PairResult, SideResult};

use crate::config::{RunConfig, ThreadPlan};
use crate::units::Nanos;

/// How the two sides of a pair hand off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// svsematest: a private SysV semaphore set, one `semop` per side.
    SysvSemaphore,
    /// pmqtest: two POSIX message queues (test and sync).
    MessageQueue,
    /// ptsematest: two futex binary semaphores (C: mutexes unlocked by a
    /// thread that does not own them).
    Futex,
    /// sigwaittest: SIGUSR2 to the receiver, SIGUSR1 back, both taken with
    /// `sigwaitinfo`.
    Signal,
}

/// Which side of a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Waits, timestamps, records, sleeps, releases (even ID `#2i`).
    Receiver,
    /// Timestamps and wakes the receiver (odd ID `#2i+1`).
    Sender,
}

impl Side {
    /// The name used in messages.
    pub const fn name(self) -> &'static str {
        match self {
            Side::Receiver => "receiver",
            Side::Sender => "sender",
        }
    }
}

/// One pair as it will run: the plan of a measuring thread, whose
/// `interval` is the receiver's sleep between hand-offs (0: none) and whose
/// policy, priority and CPU both sides share.
pub type PairPlan = ThreadPlan;

/// pmqtest's time-outs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MqTimeouts {
    /// `-T`: the receiver gives up waiting after this long.
    pub receive: Nanos,
    /// `-f`: the sender waits this long before each message; the receiver's
    /// time-outs are then counted and the wait retried (without `-f` a
    /// time-out is an error that ends the pair).
    pub force_send_delay: Option<Nanos>,
}

/// A validated IPC run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairConfig {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// The pairs, in index order.
    pub pairs: Vec<PairPlan>,
    /// Loops (hand-offs per side, `-l`), duration (`-D`; real runs: the
    /// caller watches it, synthetic runs: virtual time), unit, clock
    /// source; the receivers' distributions and phases (thread mode only:
    /// fork mode keeps its results in shared cells).
    pub run: RunConfig,
    /// Histogram buckets per receiver (`--histogram`).
    pub histogram: Option<usize>,
    /// `-b`: the run stops at the first latency above this many units.
    pub breaktrace: Option<i64>,
    /// pmqtest `-T` / `-f`.
    pub mq_timeouts: Option<MqTimeouts>,
}

impl PairConfig {
    /// Whether any pair runs under a real-time policy.
    pub fn needs_realtime(&self) -> bool {
        self.pairs.iter().any(|p| p.policy.is_realtime())
    }

    /// The highest priority of any pair.
    pub fn max_priority(&self) -> u8 {
        self.pairs.iter().map(|p| p.priority).max().unwrap_or(0)
    }
}

/// The thread ids synthetic runs report: receiver of pair i gets
/// `SYNTHETIC_ID_BASE + 2i`, its sender the next number.
pub const SYNTHETIC_ID_BASE: i32 = 1000;

/// The message pmqtest's sender sends.
pub const TEST_MESSAGE: &[u8; 7] = b"Testing";
/// The message pmqtest's receiver sends back.
pub const SYNC_MESSAGE: &[u8; 7] = b"Syncing";
