//! A result as bucketed samples, whatever wrote it: the format is told
//! from the content, not the file name.
//!
//! - rtlat's `--json` (any tool's: an IPC pair's latencies are its
//!   receiver's): per thread the `distribution` of every sample, buckets
//!   from 1 µs wide up to log-linear ones in the tail; its `histogram`
//!   (1 µs buckets) when it has none.
//! - rt-tests cyclictest's `--json`: per thread a `histogram` object of
//!   1 µs buckets (ns buckets with `resolution_in_ns: 1`), empty unless
//!   the run had `-h`.
//! - cyclictest's histogram block ([`crate::histogram_text`]).
//! - oslat's `--json` (rt-tests' or rtlat's): per thread a `histogram`
//!   whose labels are the buckets' upper edges (`"1"` holds the gaps under
//!   1 µs), the last bucket also counting every longer gap
//!   ([`ThreadSamples::as_oslat`]).
//!
//! Every problem is one line naming what is wrong.

use serde_json::Value;

use crate::bounds;
use crate::document::{BucketLabels, Distribution, Histogram, ThreadResult};
use crate::file::{InputError, StdinOr, read_text};
use crate::read::{Format, ResultDocument};

pub(crate) mod model;

pub use model::{Bucket, Samples, ThreadSamples, plural};

impl Samples {
    /// Reads and parses `source` (bounded, a byte-order mark skipped: see
    /// [`crate::file`]); `expected` ends the messages of an input that is
    /// not text.
    pub fn read(source: &StdinOr, expected: &str) -> Result<Samples, InputError> {
        let text = read_text(source, expected)?;
        let name = source.name();
        let stem = source.stem();
        Samples::parse_owned(&name, &stem, text, expected).map_err(|problem| InputError {
            file: name,
            problem,
        })
    }

    /// Parses `text`, the content of the input `name` (`stem` for
    /// legends): JSON or the histogram block.
    pub fn parse(name: &str, stem: &str, text: &str, expected: &str) -> Result<Samples, String> {
        Samples::parse_owned(name, stem, text.to_string(), expected)
    }

    /// [`Samples::parse`], taking the text: JSON's is let go once the
    /// document is read, before its buckets become the samples.
    pub fn parse_owned(
        name: &str,
        stem: &str,
        text: String,
        expected: &str,
    ) -> Result<Samples, String> {
        if text.trim().is_empty() {
            return Err(format!("empty file; {expected}"));
        }
        let mut samples = if text.trim_start().starts_with(['{', '[']) {
            let doc = ResultDocument::parse(&text)?;
            let oslat = OslatHistogram::of(&doc);
            drop(text);
            Samples::of_document_in(doc, oslat)?
        } else {
            crate::histogram_text::parse(&text)?
        };
        samples.name = name.to_string();
        samples.stem = stem.to_string();
        Ok(samples)
    }

    /// The samples of a `--json` document: each thread's distribution, or
    /// its histogram (whose overflows are the samples it counted but did
    /// not bucket).
    pub fn of_document(doc: &ResultDocument) -> Result<Samples, String> {
        Samples::of_owned_document(doc.clone())
    }

    /// [`Samples::of_document`], taking the document: its buckets become
    /// the samples' without a copy.
    pub fn of_owned_document(doc: ResultDocument) -> Result<Samples, String> {
        let oslat = OslatHistogram::of(&doc);
        Samples::of_document_in(doc, oslat)
    }

    /// [`Samples::of_owned_document`]; `oslat`: how an oslat document's
    /// histograms are read.
    fn of_document_in(
        doc: ResultDocument,
        oslat: Option<OslatHistogram>,
    ) -> Result<Samples, String> {
        let format = doc.format();
        let mut samples = Samples::empty(format);
        let text = |s: &str| {
            let s = s.trim();
            (!s.is_empty()).then(|| s.to_string())
        };
        let h = &doc.header;
        samples.host = text(&h.sysinfo.nodename);
        samples.kernel = text(&h.sysinfo.release);
        samples.date = text(&h.start_time);
        samples.cmdline = text(&h.cmdline);
        samples.tool = samples.cmdline.as_deref().and_then(tool_of);
        samples.environment = doc.environment.as_ref().and_then(environment_summary);
        let scale = doc.units_per_us();

        let mut any_samples = false;
        let mut total = 0;
        for (index, t) in doc.threads {
            let count = t.latencies().sample_count();
            any_samples |= count.is_some_and(|c| c > 0);
            let thread = OslatHistogram::thread(oslat, index, t, scale)?;
            total = bounds::add_count("all threads", total, thread.count())?;
            if !thread.buckets.is_empty() {
                samples.threads.push(thread);
            }
        }
        if samples.threads.is_empty() {
            return Err(if !any_samples {
                "no samples: every thread has 0 cycles".into()
            } else if format == Format::RtlatJson {
                "no histogram data: no thread has \"distribution\" or \"histogram\" buckets".into()
            } else if samples.tool.as_deref() == Some("cyclicdeadline") {
                "no histogram data: rt-tests cyclicdeadline's --json has no \"histogram\" \
                 (before 2.7, or run without --histogram); rtlat cyclicdeadline's has every \
                 sample's \"distribution\""
                    .into()
            } else {
                "no histogram data: the \"histogram\" objects are empty or absent (cyclictest \
                 ran without -h/--histogram, or every sample overflowed it); run cyclictest with \
                 -h US (e.g. -h 1000) to plot its results"
                    .into()
            });
        }
        Ok(samples)
    }

    /// The largest latency of all threads, µs, when known.
    pub fn max_us(&self) -> Option<f64> {
        self.threads
            .iter()
            .filter_map(|t| t.max_us)
            .max_by(f64::total_cmp)
    }
}

impl ThreadSamples {
    /// The samples of thread `index` of a `--json` document (pass an IPC
    /// pair's [`ThreadResult::latencies`]), C's figures `scale` per µs
    /// ([`ResultDocument::units_per_us`]): its distribution, or its histogram
    /// and the samples it counted beyond it.
    pub fn of_thread(index: usize, t: &ThreadResult, scale: f64) -> Result<ThreadSamples, String> {
        let buckets = match (&t.distribution, &t.histogram) {
            (Some(d), _) => Some(distribution_buckets(index, d.buckets.clone(), &d.unit)?),
            (None, Some(h)) => Some(histogram_buckets(index, h, scale)?),
            (None, None) => None,
        };
        ThreadSamples::of_parts(index, t, buckets, scale)
    }

    /// [`ThreadSamples::of_thread`], taking the thread: its distribution's
    /// buckets become the samples' without a copy.
    pub fn of_owned_thread(
        index: usize,
        mut t: ThreadResult,
        scale: f64,
    ) -> Result<ThreadSamples, String> {
        if let Some(receiver) = t.receiver.take() {
            return ThreadSamples::of_owned_thread(index, *receiver, scale);
        }
        let buckets = match (t.distribution.take(), &t.histogram) {
            (Some(d), _) => Some(distribution_buckets(index, d.buckets, &d.unit)?),
            (None, Some(h)) => Some(histogram_buckets(index, h, scale)?),
            (None, None) => None,
        };
        t.histogram = None;
        ThreadSamples::of_parts(index, &t, buckets, scale)
    }

    /// The samples of thread `index`: `buckets` from its distribution, or
    /// from its histogram (or none) when `from_histogram`; its count,
    /// minimum and maximum checked.
    fn of_parts(
        index: usize,
        t: &ThreadResult,
        buckets: Option<(Vec<Bucket>, bool)>,
        scale: f64,
    ) -> Result<ThreadSamples, String> {
        let (buckets, from_histogram) = buckets.unwrap_or((Vec::new(), true));
        let what = format!("thread {index}");
        let in_buckets = buckets
            .iter()
            .try_fold(0, |total, b| bounds::add_count(&what, total, b.count))?;
        // Samples C counted but did not bucket are its histogram overflows;
        // rtlat's distribution holds every sample.
        let overflows = if from_histogram {
            t.sample_count().map_or(0, |c| c.saturating_sub(in_buckets))
        } else {
            0
        };
        let extreme =
            |ns: Option<i64>, ns_key: &str, figure: Option<f64>, key: &str| match (ns, figure) {
                (Some(ns), _) => bounds::latency_ns(format_args!("{what}: \"{ns_key}\""), ns)
                    .map(|ns| Some(ns as f64 / 1000.0)),
                (None, Some(figure)) => {
                    bounds::latency_us(format_args!("{what}: \"{key}\""), figure / scale).map(Some)
                }
                (None, None) => Ok(None),
            };
        Ok(ThreadSamples {
            index,
            cpu: t.cpu.and_then(|c| u32::try_from(c).ok()),
            buckets,
            min_us: extreme(t.min_ns, "min_ns", t.min, "min")?,
            max_us: extreme(t.max_ns, "max_ns", t.max, "max")?,
            overflows,
        })
    }

    /// Buckets read from an oslat `histogram` (1 µs keys, as
    /// [`histogram_buckets`] reads them) as what they hold: oslat labels a
    /// bucket with its upper edge, so key `k` holds the gaps from `k - w`
    /// to `k` µs, `w` the buckets' width (`width`, else the largest that
    /// divides every key: 1 unless `-W` made them wider); its last bucket
    /// also counts every longer gap, so when the maximum is beyond that
    /// bucket (`exact_max`: the maximum is exact, not C's label of its
    /// bucket), its samples are overflows: the histogram ends below it.
    /// Returns `w`, µs.
    pub fn as_oslat(&mut self, width: Option<u64>, exact_max: bool) -> f64 {
        let width = width.unwrap_or_else(|| {
            self.buckets
                .iter()
                .map(|b| b.from as u64)
                .fold(0, gcd)
                .max(1)
        }) as f64;
        for b in &mut self.buckets {
            b.to = b.from;
            b.from = (b.from - width).max(0.0);
        }
        // The only bucket stays, to be drawn.
        let (Some(max), [.., _, last]) = (self.max_us, self.buckets.as_slice()) else {
            return width;
        };
        let (top, count) = (last.to, last.count);
        if max > top || (exact_max && max == top) {
            self.buckets.pop();
            self.overflows = self.overflows.saturating_add(count);
        }
        width
    }

    /// All of `threads` as one: their buckets added up (by bounds),
    /// overflows summed, the smallest minimum and largest maximum.
    pub fn merged(threads: &[ThreadSamples]) -> ThreadSamples {
        let mut counts: std::collections::BTreeMap<(u64, u64), u64> = Default::default();
        // Saturating: the readers refuse a file whose counts add up
        // beyond 64 bits, but threads of several files may be merged.
        for b in threads.iter().flat_map(|t| &t.buckets) {
            let count = counts
                .entry((b.from.to_bits(), b.to.to_bits()))
                .or_insert(0);
            *count = count.saturating_add(b.count);
        }
        let mut buckets: Vec<Bucket> = counts
            .into_iter()
            .map(|((from, to), count)| Bucket {
                from: f64::from_bits(from),
                to: f64::from_bits(to),
                count,
            })
            .collect();
        buckets.sort_by(|a, b| a.from.total_cmp(&b.from).then(a.to.total_cmp(&b.to)));
        ThreadSamples {
            index: 0,
            cpu: None,
            buckets,
            min_us: threads
                .iter()
                .filter_map(|t| t.min_us)
                .min_by(f64::total_cmp),
            max_us: threads
                .iter()
                .filter_map(|t| t.max_us)
                .max_by(f64::total_cmp),
            overflows: threads
                .iter()
                .fold(0, |total: u64, t| total.saturating_add(t.overflows)),
        }
    }
}

/// rtlat's distribution as buckets, checked, the empty ones left out
/// (in place: the buckets are the size of the distribution's).
fn distribution_buckets(
    index: usize,
    buckets: Vec<(f64, f64, u64)>,
    unit: &str,
) -> Result<(Vec<Bucket>, bool), String> {
    Distribution::check_parts(unit, &buckets)
        .map_err(|what| format!("thread {index}: bad \"distribution\": {what}"))?;
    let what = format_args!("thread {index}: a \"distribution\" bucket's bound");
    for &(from, to, _) in &buckets {
        bounds::latency_us(what, from)?;
        bounds::latency_us(what, to)?;
    }
    let mut buckets: Vec<Bucket> = buckets
        .into_iter()
        .filter(|b| b.2 > 0)
        .map(|(from, to, count)| Bucket { from, to, count })
        .collect();
    buckets.sort_by(|a, b| a.from.total_cmp(&b.from).then(a.to.total_cmp(&b.to)));
    Ok((buckets, false))
}

/// C's histogram, buckets `scale` per µs, checked.
fn histogram_buckets(
    index: usize,
    h: &Histogram,
    scale: f64,
) -> Result<(Vec<Bucket>, bool), String> {
    let what = format_args!("thread {index}: a \"histogram\" bucket");
    let buckets =
        h.0.iter()
            .filter(|(_, count)| **count > 0)
            .map(|(&at, &count)| {
                let from = bounds::latency_us(what, at as f64 / scale)?;
                Ok(Bucket {
                    from,
                    to: (at as f64 + 1.0) / scale,
                    count,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
    Ok((buckets, true))
}

/// How an oslat document's `"histogram"`s are read
/// ([`ThreadSamples::as_oslat`]): the buckets' width where the document
/// says it, and whether C's `min` and `max` are ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OslatHistogram {
    /// rt-tests 2.4's oslat has no `-W`: its buckets are 1 µs wide.
    width: Option<u64>,
    /// C oslat's figures are ns where its labels have decimals (2.5 on,
    /// a `-W` not in whole µs).
    ns_figures: bool,
}

impl OslatHistogram {
    /// The reading of `doc` when oslat wrote it (C's or rtlat's), else
    /// `None`: C's figures are ns where a histogram's labels have decimals.
    pub fn of(doc: &ResultDocument) -> Option<OslatHistogram> {
        let h = &doc.header;
        if tool_of(&h.cmdline).as_deref() != Some("oslat") {
            return None;
        }
        let from_c = doc.format() == Format::CJson;
        Some(OslatHistogram {
            width: (from_c && h.rt_test_version.trim() == "2.40").then_some(1),
            ns_figures: from_c
                && doc.threads.values().any(|t| {
                    t.histogram
                        .as_ref()
                        .is_some_and(|h| h.1 == BucketLabels::Fractional)
                }),
        })
    }

    /// The samples of thread `index` ([`ThreadSamples::of_owned_thread`]),
    /// its histogram read as oslat means it when `oslat` says the document
    /// is oslat's (a thread with a distribution is read from that).
    pub fn thread(
        oslat: Option<OslatHistogram>,
        index: usize,
        t: ThreadResult,
        scale: f64,
    ) -> Result<ThreadSamples, String> {
        let oslat = oslat
            .filter(|_| t.receiver.is_none() && t.distribution.is_none() && t.histogram.is_some());
        let exact_max = t.max_ns.is_some();
        let mut thread = ThreadSamples::of_owned_thread(index, t, scale)?;
        if let Some(oslat) = oslat {
            let labels = !exact_max && !oslat.ns_figures;
            if oslat.ns_figures && !exact_max {
                thread.min_us = thread.min_us.map(|ns| ns / 1000.0);
                thread.max_us = thread.max_us.map(|ns| ns / 1000.0);
            }
            let width = thread.as_oslat(oslat.width, exact_max);
            // C's minimum in µs is its bucket's label: the smallest gap is
            // only known to be above the label less the width.
            if labels {
                thread.min_us = thread.min_us.map(|min| (min - width).max(0.0));
            }
        }
        Ok(thread)
    }
}

/// The greatest common divisor of `a` and `b` (`b` when `a` is 0).
fn gcd(a: u64, b: u64) -> u64 {
    if a == 0 { b } else { gcd(b % a, a) }
}

/// The tool of a command line: `cyclictest` of `/usr/bin/cyclictest -q`
/// and of `rtlat cyclictest -q`.
fn tool_of(cmdline: &str) -> Option<String> {
    let mut words = cmdline.split_whitespace();
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let first = base(words.next()?);
    if first == "rtlat" {
        words.next().map(base)
    } else {
        Some(first)
    }
}

/// The one-line summary of an `"environment"` object: `kernel RELEASE`,
/// the preemption model and the CPU model, each where recorded (runs of
/// white space in them made one space); `None` when none is.
fn environment_summary(env: &Value) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::StdinOr;

    const EXPECTED: &str = "expected JSON or cyclictest -h output";

    fn parse(name: &str, stem: &str, text: &str) -> Result<Samples, String> {
        Samples::parse(name, stem, text, EXPECTED)
    }

    fn read(source: &StdinOr) -> Result<Samples, crate::file::InputError> {
        Samples::read(source, EXPECTED)
    }

    fn ok(text: &str) -> Samples {
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
    fn oslat_fractional_labels_fold_into_whole_us_buckets() {
        // oslat -W 250 (2.5 and later): labels are the buckets' upper
        // edges in us, with three decimals.
        let i = ok(r#"{"thread": {"0": {"cycles": 6, "histogram":
            {"0.250": 1, "0.500": 2, "1.000": 1, "1.250": 2}}}}"#);
        let counts: Vec<u64> = i.threads[0].buckets.iter().map(|b| b.count).collect();
        assert_eq!(counts.iter().sum::<u64>(), 6);
        assert_eq!(counts, [4, 2]);
        for bad in ["1.", ".5", "1.2.3", "-0.5", "1e3"] {
            let text =
                format!(r#"{{"thread": {{"0": {{"cycles": 1, "histogram": {{"{bad}": 1}}}}}}}}"#);
            assert!(err(&text).contains("is not a number"), "{bad}");
        }
    }

    #[test]
    fn oslat_labels_are_upper_edges_and_its_last_bucket_holds_the_overflows() {
        // rt-tests 2.4 (no -W: 1 µs buckets); its maximum is the label of
        // the maximum's bucket, here beyond the last one (-b 32).
        let c = |max: u32| {
            ok(&format!(
                r#"{{"file_version": 1, "cmdline:": "/usr/bin/oslat -D 1 --json=x.json",
                "rt_test_version:": "2.40", "thread": {{"0": {{"cpu": 1, "freq": 2100,
                "min": 1, "avg": 1.03, "max": {max}, "duration": 1.0,
                "histogram": {{"1": 1000, "2": 4, "32": 3}}}}}}}}"#
            ))
        };
        let t = &c(20024).threads[0];
        assert_eq!(t.buckets, [b(0.0, 1.0, 1000), b(1.0, 2.0, 4)]);
        assert_eq!((t.overflows, t.count()), (3, 1007));
        // The maximum in the last bucket: no sample is beyond it.
        let t = &c(32).threads[0];
        assert_eq!(t.buckets.last(), Some(&b(31.0, 32.0, 3)));
        assert_eq!(t.overflows, 0);
        // rtlat's, -W 2000 -b 4: 2 µs buckets, told from the labels, and
        // the exact maximum (8 µs is the last bucket's top: beyond it).
        let ours = |max_ns: u32| {
            ok(&format!(
                r#"{{"rtlat_version": "0.1.0", "cmdline:": "rtlat oslat -W 2000 -b 4",
                "thread": {{"0": {{"cycles": 10, "max": 8, "max_ns": {max_ns},
                "histogram": {{"2": 6, "4": 1, "8": 3}}}}}}}}"#
            ))
        };
        let t = &ours(8000).threads[0];
        assert_eq!(t.buckets, [b(0.0, 2.0, 6), b(2.0, 4.0, 1)]);
        assert_eq!(t.overflows, 3);
        assert_eq!(ours(7999).threads[0].overflows, 0);
        // rt-tests 2.10, -W 250: labels with decimals folded into whole
        // µs, and C's maximum in ns.
        let ns = ok(r#"{"file_version": 1, "cmdline:": "/usr/bin/oslat -W 250",
            "rt_test_version:": "2.10", "thread": {"0": {"cpu": 1, "min": 36,
            "max": 8124297, "histogram": {"0.250": 7, "0.500": 1, "1.250": 2,
            "32.000": 5}}}}"#);
        let t = &ns.threads[0];
        assert_eq!(t.buckets, [b(0.0, 1.0, 8), b(1.0, 2.0, 2)]);
        assert_eq!(
            (t.max_us, t.min_us, t.overflows),
            (Some(8124.297), Some(0.036), 5)
        );
        // Another tool's key k is the bucket from k.
        let other = ok(
            r#"{"cmdline:": "cyclictest -h 40", "thread": {"0": {"cycles": 3,
            "max": 9, "histogram": {"2": 2, "9": 1}}}}"#,
        );
        assert_eq!(other.threads[0].buckets, [b(2.0, 3.0, 2), b(9.0, 10.0, 1)]);
    }

    #[test]
    fn c_cyclicdeadline_without_histogram_says_what_has_one() {
        let e = err(
            r#"{"cmdline:": "/usr/bin/cyclicdeadline -D 1 --json=x.json",
            "rt_test_version:": "2.40", "thread": {"0": {"cycles": 101, "min": 1, "max": 106,
            "avg": 9.77}}}"#,
        );
        assert!(
            e.starts_with("no histogram data: rt-tests cyclicdeadline's"),
            "{e}"
        );
        assert!(e.contains("rtlat cyclicdeadline's has"), "{e}");
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

    /// rt-tests 2.10's cyclictest (2.7 and later): only the buckets with
    /// samples, and no `"histogram"` at all without `-h`.
    #[test]
    fn c_2_10_json_with_and_without_histogram() {
        let doc = |thread: &str| {
            format!(
                r#"{{"file_version": 1, "cmdline:": "/x/usr/bin/cyclictest -q -h 20",
                "rt_test_version:": "2.10", "num_threads": 1, "resolution_in_ns": 0,
                "thread": {{"0": {{{thread}"cycles": 200, "min": 6, "max": 58,
                "avg": 14.64, "cpu": -1, "node": 0}}}}}}"#
            )
        };
        let i = ok(&doc(r#""histogram": {"6": 3, "19": 5}, "#));
        assert_eq!(i.format, Format::CJson);
        assert_eq!(i.threads[0].buckets, vec![b(6.0, 7.0, 3), b(19.0, 20.0, 5)]);
        assert_eq!(i.threads[0].overflows, 192);
        let e = err(&doc(""));
        assert!(
            e.contains("\"histogram\" objects are empty or absent"),
            "{e}"
        );
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

    #[test]
    fn an_ipc_tools_json_is_its_receivers_samples() {
        // Shape of `rtlat ptsematest -l 200 -q --json=F`.
        let text = r#"{"cmdline:": "rtlat ptsematest -l 200 -q --json=p.json",
            "rtlat_version": "0.1.0", "thread": {"0": {
              "sender": {"cpu": 1, "priority": 0, "samples": 200, "interval": 1000},
              "receiver": {"cpu": 1, "min": 1, "max": 39, "samples": 200, "min_ns": 1175,
                "max_ns": 39916, "histogram": {},
                "distribution": {"unit": "us", "buckets": [[1.0, 2.0, 150], [39.0, 40.0, 50]]}}}}}"#;
        let i = ok(text);
        assert_eq!(i.tool.as_deref(), Some("ptsematest"));
        let t = &i.threads[0];
        assert_eq!(t.buckets, vec![b(1.0, 2.0, 150), b(39.0, 40.0, 50)]);
        assert_eq!((t.name(), t.count(), t.overflows), ("CPU 1".into(), 200, 0));
        assert_eq!((t.min_us, t.max_us), (Some(1.175), Some(39.916)));
    }

    #[test]
    fn percentiles_from_buckets_and_overflows() {
        let t = ThreadSamples {
            index: 0,
            cpu: None,
            buckets: vec![b(3.0, 4.0, 90), b(7.0, 8.0, 8)],
            min_us: Some(3.0),
            max_us: Some(500.0),
            overflows: 2,
        };
        assert_eq!(t.count(), 100);
        assert_eq!(t.value_at(0.5), Some(3.0));
        assert_eq!(t.value_at(0.9), Some(3.0));
        assert_eq!(t.value_at(0.95), Some(7.0));
        assert_eq!(t.value_at(0.98), Some(7.0));
        // Rank 99 is an overflow: beyond the histogram, not known.
        assert_eq!(t.value_at(0.99), None);
        // The last rank is the maximum.
        assert_eq!(t.value_at(1.0), Some(500.0));
    }

    #[test]
    fn the_tool_is_named_by_the_command_line() {
        for (cmdline, tool) in [
            ("/usr/bin/cyclictest -q -h 100", "cyclictest"),
            ("rtlat cyclictest -q", "cyclictest"),
            ("./target/debug/rtlat signaltest -l 5", "signaltest"),
            ("cyclictest", "cyclictest"),
        ] {
            assert_eq!(tool_of(cmdline).as_deref(), Some(tool), "{cmdline}");
        }
        assert_eq!(tool_of("  "), None);
    }
}
