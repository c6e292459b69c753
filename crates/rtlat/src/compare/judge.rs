//! The noise rule: when a difference between two runs is a change.
//!
//! A change of a row is "within noise" when
//!
//! ```text
//! |NEW - BASE| <= max(NOISE % of |BASE|, 2 bucket widths at that value)
//! ```
//!
//! (NOISE is 10 by default). The bucket term is the resolution of the
//! figures: a percentile is the lower bound of the distribution bucket
//! holding it (1 µs wide by default, under 1 % of the value above 2 ms),
//! so each side may read up to one bucket low, and two runs of the same
//! system routinely differ by a bucket; at low values (p50 = 2 µs) a
//! percentage alone would call a 1 µs step a 50 % regression. The
//! percentage term is the run-to-run variation of a latency on a
//! quiet, unchanged system.
//!
//! A tail percentile is judged only when each run has at least 10 samples
//! at or beyond it: p50 needs 20 samples, p99 1 000, p99.9 10 000. With
//! fewer, the percentile is one or a few samples, as erratic as the
//! maximum, and its change is reported as noise ("too few samples").
//! `min` and `max` are single samples and always judged: for a real-time
//! system the worst case is the point, but it grows with the run's
//! length, so compare runs of similar length (the tables show the
//! samples).

use super::input::Figures;

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
    /// The largest latency (exact).
    Max,
}

/// The rows, in table order (and `Row as usize` indexes them).
pub const ROWS: [Row; 5] = [Row::Min, Row::P50, Row::P99, Row::P99_9, Row::Max];

impl Row {
    /// Its name in tables: `p99.9`.
    pub const fn name(self) -> &'static str {
        match self {
            Row::Min => "min",
            Row::P50 => "p50",
            Row::P99 => "p99",
            Row::P99_9 => "p99.9",
            Row::Max => "max",
        }
    }

    /// Its key in a JSON percentiles object; `None` for `min`.
    pub const fn percentile_key(self) -> Option<&'static str> {
        match self {
            Row::Min => None,
            Row::Max => Some("max"),
            _ => Some(self.name()),
        }
    }

    /// The fraction of samples at or below a percentile row; `None` for
    /// the exact `min` and `max`.
    pub const fn fraction(self) -> Option<f64> {
        match self {
            Row::Min | Row::Max => None,
            Row::P50 => Some(0.50),
            Row::P99 => Some(0.99),
            Row::P99_9 => Some(0.999),
        }
    }

    /// Samples each run needs for the row to be judged: 10 at or beyond
    /// the percentile. 0 for the exact `min` and `max`.
    pub const fn min_samples(self) -> u64 {
        match self {
            Row::Min | Row::Max => 0,
            Row::P50 => 20,
            Row::P99 => 1_000,
            Row::P99_9 => 10_000,
        }
    }
}

/// How a row changed from BASE to NEW (lower latency is better).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Lower by more than the noise.
    Better,
    /// Higher by more than the noise.
    Worse,
    /// Within the noise.
    Noise,
    /// Not judged: a run has fewer samples than the row needs.
    TooFewSamples,
    /// A side has no value (no samples).
    NoData,
}

impl Change {
    /// How the verdict column says it.
    pub const fn describe(self) -> &'static str {
        match self {
            Change::Better => "better",
            Change::Worse => "worse",
            Change::Noise => "within noise",
            Change::TooFewSamples => "within noise (too few samples)",
            Change::NoData => "no data",
        }
    }
}

/// The rule's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseRule {
    /// The relative term, percent of BASE.
    pub percent: f64,
}

/// When the files have no distribution: the default bucket width, 1 µs.
pub const DEFAULT_BUCKET_NS: i64 = 1_000;

impl NoiseRule {
    /// The change of `row` from `base` to `new`.
    pub fn judge(&self, row: Row, base: &Figures, new: &Figures) -> Change {
        let (Some(b), Some(n)) = (base.value(row), new.value(row)) else {
            return Change::NoData;
        };
        if base.samples.min(new.samples) < row.min_samples() {
            return Change::TooFewSamples;
        }
        let width = bucket_width(&base.buckets, b).max(bucket_width(&new.buckets, n));
        let tolerance = (self.percent / 100.0 * b.abs() as f64).max(2.0 * width as f64);
        let diff = n - b;
        if (diff.abs() as f64) <= tolerance {
            Change::Noise
        } else if diff > 0 {
            Change::Worse
        } else {
            Change::Better
        }
    }
}

/// The width of the bucket holding `value` (or the nearest one);
/// [`DEFAULT_BUCKET_NS`] without buckets.
pub fn bucket_width(buckets: &[(i64, i64)], value: i64) -> i64 {
    buckets
        .iter()
        .min_by_key(|&&(from, to)| {
            if (from..to).contains(&value) {
                0
            } else {
                (from - value).abs().min((to - 1 - value).abs()).max(1)
            }
        })
        .map_or(DEFAULT_BUCKET_NS, |&(from, to)| to - from)
}

/// The change in percent of BASE; `None` when BASE is 0 and NEW is not.
pub fn percent(base: i64, new: i64) -> Option<f64> {
    if base == 0 {
        (new == 0).then_some(0.0)
    } else {
        Some((new - base) as f64 / base.abs() as f64 * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(samples: u64, value: i64, buckets: Vec<(i64, i64)>) -> Figures {
        Figures {
            samples,
            values: [Some(value); ROWS.len()],
            buckets,
        }
    }

    fn judge(row: Row, base: i64, new: i64) -> Change {
        let rule = NoiseRule { percent: 10.0 };
        rule.judge(
            row,
            &figures(100_000, base, vec![]),
            &figures(100_000, new, vec![]),
        )
    }

    /// (row, BASE ns, NEW ns, expected) with 1 µs buckets and 10 %.
    #[test]
    fn table_of_verdicts() {
        use Change::*;
        let cases = [
            // 10 % of BASE dominates at high values: the boundary is in.
            (Row::P99, 100_000, 110_000, Noise),
            (Row::P99, 100_000, 110_001, Worse),
            (Row::P99, 100_000, 90_000, Noise),
            (Row::P99, 100_000, 89_999, Better),
            // 2 buckets (2 µs) dominate below 20 µs.
            (Row::P50, 2_000, 4_000, Noise),
            (Row::P50, 2_000, 4_001, Worse),
            (Row::P50, 15_000, 17_000, Noise),
            (Row::P50, 15_000, 12_999, Better),
            (Row::Min, 1_000, 0, Noise),
            (Row::Min, 0, 3_000, Worse),
            // Negative latencies (CLOCK_REALTIME stepped back).
            (Row::Min, -100_000, -50_000, Worse),
            (Row::Min, -100_000, -105_000, Noise),
            (Row::Max, 2_908_406, 2_581_000, Better),
            (Row::Max, 400_000, 450_000, Worse),
            (Row::P99_9, 256_000, 229_000, Better),
        ];
        for (row, base, new, expected) in cases {
            assert_eq!(judge(row, base, new), expected, "{row:?} {base} -> {new}");
        }
    }

    #[test]
    fn tails_need_ten_samples_beyond_them() {
        let rule = NoiseRule { percent: 10.0 };
        let at = |row: Row, base_samples, new_samples| {
            rule.judge(
                row,
                &figures(base_samples, 100_000, vec![]),
                &figures(new_samples, 200_000, vec![]),
            )
        };
        assert_eq!(at(Row::P99_9, 10_000, 10_000), Change::Worse);
        assert_eq!(at(Row::P99_9, 9_999, 10_000), Change::TooFewSamples);
        assert_eq!(at(Row::P99_9, 10_000, 9_999), Change::TooFewSamples);
        assert_eq!(at(Row::P99, 1_000, 1_000), Change::Worse);
        assert_eq!(at(Row::P99, 999, 50_000), Change::TooFewSamples);
        assert_eq!(at(Row::P50, 20, 20), Change::Worse);
        assert_eq!(at(Row::P50, 19, 20), Change::TooFewSamples);
        // The extremes are always judged.
        assert_eq!(at(Row::Max, 1, 1), Change::Worse);
        assert_eq!(at(Row::Min, 1, 1), Change::Worse);
    }

    #[test]
    fn no_value_is_no_data() {
        let rule = NoiseRule { percent: 10.0 };
        let mut empty = figures(0, 0, vec![]);
        empty.values = [None; ROWS.len()];
        let full = figures(100_000, 5_000, vec![]);
        assert_eq!(rule.judge(Row::P50, &empty, &full), Change::NoData);
        assert_eq!(rule.judge(Row::Max, &full, &empty), Change::NoData);
    }

    #[test]
    fn wider_buckets_widen_the_noise() {
        let rule = NoiseRule { percent: 10.0 };
        // Log-linear buckets of 32.768 µs around 5 ms: 10 % still rules.
        let log = vec![(5_013_504, 5_046_272)];
        let base = figures(100_000, 5_013_504, log.clone());
        let new = figures(100_000, 5_013_504 + 500_000, log);
        assert_eq!(rule.judge(Row::P99, &base, &new), Change::Noise);
        // --bucket-width 10 us: 20 us of noise at 100 us.
        let wide = |v: i64| {
            figures(
                100_000,
                v,
                vec![(v / 10_000 * 10_000, v / 10_000 * 10_000 + 10_000)],
            )
        };
        assert_eq!(
            rule.judge(Row::P99, &wide(100_000), &wide(120_000)),
            Change::Noise
        );
        assert_eq!(
            rule.judge(Row::P99, &wide(100_000), &wide(130_000)),
            Change::Worse
        );
        // A stricter percentage: 1 %, floor 2 us.
        let strict = NoiseRule { percent: 1.0 };
        let plain = |v| figures(100_000, v, vec![]);
        assert_eq!(
            strict.judge(Row::P99, &plain(100_000), &plain(102_000)),
            Change::Noise
        );
        assert_eq!(
            strict.judge(Row::P99, &plain(100_000), &plain(102_001)),
            Change::Worse
        );
    }

    #[test]
    fn bucket_width_at_a_value() {
        let b = [(1_000, 2_000), (2_000, 3_000), (5_013_504, 5_046_272)];
        assert_eq!(bucket_width(&b, 1_500), 1_000);
        assert_eq!(bucket_width(&b, 5_020_000), 32_768);
        // Not in any bucket: the nearest.
        assert_eq!(bucket_width(&b, 5_000_000), 32_768);
        assert_eq!(bucket_width(&[], 5_000_000), DEFAULT_BUCKET_NS);
    }

    #[test]
    fn percent_of_base() {
        assert_eq!(percent(100, 110), Some(10.0));
        assert_eq!(percent(-100, -50), Some(50.0));
        assert_eq!(percent(0, 0), Some(0.0));
        assert_eq!(percent(0, 5), None);
    }
}
