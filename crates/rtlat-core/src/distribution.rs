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
//!   (more than an hour);
//! - counts of the samples below zero and above the top.
//!
//! A reader takes a [`Distribution`] snapshot (plain data), merges those of
//! several threads, and asks it for percentiles.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::units::Nanos;

/// The exact range when `-h` asks for less: 5 ms.
pub const DEFAULT_EXACT_RANGE: Nanos = Nanos::from_micros(5_000);
/// Log-linear buckets per power of two (2^7).
pub const SUB_BUCKETS: u64 = 1 << SUB_BITS;
const SUB_BITS: u32 = 7;
/// Samples of 2^42 ns (73 minutes) and more are counted as above the top.
pub const TOP_EXPONENT: u32 = 42;
/// The most exact buckets a thread may have (32 MiB of counters).
pub const MAX_EXACT_BUCKETS: u64 = 4 << 20;

/// The shape of a run's distributions: the same for all its threads, so
/// that they merge bucket by bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistributionPlan {
    /// Width of an exact bucket in ns.
    pub width_ns: u64,
    /// Number of exact buckets; they cover `[0, width × count)`.
    pub exact_buckets: u64,
}

/// Why a [`DistributionPlan`] cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The width is 0.
    #[error("the bucket width must be at least 1 ns")]
    ZeroWidth,
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
        // The exact range is at least 5 ms, far above 2^SUB_BITS.
        63 - self.exact_end().leading_zeros()
    }

    fn log_buckets(&self) -> usize {
        let powers = TOP_EXPONENT.saturating_sub(self.first_exponent()) as usize;
        powers * SUB_BUCKETS as usize
    }
}

/// The writer's side: the counters of one thread.
#[derive(Debug)]
pub struct LatencyHistogram {
    plan: DistributionPlan,
    exact_end: u64,
    first_exponent: u32,
    exact: Box<[AtomicU64]>,
    log: Box<[AtomicU64]>,
    below_zero: AtomicU64,
    above_top: AtomicU64,
}

impl LatencyHistogram {
    /// Counters for `plan`; `None` if the memory cannot be had.
    pub fn new(plan: DistributionPlan) -> Option<LatencyHistogram> {
        Some(LatencyHistogram {
            plan,
            exact_end: plan.exact_end(),
            first_exponent: plan.first_exponent(),
            exact: zeroed(usize::try_from(plan.exact_buckets).ok()?)?,
            log: zeroed(plan.log_buckets())?,
            below_zero: AtomicU64::new(0),
            above_top: AtomicU64::new(0),
        })
    }

    /// Writes every counter once so that its pages are mapped before the
    /// loop.
    pub fn prefault(&self) {
        for cell in self.exact.iter().chain(self.log.iter()) {
            cell.store(0, Relaxed);
        }
    }

    /// Counts `ns`. Writer only: one division (exact range) or a
    /// leading-zero count and two shifts (log range), then a load and a
    /// store.
    #[inline(always)]
    pub fn record(&self, ns: i64) {
        let cell = match u64::try_from(ns) {
            Err(_) => &self.below_zero,
            Ok(v) if v < self.exact_end => &self.exact[(v / self.plan.width_ns) as usize],
            Ok(v) => {
                let exponent = 63 - v.leading_zeros();
                let sub = (v >> (exponent - SUB_BITS)) - SUB_BUCKETS;
                let index =
                    (exponent - self.first_exponent) as usize * SUB_BUCKETS as usize + sub as usize;
                self.log.get(index).unwrap_or(&self.above_top)
            }
        };
        cell.store(cell.load(Relaxed) + 1, Relaxed);
    }

    /// A copy of the counters; `min` and `max` are the exact extremes the
    /// caller knows (the thread's slot), `None` without samples.
    pub fn snapshot(&self, min: Option<Nanos>, max: Option<Nanos>) -> Distribution {
        let load = |cells: &[AtomicU64]| cells.iter().map(|c| c.load(Relaxed)).collect();
        let exact: Vec<u64> = load(&self.exact);
        let log: Vec<u64> = load(&self.log);
        let below_zero = self.below_zero.load(Relaxed);
        let above_top = self.above_top.load(Relaxed);
        let count = exact.iter().sum::<u64>() + log.iter().sum::<u64>() + below_zero + above_top;
        Distribution {
            plan: self.plan,
            exact,
            log,
            below_zero,
            above_top,
            count,
            min,
            max,
        }
    }
}

fn zeroed(len: usize) -> Option<Box<[AtomicU64]>> {
    let mut cells = Vec::new();
    cells.try_reserve_exact(len).ok()?;
    cells.resize_with(len, AtomicU64::default);
    Some(cells.into_boxed_slice())
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distribution {
    plan: DistributionPlan,
    exact: Vec<u64>,
    log: Vec<u64>,
    below_zero: u64,
    above_top: u64,
    count: u64,
    min: Option<Nanos>,
    max: Option<Nanos>,
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
            exact: vec![0; plan.exact_buckets as usize],
            log: vec![0; plan.log_buckets()],
            below_zero: 0,
            above_top: 0,
            count: 0,
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
        for (a, b) in self.exact.iter_mut().zip(&other.exact) {
            *a += b;
        }
        for (a, b) in self.log.iter_mut().zip(&other.log) {
            *a += b;
        }
        self.below_zero += other.below_zero;
        self.above_top += other.above_top;
        self.count += other.count;
        self.min = match (self.min, other.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Every bucket with at least one sample, lowest first.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        let width = self.plan.width_ns as i64;
        let below = std::iter::once(Bucket {
            lower: i64::MIN,
            upper: 0,
            count: self.below_zero,
        });
        let exact = self
            .exact
            .iter()
            .enumerate()
            .map(move |(i, &count)| Bucket {
                lower: i as i64 * width,
                upper: (i as i64 + 1) * width,
                count,
            });
        let first_exponent = self.plan.first_exponent();
        let exact_end = self.plan.exact_end() as i64;
        let log = self.log.iter().enumerate().map(move |(i, &count)| {
            let exponent = first_exponent + (i as u64 / SUB_BUCKETS) as u32;
            let sub = i as u64 % SUB_BUCKETS;
            let step = 1i64 << (exponent - SUB_BITS);
            let lower = (1i64 << exponent) + sub as i64 * step;
            // The first power's lowest buckets overlap the exact range:
            // they start where it ends.
            Bucket {
                lower: lower.max(exact_end),
                upper: (lower + step).max(exact_end),
                count,
            }
        });
        let above = std::iter::once(Bucket {
            lower: 1i64 << TOP_EXPONENT,
            upper: i64::MAX,
            count: self.above_top,
        });
        below
            .chain(exact)
            .chain(log)
            .chain(above)
            .filter(|b| b.count > 0)
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
    fn plan_covers_the_larger_range_and_refuses_too_many_buckets() {
        assert_eq!(plan().exact_end(), 5_000_000);
        let wide = DistributionPlan::new(1000, Nanos::from_micros(20_000)).unwrap();
        assert_eq!(wide.exact_buckets, 20_000);
        assert_eq!(
            DistributionPlan::new(0, Nanos::ZERO),
            Err(PlanError::ZeroWidth)
        );
        let err = DistributionPlan::new(1, Nanos::ZERO).unwrap_err();
        assert!(err.to_string().contains("at least 2 ns"), "{err}");
    }

    #[test]
    fn buckets_tile_the_line_without_gaps() {
        let d = Distribution {
            exact: vec![1; plan().exact_buckets as usize],
            log: vec![1; plan().log_buckets()],
            ..Distribution::empty(plan())
        };
        let buckets: Vec<Bucket> = d.buckets().filter(|b| b.lower < b.upper).collect();
        for pair in buckets.windows(2) {
            assert_eq!(pair[0].upper, pair[1].lower, "{pair:?}");
        }
        assert_eq!(buckets.last().unwrap().upper, 1 << TOP_EXPONENT);
        for b in buckets.iter().filter(|b| b.lower >= 5_000_000) {
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
            4_999_999,
            5_000_000,
            60_000_000_000,
            i64::MAX,
        ]);
        assert_eq!(d.count(), 8);
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

    proptest! {
        /// Inside the exact range a percentile is exact to the bucket
        /// width; beyond it, within 1 %; never outside [min, max].
        #[test]
        fn percentiles_are_within_the_stated_error(
            values in prop::collection::vec(
                prop_oneof![
                    8 => 0i64..5_000_000,
                    2 => 5_000_000i64..120_000_000_000,
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
            } else if truth < 5_000_000 {
                999
            } else {
                truth / 128 + 1
            };
            prop_assert!(truth - got <= allowed, "{got} vs {truth}, allowed {allowed}");
            prop_assert!(got >= *values.iter().min().unwrap());
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
