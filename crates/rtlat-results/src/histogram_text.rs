//! cyclictest's histogram block (`-h`/`-H` on standard output or in
//! `--histfile`, from either program): `# Histogram`, one row per 1 µs
//! bucket with a count column per thread (and a sum column with `-H`),
//! then `# Min Latencies:`, `# Max Latencies:`, `# Histogram Overflows:`
//! and the rest. Both the 2.4 layout (every bucket, `# Total:`) and the
//! later one (empty buckets left out) are read. A block cut short (its
//! last line without a newline, the summary lines after the rows missing
//! or short of a value per thread) is refused.

use std::collections::BTreeMap;

use crate::bounds;
use crate::read::Format;
use crate::samples::model::{Bucket, Samples, ThreadSamples, plural};

/// The most count columns a row may have: far more threads than any
/// machine runs (NR_CPUS is 8192 at most), and a sum column. A row with
/// more is not a histogram row, and the columns' buckets stay few.
const MAX_COLUMNS: usize = 1 << 16;

/// Reads the block in `text` (whatever comes before `# Histogram` is left).
///
/// The rows are read as they come, line by line, and only their non-zero
/// counts kept, 16 bytes each in their column: a 2.4 block of mostly
/// empty buckets takes little beside its text, a dense one a few times
/// its text (a count is 7 bytes of it).
pub fn parse(text: &str) -> Result<Samples, String> {
    let mut lines = text.lines().enumerate();
    if !lines.any(|(_, l)| l.trim_end() == "# Histogram") {
        return Err(
            "neither JSON nor cyclictest histogram output (no '# Histogram' line; \
             run cyclictest with -h US to print one)"
                .into(),
        );
    }
    // cyclictest ends every line with a newline (the block with an empty
    // line): without one the file was cut short, perhaps inside a number.
    if !text.ends_with('\n') {
        return Err(format!(
            "line {} is cut short: the file ends inside it, with no newline ('{}')",
            text.lines().count(),
            clip(text.rsplit('\n').next().unwrap_or_default())
        ));
    }
    // Per count column, its non-zero `(bucket, count)`s.
    let mut columns: Vec<Vec<(i64, u64)>> = Vec::new();
    // Each number of count columns rows have, and the first line with it.
    let mut widths: BTreeMap<usize, usize> = BTreeMap::new();
    let mut first_row: Option<usize> = None;
    let mut summary: BTreeMap<String, &str> = BTreeMap::new();
    for (n, line) in lines {
        let line_no = n + 1;
        if let Some(comment) = line.strip_prefix('#') {
            if let Some((label, rest)) = comment.split_once(':') {
                summary.entry(label.trim().to_string()).or_insert(rest);
            }
            continue;
        }
        if line.trim().is_empty() {
            if summary.is_empty() {
                continue;
            }
            break;
        }
        if !summary.is_empty() {
            // Whatever follows the block (another tool's output).
            break;
        }
        let width = read_row(line, &mut columns).ok_or_else(|| {
            format!(
                "line {line_no}: not a histogram row (bucket, then one count per thread, \
                 at most {MAX_COLUMNS} counts): '{}'",
                clip(line)
            )
        })?;
        widths.entry(width).or_insert(line_no);
        first_row.get_or_insert(width);
    }

    let numbers = |label: &str| -> Result<Option<Vec<f64>>, String> {
        let Some(rest) = summary.get(label) else {
            return Ok(None);
        };
        rest.split_whitespace()
            .take_while(|w| *w != "#")
            .map(|w| {
                w.parse::<f64>()
                    .map_err(|_| format!("'# {label}:' has '{w}', not a number"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    let min = numbers("Min Latencies")?;
    let max = numbers("Max Latencies")?;
    let overflows = numbers("Histogram Overflows")?;

    let threads = match (&min, first_row) {
        (Some(min), _) if !min.is_empty() => min.len(),
        (_, Some(width)) => width,
        _ => return Err("'# Histogram' without bucket rows or '# Min Latencies:'".into()),
    };
    // With -H, a sum column follows the threads' columns.
    if let Some((width, line_no)) = widths
        .iter()
        .filter(|(w, _)| **w != threads && **w != threads + 1)
        .min_by_key(|(_, line_no)| **line_no)
    {
        return Err(format!(
            "line {line_no}: {width} counts for {threads} thread{}",
            if threads == 1 { "" } else { "s" }
        ));
    }
    columns.truncate(threads);
    // Every layout writes these after the rows (with `# Avg Latencies:`,
    // not read), one value per thread (and a maximum or sum with -H):
    // fewer, or none, is a block cut short.
    for (label, values) in [
        ("Min Latencies", &min),
        ("Max Latencies", &max),
        ("Histogram Overflows", &overflows),
    ] {
        match values {
            None => {
                return Err(format!(
                    "no '# {label}:' line after the histogram rows: the block is cut short"
                ));
            }
            Some(values) if values.len() < threads => {
                return Err(format!(
                    "'# {label}:' has {} value{} for {threads} thread{}: the block is cut short",
                    values.len(),
                    if values.len() == 1 { "" } else { "s" },
                    if threads == 1 { "" } else { "s" },
                ));
            }
            Some(_) => {}
        }
    }
    let mut input = Samples::empty(Format::HistogramText);
    let total_overflows: f64 = overflows.iter().flatten().take(threads).sum();
    let mut total = 0;
    for (index, column) in columns.into_iter().enumerate() {
        if column.is_empty() {
            continue;
        }
        let mut buckets = Vec::with_capacity(column.len());
        for (bucket, count) in column {
            let from = bounds::latency_us(format_args!("thread {index}: bucket"), bucket as f64)?;
            buckets.push(Bucket {
                from,
                to: from + 1.0,
                count,
            });
        }
        buckets.sort_by(|a, b| a.from.total_cmp(&b.from));
        let extreme = |label: &str, values: &Option<Vec<f64>>| {
            values
                .as_ref()
                .and_then(|m| m.get(index).copied())
                .map(|v| bounds::latency_us(format_args!("thread {index}: '# {label}:'"), v))
                .transpose()
        };
        let thread = ThreadSamples {
            index,
            cpu: None,
            min_us: extreme("Min Latencies", &min)?,
            max_us: extreme("Max Latencies", &max)?,
            overflows: overflows
                .as_ref()
                .and_then(|o| o.get(index))
                .map_or(0, |&o| o as u64),
            buckets,
        };
        let what = format!("thread {index}");
        let count = thread.buckets.iter().try_fold(thread.overflows, |sum, b| {
            bounds::add_count(&what, sum, b.count)
        })?;
        total = bounds::add_count("all threads", total, count)?;
        input.threads.push(thread);
    }
    if input.threads.is_empty() {
        return Err(if total_overflows > 0.0 {
            format!(
                "every sample is beyond the histogram ({}); \
                 run cyclictest with a larger -h{}",
                plural(total_overflows as u64, "overflow"),
                match max
                    .as_ref()
                    .and_then(|m| m.iter().copied().max_by(f64::total_cmp))
                {
                    Some(m) => format!(", above the maximum {m} us"),
                    None => String::new(),
                }
            )
        } else {
            "no samples in the histogram".into()
        });
    }
    Ok(input)
}

/// Reads the bucket row on `line` (a bucket, then one or more counts)
/// into `columns`, its non-zero counts only: most rows of a large `-h` in
/// the 2.4 layout are all zeros. Returns how many counts it has; `None`
/// when it is not a row.
fn read_row(line: &str, columns: &mut Vec<Vec<(i64, u64)>>) -> Option<usize> {
    let mut words = line.split_whitespace();
    let bucket = words.next()?.parse::<i64>().ok()?;
    let mut width = 0;
    for word in words {
        let count: u64 = word.parse().ok()?;
        if width == MAX_COLUMNS {
            return None;
        }
        if count > 0 {
            if columns.len() <= width {
                columns.resize_with(width + 1, Vec::new);
            }
            columns[width].push((bucket, count));
        }
        width += 1;
    }
    (width > 0).then_some(width)
}

/// `line`, shortened for a message.
fn clip(line: &str) -> String {
    const LIMIT: usize = 60;
    match line.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line.to_string(),
    }
}
