//! One thread of `rtlat signaltest --json` (the `"thread"` object's
//! members): C's keys first, in C's order, then rtlat's.

use serde::Serialize;

use crate::document::{Disturbances, Histogram};

/// One signaltest thread.
#[derive(Clone, Debug, Serialize)]
pub struct SignalThreadDto {
    /// Samples taken.
    pub cycles: u64,
    /// The smallest, as C shows it (1000000 before the first sample).
    pub min: i64,
    /// The largest, as C shows it (-1000000 before the first sample).
    pub max: i64,
    /// `%.2f` of the exact average; `null` without samples (C: `-nan`).
    pub avg: Option<f64>,
    /// The thread's own CPU, -1 when not pinned (C: thread 0's for all).
    pub cpu: i64,
    /// The smallest, ns.
    pub min_ns: Option<i64>,
    /// The largest, ns.
    pub max_ns: Option<i64>,
    /// The mean, ns (1 decimal).
    pub mean_ns: Option<f64>,
    /// The thread's id.
    pub tid: i32,
    /// Its real-time priority.
    pub priority: u8,
    /// The non-zero buckets of `-h`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
    /// What disturbed it (real runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbances: Option<Disturbances>,
    /// When its largest sample was taken: Unix seconds, 6 decimals.
    pub max_time: Option<f64>,
}
