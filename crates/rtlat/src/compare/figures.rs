//! What a comparison compares: its rows ([`Row`], in table order
//! [`ROWS`]) and one side's figures for a thread or for all threads
//! ([`Figures`]). [`super::input`] fills them from a file and
//! [`super::judge`] judges them; both take them from here.

use rtlat_stats::blocks::BlockSeries;

/// A compared figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// The smallest latency (exact).
    Min,
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    P99_9,
    /// The level nearly every window's maximum reaches (see
    /// [`super::judge`]).
    Floor,
    /// The largest latency (exact).
    Max,
}

/// The rows, in table order (and `Row as usize` indexes them).
pub const ROWS: [Row; 6] = [
    Row::Min,
    Row::P50,
    Row::P99,
    Row::P99_9,
    Row::Floor,
    Row::Max,
];

impl Row {
    /// Its name in tables: `p99.9`.
    pub const fn name(self) -> &'static str {
        match self {
            Row::Min => "min",
            Row::P50 => "p50",
            Row::P99 => "p99",
            Row::P99_9 => "p99.9",
            Row::Floor => "floor",
            Row::Max => "max",
        }
    }

    /// Its key in a JSON percentiles object; `None` for `min` and the
    /// floor.
    pub const fn percentile_key(self) -> Option<&'static str> {
        match self {
            Row::Min | Row::Floor => None,
            Row::Max => Some("max"),
            _ => Some(self.name()),
        }
    }

    /// The fraction of samples at or below a percentile row; `None` for
    /// the exact `min` and `max` and the floor.
    pub const fn fraction(self) -> Option<f64> {
        match self {
            Row::Min | Row::Max | Row::Floor => None,
            Row::P50 => Some(0.50),
            Row::P99 => Some(0.99),
            Row::P99_9 => Some(0.999),
        }
    }

    /// Samples each run needs for the row to be judged: 10 at or beyond
    /// the percentile. 0 for the exact `min` and `max` and the floor
    /// (which needs windows:
    /// [`floor::MIN_WINDOWS_PER_SEGMENT`](rtlat_stats::floor::MIN_WINDOWS_PER_SEGMENT)).
    pub const fn min_samples(self) -> u64 {
        match self {
            Row::Min | Row::Max | Row::Floor => 0,
            Row::P50 => 20,
            Row::P99 => 1_000,
            Row::P99_9 => 10_000,
        }
    }
}

/// What is compared of one thread, or of all threads together.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Samples taken.
    pub samples: u64,
    /// The value of each of [`ROWS`], ns; `None` without samples (or, from
    /// a histogram, for a percentile among its overflows).
    pub values: [Option<i64>; ROWS.len()],
    /// The distribution's buckets `[from, to)` in ns with their counts,
    /// lowest first (empty when the file has no `distribution`): they say
    /// how finely each value is known, and the values at other ranks.
    pub buckets: Vec<(i64, i64, u64)>,
    /// The run as blocks (`"blocks"`), when the file has them; all
    /// threads': every thread's together, when each has them.
    pub blocks: Option<BlockSeries>,
}

impl Figures {
    /// The value of `row`.
    pub fn value(&self, row: Row) -> Option<i64> {
        self.values[row as usize]
    }
}
