//! The latency plot (`-k latency`, OSADL style): samples against latency,
//! one step line per thread, on a linear or log latency axis cut at
//! `--xmax`, each bucket's step at least two pixels wide.

use crate::input::{Bucket, Samples, ThreadSamples};
use rtlat_plot::settings::LatencyAxis;
use rtlat_results::samples::plural;

use super::figure::{Axes, COUNT_FLOOR, Line, format_us, input_labels};

/// One step line per thread of every input, on a latency axis as `axis`
/// says; also the samples beyond `--xmax`, not drawn, of all threads.
pub(super) fn latency_lines(
    inputs: &[Samples],
    width: u32,
    axis: LatencyAxis,
) -> (Axes, Vec<Line>, u64) {
    let prefixes = input_labels(inputs);
    let several = inputs.len() > 1;
    // Each thread's buckets up to --xmax, and how many samples are beyond.
    let shown: Vec<Vec<(Vec<Bucket>, u64)>> = inputs
        .iter()
        .map(|i| {
            i.threads
                .iter()
                .map(|t| clip_at(&t.buckets, axis.xmax_us))
                .collect()
        })
        .collect();
    let (mut lo, mut hi, mut top) = (0.0_f64, f64::MIN, 1_u64);
    let mut lowest_positive = f64::MAX;
    for (buckets, _) in shown.iter().flatten() {
        if let (Some(first), Some(last)) = (buckets.first(), buckets.last()) {
            lo = lo.min(first.from);
            hi = hi.max(last.to);
            top = top.max(buckets.iter().map(|b| b.count).max().unwrap_or(1));
        }
        if let Some(b) = buckets.iter().find(|b| b.to > 0.0) {
            lowest_positive = lowest_positive.min(if b.from > 0.0 { b.from } else { b.to });
        }
    }
    let (x, column) = if axis.log {
        // From a little below the lowest positive latency (0 and below
        // drawn there) to a quarter above the highest, or --xmax.
        let start = if lowest_positive < f64::MAX {
            lowest_positive * 0.8
        } else {
            1.0
        };
        let end = axis.xmax_us.unwrap_or((hi * 1.25).max(start * 10.0));
        let x = start..end.max(start * 10.0);
        // Two pixels of the plotting area, in decades.
        let column = (x.end.log10() - x.start.log10()) * 2.0 / (f64::from(width) * 0.85);
        (x, column)
    } else {
        let hi = hi.max(lo + 10.0);
        let x = match axis.xmax_us {
            Some(xmax) => lo..xmax,
            None => lo..hi + (hi - lo) * 0.02,
        };
        // Two pixels of the plotting area (about 85 % of the picture).
        let column = (x.end - x.start) * 2.0 / (f64::from(width) * 0.85);
        (x, column)
    };
    let mut lines = Vec::new();
    let mut beyond_all = 0;
    for ((input, prefix), threads) in inputs.iter().zip(&prefixes).zip(&shown) {
        for (t, (buckets, beyond)) in input.threads.iter().zip(threads) {
            if t.buckets.is_empty() {
                continue;
            }
            beyond_all += beyond;
            let drawn = if axis.log {
                on_log_columns(buckets, x.start, column)
            } else {
                on_columns(buckets, x.start, column)
            };
            lines.push(Line::new(
                thread_label(several.then_some(prefix.as_str()), t, *beyond),
                step_points(&drawn, COUNT_FLOOR),
                lines.len(),
            ));
        }
    }
    // A whole decade above the highest count leaves room for the legend.
    let y_top = 10_f64.powf((top as f64 * 2.0).log10().ceil()).max(10.0);
    let axes = Axes::Latency {
        x,
        log_x: axis.log,
        y_top,
    };
    (axes, lines, beyond_all)
}

/// `buckets` (sorted) up to `xmax`: those from `xmax` up left out and
/// their samples counted; one across `xmax` ends there (its samples drawn:
/// where in it they lie is not known). All of them without `xmax`.
pub fn clip_at(buckets: &[Bucket], xmax: Option<f64>) -> (Vec<Bucket>, u64) {
    let Some(xmax) = xmax else {
        return (buckets.to_vec(), 0);
    };
    let mut shown = Vec::with_capacity(buckets.len());
    let mut beyond = 0;
    for b in buckets {
        if b.from >= xmax {
            beyond += b.count;
        } else {
            shown.push(Bucket {
                to: b.to.min(xmax),
                ..*b
            });
        }
    }
    (shown, beyond)
}

/// [`on_columns`] on a log axis starting at `start` (> 0), `column`
/// decades wide: the bounds at or below `start` are drawn at `start`.
pub fn on_log_columns(buckets: &[Bucket], start: f64, column: f64) -> Vec<Bucket> {
    let log = |v: f64| v.max(start).log10();
    let in_decades: Vec<Bucket> = buckets
        .iter()
        .filter(|b| b.to > start)
        .map(|b| Bucket {
            from: log(b.from),
            to: log(b.to),
            count: b.count,
        })
        .collect();
    on_columns(&in_decades, start.log10(), column)
        .into_iter()
        .map(|b| Bucket {
            from: 10_f64.powf(b.from),
            to: 10_f64.powf(b.to),
            count: b.count,
        })
        .collect()
}

/// The outline of `buckets` (sorted, not overlapping): up at each
/// bucket's lower bound, across at its count, down to `floor` at its upper
/// bound unless the next bucket starts there.
pub fn step_points(buckets: &[Bucket], floor: f64) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(buckets.len() * 2 + 2);
    let mut prev_to: Option<f64> = None;
    for b in buckets {
        let count = b.count as f64;
        match prev_to {
            Some(to) if to == b.from => {}
            Some(to) => {
                points.push((to, floor));
                points.push((b.from, floor));
            }
            None => points.push((b.from, floor)),
        }
        points.push((b.from, count));
        points.push((b.to, count));
        prev_to = Some(b.to);
    }
    if let Some(to) = prev_to {
        points.push((to, floor));
    }
    // Drop the corner points of equal neighbouring counts.
    points.dedup();
    points
}

/// `buckets` as drawn on columns `column` wide from `origin`: unchanged
/// when every bucket is at least a column wide; otherwise each column
/// touched by a bucket takes the largest count among them. A lone 1 µs
/// bucket on a 5000 µs axis thus stays visible, a column wide, instead of
/// a zero-width spike that a bitmap does not show.
pub fn on_columns(buckets: &[Bucket], origin: f64, column: f64) -> Vec<Bucket> {
    if column <= 0.0 || buckets.iter().all(|b| b.to - b.from >= column) {
        return buckets.to_vec();
    }
    let mut columns: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for b in buckets {
        let first = ((b.from - origin) / column).floor() as i64;
        let last = (((b.to - origin) / column).ceil() as i64 - 1).max(first);
        for k in first..=last {
            let c = columns.entry(k).or_insert(0);
            *c = (*c).max(b.count);
        }
    }
    columns
        .into_iter()
        .map(|(k, count)| Bucket {
            from: origin + k as f64 * column,
            to: origin + (k + 1) as f64 * column,
            count,
        })
        .collect()
}

/// A thread's legend: its name (after `prefix`), maximum, overflows and
/// the samples `beyond` `--xmax`.
fn thread_label(prefix: Option<&str>, t: &ThreadSamples, beyond: u64) -> String {
    let mut label = match prefix {
        Some(p) => format!("{p} {}", t.name()),
        None => t.name(),
    };
    let mut details = Vec::new();
    if let Some(max) = t.max_us {
        details.push(format!("max {} µs", format_us(max)));
    }
    if t.overflows > 0 {
        details.push(plural(t.overflows, "overflow"));
    }
    if beyond > 0 {
        details.push(format!("{beyond} beyond xmax"));
    }
    if !details.is_empty() {
        label.push_str(&format!(" ({})", details.join(", ")));
    }
    label
}
