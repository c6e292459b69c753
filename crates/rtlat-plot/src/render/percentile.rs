//! The percentile plot (`-k percentile`): latency against `1 / (1 - p)`,
//! one line per input, its threads' buckets merged.

use crate::input::{Bucket, Samples, ThreadSamples};
use rtlat_results::samples::plural;

use super::figure::{Axes, Line, format_us, input_labels};

/// The buckets of all `threads` together, lowest first; buckets with the
/// same bounds are added up.
pub fn merge_threads(threads: &[ThreadSamples]) -> Vec<Bucket> {
    let mut all: Vec<Bucket> = threads.iter().flat_map(|t| t.buckets.clone()).collect();
    all.sort_by(|a, b| a.from.total_cmp(&b.from).then(a.to.total_cmp(&b.to)));
    let mut merged: Vec<Bucket> = Vec::with_capacity(all.len());
    for b in all {
        match merged.last_mut() {
            Some(last) if last.from == b.from && last.to == b.to => last.count += b.count,
            _ => merged.push(b),
        }
    }
    merged
}

/// The latency against `1 / (1 - p)` curve of `buckets` (sorted) plus
/// `overflows` samples above them (placed between the top bucket and
/// `max`), interpolating linearly within each bucket. The last sample
/// stands at `1 - p = 1 / N`. Latencies never go down along the curve and
/// never exceed `max`.
pub fn percentile_points(buckets: &[Bucket], overflows: u64, max: Option<f64>) -> Vec<(f64, f64)> {
    let mut pieces = buckets.to_vec();
    if overflows > 0
        && let Some(top) = pieces.last().map(|b| b.to)
    {
        pieces.push(Bucket {
            from: top,
            to: max.filter(|m| *m > top).unwrap_or(top),
            count: overflows,
        });
    }
    let total: u64 = pieces.iter().map(|b| b.count).sum();
    if total == 0 {
        return Vec::new();
    }
    let n = total as f64;
    let mut points = Vec::with_capacity(pieces.len() * 2);
    let mut below = 0_u64;
    let mut level = f64::MIN;
    for b in &pieces {
        let x0 = n / (total - below) as f64;
        below += b.count;
        let x1 = n / (total - below).max(1) as f64;
        let y0 = b.from.max(level);
        let mut y1 = b.to;
        if let Some(m) = max
            && m >= y0
        {
            y1 = y1.min(m);
        }
        let y1 = y1.max(y0);
        level = y1;
        points.push((x0, y0));
        points.push((x1, y1));
    }
    points.dedup();
    points
}

/// One curve per input, all its threads together.
pub(super) fn percentile_lines(inputs: &[Samples]) -> (Axes, Vec<Line>) {
    let labels = input_labels(inputs);
    let mut lines = Vec::new();
    let mut most = 1_u64;
    for (input, label) in inputs.iter().zip(labels) {
        let buckets = merge_threads(&input.threads);
        let overflows: u64 = input.threads.iter().map(|t| t.overflows).sum();
        let samples = buckets.iter().map(|b| b.count).sum::<u64>() + overflows;
        most = most.max(samples);
        let mut details = vec![format!("{samples} samples")];
        if let Some(max) = input.max_us() {
            details.push(format!("max {} µs", format_us(max)));
        }
        if overflows > 0 {
            details.push(plural(overflows, "overflow"));
        }
        lines.push(Line::new(
            format!("{label} ({})", details.join(", ")),
            percentile_points(&buckets, overflows, input.max_us()),
            lines.len(),
        ));
    }
    let positive = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|y| *y > 0.0);
    let y_lo = positive.clone().min_by(f64::total_cmp).unwrap_or(1.0) * 0.8;
    let y_hi = positive
        .max_by(f64::total_cmp)
        .unwrap_or(1.0)
        .max(y_lo * 2.0)
        * 1.25;
    for line in &mut lines {
        for p in &mut line.points {
            p.1 = p.1.max(y_lo);
        }
    }
    let x_end = 10_f64.powf((most as f64).log10().ceil()).max(100.0);
    (
        Axes::Percentile {
            x_end,
            y: y_lo..y_hi,
        },
        lines,
    )
}
