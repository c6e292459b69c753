//! The outputs of cyclictest's own: the verbose reduction (`-o`), the
//! status FIFO (`-F`), the per-interval stream (`--stats-interval`,
//! `--stats-file`) or the blocks of a run without it, and the full
//! distribution (`--bucket-width`).

use std::path::PathBuf;

use rtlat_core::DistributionPlan;
use rtlat_core::{IntervalPlan, ThreadPlan, TimeSourceKind};
use rtlat_core::{Nanos, Resolution};

use super::flags::name;
use super::raw::{
    BLOCK_BASE, DEFAULT_BUCKET_WIDTH_NS, MAX_BUCKET_WIDTH_NS, MAX_STATS_INTERVAL,
    MAX_SYNTHETIC_STATS_RING, MIN_STATS_INTERVAL, Raw, STATS_INTERVAL_EXPECTED, STATS_RING,
};
use crate::cli::output_options::output_path;
use rtlat_args::UsageError;
use rtlat_args::values::{DirReport, OptionName, int_in_or, invalid, new_node_path};

/// `-o N`: one printed line per N samples, only with `-v`.
pub(super) fn oscope_reduction(raw: &Raw) -> Result<u32, UsageError> {
    let reduction = int_in_or(
        name("oscope"),
        raw.oscope.as_deref(),
        1..=i64::from(i32::MAX),
        "a number of samples per printed line",
        1,
    )?;
    if reduction > 1 && !raw.verbose {
        return Err(UsageError(format!(
            "{}: only meaningful with {}",
            name("oscope").spelling(),
            name("verbose").spelling()
        )));
    }
    Ok(u32::try_from(reduction).unwrap_or(u32::MAX))
}

/// `-F PATH`: the named pipe, its place checked now.
pub(super) fn fifo(raw: &Raw) -> Result<Option<PathBuf>, UsageError> {
    match &raw.fifo {
        Some(text) => Ok(Some(new_node_path(
            name("fifo"),
            text,
            "create",
            DirReport::Detailed,
        )?)),
        None => Ok(None),
    }
}

/// The full distribution every run keeps: exact buckets of
/// `--bucket-width` ns (1 µs by default) over the larger of the `-h` range
/// and 2 ms, then log-linear buckets.
pub(super) fn distribution_plan(
    raw: &Raw,
    buckets: Option<i64>,
    resolution: Resolution,
) -> Result<DistributionPlan, UsageError> {
    let width = int_in_or(
        name("bucket-width"),
        raw.bucket_width.as_deref(),
        1..=MAX_BUCKET_WIDTH_NS,
        "a bucket width in nanoseconds",
        DEFAULT_BUCKET_WIDTH_NS,
    )?;
    let histogram_range = Nanos(
        buckets
            .unwrap_or(0)
            .saturating_mul(resolution.nanos_per_unit()),
    );
    DistributionPlan::new(width as u64, histogram_range).map_err(|e| match &raw.bucket_width {
        Some(text) => invalid(name("bucket-width"), text, e),
        None => UsageError(format!("the -h range needs a wider --bucket-width: {e}")),
    })
}

/// `--stats-interval SECONDS` with `--stats-file FILE`: both or neither.
/// Returns the engine's interval plan and the file.
pub(super) fn stats_stream(
    raw: &Raw,
    source: TimeSourceKind,
    loops: Option<u64>,
    duration: Option<Nanos>,
    threads: &[ThreadPlan],
) -> Result<(Option<IntervalPlan>, Option<PathBuf>), UsageError> {
    let length = match &raw.stats_interval {
        Some(text) => Some(
            rtlat_args::values::decimal_duration(text)
                .filter(|l| (MIN_STATS_INTERVAL..=MAX_STATS_INTERVAL).contains(l))
                .ok_or_else(|| invalid(name("stats-interval"), text, STATS_INTERVAL_EXPECTED))?,
        ),
        None => None,
    };
    let file = match &raw.stats_file {
        Some(text) => Some(output_path(name("stats-file"), text)?),
        None => None,
    };
    match (length, file) {
        (None, None) => Ok((Some(block_plan(source, loops, duration, threads)), None)),
        (Some(_), None) => Err(UsageError(format!(
            "{} needs {} FILE: the file the per-interval lines go to",
            name("stats-interval").spelling(),
            name("stats-file").spelling()
        ))),
        (None, Some(_)) => Err(UsageError(format!(
            "{} needs {} SECONDS: how long each interval is",
            name("stats-file").spelling(),
            name("stats-interval").spelling()
        ))),
        (Some(length), Some(file)) => {
            let ring = match source {
                TimeSourceKind::Real => STATS_RING,
                TimeSourceKind::Synthetic { .. } => {
                    synthetic_stats_ring(length, loops, duration, threads)
                }
            };
            Ok((Some(IntervalPlan { length, ring }), Some(file)))
        }
    }
}

/// The intervals of a run without `--stats-interval`: its blocks'
/// (`cyclictest::blocks`). 100 ms, or ten periods of the slowest thread
/// when that is longer (in whole 100 ms), so that a block is rarely
/// empty; a bounded synthetic run's are doubled until its ring holds the
/// whole run (see [`synthetic_stats_ring`]), which is what its series, at most
/// [`rtlat_stats::blocks::DEFAULT_CAPACITY`] blocks, would merge them into
/// anyway.
fn block_plan(
    source: TimeSourceKind,
    loops: Option<u64>,
    duration: Option<Nanos>,
    threads: &[ThreadPlan],
) -> IntervalPlan {
    let slowest = threads
        .iter()
        .map(|t| t.interval.as_nanos())
        .max()
        .unwrap_or(0);
    let base = BLOCK_BASE.as_nanos();
    let steps = slowest.saturating_mul(10).max(1).saturating_add(base - 1) / base;
    let mut length = Nanos(base.saturating_mul(steps));
    match source {
        TimeSourceKind::Real => IntervalPlan {
            length,
            ring: STATS_RING,
        },
        TimeSourceKind::Synthetic { .. } => loop {
            let ring = synthetic_stats_ring(length, loops, duration, threads);
            // Unbounded (stopped by a signal): the ring keeps the end.
            let unbounded = loops.is_none() && duration.is_none();
            if ring < MAX_SYNTHETIC_STATS_RING as usize || unbounded || length >= MAX_STATS_INTERVAL
            {
                break IntervalPlan { length, ring };
            }
            length = Nanos(length.as_nanos().saturating_mul(2));
        },
    }
}

/// A synthetic run takes its samples as fast as it can, and its file is
/// written after the run (so that it is the same every time): its ring
/// holds every interval of the run, bounded by `-l` or `-D` (with room for
/// periods skipped by late wake-ups), up to [`MAX_SYNTHETIC_STATS_RING`].
fn synthetic_stats_ring(
    length: Nanos,
    loops: Option<u64>,
    duration: Option<Nanos>,
    threads: &[ThreadPlan],
) -> usize {
    let longest = threads
        .iter()
        .map(|t| t.interval.as_nanos())
        .max()
        .unwrap_or(0);
    let by_loops = loops.map(|n| u128::from(n) * 2 * longest.unsigned_abs() as u128);
    let by_duration = duration.map(|d| d.as_nanos().unsigned_abs() as u128);
    let span = match (by_loops, by_duration) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => u128::MAX,
    };
    let intervals = span / length.as_nanos().unsigned_abs().max(1) as u128 + 2;
    intervals.clamp(STATS_RING as u128, u128::from(MAX_SYNTHETIC_STATS_RING)) as usize
}
