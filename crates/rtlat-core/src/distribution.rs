//! The full latency distribution every run records, whatever `-h` says:
//! no sample is ever lost to an overflow.
//!
//! [`LatencyHistogram`] is written by one measuring thread with plain
//! stores. It has
//! - exact buckets of a fixed width (1 µs by default) from 0 up to an exact
//!   range (the larger of `-h` and [`DEFAULT_EXACT_RANGE`]);
//! - then log-linear buckets: each power of two is cut into
//!   [`SUB_BUCKETS`] equal parts, so a bucket is never wider than 1/128 of
//!   its lower bound (0.8 % relative error), up to 2^[`TOP_EXPONENT`] ns
//!   (68.7 s);
//! - counts of the samples below zero and above the top.
//!
//! The buckets count in 32 bits, half the memory of 64-bit counters (which
//! `mlockall` locks for every thread). A bucket that passes 2^32 samples
//! wraps to 0 and records the wrap in a small table of carries (one entry
//! per bucket that ever wrapped); the snapshot adds them back, so no count
//! is lost.
//!
//! A reader takes a [`Distribution`] of a thread (read in place once the
//! thread has ended, a copy while it runs), merges those of several
//! threads, and asks it for percentiles.

use std::sync::Arc;
use std::sync::atomic::{
    AtomicU32, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

use crate::buffers::zeroed_cells;
use crate::units::{Bytes, Nanos};

/// The exact range when `-h` asks for less: 2 ms.
pub const DEFAULT_EXACT_RANGE: Nanos = Nanos::from_micros(2_000);
/// Log-linear buckets per power of two (2^7).
pub const SUB_BUCKETS: u64 = 1 << SUB_BITS;
const SUB_BITS: u32 = 7;
/// Samples of 2^36 ns (68.7 s) and more are counted as above the top.
pub const TOP_EXPONENT: u32 = 36;
/// The most exact buckets a thread may have (16 MiB of counters).
pub const MAX_EXACT_BUCKETS: u64 = 4 << 20;
/// Buckets that can wrap past 2^32 samples without losing a count.
pub const CARRY_ENTRIES: usize = 64;

/// The shape of a run's distributions: the same for all its threads, so
/// that they merge bucket by bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistributionPlan {
    /// Width of an exact bucket in ns.
    pub width_ns: u64,
    /// Number of exact buckets; they cover `[0, width × count)`.
    pub exact_buckets: u64,
}

/// The longest exact range: 2^32 ns (4.29 s), the range of the bucket
/// computation by multiplication.
pub const MAX_EXACT_RANGE_NS: u64 = 1 << 32;

/// Why a [`DistributionPlan`] cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The width is 0.
    #[error("the bucket width must be at least 1 ns")]
    ZeroWidth,
    /// The exact range is longer than [`MAX_EXACT_RANGE_NS`].
    #[error(
        "an exact range of {range_ns} ns is longer than the {MAX_EXACT_RANGE_NS} ns kept exactly"
    )]
    RangeTooLong {
        /// The range asked for.
        range_ns: u64,
    },
    /// Too many exact buckets.
    #[error(
        "{buckets} exact buckets of {width_ns} ns are needed to cover {range_ns} ns; at most \
         {MAX_EXACT_BUCKETS} are kept: use a bucket width of at least {min_width} ns"
    )]
    TooManyBuckets {
        /// Buckets needed.
        buckets: u64,
        /// The width asked for.
        width_ns: u64,
        /// The exact range.
        range_ns: u64,
        /// The narrowest width that fits.
        min_width: u64,
    },
}

impl DistributionPlan {
    /// Exact buckets of `width_ns` covering at least `exact_range` (and at
    /// least [`DEFAULT_EXACT_RANGE`]).
    pub fn new(width_ns: u64, exact_range: Nanos) -> Result<DistributionPlan, PlanError> {
        if width_ns == 0 {
            return Err(PlanError::ZeroWidth);
        }
        let range_ns = exact_range
            .as_nanos()
            .max(DEFAULT_EXACT_RANGE.as_nanos())
            .unsigned_abs();
        if range_ns > MAX_EXACT_RANGE_NS {
            return Err(PlanError::RangeTooLong { range_ns });
        }
        let buckets = range_ns.div_ceil(width_ns);
        if buckets > MAX_EXACT_BUCKETS {
            return Err(PlanError::TooManyBuckets {
                buckets,
                width_ns,
                range_ns,
                min_width: range_ns.div_ceil(MAX_EXACT_BUCKETS),
            });
        }
        Ok(DistributionPlan {
            width_ns,
            exact_buckets: buckets,
        })
    }

    /// End of the exact range in ns.
    pub fn exact_end(&self) -> u64 {
        self.width_ns * self.exact_buckets
    }

    /// Exponent of the first power of two of the log-linear range.
    fn first_exponent(&self) -> u32 {
        // The exact range is at least DEFAULT_EXACT_RANGE, far above
        // 2^SUB_BITS.
        63 - self.exact_end().leading_zeros()
    }

    fn log_buckets(&self) -> usize {
        let powers = TOP_EXPONENT.saturating_sub(self.first_exponent()) as usize;
        powers * SUB_BUCKETS as usize
    }

    /// Buckets between zero and 2^[`TOP_EXPONENT`] ns: the exact ones, then
    /// the log-linear ones (the places of a [`SparseCounts`] cell).
    pub fn places(&self) -> u64 {
        self.exact_buckets + self.log_buckets() as u64
    }

    /// The bounds (lower, upper) in ns of the bucket at `place` (below
    /// [`DistributionPlan::places`]).
    pub fn bucket(&self, place: usize) -> (i64, i64) {
        let exact_buckets = self.exact_buckets as usize;
        if place < exact_buckets {
            let width = self.width_ns as i64;
            return (place as i64 * width, (place as i64 + 1) * width);
        }
        let i = place - exact_buckets;
        let exponent = self.first_exponent() + (i as u64 / SUB_BUCKETS) as u32;
        let sub = i as u64 % SUB_BUCKETS;
        let step = 1i64 << (exponent - SUB_BITS);
        let lower = (1i64 << exponent) + sub as i64 * step;
        // The first power's lowest buckets overlap the exact range: they
        // start where it ends.
        let exact_end = self.exact_end() as i64;
        (lower.max(exact_end), (lower + step).max(exact_end))
    }
}

/// One bucket that wrapped: which one, and how many times.
#[derive(Debug)]
struct Carry {
    /// Index of the bucket + 1; 0 while the entry is free. Published with
    /// Release once `wraps` holds its first wrap.
    key: AtomicU64,
    /// Times the bucket passed 2^32.
    wraps: AtomicU64,
}

/// The writer's side: the counters of one thread.
#[derive(Debug)]
pub struct LatencyHistogram {
    plan: DistributionPlan,
    exact_end: u64,
    /// ⌈2^64 / width⌉, so that `v / width` is `(v × reciprocal) >> 64`
    /// for every `v` of the exact range (below 2^32: Lemire, Kaser and
    /// Kurz, "Faster remainder by direct computation", 2019); 0 for a
    /// width of 1 ns, where the bucket is `v` itself.
    reciprocal: u64,
    first_exponent: u32,
    /// The exact buckets, then the log-linear ones.
    cells: Box<[AtomicU32]>,
    below_zero: AtomicU64,
    above_top: AtomicU64,
    /// The buckets that wrapped, by linear probing from `index %
    /// CARRY_ENTRIES`; entries are never freed.
    carries: [Carry; CARRY_ENTRIES],
    /// Wraps that found the carry table full: 2^32 samples each, missing.
    lost_wraps: AtomicU64,
}

impl LatencyHistogram {
    /// Counters for `plan`; `None` if the memory cannot be had.
    pub fn new(plan: DistributionPlan) -> Option<LatencyHistogram> {
        let cells = usize::try_from(plan.exact_buckets)
            .ok()?
            .checked_add(plan.log_buckets())?;
        Some(LatencyHistogram {
            plan,
            exact_end: plan.exact_end(),
            reciprocal: match plan.width_ns {
                1 => 0,
                width => u64::MAX / width + 1,
            },
            first_exponent: plan.first_exponent(),
            cells: zeroed_cells(cells)?,
            below_zero: AtomicU64::new(0),
            above_top: AtomicU64::new(0),
            carries: [const {
                Carry {
                    key: AtomicU64::new(0),
                    wraps: AtomicU64::new(0),
                }
            }; CARRY_ENTRIES],
            lost_wraps: AtomicU64::new(0),
        })
    }

    /// Writes every counter once so that its pages are mapped before the
    /// loop.
    pub(crate) fn prefault(&self) {
        for cell in self.cells.iter() {
            cell.store(0, Relaxed);
        }
        for carry in &self.carries {
            carry.wraps.store(0, Relaxed);
            carry.key.store(0, Relaxed);
        }
    }

    /// The heap that [`LatencyHistogram::new`] takes for `plan`, and that
    /// of a [`LatencyHistogram::snapshot`] of it or of a merge (64-bit
    /// counts; [`LatencyHistogram::read_in_place`] takes none).
    pub(crate) fn heap_bytes(plan: DistributionPlan) -> (Bytes, Bytes) {
        let cells = usize::try_from(plan.exact_buckets)
            .unwrap_or(usize::MAX)
            .saturating_add(plan.log_buckets());
        (Bytes::of::<AtomicU32>(cells), Bytes::of::<u64>(cells))
    }

    /// Counts `ns`. Writer only: one multiplication (exact range) or a
    /// leading-zero count and two shifts (log range), then a load and a
    /// store; a call every 2^32 samples of one bucket.
    #[inline(always)]
    pub fn record(&self, ns: i64) {
        let Ok(v) = u64::try_from(ns) else {
            bump(&self.below_zero);
            return;
        };
        let index = self.index(v);
        match self.cells.get(index) {
            Some(cell) => {
                let count = cell.load(Relaxed).wrapping_add(1);
                cell.store(count, Relaxed);
                if count == 0 {
                    self.carry(index);
                }
            }
            None => bump(&self.above_top),
        }
    }

    /// The bucket of `v` ns: an exact one, a log-linear one, or past the
    /// end of `cells` (above the top).
    #[inline(always)]
    fn index(&self, v: u64) -> usize {
        if v < self.exact_end {
            if self.reciprocal == 0 {
                v as usize
            } else {
                ((u128::from(v) * u128::from(self.reciprocal)) >> 64) as usize
            }
        } else {
            let exponent = 63 - v.leading_zeros();
            let sub = (v >> (exponent - SUB_BITS)) - SUB_BUCKETS;
            self.plan.exact_buckets as usize
                + (exponent - self.first_exponent) as usize * SUB_BUCKETS as usize
                + sub as usize
        }
    }

    /// Records one more 2^32 samples in bucket `index`. Writer only.
    #[cold]
    #[inline(never)]
    fn carry(&self, index: usize) {
        let key = index as u64 + 1;
        for probe in 0..CARRY_ENTRIES {
            let entry = &self.carries[(index + probe) % CARRY_ENTRIES];
            match entry.key.load(Relaxed) {
                k if k == key => {
                    bump(&entry.wraps);
                    return;
                }
                0 => {
                    entry.wraps.store(1, Relaxed);
                    entry.key.store(key, Release);
                    return;
                }
                _ => {}
            }
        }
        bump(&self.lost_wraps);
    }

    /// Sets the bucket holding `ns` (at least 0, below the top) to `count`,
    /// to reach a wrap without 2^32 samples.
    #[cfg(test)]
    fn preset(&self, ns: i64, count: u32) {
        self.cells[self.index(ns as u64)].store(count, Relaxed);
    }

    /// A copy of the counters; `min` and `max` are the exact extremes the
    /// caller knows (the thread's slot), `None` without samples.
    ///
    /// Taken while the writer runs, a bucket that is wrapping at that
    /// instant may lack its newest 2^32 (the runs read their counters in
    /// place after their threads have ended: [`LatencyHistogram::read_in_place`]).
    pub fn snapshot(&self, min: Option<Nanos>, max: Option<Nanos>) -> Distribution {
        let mut counts: Vec<u64> = self
            .cells
            .iter()
            .map(|c| u64::from(c.load(Relaxed)))
            .collect();
        for (index, wraps) in self.wrapped() {
            if let Some(count) = counts.get_mut(index) {
                *count += wraps << 32;
            }
        }
        self.distribution(Counts::Owned(counts), min, max)
    }

    /// The distribution of a writer that has ended, read where its counters
    /// are: no copy of the buckets is made (a run's report holds one per
    /// thread and per phase). Only the buckets that wrapped are noted
    /// beside them. A sample recorded later would show in the buckets but
    /// not in [`Distribution::count`]: call it once the writer has stopped.
    pub fn read_in_place(self: &Arc<Self>, min: Option<Nanos>, max: Option<Nanos>) -> Distribution {
        let counts = Counts::InPlace {
            counters: Arc::clone(self),
            wrapped: self.wrapped().collect(),
        };
        self.distribution(counts, min, max)
    }

    /// The buckets that wrapped, as (index, times it passed 2^32).
    fn wrapped(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.carries.iter().filter_map(|carry| {
            let index = carry.key.load(Acquire).checked_sub(1)?;
            Some((index as usize, carry.wraps.load(Relaxed)))
        })
    }

    fn distribution(&self, counts: Counts, min: Option<Nanos>, max: Option<Nanos>) -> Distribution {
        let below_zero = self.below_zero.load(Relaxed);
        let above_top = self.above_top.load(Relaxed);
        Distribution {
            plan: self.plan,
            count: counts.iter().sum::<u64>() + below_zero + above_top,
            counts,
            below_zero,
            above_top,
            lost_wraps: self.lost_wraps.load(Relaxed),
            min,
            max,
        }
    }
}

/// Adds one to a 64-bit counter of the single writer.
#[inline(always)]
fn bump(cell: &AtomicU64) {
    cell.store(cell.load(Relaxed) + 1, Relaxed);
}

/// One bucket of a [`Distribution`]: samples `lower <= v < upper` (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Lowest value in it, ns (`i64::MIN` for the below-zero count).
    pub lower: i64,
    /// One past its highest value, ns (`i64::MAX` for the above-top count).
    pub upper: i64,
    /// Samples in it.
    pub count: u64,
}

/// A snapshot of one thread's (or several merged threads') distribution.
#[derive(Clone, Debug)]
pub struct Distribution {
    plan: DistributionPlan,
    /// The exact buckets, then the log-linear ones.
    counts: Counts,
    below_zero: u64,
    above_top: u64,
    count: u64,
    lost_wraps: u64,
    min: Option<Nanos>,
    max: Option<Nanos>,
}

/// Where a [`Distribution`]'s bucket counts are.
#[derive(Clone, Debug)]
enum Counts {
    /// In the counters of a writer that has ended, shared with its channel;
    /// the buckets that wrapped, with their wraps, beside them.
    InPlace {
        counters: Arc<LatencyHistogram>,
        wrapped: Box<[(usize, u64)]>,
    },
    /// A copy of its own: a snapshot of a running writer, or a merge.
    Owned(Vec<u64>),
}

impl Counts {
    fn len(&self) -> usize {
        match self {
            Counts::InPlace { counters, .. } => counters.cells.len(),
            Counts::Owned(counts) => counts.len(),
        }
    }

    /// The count of bucket `index` (below [`Counts::len`]).
    fn get(&self, index: usize) -> u64 {
        match self {
            Counts::InPlace { counters, wrapped } => {
                let carried = wrapped
                    .iter()
                    .find(|&&(i, _)| i == index)
                    .map_or(0, |&(_, wraps)| wraps << 32);
                u64::from(counters.cells[index].load(Relaxed)) + carried
            }
            Counts::Owned(counts) => counts[index],
        }
    }

    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl PartialEq for Distribution {
    fn eq(&self, other: &Distribution) -> bool {
        self.plan == other.plan
            && (self.below_zero, self.above_top, self.count, self.lost_wraps)
                == (
                    other.below_zero,
                    other.above_top,
                    other.count,
                    other.lost_wraps,
                )
            && (self.min, self.max) == (other.min, other.max)
            && self.counts.iter().eq(other.counts.iter())
    }
}

impl Eq for Distribution {}

/// A [`Distribution`]'s counts without its empty buckets: (place in the
/// plan, count) for the exact and log-linear buckets, lowest first, and
/// the counts beyond both ends. A checkpoint keeps a thread's distribution
/// in this form; a rolling window keeps its segments in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseCounts {
    /// Samples below zero.
    pub below_zero: u64,
    /// Samples at or above 2^[`TOP_EXPONENT`] ns.
    pub above_top: u64,
    /// Wraps lost (see [`Distribution::lost_wraps`]).
    pub lost_wraps: u64,
    /// (place, count) of every non-empty bucket.
    pub cells: Vec<(u64, u64)>,
}

impl SparseCounts {
    /// Samples counted.
    pub fn count(&self) -> u64 {
        self.below_zero + self.above_top + self.cells.iter().map(|&(_, c)| c).sum::<u64>()
    }

    /// Adds `other`'s counts (of the same plan), keeping the cells in
    /// order, in place: one pass to count the cells of the union, one
    /// merge from the back into this list grown to that length. A list
    /// that is added to over and over (a window's segment) grows by
    /// amortised doubling instead of being copied to a new one each time.
    pub fn add(&mut self, other: &SparseCounts) {
        self.below_zero += other.below_zero;
        self.above_top += other.above_top;
        self.lost_wraps += other.lost_wraps;
        if other.cells.is_empty() {
            return;
        }
        let (mine, theirs) = (self.cells.len(), other.cells.len());
        let (mut a, mut b, mut union) = (0, 0, 0);
        while a < mine || b < theirs {
            match (self.cells.get(a), other.cells.get(b)) {
                (Some(&(i, _)), Some(&(j, _))) if i == j => (a, b) = (a + 1, b + 1),
                (Some(&(i, _)), Some(&(j, _))) if j < i => b += 1,
                (Some(_), _) => a += 1,
                (None, _) => b += 1,
            }
            union += 1;
        }
        self.cells.resize(union, (0, 0));
        // From the back: the place written is never before the next cell
        // of this list still to be read (it is that cell's place plus the
        // cells of `other` not yet placed that this list lacks).
        let (mut a, mut b) = (mine, theirs);
        for k in (0..union).rev() {
            let cell = match (a.checked_sub(1), b.checked_sub(1)) {
                (Some(x), Some(y)) if self.cells[x].0 == other.cells[y].0 => {
                    (a, b) = (x, y);
                    (self.cells[x].0, self.cells[x].1 + other.cells[y].1)
                }
                (Some(x), Some(y)) if self.cells[x].0 < other.cells[y].0 => {
                    b = y;
                    other.cells[y]
                }
                (Some(x), _) => {
                    a = x;
                    self.cells[x]
                }
                (None, Some(y)) => {
                    b = y;
                    other.cells[y]
                }
                (None, None) => break,
            };
            self.cells[k] = cell;
        }
    }

    /// The value at `fraction` of these counts, laid out by `plan`, by the
    /// same nearest-rank rule as [`Distribution::value_at`] (without
    /// extremes to keep it within): the answer of
    /// `Distribution::from_sparse(plan, self, None, None)?.value_at(fraction)`
    /// without making the dense distribution. `None` without samples or
    /// when a cell lies outside the plan.
    pub fn value_at(&self, plan: DistributionPlan, fraction: f64) -> Option<Nanos> {
        let count = self.count();
        if count == 0 || self.cells.iter().any(|&(place, _)| place >= plan.places()) {
            return None;
        }
        let rank = ((fraction * count as f64).ceil() as u64).clamp(1, count);
        let below = std::iter::once((i64::MIN, self.below_zero));
        let cells = self
            .cells
            .iter()
            .map(|&(place, n)| (plan.bucket(place as usize).0, n));
        let above = std::iter::once((1i64 << TOP_EXPONENT, self.above_top));
        let mut seen = 0;
        below
            .chain(cells)
            .chain(above)
            .find(|&(_, n)| {
                seen += n;
                n > 0 && seen >= rank
            })
            .map(|(lower, _)| Nanos(lower))
    }
}

/// The percentiles every output reports, as (label, fraction).
pub const STANDARD_PERCENTILES: [(&str, f64); 6] = [
    ("p50", 0.50),
    ("p90", 0.90),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
    ("p99.999", 0.99999),
];

impl Distribution {
    /// An empty distribution of `plan`'s shape.
    pub fn empty(plan: DistributionPlan) -> Distribution {
        Distribution {
            plan,
            counts: Counts::Owned(vec![0; plan.places() as usize]),
            below_zero: 0,
            above_top: 0,
            count: 0,
            lost_wraps: 0,
            min: None,
            max: None,
        }
    }

    /// The shape.
    pub fn plan(&self) -> DistributionPlan {
        self.plan
    }

    /// Samples counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Times a bucket passed 2^32 samples when its thread's table of
    /// carries was full ([`CARRY_ENTRIES`] other buckets had done so
    /// before): each is
    /// 2^32 samples missing from [`Distribution::count`] and the buckets.
    /// Nonzero only after some 2^38 samples.
    pub fn lost_wraps(&self) -> u64 {
        self.lost_wraps
    }

    /// The exact smallest sample.
    pub fn min(&self) -> Option<Nanos> {
        self.min
    }

    /// The exact largest sample.
    pub fn max(&self) -> Option<Nanos> {
        self.max
    }

    /// Adds `other` (of the same plan) bucket by bucket.
    ///
    /// # Panics
    /// If the plans differ: the distributions of one run always share one.
    pub fn merge(&mut self, other: &Distribution) {
        assert_eq!(self.plan, other.plan, "merging distributions of two shapes");
        let mut own = match std::mem::replace(&mut self.counts, Counts::Owned(Vec::new())) {
            Counts::Owned(counts) => counts,
            in_place => in_place.iter().collect(),
        };
        for (a, b) in own.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.counts = Counts::Owned(own);
        self.below_zero += other.below_zero;
        self.above_top += other.above_top;
        self.count += other.count;
        self.lost_wraps += other.lost_wraps;
        self.min = match (self.min, other.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// The samples counted since `earlier`, a snapshot of the same writer
    /// taken before this one: the bucket counts' differences (a bucket that
    /// shrank, which a wrap in progress can show for an instant, gives 0).
    /// The extremes of the difference are unknown: `None`.
    ///
    /// # Panics
    /// If the plans differ, as [`Distribution::merge`].
    pub fn delta_since(&self, earlier: &Distribution) -> Distribution {
        assert_eq!(
            self.plan, earlier.plan,
            "subtracting distributions of two shapes"
        );
        let counts: Vec<u64> = self
            .counts
            .iter()
            .zip(earlier.counts.iter())
            .map(|(now, then)| now.saturating_sub(then))
            .collect();
        let below_zero = self.below_zero.saturating_sub(earlier.below_zero);
        let above_top = self.above_top.saturating_sub(earlier.above_top);
        Distribution {
            plan: self.plan,
            count: counts.iter().sum::<u64>() + below_zero + above_top,
            counts: Counts::Owned(counts),
            below_zero,
            above_top,
            lost_wraps: self.lost_wraps.saturating_sub(earlier.lost_wraps),
            min: None,
            max: None,
        }
    }

    /// [`Distribution::delta_since`] kept sparse, without a dense copy of
    /// the difference: one pass over both, allocating only the cells.
    ///
    /// # Panics
    /// If the plans differ, as [`Distribution::merge`].
    pub fn sparse_delta_since(&self, earlier: &Distribution) -> SparseCounts {
        assert_eq!(
            self.plan, earlier.plan,
            "subtracting distributions of two shapes"
        );
        SparseCounts {
            below_zero: self.below_zero.saturating_sub(earlier.below_zero),
            above_top: self.above_top.saturating_sub(earlier.above_top),
            lost_wraps: self.lost_wraps.saturating_sub(earlier.lost_wraps),
            cells: self
                .counts
                .iter()
                .zip(earlier.counts.iter())
                .enumerate()
                .filter(|&(_, (now, then))| now > then)
                .map(|(index, (now, then))| (index as u64, now - then))
                .collect(),
        }
    }

    /// Sets the exact extremes (those of the samples counted, which the
    /// buckets alone do not give).
    pub fn set_extremes(&mut self, min: Option<Nanos>, max: Option<Nanos>) {
        self.min = min;
        self.max = max;
    }

    /// Makes this distribution a copy of `other` (of the same plan),
    /// reusing its own bucket storage when it has one: a reader that keeps
    /// the last snapshot allocates nothing to keep the next.
    ///
    /// # Panics
    /// If the plans differ, as [`Distribution::merge`].
    pub fn assign_from(&mut self, other: &Distribution) {
        assert_eq!(self.plan, other.plan, "copying distributions of two shapes");
        match &mut self.counts {
            Counts::Owned(own) if own.len() == other.counts.len() => {
                for (mine, theirs) in own.iter_mut().zip(other.counts.iter()) {
                    *mine = theirs;
                }
            }
            counts => *counts = Counts::Owned(other.counts.iter().collect()),
        }
        self.below_zero = other.below_zero;
        self.above_top = other.above_top;
        self.count = other.count;
        self.lost_wraps = other.lost_wraps;
        self.min = other.min;
        self.max = other.max;
    }

    /// The non-empty buckets by their place in the plan: what a file keeps
    /// to rebuild this distribution exactly ([`Distribution::from_sparse`]).
    pub fn to_sparse(&self) -> SparseCounts {
        SparseCounts {
            below_zero: self.below_zero,
            above_top: self.above_top,
            lost_wraps: self.lost_wraps,
            cells: self
                .counts
                .iter()
                .enumerate()
                .filter(|&(_, count)| count > 0)
                .map(|(index, count)| (index as u64, count))
                .collect(),
        }
    }

    /// The distribution of `plan`'s shape that `sparse` describes, with the
    /// extremes `min` and `max`; `None` when a cell lies outside the plan.
    pub fn from_sparse(
        plan: DistributionPlan,
        sparse: &SparseCounts,
        min: Option<Nanos>,
        max: Option<Nanos>,
    ) -> Option<Distribution> {
        let mut distribution = Distribution::empty(plan);
        distribution.add_sparse(sparse)?;
        distribution.min = min;
        distribution.max = max;
        Some(distribution)
    }

    /// Adds `sparse`'s counts (the extremes are left as they are); `None`,
    /// and nothing added, when a cell lies outside the plan.
    pub fn add_sparse(&mut self, sparse: &SparseCounts) -> Option<()> {
        let len = self.counts.len() as u64;
        if sparse.cells.iter().any(|&(index, _)| index >= len) {
            return None;
        }
        let mut own = match std::mem::replace(&mut self.counts, Counts::Owned(Vec::new())) {
            Counts::Owned(counts) => counts,
            in_place => in_place.iter().collect(),
        };
        for &(index, count) in &sparse.cells {
            own[index as usize] += count;
        }
        self.counts = Counts::Owned(own);
        self.below_zero += sparse.below_zero;
        self.above_top += sparse.above_top;
        self.lost_wraps += sparse.lost_wraps;
        self.count += sparse.count();
        Some(())
    }

    /// Every bucket with at least one sample, lowest first.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        let below = std::iter::once(Bucket {
            lower: i64::MIN,
            upper: 0,
            count: self.below_zero,
        });
        let plan = self.plan;
        let places = (0..plan.places() as usize).filter_map(move |place| {
            let count = self.counts.get(place);
            (count > 0).then(|| {
                let (lower, upper) = plan.bucket(place);
                Bucket {
                    lower,
                    upper,
                    count,
                }
            })
        });
        let above = std::iter::once(Bucket {
            lower: 1i64 << TOP_EXPONENT,
            upper: i64::MAX,
            count: self.above_top,
        });
        below.chain(places).chain(above).filter(|b| b.count > 0)
    }

    /// The value at `fraction` (0 < fraction <= 1) by the nearest-rank
    /// rule: the lower bound of the bucket holding the sample of rank
    /// ⌈fraction × count⌉, kept within the exact minimum and maximum. The
    /// true value lies within one bucket above it: one bucket width in the
    /// exact range, under 1 % beyond. `None` without samples.
    pub fn value_at(&self, fraction: f64) -> Option<Nanos> {
        if self.count == 0 {
            return None;
        }
        let rank = ((fraction * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        let bucket = self.buckets().find(|b| {
            seen += b.count;
            seen >= rank
        })?;
        let value = Nanos(bucket.lower);
        let value = self.min.map_or(value, |min| value.max(min));
        Some(self.max.map_or(value, |max| value.min(max)))
    }

    /// [`STANDARD_PERCENTILES`] and the maximum, as (label, value).
    pub fn standard_percentiles(&self) -> Vec<(&'static str, Option<Nanos>)> {
        STANDARD_PERCENTILES
            .iter()
            .map(|&(label, fraction)| (label, self.value_at(fraction)))
            .chain(std::iter::once(("max", self.max)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plan() -> DistributionPlan {
        DistributionPlan::new(1000, Nanos::ZERO).unwrap()
    }

    fn recorded(samples: &[i64]) -> Distribution {
        let h = LatencyHistogram::new(plan()).unwrap();
        for &ns in samples {
            h.record(ns);
        }
        h.snapshot(None, None)
    }

    #[test]
    fn delta_since_counts_only_the_samples_in_between() {
        let h = LatencyHistogram::new(plan()).unwrap();
        for ns in [-5, 1_500, 3_000_000] {
            h.record(ns);
        }
        let earlier = h.snapshot(None, None);
        for ns in [-7, 1_700, 2_500, 3_000_000, 1 << 40] {
            h.record(ns);
        }
        let delta = h.snapshot(None, None).delta_since(&earlier);
        assert_eq!(delta.count(), 5);
        assert_eq!(delta, {
            let mut d = recorded(&[-7, 1_700, 2_500, 3_000_000, 1 << 40]);
            d.min = None;
            d.max = None;
            d
        });
        assert_eq!((delta.min(), delta.max()), (None, None));
        assert_eq!(delta.delta_since(&delta).count(), 0);
    }

    #[test]
    fn the_sparse_delta_is_the_delta_kept_sparse_and_assign_copies() {
        let h = LatencyHistogram::new(plan()).unwrap();
        for ns in [-5, 1_500, 3_000_000] {
            h.record(ns);
        }
        let mut kept = h.snapshot(None, None);
        for ns in [-7, 1_700, 2_500, 3_000_000, 1 << 40] {
            h.record(ns);
        }
        let now = h.snapshot(Some(Nanos(-7)), Some(Nanos(1 << 40)));
        assert_eq!(
            now.sparse_delta_since(&kept),
            now.delta_since(&kept).to_sparse()
        );
        kept.assign_from(&now);
        assert_eq!(kept, now);
        assert_eq!(now.sparse_delta_since(&kept).count(), 0);
    }

    #[test]
    fn sparse_counts_add_like_their_distributions_merge() {
        let a = recorded(&[-1, 500, 1_500, 1_500, 9_000_000]);
        let b = recorded(&[1_500, 2_500, 70_000_000_000, 9_100_000]);
        let mut sum = a.to_sparse();
        sum.add(&b.to_sparse());
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(sum, merged.to_sparse());
        assert!(sum.cells.windows(2).all(|w| w[0].0 < w[1].0));
        let mut empty = SparseCounts::default();
        empty.add(&sum);
        assert_eq!(empty, sum);
    }

    #[test]
    fn sparse_counts_rebuild_the_distribution_exactly() {
        let d = recorded(&[-1, 0, 999, 1_000, 1_000, 2_500_000, 70_000_000_000]);
        let sparse = d.to_sparse();
        assert_eq!(sparse.count(), 7);
        assert_eq!((sparse.below_zero, sparse.above_top), (1, 1));
        assert_eq!(sparse.cells.len(), 3);
        assert_eq!(
            Distribution::from_sparse(plan(), &sparse, None, None),
            Some(d)
        );
        let outside = SparseCounts {
            cells: vec![(1 << 30, 1)],
            ..SparseCounts::default()
        };
        assert_eq!(
            Distribution::from_sparse(plan(), &outside, None, None),
            None
        );
        assert_eq!(outside.value_at(plan(), 0.5), None);
        assert_eq!(SparseCounts::default().value_at(plan(), 0.5), None);
    }

    /// End of the default exact range, ns.
    fn exact_end() -> i64 {
        plan().exact_end() as i64
    }

    fn record_all(values: &[i64]) -> Distribution {
        let h = LatencyHistogram::new(plan()).unwrap();
        for &v in values {
            h.record(v);
        }
        let min = values.iter().min().map(|&v| Nanos(v));
        let max = values.iter().max().map(|&v| Nanos(v));
        h.snapshot(min, max)
    }

    /// The exact nearest-rank percentile of `values`.
    fn exact_percentile(values: &[i64], fraction: f64) -> i64 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let rank = ((fraction * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    #[test]
    fn the_multiplication_is_the_division() {
        for width in [1, 2, 3, 7, 250, 999, 1000, 1001, 4096, 999_999, 1_000_000] {
            // The longest range each width allows, up to one second.
            let range = (width * MAX_EXACT_BUCKETS).min(1_000_000_000) as i64;
            let plan = DistributionPlan::new(width, Nanos(range)).unwrap();
            let h = LatencyHistogram::new(plan).unwrap();
            let end = plan.exact_end();
            let mut v = 0u64;
            let step = (end / 50_000).max(1);
            while v < end {
                for probe in [v, v + width - 1, v.saturating_sub(1)] {
                    if probe < end {
                        assert_eq!(
                            h.index(probe),
                            (probe / width) as usize,
                            "{probe} / {width}"
                        );
                    }
                }
                v += step;
            }
            assert_eq!(h.index(end - 1), ((end - 1) / width) as usize);
        }
        assert!(matches!(
            DistributionPlan::new(1000, Nanos(5_000_000_000)),
            Err(PlanError::RangeTooLong { .. })
        ));
    }

    #[test]
    fn plan_covers_the_larger_range_and_refuses_too_many_buckets() {
        assert_eq!(plan().exact_end(), 2_000_000);
        assert_eq!(plan().exact_buckets, 2_000);
        // 2^20 <= 2 ms < 2^21: powers 20 to 35, 16 × 128 log buckets.
        assert_eq!(plan().log_buckets(), 16 * 128);
        let wide = DistributionPlan::new(1000, Nanos::from_micros(20_000)).unwrap();
        assert_eq!(wide.exact_buckets, 20_000);
        assert_eq!(
            DistributionPlan::new(0, Nanos::ZERO),
            Err(PlanError::ZeroWidth)
        );
        // 1 ns over 2 ms fits (2 × 10^6 buckets), over 5 ms it does not.
        assert!(DistributionPlan::new(1, Nanos::ZERO).is_ok());
        let err = DistributionPlan::new(1, Nanos::from_micros(5_000)).unwrap_err();
        assert!(err.to_string().contains("at least 2 ns"), "{err}");
    }

    #[test]
    fn buckets_tile_the_line_without_gaps() {
        let d = Distribution {
            counts: Counts::Owned(vec![
                1;
                plan().exact_buckets as usize + plan().log_buckets()
            ]),
            ..Distribution::empty(plan())
        };
        let buckets: Vec<Bucket> = d.buckets().filter(|b| b.lower < b.upper).collect();
        for pair in buckets.windows(2) {
            assert_eq!(pair[0].upper, pair[1].lower, "{pair:?}");
        }
        assert_eq!(buckets.last().unwrap().upper, 1 << TOP_EXPONENT);
        for b in buckets.iter().filter(|b| b.lower >= exact_end()) {
            let relative = (b.upper - b.lower) as f64 / b.lower as f64;
            assert!(relative <= 1.0 / 128.0 + 1e-12, "{b:?}");
        }
    }

    #[test]
    fn nothing_is_lost_outside_the_ranges() {
        let d = record_all(&[
            -5,
            0,
            999,
            1000,
            exact_end() - 1,
            exact_end(),
            60_000_000_000,
            (1 << TOP_EXPONENT) - 1,
            1 << TOP_EXPONENT,
            i64::MAX,
        ]);
        assert_eq!(d.count(), 10);
        assert_eq!(d.above_top, 2);
        let buckets: Vec<Bucket> = d.buckets().collect();
        assert_eq!(buckets.first().unwrap().lower, i64::MIN);
        assert_eq!(buckets.last().unwrap().upper, i64::MAX);
        assert_eq!(d.value_at(1.0), Some(Nanos(1 << TOP_EXPONENT)));
        assert_eq!(
            d.standard_percentiles().last(),
            Some(&("max", Some(Nanos(i64::MAX))))
        );
        assert_eq!(d.value_at(0.0001), Some(Nanos(-5)));
    }

    /// (lower bound, count) of the buckets holding samples.
    fn counts(d: &Distribution) -> Vec<(i64, u64)> {
        d.buckets().map(|b| (b.lower, b.count)).collect()
    }

    #[test]
    fn a_bucket_that_passes_2_pow_32_keeps_counting() {
        let h = LatencyHistogram::new(plan()).unwrap();
        let long = 10_000_000_000; // a log-linear bucket: 2^33 + 21 × 2^26
        let long_lower = (1 << 33) + 21 * (1 << 26);
        h.preset(1500, u32::MAX - 1);
        h.preset(long, u32::MAX);
        for v in [1500, 1500, 1500, long, 2500] {
            h.record(v);
        }
        let d = h.snapshot(Some(Nanos(1500)), Some(Nanos(long)));
        assert_eq!(
            counts(&d),
            [(1000, (1 << 32) + 1), (2000, 1), (long_lower, 1 << 32)]
        );
        assert_eq!(d.count(), (2 << 32) + 2);
        assert_eq!(d.lost_wraps(), 0);

        // A second wrap of the same bucket adds to its entry.
        h.preset(1500, u32::MAX);
        h.record(1500);
        let d = h.snapshot(None, None);
        assert_eq!(counts(&d)[0], (1000, 2 << 32));
    }

    #[test]
    fn wraps_beyond_the_carry_table_are_reported_as_lost() {
        let h = LatencyHistogram::new(plan()).unwrap();
        let width = plan().width_ns as i64;
        // CARRY_ENTRIES + 1 buckets wrap, the first of them twice.
        for i in 0..=CARRY_ENTRIES as i64 {
            h.preset(i * width, u32::MAX);
            h.record(i * width);
        }
        h.preset(0, u32::MAX);
        h.record(0);
        let d = h.snapshot(None, None);
        assert_eq!(d.lost_wraps(), 1);
        let mut expected: Vec<(i64, u64)> = (0..CARRY_ENTRIES as i64)
            .map(|i| (i * width, 1 << 32))
            .collect();
        expected[0].1 = 2 << 32;
        assert_eq!(counts(&d), expected);
        assert_eq!(d.count(), (CARRY_ENTRIES as u64 + 1) << 32);

        let mut merged = d.clone();
        merged.merge(&d);
        assert_eq!(merged.lost_wraps(), 2);
        assert_eq!(merged.count(), 2 * d.count());
    }

    proptest! {
        /// Inside the exact range a percentile is exact to the bucket
        /// width; beyond it, within 1 %; never outside [min, max].
        #[test]
        fn percentiles_are_within_the_stated_error(
            values in prop::collection::vec(
                prop_oneof![
                    8 => 0i64..exact_end(),
                    2 => exact_end()..1i64 << TOP_EXPONENT,
                    1 => -2_000i64..0,
                ],
                1..400,
            ),
            fraction in 0.001f64..=1.0,
        ) {
            let d = record_all(&values);
            let truth = exact_percentile(&values, fraction);
            let got = d.value_at(fraction).unwrap().as_nanos();
            prop_assert!(got <= truth, "{got} > {truth}");
            let allowed = if truth < 0 {
                truth - values.iter().copied().min().unwrap()
            } else if truth < exact_end() {
                999
            } else {
                truth / 128 + 1
            };
            prop_assert!(truth - got <= allowed, "{got} vs {truth}, allowed {allowed}");
            prop_assert!(got >= *values.iter().min().unwrap());
        }

        /// Sparse counts add, in place, like their distributions merge, and
        /// give the value at any fraction that the dense distribution gives.
        #[test]
        fn sparse_counts_add_and_rank_like_distributions(
            a in prop::collection::vec(
                prop_oneof![
                    8 => 0i64..20_000,
                    2 => exact_end()..1i64 << (TOP_EXPONENT + 1),
                    1 => -2_000i64..0,
                ],
                0..200,
            ),
            b in prop::collection::vec(
                prop_oneof![8 => 0i64..20_000, 2 => exact_end()..1i64 << 40],
                0..200,
            ),
            fraction in 0.0001f64..=1.0,
        ) {
            let (da, db) = (recorded(&a), recorded(&b));
            let mut sum = da.to_sparse();
            sum.add(&db.to_sparse());
            let mut merged = da.clone();
            merged.merge(&db);
            prop_assert_eq!(&sum, &merged.to_sparse());
            let dense = Distribution::from_sparse(plan(), &sum, None, None).unwrap();
            prop_assert_eq!(sum.value_at(plan(), fraction), dense.value_at(fraction));
        }

        /// Merging two threads' distributions gives the distribution of all
        /// their samples.
        #[test]
        fn merge_is_recording_everything_at_once(
            a in prop::collection::vec(-100i64..200_000_000, 0..200),
            b in prop::collection::vec(-100i64..200_000_000, 0..200),
        ) {
            let mut merged = record_all(&a);
            merged.merge(&record_all(&b));
            let all: Vec<i64> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(merged, record_all(&all));
        }
    }
}
