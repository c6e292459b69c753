//! `rtlat oslat --json`'s own members: oslat 2.4's `num_threads` and
//! `thread` object, each thread with C's keys first, in C's order, then
//! rtlat's; then the run's `counter` and `load`.

use serde::Serialize;

use crate::load::{LoadDto, Numbered};

/// The members after the envelope.
#[derive(Clone, Debug, Serialize)]
pub struct OslatMembers<'a> {
    /// Threads measured.
    pub num_threads: usize,
    /// One object per thread, `"0"`, `"1"`, ...
    pub thread: Numbered<OslatThreadDto>,
    /// The house's percentiles of every thread's gaps together, µs.
    pub all_threads: Option<crate::document::Percentiles>,
    /// What the threads read: `tsc`, `cntvct_el0` or `clock_monotonic`.
    pub counter: &'static str,
    /// The bias of `-B` (0 without it), in µs, or in ns with a `-W` not
    /// in whole µs (as the thread's `min`).
    pub bias: u64,
    /// `--load`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadDto<'a>>,
}

/// Buckets under their labels, in order: `{"<label>": count, ...}`.
#[derive(Clone, Debug, Default)]
pub struct Labelled(pub Vec<(String, u64)>);

impl Serialize for Labelled {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (label, count) in &self.0 {
            map.serialize_entry(label, count)?;
        }
        map.end()
    }
}

/// One oslat thread.
#[derive(Clone, Debug, Serialize)]
pub struct OslatThreadDto {
    /// Its CPU.
    pub cpu: usize,
    /// The counter's frequency, whole MHz (C's ticks per µs).
    pub freq: u64,
    /// The smallest gap, C's figure: µs (2.4: `gap / MHz + 1`), ns with
    /// a `-W` not in whole µs.
    pub min: u64,
    /// C's average, µs (6 decimals, as C's `%lf`); `null` without gaps.
    pub avg: Option<f64>,
    /// The largest gap, C's figure (as `min`).
    pub max: u64,
    /// Seconds the loop ran (3 decimals).
    pub duration: f64,
    /// C's non-empty buckets: label (µs after the bias, as C writes it:
    /// `"3"`, or `"0.250"` with a `-W` not in whole µs) to count.
    pub histogram: Labelled,
    /// Gaps counted: loop iterations.
    pub loops: u64,
    /// The loop's cost: ns per iteration (3 decimals).
    pub ns_per_loop: Option<f64>,
    /// The counter's measured frequency, Hz.
    pub counter_hz: u64,
    /// The smallest gap, whole ns (rounded), as every rtlat result.
    pub min_ns: Option<i64>,
    /// The largest gap, whole ns (rounded).
    pub max_ns: Option<i64>,
    /// The mean gap, ns (3 decimals).
    pub mean_ns: Option<f64>,
    /// Percentiles of the gaps, ns (1 decimal): exact to the counter's
    /// tick below the fast limit, 1 µs buckets above it.
    pub percentiles_ns: Named,
    /// Gaps counted again, under the name every rtlat result gives its
    /// samples (`rtlat compare` reads it).
    pub cycles: u64,
    /// The house's percentiles of the gaps, µs (1 µs buckets, the exact
    /// maximum), as every rtlat result has them (`rtlat compare`).
    pub percentiles: crate::document::Percentiles,
    /// The overflow excess, µs beyond the last bucket (C's
    /// `overflow_sum`).
    pub overflow_excess: u64,
    /// The thread's id.
    pub tid: i32,
}

/// An object of named numbers in the order given (`"p50": 41.0, ...`).
#[derive(Clone, Debug, Default)]
pub struct Named(pub Vec<(&'static str, Option<f64>)>);

impl Serialize for Named {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}
