//! Reading the results `rtlat plot` draws, whatever wrote them: the format
//! is told from the content, not the file name.
//!
//! - rtlat's `--json` (it has `rtlat_version`): per thread the
//!   `distribution` of every sample, `{"unit": "us", "buckets": [[from,
//!   to, count], ...]}` with buckets from 1 µs wide up to log-linear ones
//!   in the tail; its `histogram` (1 µs buckets) when it has none.
//! - rt-tests cyclictest's `--json`: per thread a `histogram` object of
//!   1 µs buckets (`"<us>": count`, ns buckets with `resolution_in_ns: 1`),
//!   empty unless the run had `-h`.
//! - cyclictest's histogram block (`-h`/`-H` on standard output or in
//!   `--histfile`, from either program): `# Histogram`, one row per 1 µs
//!   bucket with a count column per thread (and a sum column with `-H`),
//!   then `# Min Latencies:`, `# Max Latencies:`, `# Histogram Overflows:`
//!   and the rest. Both the 2.4 layout (every bucket, `# Total:`) and the
//!   later one (empty buckets left out) are read. A block cut short (its
//!   last line without a newline, the summary lines after the rows
//!   missing or short of a value per thread) is refused.
//!
//! Every problem is one line naming what is wrong ([`InputError`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use rtlat_results::file::{InputError, StdinOr, json_problem, read_text};

/// Samples from `from` (inclusive) to `to` (exclusive), µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    /// Lower bound, µs.
    pub from: f64,
    /// Upper bound, µs.
    pub to: f64,
    /// Samples in it.
    pub count: u64,
}

/// One measuring thread's results.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadData {
    /// Its index in the run (`T: n`, the JSON key).
    pub index: usize,
    /// The CPU it was pinned to, when it was.
    pub cpu: Option<u32>,
    /// Non-empty buckets, lowest first.
    pub buckets: Vec<Bucket>,
    /// Its largest latency, µs, when the input says it.
    pub max_us: Option<f64>,
    /// Samples beyond the histogram (not in `buckets`).
    pub overflows: u64,
}

impl ThreadData {
    /// `CPU n` when pinned, else `thread n`.
    pub fn name(&self) -> String {
        match self.cpu {
            Some(cpu) => format!("CPU {cpu}"),
            None => format!("thread {}", self.index),
        }
    }
}

/// Which program wrote an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `rtlat cyclictest --json`.
    RtlatJson,
    /// rt-tests `cyclictest --json`.
    CJson,
    /// The `-h`/`-H` histogram block.
    HistogramText,
}

/// One input, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// How messages and titles name it: the path as given, `stdin` for `-`.
    pub name: String,
    /// The file name without directory and extension, for legends.
    pub stem: String,
    /// What wrote it.
    pub format: Format,
    /// `sysinfo.nodename`.
    pub host: Option<String>,
    /// `sysinfo.release`.
    pub kernel: Option<String>,
    /// From rtlat's `"environment"`, where the result has one: the kernel
    /// release, preemption model and CPU model, in one line
    /// (`kernel 6.1.0-rt, PREEMPT_RT, Intel(R) Xeon(R) E-2278G`).
    pub environment: Option<String>,
    /// `start_time`.
    pub date: Option<String>,
    /// `cmdline:`.
    pub cmdline: Option<String>,
    /// The threads with at least one sample in a bucket, by index.
    pub threads: Vec<ThreadData>,
}

impl Input {
    /// The largest latency of all threads, µs, when known.
    pub fn max_us(&self) -> Option<f64> {
        self.threads
            .iter()
            .filter_map(|t| t.max_us)
            .max_by(f64::total_cmp)
    }
}

/// What plot reads, for the messages of an input that is not text.
const EXPECTED: &str = "expected JSON or cyclictest -h output";

/// Reads and parses one input (bounded, a byte-order mark skipped: see
/// [`rtlat_results::file`]).
pub fn read(source: &StdinOr) -> Result<Input, InputError> {
    let text = read_text(source, EXPECTED)?;
    let name = source.name();
    let stem = match source {
        StdinOr::Stdin => name.clone(),
        StdinOr::Path(path) => path
            .file_stem()
            .map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned()),
    };
    parse(&name, &stem, &text).map_err(|problem| InputError {
        file: name,
        problem,
    })
}

/// Parses `text`, the content of the input `name`.
pub fn parse(name: &str, stem: &str, text: &str) -> Result<Input, String> {
    if text.trim().is_empty() {
        return Err(format!("empty file; {EXPECTED}"));
    }
    let mut input = if text.trim_start().starts_with(['{', '[']) {
        parse_json(text)?
    } else {
        parse_histogram_text(text)?
    };
    input.name = name.to_string();
    input.stem = stem.to_string();
    Ok(input)
}

fn empty_input(format: Format) -> Input {
    Input {
        name: String::new(),
        stem: String::new(),
        format,
        host: None,
        kernel: None,
        environment: None,
        date: None,
        cmdline: None,
        threads: Vec::new(),
    }
}

// ---------------------------------------------------------------------------
// JSON

fn parse_json(text: &str) -> Result<Input, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| json_problem(&e))?;
    let Some(obj) = doc.as_object() else {
        return Err("JSON, but not an object: not a cyclictest --json file".into());
    };
    let format = if obj.contains_key("rtlat_version") {
        Format::RtlatJson
    } else {
        Format::CJson
    };
    let Some(threads) = obj.get("thread").and_then(Value::as_object) else {
        return Err("JSON without a \"thread\" object: not a cyclictest --json file".into());
    };
    // Histogram keys and C's min/max are ns with `-N`.
    let unit_ns = obj.get("resolution_in_ns").and_then(Value::as_u64) == Some(1);
    let scale = if unit_ns { 1000.0 } else { 1.0 };

    let mut indexed = Vec::with_capacity(threads.len());
    for (key, value) in threads {
        let index: usize = key
            .parse()
            .map_err(|_| format!("\"thread\" key '{key}' is not a thread number"))?;
        let t = value
            .as_object()
            .ok_or_else(|| format!("thread {index} is not an object"))?;
        indexed.push((index, t));
    }
    indexed.sort_by_key(|(i, _)| *i);
    if indexed.is_empty() {
        return Err("no threads in the \"thread\" object".into());
    }

    let mut input = empty_input(format);
    let sysinfo = obj.get("sysinfo").and_then(Value::as_object);
    let text_of = |map: Option<&Map<String, Value>>, key: &str| {
        map.and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    input.host = text_of(sysinfo, "nodename");
    input.kernel = text_of(sysinfo, "release");
    input.environment = obj
        .get("environment")
        .and_then(Value::as_object)
        .and_then(environment_summary);
    input.date = text_of(Some(obj), "start_time");
    input.cmdline = text_of(Some(obj), "cmdline:");

    let mut any_cycles = false;
    for (index, t) in indexed {
        let cycles = t.get("cycles").and_then(Value::as_u64);
        any_cycles |= cycles.is_some_and(|c| c > 0);
        let (buckets, from_histogram) = match t.get("distribution") {
            Some(d) if !d.is_null() => (distribution(index, d)?, false),
            _ => match t.get("histogram") {
                Some(h) => (histogram_object(index, h, scale)?, true),
                None => (Vec::new(), true),
            },
        };
        let in_buckets: u64 = buckets.iter().map(|b| b.count).sum();
        // Samples C counted but did not bucket are its histogram overflows;
        // rtlat's distribution holds every sample.
        let overflows = if from_histogram {
            cycles.map_or(0, |c| c.saturating_sub(in_buckets))
        } else {
            0
        };
        let max_us = match t.get("max_ns").and_then(Value::as_f64) {
            Some(ns) => Some(ns / 1000.0),
            None => t.get("max").and_then(Value::as_f64).map(|m| m / scale),
        };
        let cpu = t
            .get("cpu")
            .and_then(Value::as_i64)
            .and_then(|c| u32::try_from(c).ok());
        if buckets.is_empty() {
            continue;
        }
        input.threads.push(ThreadData {
            index,
            cpu,
            buckets,
            max_us,
            overflows,
        });
    }
    if input.threads.is_empty() {
        return Err(if !any_cycles {
            "no samples: every thread has 0 cycles".into()
        } else if format == Format::RtlatJson {
            "no histogram data: no thread has \"distribution\" or \"histogram\" buckets".into()
        } else {
            "no histogram data: the \"histogram\" objects are empty (cyclictest ran without \
             -h/--histogram, or every sample overflowed it); run cyclictest with -h US \
             (e.g. -h 1000) to plot its results"
                .into()
        });
    }
    Ok(input)
}

/// The one-line summary of an `"environment"` object: `kernel RELEASE`,
/// the preemption model and the CPU model, each where recorded (runs of
/// white space in them made one space); `None` when none is.
fn environment_summary(env: &Map<String, Value>) -> Option<String> {
    let text = |section: &str, key: &str| {
        let value = env.get(section)?.get(key)?.as_str()?;
        let words: Vec<&str> = value.split_whitespace().collect();
        (!words.is_empty()).then(|| words.join(" "))
    };
    let parts: Vec<String> = [
        text("kernel", "release").map(|r| format!("kernel {r}")),
        text("kernel", "preemption"),
        text("cpu", "model"),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// rtlat's `{"unit": "us", "buckets": [[from, to, count], ...]}`.
fn distribution(index: usize, d: &Value) -> Result<Vec<Bucket>, String> {
    let bad = |what: &str| format!("thread {index}: bad \"distribution\": {what}");
    let d = d.as_object().ok_or_else(|| bad("not an object"))?;
    match d.get("unit").and_then(Value::as_str) {
        Some("us") => {}
        Some(other) => return Err(bad(&format!("unit '{other}', expected 'us'"))),
        None => return Err(bad("no \"unit\"")),
    }
    let list = d
        .get("buckets")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"buckets\" array"))?;
    let mut buckets = Vec::with_capacity(list.len());
    for b in list {
        let triple = b.as_array().filter(|a| a.len() == 3);
        let parsed = triple.and_then(|a| {
            Some(Bucket {
                from: a[0].as_f64()?,
                to: a[1].as_f64()?,
                count: a[2].as_u64()?,
            })
        });
        match parsed {
            Some(bucket)
                if bucket.from < bucket.to && bucket.from.is_finite() && bucket.to.is_finite() =>
            {
                if bucket.count > 0 {
                    buckets.push(bucket);
                }
            }
            _ => {
                return Err(bad(&format!(
                    "bucket {b} is not [from, to, count] with from < to"
                )));
            }
        }
    }
    buckets.sort_by(|a, b| a.from.total_cmp(&b.from).then(a.to.total_cmp(&b.to)));
    Ok(buckets)
}

/// C's `{"<bucket>": count, ...}`, buckets `scale` per µs.
fn histogram_object(index: usize, h: &Value, scale: f64) -> Result<Vec<Bucket>, String> {
    let bad = |what: String| format!("thread {index}: bad \"histogram\": {what}");
    let h = h.as_object().ok_or_else(|| bad("not an object".into()))?;
    let mut buckets = Vec::with_capacity(h.len());
    for (key, count) in h {
        let at: i64 = key
            .trim()
            .parse()
            .map_err(|_| bad(format!("bucket '{key}' is not a number")))?;
        let count = count
            .as_u64()
            .ok_or_else(|| bad(format!("bucket '{key}' has count {count}, not a count")))?;
        if count > 0 {
            buckets.push(Bucket {
                from: at as f64 / scale,
                to: (at + 1) as f64 / scale,
                count,
            });
        }
    }
    buckets.sort_by(|a, b| a.from.total_cmp(&b.from));
    Ok(buckets)
}

// ---------------------------------------------------------------------------
// The `-h` histogram block

fn parse_histogram_text(text: &str) -> Result<Input, String> {
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
    let mut input = empty_input(Format::HistogramText);
    let total_overflows: f64 = overflows.iter().flatten().take(threads).sum();
    for (index, mut buckets) in per_thread.into_iter().enumerate() {
        buckets.sort_by(|a, b| a.from.total_cmp(&b.from));
        if buckets.is_empty() {
            continue;
        }
        input.threads.push(ThreadData {
            index,
            cpu: None,
            buckets,
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
                "every sample is beyond the histogram ({total_overflows} overflows); \
                 run cyclictest with a larger -h{}",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Input {
        parse("in.txt", "in", text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn err(text: &str) -> String {
        match parse("in.txt", "in", text) {
            Err(e) => e,
            Ok(i) => panic!("expected an error, got {i:?}"),
        }
    }

    fn b(from: f64, to: f64, count: u64) -> Bucket {
        Bucket { from, to, count }
    }

    const RTLAT_JSON: &str = r#"{
      "file_version": 1,
      "cmdline:": "rtlat cyclictest -q -l 10 -t 2 -a --json x.json",
      "rt_test_version:": "2.40",
      "rtlat_version": "0.1.0",
      "start_time": "Sun, 22 Nov 2026 01:44:57 +0000",
      "sysinfo": {"sysname": "Linux", "nodename": "box", "release": "6.1.0-rt"},
      "num_threads": 2,
      "resolution_in_ns": 0,
      "thread": {
        "1": {"histogram": {}, "cycles": 4, "min": 3, "max": 130, "cpu": -1,
              "max_ns": 130400,
              "percentiles": {"p50": 3.0, "max": 130.4},
              "distribution": {"unit": "us", "buckets": [[3.0, 4.0, 3], [128.0, 132.0, 1]]}},
        "0": {"histogram": {}, "cycles": 6, "min": 2, "max": 9, "cpu": 1,
              "max_ns": 9000,
              "distribution": {"unit": "us", "buckets": [[2.0, 3.0, 5], [9.0, 10.0, 1]]}}
      },
      "all_threads": {"p50": 3.0, "max": 130.4}
    }"#;

    #[test]
    fn rtlat_json_distribution() {
        let i = ok(RTLAT_JSON);
        assert_eq!(i.format, Format::RtlatJson);
        assert_eq!(i.host.as_deref(), Some("box"));
        assert_eq!(i.kernel.as_deref(), Some("6.1.0-rt"));
        assert_eq!(i.date.as_deref(), Some("Sun, 22 Nov 2026 01:44:57 +0000"));
        assert_eq!(
            i.cmdline.as_deref(),
            Some("rtlat cyclictest -q -l 10 -t 2 -a --json x.json")
        );
        assert_eq!(i.threads.len(), 2);
        let (t0, t1) = (&i.threads[0], &i.threads[1]);
        assert_eq!((t0.index, t0.cpu, t0.name()), (0, Some(1), "CPU 1".into()));
        assert_eq!((t1.index, t1.cpu, t1.name()), (1, None, "thread 1".into()));
        assert_eq!(t0.buckets, vec![b(2.0, 3.0, 5), b(9.0, 10.0, 1)]);
        assert_eq!(t1.buckets, vec![b(3.0, 4.0, 3), b(128.0, 132.0, 1)]);
        assert_eq!(t1.max_us, Some(130.4));
        assert_eq!((t0.overflows, t1.overflows), (0, 0));
        assert_eq!(i.max_us(), Some(130.4));
    }

    #[test]
    fn rtlat_json_environment_in_one_line() {
        let mut doc: Value = serde_json::from_str(RTLAT_JSON).unwrap();
        assert_eq!(ok(RTLAT_JSON).environment, None);
        doc["environment"] = serde_json::json!({
            "kernel": {"release": "6.1.0-rt", "preemption": "PREEMPT_RT"},
            "cpu": {"model": "Intel(R)  Xeon(R)\tE-2278G ", "count": 8},
        });
        assert_eq!(
            ok(&doc.to_string()).environment.as_deref(),
            Some("kernel 6.1.0-rt, PREEMPT_RT, Intel(R) Xeon(R) E-2278G")
        );
        // What is not recorded is left out; an audit that could not be
        // made (null) gives none.
        doc["environment"] = serde_json::json!({
            "kernel": {"release": "6.6.0", "preemption": null}, "cpu": {"model": ""}
        });
        assert_eq!(
            ok(&doc.to_string()).environment.as_deref(),
            Some("kernel 6.6.0")
        );
        doc["environment"] = serde_json::json!({"kernel": {}, "cpu": null});
        assert_eq!(ok(&doc.to_string()).environment, None);
        doc["environment"] = Value::Null;
        assert_eq!(ok(&doc.to_string()).environment, None);
    }

    #[test]
    fn rtlat_json_without_distribution_uses_its_histogram() {
        let text = r#"{"rtlat_version": "0.1.0", "resolution_in_ns": 0,
            "thread": {"0": {"histogram": {"5": 2, "7": 1}, "cycles": 4, "max": 12, "cpu": -1}}}"#;
        let i = ok(text);
        assert_eq!(i.threads[0].buckets, vec![b(5.0, 6.0, 2), b(7.0, 8.0, 1)]);
        assert_eq!(i.threads[0].overflows, 1);
        assert_eq!(i.threads[0].max_us, Some(12.0));
        assert_eq!(i.host, None);
    }

    #[test]
    fn c_json_histogram() {
        // Shape of rt-tests 2.4 `cyclictest -q -l 2000 -t 2 -h 50 --json=F`.
        let text = r##"{
          "file_version": 1,
          "cmdline:": "/usr/bin/cyclictest -q -l 2000 -t 2 -h 50 -i 1000 --json=/tmp/c.json",
          "rt_test_version:": "2.40",
          "start_time": "Sun, 22 Nov 2026 06:07:41 +0000",
          "end_time": "Sun, 22 Nov 2026 06:07:43 +0000",
          "return_code": 0,
          "sysinfo": {"sysname": "Linux", "nodename": "vm", "release": "6.18.44-fc-v769",
                      "version": "#1 SMP PREEMPT_DYNAMIC @0", "machine": "x86_64", "realtime": 0},
          "num_threads": 2,
          "resolution_in_ns": 0,
          "thread": {
            "0": {"histogram": {"18": 1, "34": 1, "45": 1}, "cycles": 2000, "min": 18,
                  "max": 3412, "avg": 69.55, "cpu": 0, "node": 0},
            "1": {"histogram": {"20": 1}, "cycles": 2000, "min": 20, "max": 3293,
                  "avg": 73.60, "cpu": 1, "node": 0}
          }
        }"##;
        let i = ok(text);
        assert_eq!(i.format, Format::CJson);
        assert_eq!(i.host.as_deref(), Some("vm"));
        assert_eq!(
            i.threads[0].buckets,
            vec![b(18.0, 19.0, 1), b(34.0, 35.0, 1), b(45.0, 46.0, 1)]
        );
        assert_eq!(i.threads[0].overflows, 1997);
        assert_eq!(i.threads[0].max_us, Some(3412.0));
        assert_eq!(i.threads[1].name(), "CPU 1");
        assert_eq!(i.threads[1].overflows, 1999);
        assert_eq!(i.max_us(), Some(3412.0));
    }

    #[test]
    fn c_json_in_nanoseconds() {
        let text = r#"{"resolution_in_ns": 1, "thread": {"0": {"histogram": {"1500": 2},
            "cycles": 2, "max": 1500, "cpu": 0}}}"#;
        let i = ok(text);
        assert_eq!(i.threads[0].buckets, vec![b(1.5, 1.501, 2)]);
        assert_eq!(i.threads[0].max_us, Some(1.5));
    }

    #[test]
    fn c_json_without_histogram_says_to_use_h() {
        let text = r#"{"rt_test_version:": "2.40", "thread": {"0": {"histogram": {},
            "cycles": 100, "min": 3, "max": 20, "avg": 5.0, "cpu": 0, "node": 0}}}"#;
        let e = err(text);
        assert!(e.starts_with("no histogram data"), "{e}");
        assert!(e.contains("-h US"), "{e}");
    }

    #[test]
    fn bad_json_is_one_line() {
        for (text, needle) in [
            (
                "{\"thread\": ",
                "cut short: the JSON ends before it is complete (EOF while parsing",
            ),
            ("{\"thread\" 1}", "not valid JSON (expected `:`"),
            ("{}", "JSON without a \"thread\" object"),
            ("{\"thread\": {}}", "no threads"),
            (
                "{\"thread\": {\"x\": {}}}",
                "\"thread\" key 'x' is not a thread number",
            ),
            ("{\"thread\": {\"0\": {\"cycles\": 0}}}", "no samples"),
            (
                r#"{"rtlat_version": "0", "thread": {"0": {"cycles": 3,
                   "distribution": {"unit": "ns", "buckets": []}}}}"#,
                "unit 'ns'",
            ),
            (
                r#"{"rtlat_version": "0", "thread": {"0": {"cycles": 3,
                   "distribution": {"unit": "us", "buckets": [[3, 2, 1]]}}}}"#,
                "bucket [3,2,1] is not [from, to, count]",
            ),
            (
                r#"{"thread": {"0": {"cycles": 3, "histogram": {"a": 1}}}}"#,
                "bucket 'a' is not a number",
            ),
            ("  \n", "empty file"),
        ] {
            let e = err(text);
            assert!(e.contains(needle), "{text}: {e:?} lacks {needle:?}");
            assert!(!e.contains('\n'), "{e:?}");
        }
    }

    /// `cyclictest -q -l 20 -t 2 -h 5` (2.4), with a leading header line.
    const C_TEXT: &str = "# /dev/cpu_dma_latency set to 0us\n\
        # Histogram\n\
        000000 000000\t000000\n\
        000001 000002\t000000\n\
        000002 000010\t000001\n\
        000003 000000\t000003\n\
        000004 000001\t000000\n\
        # Total: 000000013 000000004\n\
        # Min Latencies: 00001 00002\n\
        # Avg Latencies: 00002 00007\n\
        # Max Latencies: 00004 00040\n\
        # Histogram Overflows: 00007 00016\n\
        # Histogram Overflow at cycle number:\n\
        # Thread 0: 00003 00004 00005 00006 00007 # 00002 others\n\
        # Thread 1: 00000 00001 00002 00003 00004 # 00011 others\n\
        \n";

    #[test]
    fn histogram_text_v2_4() {
        let i = ok(C_TEXT);
        assert_eq!(i.format, Format::HistogramText);
        assert_eq!(i.host, None);
        assert_eq!(i.threads.len(), 2);
        let (t0, t1) = (&i.threads[0], &i.threads[1]);
        assert_eq!(
            t0.buckets,
            vec![b(1.0, 2.0, 2), b(2.0, 3.0, 10), b(4.0, 5.0, 1)]
        );
        assert_eq!(t1.buckets, vec![b(2.0, 3.0, 1), b(3.0, 4.0, 3)]);
        assert_eq!((t0.max_us, t1.max_us), (Some(4.0), Some(40.0)));
        assert_eq!((t0.overflows, t1.overflows), (7, 16));
        assert_eq!(t1.name(), "thread 1");
    }

    #[test]
    fn histogram_text_with_sum_column_and_later_layout() {
        // -H: a sum column and max-of-max / total overflow columns; the
        // 2.7+ layout leaves out empty buckets and `# Total:`.
        let text = "# Histogram\n\
            000003 000001\t000002\t000003\n\
            000010 000000\t000001\t000001\n\
            # Min Latencies: 00003 00003\n\
            # Avg Latencies: 00003 00005\n\
            # Max Latencies: 00003 00010 00010\n\
            # Histogram Overflows: 00000 00000 00000\n\
            # Histogram Overflow at cycle number:\n\
            # Thread 0: \n\
            # Thread 1: \n";
        let i = ok(text);
        assert_eq!(i.threads[0].buckets, vec![b(3.0, 4.0, 1)]);
        assert_eq!(i.threads[1].buckets, vec![b(3.0, 4.0, 2), b(10.0, 11.0, 1)]);
        assert_eq!(i.max_us(), Some(10.0));
    }

    #[test]
    fn histogram_text_cut_anywhere_is_refused() {
        // Up to the end of its `# Histogram Overflows:` line, every cut of
        // the block is refused, at a line's end or inside one.
        let needed = C_TEXT.find("# Histogram Overflow at").unwrap();
        let start = C_TEXT.find("# Histogram\n").unwrap() + "# Histogram\n".len();
        for cut in start..needed {
            let e = err(&C_TEXT[..cut]);
            assert!(!e.contains('\n'), "{e:?}");
            assert!(
                e.contains("cut short") || e.contains("without bucket rows"),
                "cut at {cut}: {e}"
            );
        }
        ok(&C_TEXT[..needed]);
        for (text, message) in [
            (
                "# Histogram\n000000 000004\n000001 00",
                "line 3 is cut short: the file ends inside it, with no newline ('000001 00')",
            ),
            (
                "# Histogram\n000000 000004\n000001 000001\n",
                "no '# Min Latencies:' line after the histogram rows: the block is cut short",
            ),
            (
                "# Histogram\n000000 000004\n# Min Latencies: 00000\n# Avg Latencies: 00000\n",
                "no '# Max Latencies:' line after the histogram rows: the block is cut short",
            ),
            (
                "# Histogram\n000000 000004\t000001\n# Min Latencies: 00000 00000\n\
                 # Max Latencies: 00000\n# Histogram Overflows: 00000 00000\n",
                "'# Max Latencies:' has 1 value for 2 threads: the block is cut short",
            ),
        ] {
            assert_eq!(err(text), message);
        }
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_text() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("bom.json", RTLAT_JSON), ("bom.txt", C_TEXT)] {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
            let read = read(&StdinOr::Path(path)).unwrap();
            assert_eq!(read.threads, ok(text).threads, "{name}");
        }
    }

    #[test]
    fn bad_histogram_text_is_one_line() {
        for (text, needle) in [
            ("hello\nworld\n", "no '# Histogram' line"),
            (
                "# Histogram\n000001 000002 x\n",
                "line 2: not a histogram row",
            ),
            (
                "# Histogram\n000001 000002\t000002\t000009\n# Min Latencies: 00001\n",
                "line 2: 3 counts for 1 thread",
            ),
            (
                "# Histogram\n000000 000000\n# Total: 000000000\n# Min Latencies: 00090\n\
                 # Max Latencies: 00120\n# Histogram Overflows: 00005\n",
                "every sample is beyond the histogram (5 overflows); run cyclictest with a larger -h, above the maximum 120 us",
            ),
            (
                "# Histogram\n000000 000000\n# Total: 000000000\n# Min Latencies: 1000000\n\
                 # Max Latencies: 00000\n# Histogram Overflows: 00000\n",
                "no samples in the histogram",
            ),
            ("# Histogram\n", "without bucket rows"),
        ] {
            let e = err(text);
            assert!(e.contains(needle), "{text}: {e:?} lacks {needle:?}");
            assert!(!e.contains('\n'), "{e:?}");
        }
    }

    #[test]
    fn files_are_named_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let e = read(&StdinOr::Path(missing.clone())).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot read: No such file or directory",
                missing.display()
            )
        );
        let binary = dir.path().join("bin.dat");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let e = read(&StdinOr::Path(binary.clone())).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{}: not a text file", binary.display()))
        );
        let good = dir.path().join("run-1.json");
        std::fs::write(&good, RTLAT_JSON).unwrap();
        let i = read(&StdinOr::Path(good)).unwrap();
        assert_eq!(i.stem, "run-1");
        assert!(i.name.ends_with("run-1.json"));
    }
}
