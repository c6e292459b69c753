//! cyclictest's histogram block (`-h`/`-H` on standard output or in
//! `--histfile`, from either program): `# Histogram`, one row per 1 µs
//! bucket with a count column per thread (and a sum column with `-H`),
//! then `# Min Latencies:`, `# Max Latencies:`, `# Histogram Overflows:`
//! and the rest. Both the 2.4 layout (every bucket, `# Total:`) and the
//! later one (empty buckets left out) are read. A block cut short (its
//! last line without a newline, the summary lines after the rows missing
//! or short of a value per thread) is refused.

use std::collections::BTreeMap;

use crate::read::Format;
use crate::samples::{Bucket, Samples, ThreadSamples, plural};

/// Reads the block in `text` (whatever comes before `# Histogram` is left).
pub fn parse(text: &str) -> Result<Samples, String> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == "# Histogram") else {
        return Err(
            "neither JSON nor cyclictest histogram output (no '# Histogram' line; \
             run cyclictest with -h US to print one)"
                .into(),
        );
    };
    // cyclictest ends every line with a newline (the block with an empty
    // line): without one the file was cut short, perhaps inside a number.
    if !text.ends_with('\n') {
        return Err(format!(
            "line {} is cut short: the file ends inside it, with no newline ('{}')",
            lines.len(),
            clip(lines.last().copied().unwrap_or_default())
        ));
    }
    let mut rows: Vec<HistogramRow> = Vec::new();
    let mut summary: BTreeMap<String, &str> = BTreeMap::new();
    for (n, line) in lines.iter().enumerate().skip(start + 1) {
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
        match HistogramRow::parse(line_no, line) {
            Some(row) => rows.push(row),
            None => {
                return Err(format!(
                    "line {line_no}: not a histogram row (bucket, then one count per thread): \
                     '{}'",
                    clip(line)
                ));
            }
        }
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

    let threads = match (&min, rows.first()) {
        (Some(min), _) if !min.is_empty() => min.len(),
        (_, Some(row)) => row.columns,
        _ => return Err("'# Histogram' without bucket rows or '# Min Latencies:'".into()),
    };
    let mut per_thread: Vec<Vec<Bucket>> = vec![Vec::new(); threads];
    for row in &rows {
        // With -H, a sum column follows the threads' columns.
        if row.columns != threads && row.columns != threads + 1 {
            return Err(format!(
                "line {}: {} counts for {threads} thread{}",
                row.line_no,
                row.columns,
                if threads == 1 { "" } else { "s" }
            ));
        }
        for &(t, count) in row.nonzero.iter().filter(|(t, _)| *t < threads) {
            per_thread[t].push(Bucket {
                from: row.bucket as f64,
                to: (row.bucket + 1) as f64,
                count,
            });
        }
    }
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
    for (index, mut buckets) in per_thread.into_iter().enumerate() {
        buckets.sort_by(|a, b| a.from.total_cmp(&b.from));
        if buckets.is_empty() {
            continue;
        }
        input.threads.push(ThreadSamples {
            index,
            cpu: None,
            buckets,
            min_us: min.as_ref().and_then(|m| m.get(index).copied()),
            max_us: max.as_ref().and_then(|m| m.get(index).copied()),
            overflows: overflows
                .as_ref()
                .and_then(|o| o.get(index))
                .map_or(0, |&o| o as u64),
        });
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

/// A bucket row of the `-h` block. Only its non-zero counts are kept:
/// most rows of a large `-h` in the 2.4 layout are all zeros, and a
/// `-h 1000000` block of 32 threads (232 MB of text) is read with a peak
/// of 293 MB instead of 551 MB.
struct HistogramRow {
    line_no: usize,
    /// The bucket, µs (ns with `-N`).
    bucket: i64,
    /// Count columns on the line.
    columns: usize,
    /// `(column, count)` of the non-zero counts.
    nonzero: Vec<(usize, u64)>,
}

impl HistogramRow {
    /// The row on `line`: a bucket, then one or more counts.
    fn parse(line_no: usize, line: &str) -> Option<HistogramRow> {
        let mut words = line.split_whitespace();
        let bucket = words.next()?.parse::<i64>().ok()?;
        let mut row = HistogramRow {
            line_no,
            bucket,
            columns: 0,
            nonzero: Vec::new(),
        };
        for word in words {
            let count: u64 = word.parse().ok()?;
            if count > 0 {
                row.nonzero.push((row.columns, count));
            }
            row.columns += 1;
        }
        (row.columns > 0).then_some(row)
    }
}

/// `line`, shortened for a message.
fn clip(line: &str) -> String {
    const LIMIT: usize = 60;
    match line.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line.to_string(),
    }
}
