//! One thread of `rtlat cyclicdeadline --json` (the `"thread"` object's
//! members): C's keys first, in C's order, then rtlat's.

use serde::Serialize;

use crate::document::{Distribution, Disturbances, Histogram, Percentiles};

/// One cyclicdeadline thread.
#[derive(Clone, Debug, Serialize)]
pub struct DeadlineThreadDto {
    /// With `--histogram` (rt-tests 2.7's, first as there): the non-empty
    /// one-µs buckets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
    /// Jobs measured.
    pub cycles: u64,
    /// The smallest lateness, µs (0 before the first job, as C).
    pub min: i64,
    /// The largest lateness, µs (0 before the first job, as C).
    pub max: i64,
    /// `%.2f` of the exact average; `null` without samples (C: `-nan`).
    pub avg: Option<f64>,
    /// The smallest, ns.
    pub min_ns: Option<i64>,
    /// The largest, ns.
    pub max_ns: Option<i64>,
    /// The mean, ns (1 decimal).
    pub mean_ns: Option<f64>,
    /// The thread's id.
    pub tid: i32,
    /// Its deadline and period, µs (C's `I:`).
    pub interval_us: i64,
    /// Its exact percentiles, µs (for `rtlat compare`).
    pub percentiles: Option<Percentiles>,
    /// Its full distribution (for `rtlat plot` and `compare`).
    pub distribution: Option<Distribution>,
    /// What disturbed it (real runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbances: Option<Disturbances>,
    /// When its largest sample was taken: Unix seconds, 6 decimals.
    pub max_time: Option<f64>,
}
