//! `--hgrm FILE`: a run's latency distribution in HdrHistogram's percentile
//! distribution text format (`.hgrm`, what `outputPercentileDistribution`
//! prints with five ticks per half distance), which HdrHistogram's plotting
//! tools read. Values in microseconds with three decimals.
//!
//! The reporting levels are HdrHistogram's: 0 %, then steps that halve
//! each time the distance to 100 % halves (10 % up to 50 %, 5 % up to 75 %,
//! 2.5 % up to 87.5 %, ...), each value being the highest value of the
//! bucket where the level is reached (never above the exact maximum); the
//! last recorded bucket gives one line, then the 100 % line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rtlat_core::Distribution;

use crate::output::OutputTarget;
use crate::report::formats::HgrmAsked;

/// Reporting points per halving of the distance to 100 %.
const TICKS_PER_HALF_DISTANCE: f64 = 5.0;

/// Mean and standard deviation for the footer, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    /// Mean sample.
    pub mean_ns: f64,
    /// Standard deviation.
    pub stddev_ns: f64,
}

/// `--hgrm FILE` (and `--hgrm-per-thread`), as validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HgrmOutput {
    /// All threads together go here: a file, or stdout for `--hgrm=-`.
    pub target: OutputTarget,
    /// Also one file per thread (only with a file): FILE's name with `.N`
    /// before its extension (`run.hgrm` → `run.0.hgrm`).
    pub per_thread: bool,
}

impl HgrmOutput {
    /// What the final outputs are asked for.
    pub fn asked(&self) -> HgrmAsked<'_> {
        HgrmAsked {
            target: &self.target,
            per_thread: self.per_thread,
        }
    }
}

/// Writes `distribution` as `.hgrm` text.
pub fn write_hgrm(
    w: &mut impl Write,
    distribution: &Distribution,
    moments: Moments,
) -> io::Result<()> {
    writeln!(
        w,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    )?;
    let total = distribution.count();
    let max = distribution.max().map_or(0, |m| m.as_nanos());
    let min = distribution.min().map_or(0, |m| m.as_nanos());
    let mut level = 0.0f64;
    let mut counted = 0u64;
    let mut last_value = 0i64;
    for bucket in distribution.buckets() {
        counted += bucket.count;
        // The highest value of the bucket, within the exact extremes.
        let value = bucket.upper.saturating_sub(1).clamp(min, max);
        last_value = value;
        let reached = 100.0 * counted as f64 / total as f64;
        while reached >= level {
            let fraction = level / 100.0;
            writeln!(
                w,
                "{:12.3} {:2.12} {:10} {:14.2}",
                micros(value),
                fraction,
                counted,
                1.0 / (1.0 - fraction)
            )?;
            level = next_level(level);
            if counted == total {
                break;
            }
        }
    }
    if total > 0 {
        writeln!(w, "{:12.3} {:2.12} {:10}", micros(last_value), 1.0, total)?;
    }
    writeln!(
        w,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        moments.mean_ns / 1000.0,
        moments.stddev_ns / 1000.0
    )?;
    writeln!(
        w,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        micros(max),
        total
    )?;
    writeln!(
        w,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        distribution.buckets().count(),
        rtlat_core::SUB_BUCKETS
    )
}

/// The standard deviation of `distribution` (ns) as if each sample were
/// the middle of its bucket (within the exact extremes), divided by n − 1:
/// the footer's figure for a run that keeps no sum of squares (oslat).
pub fn bucket_stddev(distribution: &Distribution) -> f64 {
    let n = distribution.count();
    if n < 2 {
        return 0.0;
    }
    let (min, max) = match (distribution.min(), distribution.max()) {
        (Some(min), Some(max)) => (min.as_nanos(), max.as_nanos()),
        _ => return 0.0,
    };
    let middle = |lower: i64, upper: i64| {
        let top = upper.saturating_sub(1).clamp(min, max);
        (lower.clamp(min, max) as f64 + top as f64) / 2.0
    };
    let mean = distribution
        .buckets()
        .map(|b| middle(b.lower, b.upper) * b.count as f64)
        .sum::<f64>()
        / n as f64;
    let squares: f64 = distribution
        .buckets()
        .map(|b| {
            let d = middle(b.lower, b.upper) - mean;
            d * d * b.count as f64
        })
        .sum();
    (squares / (n - 1) as f64).sqrt()
}

/// Thread `index`'s file next to `all`: `.N` before the extension
/// (`run.hgrm` → `run.0.hgrm`; `run` → `run.0`).
/// The name keeps the bytes of `all`'s, UTF-8 or not.
pub fn per_thread_path(all: &Path, index: usize) -> PathBuf {
    let mut name = all.file_stem().unwrap_or_default().to_os_string();
    name.push(format!(".{index}"));
    if let Some(ext) = all.extension() {
        name.push(".");
        name.push(ext);
    }
    all.with_file_name(name)
}

/// HdrHistogram's next reporting level after `level` (percent).
///
/// The halvings are counted by halving, not with `log2` and `powf`: those
/// would link libm, whose whole text `-m` would then lock in RAM.
fn next_level(level: f64) -> f64 {
    let mut distance = 100.0 - level;
    let mut ticks = 2.0 * TICKS_PER_HALF_DISTANCE;
    while distance <= 50.0 {
        distance *= 2.0;
        ticks *= 2.0;
    }
    level + 100.0 / ticks
}

fn micros(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlat_core::Nanos;
    use rtlat_core::{DistributionPlan, LatencyHistogram};

    fn distribution(values: &[i64]) -> Distribution {
        let h = LatencyHistogram::new(DistributionPlan::new(1000, Nanos::ZERO).unwrap()).unwrap();
        for &v in values {
            h.record(v);
        }
        h.snapshot(
            values.iter().min().map(|&v| Nanos(v)),
            values.iter().max().map(|&v| Nanos(v)),
        )
    }

    #[test]
    fn per_thread_files_are_named_after_the_all_threads_file() {
        let name = |p: &str, i| per_thread_path(Path::new(p), i);
        assert_eq!(name("out/run.hgrm", 0), PathBuf::from("out/run.0.hgrm"));
        assert_eq!(name("run", 3), PathBuf::from("run.3"));
        // Bytes that are not UTF-8 stay as they are.
        use std::os::unix::ffi::OsStrExt;
        let odd = |b: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(b));
        assert_eq!(
            per_thread_path(&odd(b"d/r\xff.h\xfe"), 12),
            odd(b"d/r\xff.12.h\xfe")
        );
    }

    #[test]
    fn levels_follow_hdrhistogram() {
        let mut levels = vec![0.0];
        while levels.len() < 12 {
            levels.push(next_level(*levels.last().unwrap()));
        }
        assert_eq!(
            levels,
            [
                0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 77.5
            ]
        );
    }

    /// HdrHistogram's own test: 25, 50 and 75 give these lines (our values
    /// are the bucket tops: 25.999 where HdrHistogram, with 3 significant
    /// digits, shows 25.000).
    #[test]
    fn three_values_like_hdrhistogram() {
        let mut out = Vec::new();
        write_hgrm(
            &mut out,
            &distribution(&[25_000, 50_000, 75_000]),
            Moments {
                mean_ns: 50_000.0,
                stddev_ns: 25_000.0,
            },
        )
        .unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
