//! Reading one side of a comparison: an rtlat JSON result (any rtlat
//! tool whose threads carry `percentiles`; an IPC pair's are its
//! receiver's), or the C cyclictest's JSON of a run with `-h`, whose
//! percentiles are computed from its 1 µs histogram buckets (and so known
//! to the whole µs only: [`RunFile::resolution`]). The document is read by
//! [`rtlat_results`]; every refusal is one line naming the file and what
//! is wrong.
//!
//! Besides the rows' values, each side keeps what the intervals of
//! [`super::judge`] need: the distribution's buckets with their counts
//! (to read the values at other ranks) and, when rtlat wrote them, the
//! thread's `"blocks"` (how the samples spread over the run, to measure
//! how strongly late samples cluster in time). Files without blocks (the
//! C tool's, rtlat's before blocks were written) are read as before.

use std::collections::BTreeMap;

use rtlat_stats::blocks::BlockSeries;

use rtlat_results::bounds::{latency_ns, latency_us};
use rtlat_results::document::{Distribution, Percentiles, ThreadResult};
use rtlat_results::file::{StdinOr, read_text};
use rtlat_results::samples::{OslatHistogram, ThreadSamples};
use rtlat_results::{Format, ResultDocument};

use super::environment::Facts;
use super::figures::{Figures, ROWS, Row};
use rtlat_args::UsageError;

/// One file's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFile {
    /// The file as named on the command line.
    pub label: String,
    /// By thread index.
    pub threads: BTreeMap<usize, Figures>,
    /// All threads together.
    pub all: Figures,
    /// The facts of its `"environment"`, when it records one.
    pub environment: Option<Facts>,
    /// How its figures were made when not by rtlat's own percentiles (a
    /// C cyclictest's `-h` histogram): said beside the file's name.
    pub resolution: Option<&'static str>,
    /// The share of its measured CPUs' time the hypervisor stole, when
    /// the file records it (`"verdict".steal_share`).
    pub steal_share: Option<f64>,
}

/// What [`RunFile::resolution`] says of the C cyclictest's JSON.
pub const FROM_C_HISTOGRAM: &str =
    "rt-tests cyclictest: percentiles from its -h histogram, to the whole us";

/// What [`RunFile::resolution`] says of the C oslat's JSON.
pub const FROM_C_OSLAT_HISTOGRAM: &str =
    "rt-tests oslat: percentiles from its histogram, to the whole us";

/// Reads and checks `source` (bounded, a byte-order mark skipped: see
/// [`rtlat_results::file`]).
pub fn load(source: &StdinOr) -> Result<RunFile, UsageError> {
    parse_owned(&source.name(), read(source)?)
}

/// The text of `source`, as [`load`] reads it (the same refusal), for
/// [`parse_owned`] once the caller has looked at it.
pub fn read(source: &StdinOr) -> Result<String, UsageError> {
    read_text(source, WANTED).map_err(|e| UsageError(e.to_string()))
}

/// Ends the refusals of what is not a result compare reads (as before the
/// C cyclictest's JSON with a histogram was read: the refusals of a C file
/// say what it needs, `-h`).
const WANTED: &str = "compare takes the JSON files of 'rtlat cyclictest --json'";

/// Reads `text`, the content of the file `label`.
#[cfg(test)]
pub fn parse(label: &str, text: &str) -> Result<RunFile, UsageError> {
    parse_owned(label, text.to_string())
}

/// Reads `text`, the content of the file `label`, taking it: it is let
/// go once its document is read.
pub fn parse_owned(label: &str, text: String) -> Result<RunFile, UsageError> {
    let fail = |what: String| UsageError(format!("{label}: {what}"));
    if text.trim().is_empty() {
        return Err(fail(format!("empty file; {WANTED}")));
    }
    // The C tools' JSON is often not even JSON (`-nan`): name it first.
    let from_c = text.contains("\"rt_test_version:\"") && !text.contains("\"rtlat_version\"");
    let doc = ResultDocument::parse(&text).map_err(|e| {
        fail(if from_c {
            format!("written by the C rt-tests tools (no \"rtlat_version\"), and {e}; {WANTED}")
        } else {
            format!("{e}; {WANTED}")
        })
    })?;
    let oslat = OslatHistogram::of(&doc);
    drop(text);
    let format = doc.format();
    let environment = Facts::of(doc.environment.as_ref());
    let steal_share = doc.steal_share;
    let run = match format {
        Format::RtlatJson => of_rtlat(doc, oslat),
        _ => of_c_histogram(doc, oslat),
    };
    let (threads, all) = run.map_err(fail)?;
    Ok(RunFile {
        label: label.to_string(),
        threads,
        all,
        environment,
        resolution: (format != Format::RtlatJson).then_some(match oslat {
            Some(_) => FROM_C_OSLAT_HISTOGRAM,
            None => FROM_C_HISTOGRAM,
        }),
        steal_share,
    })
}

type Threads = (BTreeMap<usize, Figures>, Figures);

/// rtlat's figures: each thread's percentiles, exact minimum and maximum
/// and distribution (oslat's: its histogram, read as oslat means it);
/// all threads' percentiles. The document is taken: each thread is let
/// go once its figures are read.
fn of_rtlat(doc: ResultDocument, oslat: Option<OslatHistogram>) -> Result<Threads, String> {
    let mut threads = BTreeMap::new();
    let scale = doc.units_per_us();
    let all_threads = doc.all_threads();
    for (index, t) in doc.threads {
        let figures = thread_figures(index, t.into_latencies(), oslat, scale)
            .map_err(|e| format!("thread {index}: {e}"))?;
        threads.insert(index, figures);
    }
    let all_threads = all_threads
        .map_err(|e| format!("\"all_threads\": {e}"))?
        .ok_or_else(|| format!("no \"all_threads\" percentiles; {WANTED}"))?;
    let mut values =
        percentile_values(&all_threads).map_err(|e| format!("\"all_threads\": {e}"))?;
    values[Row::Min as usize] = threads.values().filter_map(|f| f.value(Row::Min)).min();
    let buckets = merged_buckets(threads.values().map(|f| &f.buckets[..]));
    let series: Option<Vec<&BlockSeries>> = threads.values().map(|f| f.blocks.as_ref()).collect();
    // Threads whose blocks cannot be put together (lengths that are not
    // multiples of one another) leave all threads with no block: their
    // rows are "too few blocks", never judged as if independent.
    let blocks = series.map(|s| {
        BlockSeries::together(&s).unwrap_or_else(|| BlockSeries::from_blocks(1, Vec::new()))
    });
    let samples = threads.values().try_fold(0, |total, f| {
        rtlat_results::bounds::add_count("all threads: \"cycles\"", total, f.samples)
    })?;
    let all = Figures {
        samples,
        values,
        buckets,
        blocks,
    };
    Ok((threads, all))
}

/// Buckets of several threads as one distribution: the counts of equal
/// buckets added (saturating: the sample counts are checked apart).
fn merged_buckets<'a>(
    threads: impl Iterator<Item = &'a [(i64, i64, u64)]>,
) -> Vec<(i64, i64, u64)> {
    let mut merged: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    for &(from, to, count) in threads.flatten() {
        let total = merged.entry((from, to)).or_default();
        *total = total.saturating_add(count);
    }
    merged
        .into_iter()
        .map(|((from, to), count)| (from, to, count))
        .collect()
}

fn thread_figures(
    index: usize,
    t: ThreadResult,
    oslat: Option<OslatHistogram>,
    scale: f64,
) -> Result<Figures, String> {
    let samples = t.sample_count().ok_or("no \"cycles\"")?;
    let percentiles = t
        .percentiles()
        .map_err(|e| format!("\"percentiles\": {e}"))?
        .ok_or_else(|| format!("no \"percentiles\"; {WANTED}"))?;
    let mut values =
        percentile_values(&percentiles).map_err(|e| format!("\"percentiles\": {e}"))?;
    let ns = |key: &str, ns: Option<i64>| {
        ns.map(|ns| latency_ns(format_args!("\"{key}\""), ns))
            .transpose()
    };
    values[Row::Min as usize] = ns("min_ns", t.min_ns)?;
    if let Some(max) = ns("max_ns", t.max_ns)? {
        values[Row::Max as usize] = Some(max);
    }
    let blocks = t.blocks.as_ref().map(|b| b.to_series()).transpose()?;
    let buckets = match (&t.distribution, oslat) {
        (Some(d), _) => distribution_bounds(d)?,
        (None, Some(_)) if t.histogram.is_some() => OslatHistogram::thread(oslat, index, t, scale)?
            .buckets
            .iter()
            .map(|b| (micros_to_ns(b.from), micros_to_ns(b.to), b.count))
            .collect(),
        (None, _) => Vec::new(),
    };
    Ok(Figures {
        samples,
        values,
        buckets,
        blocks,
    })
}

/// The rows' values (ns) of a percentiles object (µs with 3 decimals),
/// each within the accepted range ([`rtlat_results::bounds`]).
fn percentile_values(p: &Percentiles) -> Result<[Option<i64>; ROWS.len()], String> {
    let mut values = [None; ROWS.len()];
    for (value, row) in values.iter_mut().zip(ROWS) {
        if let Some(key) = row.percentile_key()
            && let Some(us) = p.get(key).flatten()
        {
            *value = Some(micros_to_ns(latency_us(format_args!("\"{key}\""), us)?));
        }
    }
    Ok(values)
}

/// A distribution's buckets, bounds in ns.
fn distribution_bounds(d: &Distribution) -> Result<Vec<(i64, i64, u64)>, String> {
    d.check().map_err(|_| {
        "\"distribution\" is not {\"unit\": \"us\", \"buckets\": [[from, to, count], ...]}"
            .to_string()
    })?;
    for &(from, to, _) in &d.buckets {
        latency_us("a \"distribution\" bucket's bound", from)?;
        latency_us("a \"distribution\" bucket's bound", to)?;
    }
    let mut out: Vec<(i64, i64, u64)> = d
        .buckets
        .iter()
        .map(|&(from, to, count)| (micros_to_ns(from), micros_to_ns(to), count))
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// The C cyclictest's figures, from each thread's `-h` histogram and its
/// exact (whole µs) minimum and maximum; all threads from their buckets
/// together. The document is taken: each thread's histogram is let go
/// once it is read.
fn of_c_histogram(doc: ResultDocument, oslat: Option<OslatHistogram>) -> Result<Threads, String> {
    let scale = doc.units_per_us();
    let mut threads = BTreeMap::new();
    let mut every = Vec::new();
    let mut total = 0;
    for (index, t) in doc.threads {
        let samples = OslatHistogram::thread(oslat, index, t, scale)?;
        if samples.buckets.is_empty() && samples.count() > 0 {
            return Err(format!(
                "written by the C rt-tests tools (no \"rtlat_version\") without a histogram \
                 (thread {index} has none): it has no percentiles; run cyclictest with -h US \
                 (e.g. -h 1000); {WANTED}"
            ));
        }
        total = rtlat_results::bounds::add_count("all threads", total, samples.count())?;
        threads.insert(index, histogram_figures(&samples));
        every.push(samples);
    }
    let all = histogram_figures(&ThreadSamples::merged(&every));
    Ok((threads, all))
}

/// Figures of bucketed samples: the rows from the buckets, min and max as
/// the file says them.
fn histogram_figures(t: &ThreadSamples) -> Figures {
    let us_to_ns = |us: f64| micros_to_ns(us);
    let values = ROWS.map(|row| match row.fraction() {
        Some(fraction) => t.value_at(fraction).map(us_to_ns),
        None if row == Row::Min => t.min_us.map(us_to_ns),
        None if row == Row::Floor => None,
        None => t.max_us.map(us_to_ns),
    });
    Figures {
        samples: t.count(),
        values,
        buckets: t
            .buckets
            .iter()
            .map(|b| (us_to_ns(b.from), us_to_ns(b.to), b.count))
            .collect(),
        blocks: None,
    }
}

fn micros_to_ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const BASE: &str = include_str!("testdata/base.json");

    fn error(text: &str) -> String {
        parse("x.json", text).unwrap_err().0
    }

    #[test]
    fn reads_the_fixture() {
        let r = parse("base.json", BASE).unwrap();
        assert_eq!(r.threads.len(), 2);
        let t0 = &r.threads[&0];
        assert_eq!(t0.samples, 20_000);
        assert_eq!(
            t0.values,
            [
                Some(1_000),
                Some(15_000),
                Some(29_000),
                Some(256_000),
                None,
                Some(2_908_406)
            ]
        );
        assert_eq!(t0.buckets[0], (1_000, 2_000, 9_000));
        assert_eq!(r.all.samples, 25_000);
        assert_eq!(r.all.value(Row::Min), Some(1_000));
        assert_eq!(r.all.value(Row::Max), Some(2_908_406));
    }

    #[test]
    fn the_steal_share_is_read_from_the_verdict() {
        let with = |verdict: &str| {
            let text = BASE.trim_end().trim_end_matches('}').to_string()
                + &format!(", \"verdict\": {verdict}}}");
            parse("v.json", &text).unwrap().steal_share
        };
        assert_eq!(parse("base.json", BASE).unwrap().steal_share, None);
        assert_eq!(
            with(r#"{"level": "caveats", "steal_share": 0.0283}"#),
            Some(0.0283)
        );
        assert_eq!(with(r#"{"steal_share": null}"#), None);
        // Not a share: not read (the rows are judged as if unknown).
        assert_eq!(with(r#"{"steal_share": 7}"#), None);
        assert_eq!(with(r#"{"steal_share": "x"}"#), None);
        assert_eq!(with(r#""broken""#), None);
    }

    #[test]
    fn ipc_results_read_the_receiver() {
        let text = r#"{"rtlat_version": "0.1.0", "thread": {"0": {"sender": {"samples": 5},
            "receiver": {"samples": 5, "min_ns": 3000, "max_ns": 9000,
            "percentiles": {"p50": 4.0, "p90": 5.0, "p99": 6.0, "p99.9": 6.0, "p99.99": 6.0,
            "p99.999": 6.0, "max": 9.0}}}},
            "all_threads": {"p50": 4.0, "p90": 5.0, "p99": 6.0, "p99.9": 6.0, "p99.99": 6.0,
            "p99.999": 6.0, "max": 9.0}}"#;
        let r = parse("ipc.json", text).unwrap();
        assert_eq!(r.threads[&0].samples, 5);
        assert_eq!(r.threads[&0].value(Row::P99), Some(6_000));
        assert!(r.threads[&0].buckets.is_empty());
    }

    #[test]
    fn oslat_histograms_are_read_as_oslat_labels_them() {
        // C oslat 2.4: a bucket's label is its upper edge ("1" holds the
        // gaps below 1 µs), and so are its min and max.
        let c = r#"{"file_version": 1, "cmdline:": "/usr/bin/oslat -D 1 --json=c.json",
            "rt_test_version:": "2.40", "num_threads": 1, "thread": {"0": {"cpu": 1,
            "freq": 2100, "min": 1, "avg": 1.2, "max": 3, "duration": 1.0,
            "histogram": {"1": 90, "2": 9, "3": 1}}}}"#;
        let r = parse("c.json", c).unwrap();
        assert_eq!(r.resolution, Some(FROM_C_OSLAT_HISTOGRAM));
        let t = &r.threads[&0];
        assert_eq!(t.samples, 100);
        assert_eq!(t.value(Row::Min), Some(0));
        assert_eq!(t.value(Row::P50), Some(0));
        assert_eq!(t.value(Row::P99), Some(1_000));
        assert_eq!(t.value(Row::Max), Some(3_000));
        assert_eq!(t.buckets[0], (0, 1_000, 90));
        // Ours, without a "distribution": the same buckets from its
        // histogram, the percentiles its own.
        let ours = r#"{"rtlat_version": "0.1.0", "cmdline:": "rtlat oslat -D 1",
            "thread": {"0": {"cycles": 100, "min_ns": 23, "max_ns": 2500,
            "histogram": {"1": 90, "2": 9, "3": 1},
            "percentiles": {"p50": 0.023, "p90": 0.03, "p99": 1.2, "p99.9": 2.5,
            "p99.99": 2.5, "p99.999": 2.5, "max": 2.5}}},
            "all_threads": {"p50": 0.023, "p90": 0.03, "p99": 1.2, "p99.9": 2.5,
            "p99.99": 2.5, "p99.999": 2.5, "max": 2.5}}"#;
        let r = parse("ours.json", ours).unwrap();
        assert_eq!(r.resolution, None);
        let t = &r.threads[&0];
        assert_eq!(t.value(Row::P99), Some(1_200));
        assert_eq!(
            t.buckets,
            [(0, 1_000, 90), (1_000, 2_000, 9), (2_000, 3_000, 1)]
        );
    }

    #[test]
    fn c_json_with_a_histogram_reads_its_buckets() {
        // Thread 1 has 2 samples beyond the histogram.
        let r = parse("c.json", crate::compare::fixtures::C_WITH_HISTOGRAM).unwrap();
        assert_eq!(r.resolution, Some(FROM_C_HISTOGRAM));
        assert_eq!(r.environment, None);
        let t0 = &r.threads[&0];
        assert_eq!(t0.samples, 100);
        assert_eq!(
            t0.values,
            [
                Some(3_000),
                Some(3_000),
                Some(9_000),
                Some(9_000),
                None,
                Some(9_000)
            ]
        );
        assert_eq!(t0.buckets[0], (3_000, 4_000, 50));
        // p99 and p99.9 are among thread 1's overflows: not known but the
        // last, the maximum.
        let t1 = &r.threads[&1];
        assert_eq!(
            t1.values,
            [
                Some(5_000),
                Some(5_000),
                None,
                Some(700_000),
                None,
                Some(700_000)
            ]
        );
        assert_eq!(r.all.samples, 200);
        assert_eq!(r.all.value(Row::Min), Some(3_000));
        assert_eq!(r.all.value(Row::P50), Some(5_000));
        assert_eq!(r.all.value(Row::P99), Some(9_000));
        assert_eq!(r.all.value(Row::Max), Some(700_000));
        // rtlat's own results are not marked.
        assert_eq!(parse("base.json", BASE).unwrap().resolution, None);
    }

    #[test]
    fn table_of_refusals() {
        let c_json = r#"{
  "file_version": 1,
  "cmdline:": "cyclictest -q --json=ct.json",
  "rt_test_version:": "2.40",
  "thread": {"0": {"cycles": 0, "min": 1000000, "max": 0, "avg": -nan}}
}"#;
        let without_percentiles = BASE.replace("\"percentiles\"", "\"percentile\"");
        let without_p999 = BASE.replacen("\"p99.9\":", "\"p99.8\":", 1);
        let cases: Vec<(&str, &str)> = vec![
            (
                c_json,
                "x.json: written by the C rt-tests tools (no \"rtlat_version\"), and not valid \
                 JSON (invalid number at line 5 column 67); compare takes the JSON files of \
                 'rtlat cyclictest --json'",
            ),
            (
                "T: 0 ( 1000) P: 0",
                "x.json: not valid JSON (expected value at line 1 column 1); compare takes",
            ),
            (
                "",
                "x.json: empty file; compare takes the JSON files of 'rtlat cyclictest --json'",
            ),
            (
                &BASE[..BASE.len() / 2],
                "x.json: cut short: the JSON ends before it is complete (EOF while parsing",
            ),
            (
                "[1, 2]",
                "x.json: JSON, but not an object: not a --json result; compare takes",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\"}",
                "x.json: JSON without a \"thread\" object: not a --json result",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\", \"thread\": {}}",
                "x.json: no threads in the \"thread\" object",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\", \"thread\": {\"a\": {}}}",
                "x.json: \"thread\" key 'a' is not a thread number",
            ),
            (
                "{\"rtlat_version\": \"0.1.0\", \"thread\": {\"0\": {}}}",
                "x.json: thread 0: no \"cycles\"",
            ),
            (
                &without_percentiles,
                "x.json: thread 0: no \"percentiles\"; compare takes the JSON files of 'rtlat \
                 cyclictest --json'",
            ),
            (
                &without_p999,
                "x.json: thread 0: \"percentiles\": missing field `p99.9`",
            ),
            (
                r#"{"rt_test_version:": "2.40", "thread": {"0": {"histogram": {}, "cycles": 100,
                    "min": 3, "max": 20, "avg": 5.0, "cpu": 0, "node": 0}}}"#,
                "x.json: written by the C rt-tests tools (no \"rtlat_version\") without a \
                 histogram (thread 0 has none): it has no percentiles; run cyclictest with -h US",
            ),
        ];
        for (text, expected) in cases {
            let message = error(text);
            assert!(
                message.starts_with(expected),
                "{text}\n got {message}\nwant {expected}"
            );
            assert!(!message.contains('\n'), "{message}");
        }
        let mut doc: Value = serde_json::from_str(BASE).unwrap();
        doc.as_object_mut().unwrap().remove("all_threads");
        assert!(error(&doc.to_string()).starts_with("x.json: no \"all_threads\" percentiles"));
        doc["thread"]["1"]["percentiles"]["p99"] = Value::from("fast");
        assert_eq!(
            error(&doc.to_string()),
            "x.json: thread 1: \"percentiles\": invalid type: string \"fast\", expected f64"
        );
        doc["thread"]["1"]["distribution"]["unit"] = Value::from("ns");
        doc["thread"]["1"]["percentiles"]["p99"] = Value::from(29.0);
        assert!(error(&doc.to_string()).starts_with("x.json: thread 1: \"distribution\" is not"));
    }

    #[test]
    fn blocks_are_read_and_all_threads_take_them_together() {
        use crate::compare::fixtures::{document, series, thread};
        let threads = [thread(40_000, |_| 10), thread(60_000, |i| i % 3)];
        let r = parse("b.json", &document(&threads, true)).unwrap();
        let read = r.threads[&0].blocks.as_ref().unwrap();
        assert!(read.blocks() == series(&threads[0]).blocks());
        let all = r.all.blocks.as_ref().unwrap();
        assert_eq!(all.blocks().len(), 100);
        assert_eq!(all.blocks()[4].cycles, 2_000);
        // One thread without blocks: none for all threads either.
        let mut doc: Value = serde_json::from_str(&document(&threads, true)).unwrap();
        doc["thread"]["1"].as_object_mut().unwrap().remove("blocks");
        let r = parse("b.json", &doc.to_string()).unwrap();
        assert!(r.threads[&0].blocks.is_some());
        assert_eq!(r.all.blocks, None);
        // Files without blocks read as before.
        assert_eq!(parse("base.json", BASE).unwrap().all.blocks, None);
        // Blocks of 0.1 s and 0.25 s do not go together: all threads have
        // none to judge by.
        let mut doc: Value = serde_json::from_str(&document(&threads, true)).unwrap();
        doc["thread"]["1"]["blocks"]["block_s"] = Value::from(0.25);
        let r = parse("b.json", &doc.to_string()).unwrap();
        assert_eq!(r.all.blocks.as_ref().map(|b| b.blocks().len()), Some(0));
    }

    #[test]
    fn broken_blocks_are_one_line_naming_the_file_and_thread() {
        use crate::compare::fixtures::{document, thread};
        let mut doc: Value =
            serde_json::from_str(&document(&[thread(40_000, |_| 10)], true)).unwrap();
        doc["thread"]["0"]["blocks"]["sum_ns"]
            .as_array_mut()
            .unwrap()
            .pop();
        assert_eq!(
            error(&doc.to_string()),
            "x.json: thread 0: \"blocks\": \"sum_ns\" has 99 values, \"cycles\" 100"
        );
        doc["thread"]["0"]["blocks"] = Value::from(3);
        let message = error(&doc.to_string());
        assert!(message.starts_with("x.json: "), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn missing_file_names_it() {
        let e = load(&StdinOr::from_arg("/nonexistent/base.json"))
            .unwrap_err()
            .0;
        assert_eq!(
            e,
            "/nonexistent/base.json: cannot read: No such file or directory"
        );
    }

    #[test]
    fn a_thread_without_samples_has_no_values() {
        let mut doc: Value = serde_json::from_str(BASE).unwrap();
        let t = &mut doc["thread"]["1"];
        t["cycles"] = Value::from(0);
        t["min_ns"] = Value::Null;
        t["max_ns"] = Value::Null;
        for (_, v) in t["percentiles"].as_object_mut().unwrap() {
            *v = Value::Null;
        }
        let r = parse("x.json", &doc.to_string()).unwrap();
        assert_eq!(r.threads[&1].values, [None; ROWS.len()]);
    }
}
