//! The `--json` document: the rt-tests 2.4 envelope and cyclictest members,
//! with our extended keys added (never replacing any).
//!
//! Key order follows cyclictest 2.4, odd key names included (`"cmdline:"`,
//! `"rt_test_version:"` = `"2.40"`). Unlike the C tool the document is always
//! valid JSON: strings are escaped and an average without samples is `null`,
//! never `-nan`. Our additions: `rtlat_version` at the top level and, per
//! thread, `overruns`, `min_ns`, `max_ns`, `mean_ns`, `stddev` (µs, from
//! the ns samples; absent where the engine keeps no sum of squares), `tid`,
//! `priority`, `interval_us`, `smi_count` with `--smi`, `disturbances`
//! (what disturbed the thread between its first and last sample, real runs
//! only: [`disturbances`]), its percentiles, distribution and
//! `--explain` figures, and `max_time` (when its largest sample was
//! taken: Unix seconds with 6 decimals, `null` without samples; see
//! [`super::max_time`]), then `blocks` where the run kept them (its run
//! as blocks of equal length: [`rtlat_results::blocks`]); with `--load`
//! or `--load-schedule`, the top-level `load` object and `phases` array
//! (see [`super::load`]); then the `environment` and `audit` of the audit
//! made before the first sample (`null` without one: see
//! [`write_envelope`]); last, always, the run's `verdict` (see
//! [`super::verdict`]).
//!
//! The document's parts are the serde types of
//! [`rtlat_results::document`] (which readers of the document use too):
//! this module makes them from the core crate's [`RunReport`], which stays
//! plain data, and adds what only rtlat writes (load, phases, explain,
//! environment, audit, verdict).

use std::io::{self, Write};

use rtlat_core::CyclicConfig;
use rtlat_core::Distribution;
use rtlat_core::PhaseReport;
use rtlat_core::load::Activity;
use rtlat_core::load::KindFigures;
use rtlat_core::{Disturbances, HistogramData, RunReport, ThreadReport};
use rtlat_core::{Nanos, Resolution};
use rtlat_results::blocks::BlocksDoc;
pub use rtlat_results::decimals::round_decimals;
use rtlat_results::document::{self as doc, CyclicThread, Header};
use rtlat_results::envelope::{Document, UnjudgedDocument};
use rtlat_results::load::{
    ActivityDto, KindDto, LoadDto, Numbered, PhaseDto, PhaseLoadDto, PhaseThreadDto,
};
use rtlat_results::members::{ThreadMembers, TrailingMembers};
use rtlat_stats::blocks::BlockSeries;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::RunMeta;
use super::explain::{explain_events, explanations};
use super::load::LoadResults;
use super::run_clock::Timeline;
use super::verdict::Verdict;
use crate::explain::outcome::ExplainOutcome;

/// Writes the JSON document for `report`, pretty-printed with two-space
/// indentation and ended by a newline. The run's wait and measure methods
/// (`config`) are our keys `wait_method` and `measure_method`.
#[cfg(test)]
pub fn write_json(
    w: &mut impl Write,
    report: &RunReport,
    meta: &RunMeta,
    config: &CyclicConfig,
    load: Option<&LoadResults<'_>>,
    verdict: &Verdict,
) -> io::Result<()> {
    let extras = Extras {
        load,
        verdict,
        explain: None,
        timeline: Some(super::test_support::timeline()),
    };
    write_json_with(w, report, meta, config, extras)
}

/// [`write_json`] with every extra (`--explain` too).
pub fn write_json_with(
    w: &mut impl Write,
    report: &RunReport,
    meta: &RunMeta,
    config: &CyclicConfig,
    extras: Extras<'_, '_>,
) -> io::Result<()> {
    let methods = Methods {
        wait: config.wait.name(),
        measure: config.measure.name(),
    };
    let dto = if meta.rt_tests.json_histogram_only_when_asked() {
        cyclic_thread_2_7
    } else {
        cyclic_thread
    };
    write_thread_document(w, report, meta, Some(methods), extras, dto)
}

/// What a document carries besides the run's figures: the load that ran
/// beside it, if any, the verdict, and how its times map to the wall
/// clock.
#[derive(Clone, Copy)]
pub struct Extras<'a, 'l> {
    /// `--load` or `--load-schedule`, if given.
    pub load: Option<&'a LoadResults<'l>>,
    /// The verdict on the run.
    pub verdict: &'a Verdict,
    /// `--explain`, if given.
    pub explain: Option<&'a ExplainOutcome>,
    /// The run's clock against the wall clock, for each thread's time of
    /// its maximum; `None` where the report has no such time (the IPC
    /// tools).
    pub timeline: Option<Timeline>,
}

/// The wait and measure methods of a cyclictest run, for the JSON.
#[derive(Clone, Copy, Debug)]
pub struct Methods {
    /// `--wait` name.
    pub wait: &'static str,
    /// `--measure` name.
    pub measure: &'static str,
}

/// Writes the JSON document of a tool with one object per thread
/// (cyclictest, signaltest): the envelope, then `num_threads`, our
/// `resolution_in_ns` and the `thread` object, each thread's value made by
/// `dto` (with the run's timeline, if any).
pub fn write_thread_document<'a, D: Serialize>(
    w: &mut impl Write,
    report: &'a RunReport,
    meta: &'a RunMeta,
    methods: Option<Methods>,
    extras: Extras<'a, '_>,
    dto: ThreadDtoFn<'a, D>,
) -> io::Result<()> {
    let merged = report.merged_distribution();
    write_envelope(
        w,
        meta,
        &ThreadMembers {
            num_threads: report.threads.len(),
            resolution_in_ns: u8::from(report.resolution == Resolution::Nanos),
            wait_method: methods.map(|m| m.wait),
            measure_method: methods.map(|m| m.measure),
            thread: Threads(&report.threads, dto, extras.timeline, &meta.blocks),
            trailing: trailing_members(merged.as_ref(), extras, &report.threads),
        },
        extras.verdict,
    )
}

/// The top-level `"load"` object: the load as given, how long it ran, the
/// machine's activity over that time (`/proc/stat`; `null` where it could
/// not be read) and each kind's work.
pub(crate) fn load_dto<'a>(load: &LoadResults<'a>) -> LoadDto<'a> {
    LoadDto {
        spec: &load.schedule.text,
        seconds: round_decimals(load.summary.elapsed.as_secs_f64(), 3),
        activity: activity(load.summary.activity.as_ref()),
        kinds: load.summary.kinds.iter().map(kind).collect(),
    }
}

fn activity(a: Option<&Activity>) -> ActivityDto {
    ActivityDto {
        cpu_busy_percent: a.map(|a| round_decimals(a.cpu_busy_percent, 1)),
        context_switches_per_sec: a.map(|a| a.context_switches_per_sec.round()),
        interrupts_per_sec: a.map(|a| a.interrupts_per_sec.round()),
    }
}

fn kind(k: &KindFigures) -> KindDto {
    KindDto {
        kind: k.report.kind.name(),
        workers: k.report.workers,
        ops: k.report.ops,
        seconds: round_decimals(k.elapsed.as_secs_f64(), 3),
        ops_per_sec: k.ops_per_sec().round(),
    }
}

/// The `"phases"` array: one object per phase the run reached, in order,
/// with its name, start and duration (s), its load (`null` if its load did
/// not run) and a `"thread"` object of each thread's figures in it. `None`
/// for a constant load (`--load`), which has no phases.
fn phases_dto<'a>(load: &LoadResults<'a>, threads: &[ThreadReport]) -> Option<Vec<PhaseDto<'a>>> {
    if !load.schedule.is_staged() {
        return None;
    }
    let phases = load
        .phases(threads)
        .into_iter()
        .map(|phase| PhaseDto {
            name: phase.name,
            start: round_decimals(phase.start.as_secs_f64(), 3),
            duration: round_decimals(phase.duration.as_secs_f64(), 3),
            planned_duration: round_decimals(phase.planned.as_secs_f64(), 3),
            load: phase.load.map(|l| PhaseLoadDto {
                start: round_decimals(l.started.as_secs_f64(), 3),
                seconds: round_decimals(l.elapsed.as_secs_f64(), 3),
                activity: activity(l.activity.as_ref()),
                kinds: l.kinds.iter().map(kind).collect(),
            }),
            thread: Numbered(
                threads
                    .iter()
                    .filter_map(|t| Some((t.index, phase_thread(t.phases.get(phase.index)?))))
                    .collect(),
            ),
        })
        .collect();
    Some(phases)
}

/// A thread's figures in a phase.
fn phase_thread(p: &PhaseReport) -> PhaseThreadDto {
    let (c, precise) = (&p.compat, &p.precise);
    let any = c.cycles > 0;
    PhaseThreadDto {
        cycles: c.cycles,
        min: any.then_some(c.min),
        max: any.then_some(c.max),
        avg: c.avg().map(|a| round_decimals(a, 2)),
        overruns: precise.overruns,
        min_ns: precise.min.map(|n| n.as_nanos()),
        max_ns: precise.max.map(|n| n.as_nanos()),
        mean_ns: precise.mean(c.cycles).map(|m| round_decimals(m, 1)),
        stddev: precise
            .stddev(c.cycles)
            .map(|ns| round_decimals(ns / 1000.0, 3)),
        percentiles: p.distribution.as_ref().map(percentiles),
    }
}

/// rt-tests' JSON envelope's header for `meta`'s run: `file_version`,
/// `cmdline:`, `rt_test_version:` in the run's dialect, our
/// `rtlat_version`, the times, `return_code`, `sysinfo`.
pub(crate) fn header(meta: &RunMeta) -> Header {
    Header {
        file_version: 1,
        cmdline: meta.cmdline.clone(),
        rt_test_version: meta.rt_tests.json_version(),
        rtlat_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        start_time: meta.start_time.clone(),
        end_time: meta.end_time.clone(),
        return_code: meta.return_code,
        sysinfo: meta.sysinfo.clone(),
    }
}

/// Writes rt-tests' JSON envelope (`file_version`, `cmdline:`,
/// `rt_test_version:`, our `rtlat_version`, the times, `return_code`,
/// `sysinfo`) followed by a tool's own `members`, which must serialise as
/// a struct or map (its keys are flattened into the top level, in order),
/// then our `environment` (the machine's facts) and `audit` (the checks
/// `[{"id", "status", "fact", "why", "fix"}]`) of the audit made before
/// the first sample, both `null` where none was made, and last the
/// run's `verdict`.
pub fn write_envelope<M: Serialize>(
    w: &mut impl Write,
    meta: &RunMeta,
    members: &M,
    verdict: &Verdict,
) -> io::Result<()> {
    let doc = Document {
        judged: unjudged(meta, members),
        verdict,
    };
    write_pretty(w, &doc)
}

/// Writes the document of a tool whose run is not judged
/// (rt-migrate-test, ssdd, hwlatdetect, pi_stress): the envelope, the
/// tool's `members` (flattened, as [`write_envelope`]'s), then
/// `environment` and `audit`, and no verdict.
pub fn write_unjudged<M: Serialize>(
    w: &mut impl Write,
    meta: &RunMeta,
    members: &M,
) -> io::Result<()> {
    write_pretty(w, &unjudged(meta, members))
}

/// The envelope of `meta`'s run, `members`, `environment` and `audit`.
fn unjudged<'a, M>(meta: &'a RunMeta, members: &'a M) -> UnjudgedDocument<'a, M> {
    UnjudgedDocument {
        header: header(meta),
        members,
        environment: meta.audit.as_ref().map(|a| &a.environment),
        audit: meta.audit.as_ref().map(|a| a.checks.as_slice()),
    }
}

/// `doc` as pretty-printed JSON and a newline.
fn write_pretty(w: &mut impl Write, doc: &impl Serialize) -> io::Result<()> {
    let mut w = io::BufWriter::new(w);
    serde_json::to_writer_pretty(&mut w, doc)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// The members every tool's document ends with, after its `thread`
/// object ([`TrailingMembers`]): from all threads' distribution merged,
/// the run's load (if any) and `--explain`, and the threads (for their
/// phases).
pub fn trailing_members<'m>(
    merged: Option<&Distribution>,
    extras: Extras<'m, 'm>,
    threads: &[ThreadReport],
) -> TrailingMembers<'m> {
    TrailingMembers {
        all_threads: merged.map(percentiles),
        load: extras.load.map(load_dto),
        phases: extras.load.and_then(|l| phases_dto(l, threads)),
        explain: extras.explain.map(explanations),
        explain_events: extras.explain.map(explain_events),
    }
}

/// The `thread` object: `"0": {..}, "1": {..}, ...` in thread order
/// (numeric, not lexicographic), each thread's value made by the function
/// (with the timeline).
struct Threads<'a, D: Serialize>(
    &'a [ThreadReport],
    ThreadDtoFn<'a, D>,
    Option<Timeline>,
    &'a [BlockSeries],
);

/// What makes a thread's object: from its report, the run's timeline and
/// its block series (`None` where the tool keeps none).
pub type ThreadDtoFn<'a, D> = fn(&'a ThreadReport, Option<&Timeline>, Option<&BlockSeries>) -> D;

impl<'a, D: Serialize> Serialize for Threads<'a, D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (position, t) in self.0.iter().enumerate() {
            // serde_json writes integer map keys as strings.
            let blocks = self.3.get(position);
            map.serialize_entry(&t.index, &(self.1)(t, self.2.as_ref(), blocks))?;
        }
        map.end()
    }
}

/// When `t`'s largest sample was taken, in Unix seconds with 6 decimals
/// (`max_time`); `None` without samples or without a timeline.
pub fn max_time(t: &ThreadReport, timeline: Option<&Timeline>) -> Option<f64> {
    let unix_ns = timeline?.unix_ns(t.max_at?);
    // Whole µs (rounded), exact in an f64: the quotient is the nearest
    // f64 to the 6-decimal number, which is what JSON shows.
    Some((unix_ns + 500).div_euclid(1000) as f64 / 1e6)
}

/// The non-zero buckets of `h` as `"<bucket>": count`, in bucket order
/// ([`doc::Histogram`]); `{}` without a histogram. Other tools' JSON uses
/// it too.
pub fn histogram(h: Option<&HistogramData>) -> doc::Histogram {
    let buckets = h.map_or(&[][..], |h| &h.buckets[..]);
    doc::Histogram(
        buckets
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(bucket, &count)| (bucket as i64, count))
            .collect(),
        doc::BucketLabels::Whole,
    )
}

/// One thread of cyclictest's document (and `latency`'s), with its
/// `"blocks"` where the run kept them.
fn cyclic_thread(
    t: &ThreadReport,
    timeline: Option<&Timeline>,
    blocks: Option<&BlockSeries>,
) -> CyclicThread {
    let c = &t.compat;
    CyclicThread {
        histogram: Some(histogram(t.histogram.as_ref())),
        cycles: c.cycles,
        min: c.min_shown(),
        max: c.max_shown(),
        avg: c.avg().map(|a| round_decimals(a, 2)),
        cpu: t.cpu.and_then(|c| i64::try_from(c).ok()).unwrap_or(-1),
        node: t.node.map_or(-1, i64::from),
        overruns: t.precise.overruns,
        min_ns: t.precise.min.map(|n| n.as_nanos()),
        max_ns: t.precise.max.map(|n| n.as_nanos()),
        mean_ns: t.precise.mean(c.cycles).map(|m| round_decimals(m, 1)),
        stddev: stddev_us(t),
        tid: t.tid,
        priority: t.priority,
        interval_us: t.interval.as_micros_truncated(),
        smi_count: t.smi_count,
        disturbances: t.disturbances.map(disturbances),
        percentiles: t.distribution.as_ref().map(percentiles),
        distribution: t.distribution.as_ref().map(distribution),
        irq_latency: t
            .wakeup_latencies
            .as_ref()
            .map(|w| percentiles(&w.irq_latency)),
        thread_latency: t
            .wakeup_latencies
            .as_ref()
            .map(|w| percentiles(&w.thread_latency)),
        wakeups: t.wakeup_latencies.as_ref().map(|w| doc::Wakeups {
            switch_traced: w.switch_traced,
            switch_not_traced: w.switch_not_traced,
        }),
        max_time: max_time(t, timeline),
        blocks: blocks.map(BlocksDoc::from_series),
    }
}

/// [`cyclic_thread`] as rt-tests 2.7 and later write it: no
/// `"histogram"` without `-h`.
fn cyclic_thread_2_7(
    t: &ThreadReport,
    timeline: Option<&Timeline>,
    blocks: Option<&BlockSeries>,
) -> CyclicThread {
    let mut thread = cyclic_thread(t, timeline, blocks);
    if t.histogram.is_none() {
        thread.histogram = None;
    }
    thread
}

/// A measuring thread's `"disturbances"` object: `{"involuntary_switches",
/// "migrations" (`null` where the kernel does not count them),
/// "minor_faults", "major_faults"}`, counted between its first and last
/// sample.
pub fn disturbances(d: Disturbances) -> doc::Disturbances {
    doc::Disturbances {
        involuntary_switches: d.involuntary_switches,
        migrations: d.migrations,
        minor_faults: d.minor_faults,
        major_faults: d.major_faults,
    }
}

/// The standard percentiles of `d`, µs with 3 decimals: `{"p50", "p90",
/// "p99", "p99.9", "p99.99", "p99.999", "max"}` ([`doc::Percentiles`]),
/// `null` without samples.
pub fn percentiles(d: &Distribution) -> doc::Percentiles {
    let mut p = doc::Percentiles::default();
    for (label, value) in d.standard_percentiles() {
        let known = p.set(label, value.map(micros));
        debug_assert!(known, "percentile {label} is not in the document");
    }
    p
}

/// The full distribution: `{"unit": "us", "buckets": [[from, to, count],
/// ...]}`, the non-empty buckets lowest first, each holding the samples
/// `from <= v < to` (µs, 3 decimals). The open-ended counts below zero and
/// above the top are closed by the exact minimum and maximum
/// ([`doc::Distribution`]).
pub fn distribution(d: &Distribution) -> doc::Distribution {
    let min = d.min().map_or(0, |m| m.as_nanos());
    let max = d.max().map_or(0, |m| m.as_nanos());
    let buckets: Vec<(f64, f64, u64)> = d
        .buckets()
        .map(|b| {
            let lower = if b.lower == i64::MIN { min } else { b.lower };
            let upper = if b.upper == i64::MAX {
                max + 1
            } else {
                b.upper
            };
            (micros(Nanos(lower)), micros(Nanos(upper)), b.count)
        })
        .collect();
    doc::Distribution::of_buckets(buckets)
}

/// ns as µs with 3 decimals.
fn micros(ns: Nanos) -> f64 {
    round_decimals(ns.as_nanos() as f64 / 1000.0, 3)
}

/// `Some(stddev in µs)` when the sum of squares is known (`Some(None)`
/// without samples), `None` when it is not.
fn stddev_us(t: &ThreadReport) -> Option<Option<f64>> {
    t.precise.sum_sq_ns?;
    Some(
        t.precise
            .stddev(t.compat.cycles)
            .map(|ns| round_decimals(ns / 1000.0, 3)),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, meta, render, run};
    use rtlat_core::ClockKind;
    use rtlat_core::CompatStats;
    use rtlat_core::Nanos;
    use rtlat_core::RtTests;
    use serde_json::Value;

    /// The verdict of a synthetic run (no system counters).
    fn verdict_of(report: &RunReport) -> Verdict {
        crate::report::verdict::judge(report, &meta("x"), None)
    }

    /// The top-level keys, in cyclictest's order with ours inserted.
    const TOP_KEYS: [&str; 16] = [
        "file_version",
        "cmdline:",
        "rt_test_version:",
        "rtlat_version",
        "start_time",
        "end_time",
        "return_code",
        "sysinfo",
        "num_threads",
        "resolution_in_ns",
        "wait_method",
        "measure_method",
        "thread",
        "environment",
        "audit",
        "verdict",
    ];

    fn default_config() -> CyclicConfig {
        CyclicConfig::new(Vec::new())
    }

    #[test]
    fn methods_are_named() {
        let mut config = default_config();
        config.wait = rtlat_core::WaitMode::Timerfd;
        config.measure = rtlat_core::MeasureMode::Timer;
        let text = render(|w| {
            let report = one_thread_histogram();
            write_json(w, &report, &meta("x"), &config, None, &verdict_of(&report))
        });
        let v = parse(&text);
        assert_eq!(v["wait_method"], "timerfd");
        assert_eq!(v["measure_method"], "timer");
        let v = parse(&json(&one_thread_histogram(), "x"));
        assert_eq!(v["wait_method"], "abs");
        assert_eq!(v["measure_method"], "clock");
    }

    fn json(report: &RunReport, cmdline: &str) -> String {
        render(|w| {
            write_json(
                w,
                report,
                &meta(cmdline),
                &default_config(),
                None,
                &verdict_of(report),
            )
        })
    }

    fn parse(text: &str) -> Value {
        serde_json::from_slice(text.as_bytes()).expect("valid JSON")
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect()
    }

    /// Key order as written (serde_json's `Value` map sorts keys, so read
    /// the order from the text itself).
    fn key_order_in_text(text: &str, names: &[&str]) -> Vec<usize> {
        names
            .iter()
            .map(|n| text.find(&format!("\"{n}\":")).expect(n))
            .collect()
    }

    fn one_thread_histogram() -> RunReport {
        run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .tid(5740)
                    .interval(Nanos::from_micros(500))
                    .pinned(0, 0)
                    .overruns(2)
                    .samples(
                        &[12, 13, 13, 12, 43, 20, 25],
                        Resolution::Micros,
                        250,
                        Some(30),
                    )
                    .build(),
            ],
        )
    }

    /// What rtlat writes reads back through rtlat-results' types and
    /// writes again the same: one schema, not a copy of it.
    #[test]
    fn the_document_reads_back_as_its_types() {
        let mut report = one_thread_histogram();
        report.threads[0] = ThreadFixture::new(0)
            .pinned(0, 0)
            .samples(
                &[12, 13, 13, 12, 43, 20, 25],
                Resolution::Micros,
                250,
                Some(30),
            )
            .distribution(&[12_400, 13_000, 13_700, 12_100, 43_500, 20_000, 25_900])
            .build();
        let v = parse(&json(&report, "cyclictest -q"));
        let header: Header = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(header.cmdline, "cyclictest -q");
        assert_eq!(
            header.rtlat_version.as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
        let again = serde_json::to_value(&header).unwrap();
        for (key, value) in again.as_object().unwrap() {
            assert_eq!(&v[key], value, "{key}");
        }
        let thread: CyclicThread = serde_json::from_value(v["thread"]["0"].clone()).unwrap();
        assert_eq!(thread.cycles, 7);
        assert_eq!(thread.histogram.as_ref().unwrap().0.get(&13), Some(&2));
        assert!(thread.distribution.is_some() && thread.percentiles.is_some());
        assert_eq!(serde_json::to_value(&thread).unwrap(), v["thread"]["0"]);
        let read = rtlat_results::ResultDocument::parse(&v.to_string()).unwrap();
        assert_eq!(read.format(), rtlat_results::Format::RtlatJson);
        assert_eq!(read.threads[&0].percentiles().unwrap(), thread.percentiles);
        assert_eq!(read.all_threads().unwrap(), thread.percentiles);
    }

    #[test]
    fn the_verdict_comes_last() {
        let report = one_thread_histogram();
        let text = json(&report, "cyclictest");
        let v = parse(&text);
        // Seven samples and two missed periods of nine.
        assert_eq!(v["verdict"]["level"], "untrustworthy");
        assert_eq!(v["verdict"]["reasons"][0]["id"], "thread.missed_periods");
        assert!(v["verdict"]["suggested_duration_s"].is_null());
        let last_key = text.rfind("\n  \"").map(|at| &text[at + 4..]).unwrap();
        assert!(last_key.starts_with("verdict\""), "{last_key}");
    }

    #[test]
    fn one_thread_micros_with_histogram() {
        let text = json(
            &one_thread_histogram(),
            "cyclictest -q -h 30 -l 7 -p 80 -i 500 --json=ct.json",
        );
        insta::assert_snapshot!(text);
        let v = parse(&text);
        // sum 138 / 7 = 19.714285.. -> 19.71
        assert_eq!(v["thread"]["0"]["avg"], serde_json::json!(19.71));
        assert_eq!(v["thread"]["0"]["histogram"]["13"], 2);
        assert!(v["thread"]["0"]["histogram"].get("43").is_none());
        // The maximum, 43 us, is the fifth sample: its deadline is 2.5 ms
        // after the run's clock read 0 (01:44:57 UTC).
        assert_eq!(
            v["thread"]["0"]["max_time"],
            serde_json::json!(1_795_311_897.002_5)
        );
    }

    #[test]
    fn max_time_is_unix_seconds_to_the_microsecond() {
        let mut t = ThreadFixture::new(0)
            .samples(&[5], Resolution::Micros, 0, None)
            .build();
        let timeline = Timeline {
            clock: rtlat_core::ClockInstant(0),
            unix_ns: 1_795_311_897_123_456_500,
            start: None,
        };
        t.max_at = Some(rtlat_core::ClockInstant(0));
        let seconds = max_time(&t, Some(&timeline)).unwrap();
        assert_eq!(
            serde_json::to_string(&seconds).unwrap(),
            "1795311897.123457"
        );
        t.max_at = Some(rtlat_core::ClockInstant(-1_000));
        let seconds = max_time(&t, Some(&timeline)).unwrap();
        assert_eq!(
            serde_json::to_string(&seconds).unwrap(),
            "1795311897.123456"
        );
        assert_eq!(max_time(&t, None), None, "no timeline, no time");
        t.max_at = None;
        assert_eq!(max_time(&t, Some(&timeline)), None, "no sample, no time");
    }

    #[test]
    fn key_order_follows_cyclictest() {
        let text = json(&one_thread_histogram(), "cyclictest");
        let pos = key_order_in_text(&text, &TOP_KEYS);
        assert!(pos.is_sorted(), "{pos:?}");
        let per_thread = [
            "histogram",
            "cycles",
            "min",
            "max",
            "avg",
            "cpu",
            "node",
            "overruns",
            "min_ns",
            "max_ns",
            "mean_ns",
            "stddev",
            "tid",
            "priority",
            "interval_us",
            "max_time",
        ];
        let pos = key_order_in_text(&text, &per_thread);
        assert!(pos.is_sorted(), "{pos:?}");
    }

    #[test]
    fn three_threads_nanos_no_histogram() {
        let r = run(
            Resolution::Nanos,
            vec![
                ThreadFixture::new(0)
                    .priority(50)
                    .samples(&[18_065, 50_053, 36_308], Resolution::Nanos, 0, None)
                    .build(),
                ThreadFixture::new(1)
                    .priority(49)
                    .interval(Nanos::from_micros(1500))
                    .pinned(1, 0)
                    .samples(&[12_178, 1_209_189], Resolution::Nanos, 0, None)
                    .build(),
                ThreadFixture::new(2)
                    .priority(48)
                    .interval(Nanos::from_micros(2000))
                    .build(),
            ],
        );
        let text = json(&r, "cyclictest -N -t 3 -p 50 --priospread");
        insta::assert_snapshot!(text);
        let v = parse(&text);
        assert_eq!(v["resolution_in_ns"], 1);
        assert_eq!(v["num_threads"], 3);
        assert_eq!(v["thread"]["0"]["histogram"], serde_json::json!({}));
        assert_eq!(v["thread"]["0"]["avg"], serde_json::json!(34808.67));
        assert_eq!(v["thread"]["0"]["cpu"], -1);
        assert_eq!(v["thread"]["0"]["node"], -1);
        assert_eq!(v["thread"]["1"]["cpu"], 1);
    }

    #[test]
    fn zero_samples_give_nulls_not_nan() {
        let mut thread = ThreadFixture::new(0).tid(0).empty_histogram(5).build();
        // A thread that left its loop without a sample published a zero sum
        // of squares.
        thread.precise.sum_sq_ns = Some(0);
        let r = run(Resolution::Micros, vec![thread]);
        let text = json(&r, "cyclictest -q -i 1000000 -h 5");
        insta::assert_snapshot!(text);
        assert!(!text.contains("nan"));
        let v = parse(&text);
        let t = &v["thread"]["0"];
        assert!(t["avg"].is_null());
        assert!(t["min_ns"].is_null());
        assert!(t["max_ns"].is_null());
        assert!(t["mean_ns"].is_null());
        assert!(t["stddev"].is_null());
        assert_eq!(t["min"], 1_000_000);
        assert_eq!(t["max"], 0);
        assert_eq!(t["cycles"], 0);
        assert_eq!(t["histogram"], serde_json::json!({}));
    }

    #[test]
    fn environment_and_audit_come_last_from_the_runs_audit() {
        let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../rtlat-audit/tests/fixtures/tuned-rt");
        let request = rtlat_audit::Request {
            cpus: Some(vec![2, 3]),
            priority: Some(95),
            interval_us: 1000,
        };
        let audit = rtlat_audit::audit(&tree, &request).expect("the fixture tree");
        let mut m = meta("cyclictest -q -a 2-3 -t 2 -p 95");
        m.audit = Some(audit.clone());
        let report = one_thread_histogram();
        let verdict = crate::report::verdict::judge(&report, &m, None);
        let text = render(|w| write_json(w, &report, &m, &default_config(), None, &verdict));
        let v = parse(&text);
        assert_eq!(
            v["environment"],
            serde_json::to_value(&audit.environment).unwrap()
        );
        assert_eq!(v["environment"]["measured_cpus"], serde_json::json!([2, 3]));
        assert_eq!(v["environment"]["kernel"]["preemption"], "PREEMPT_RT");
        let checks = v["audit"].as_array().unwrap();
        assert_eq!(checks.len(), audit.checks.len());
        for (written, finding) in checks.iter().zip(&audit.checks) {
            assert_eq!(
                keys(written),
                ["fact", "fix", "id", "status", "why"],
                "{written}"
            );
            assert_eq!(written["id"], finding.id);
            assert_eq!(written["status"], finding.status.name());
        }
        // The advice of `rtlat audit` is not part of a result.
        assert!(v.get("suggested_command").is_none());
        let pos = key_order_in_text(&text, &TOP_KEYS);
        assert!(pos.is_sorted(), "{pos:?}");
    }

    /// `--rt-tests=2.10`: its version string, and a thread's
    /// `"histogram"` only where the run kept one (2.4: `{}` without).
    #[test]
    fn the_2_10_dialect_names_its_version_and_omits_an_unasked_histogram() {
        let doc = |report: &RunReport, rt_tests| {
            let mut m = meta("cyclictest -q");
            m.rt_tests = rt_tests;
            let text = render(|w| {
                let verdict = verdict_of(report);
                write_json(w, report, &m, &default_config(), None, &verdict)
            });
            serde_json::from_str::<Value>(&text).expect("valid JSON")
        };
        let with_h = one_thread_histogram();
        let mut without_h = one_thread_histogram();
        without_h.threads[0].histogram = None;
        let v = doc(&with_h, RtTests::V2_10);
        assert_eq!(v["rt_test_version:"], "2.10");
        assert_eq!(v["thread"]["0"]["histogram"]["13"], 2);
        let v = doc(&without_h, RtTests::V2_10);
        assert!(v["thread"]["0"].get("histogram").is_none(), "{v}");
        let v = doc(&without_h, RtTests::V2_4);
        assert_eq!(v["rt_test_version:"], "2.40");
        assert_eq!(v["thread"]["0"]["histogram"], serde_json::json!({}));
        assert_eq!(doc(&without_h, RtTests::V2_6)["rt_test_version:"], "2.60");
    }

    #[test]
    fn cmdline_with_quote_and_backslash_stays_valid() {
        let cmdline = r#"cyclictest --json=a"b\c.json -q"#;
        let mut m = meta(cmdline);
        m.sysinfo.version = "#1 SMP \"odd\" \\ version\n".to_owned();
        m.sysinfo.realtime = true;
        m.return_code = 1;
        let text = render(|w| {
            let report = one_thread_histogram();
            let verdict = verdict_of(&report);
            write_json(w, &report, &m, &default_config(), None, &verdict)
        });
        let v: Value = serde_json::from_slice(text.as_bytes()).expect("valid JSON");
        assert_eq!(v["cmdline:"], cmdline);
        assert_eq!(v["sysinfo"]["version"], "#1 SMP \"odd\" \\ version\n");
        assert_eq!(v["sysinfo"]["realtime"], 1);
        assert_eq!(v["return_code"], 1);
        assert_eq!(v["file_version"], 1);
        assert_eq!(v["rt_test_version:"], "2.40");
        assert_eq!(v["rtlat_version"], env!("CARGO_PKG_VERSION"));

        let mut top = keys(&v);
        top.sort_unstable();
        let mut expected = TOP_KEYS.to_vec();
        expected.sort_unstable();
        assert_eq!(top, expected);

        let mut sysinfo = keys(&v["sysinfo"]);
        sysinfo.sort_unstable();
        assert_eq!(
            sysinfo,
            [
                "machine", "nodename", "realtime", "release", "sysname", "version"
            ]
        );

        let t = &v["thread"]["0"];
        let mut tkeys = keys(t);
        tkeys.sort_unstable();
        assert_eq!(
            tkeys,
            [
                "avg",
                "cpu",
                "cycles",
                "histogram",
                "interval_us",
                "max",
                "max_ns",
                "max_time",
                "mean_ns",
                "min",
                "min_ns",
                "node",
                "overruns",
                "priority",
                "stddev",
                "tid"
            ]
        );
        assert!(t["avg"].is_f64());
        assert_eq!(t["cycles"], 7);
        assert_eq!(t["min"], 12);
        assert_eq!(t["max"], 43);
        assert_eq!(t["min_ns"], 12_250);
        assert_eq!(t["max_ns"], 43_250);
        // (138000 + 7 * 250) / 7 = 19964.2857.. -> 19964.3
        assert_eq!(t["mean_ns"], serde_json::json!(19964.3));
        assert_eq!(t["overruns"], 2);
        assert_eq!(t["tid"], 5740);
        assert_eq!(t["priority"], 80);
        assert_eq!(t["interval_us"], 500);
    }

    #[test]
    fn twelve_threads_keep_numeric_key_order() {
        let threads = (0..12)
            .map(|i| {
                ThreadFixture::new(i)
                    .samples(&[i as i64 + 1], Resolution::Micros, 0, None)
                    .build()
            })
            .collect();
        let text = json(&run(Resolution::Micros, threads), "cyclictest -t 12");
        let v = parse(&text);
        assert_eq!(keys(&v["thread"]).len(), 12);
        let names: Vec<String> = (0..12).map(|i| i.to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let pos = key_order_in_text(&text, &names);
        assert!(pos.is_sorted(), "{pos:?}");
        for i in 0..12 {
            assert_eq!(v["thread"][i.to_string()]["max"], i + 1);
        }
    }

    #[test]
    fn negative_latency_on_realtime_clock() {
        let mut r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&[-5, -1, 2, -3], Resolution::Micros, -100, Some(4))
                    .build(),
            ],
        );
        r.clock = ClockKind::Realtime;
        let text = json(&r, "cyclictest -c 1 -h 4");
        insta::assert_snapshot!(text);
        let v = parse(&text);
        let t = &v["thread"]["0"];
        assert_eq!(t["min"], -5);
        assert_eq!(t["max"], 2);
        assert_eq!(t["avg"], serde_json::json!(-1.75));
        assert_eq!(t["min_ns"], -5_100);
    }

    #[test]
    fn stddev_of_known_samples() {
        // 2, 4, 4, 4, 5, 5, 7, 9 µs: mean 5, squared deviations 32, sample
        // variance 32/7, stddev 2.1380899.. µs.
        let r = run(
            Resolution::Nanos,
            vec![
                ThreadFixture::new(0)
                    .samples(
                        &[2000, 4000, 4000, 4000, 5000, 5000, 7000, 9000],
                        Resolution::Nanos,
                        0,
                        None,
                    )
                    .build(),
                // The shift of every sample by 250 ns does not change it:
                // 11.397577.. µs.
                ThreadFixture::new(1)
                    .samples(&[12, 13, 13, 12, 43, 20, 25], Resolution::Micros, 250, None)
                    .build(),
                // One sample: 0.
                ThreadFixture::new(2)
                    .samples(&[7], Resolution::Micros, 0, None)
                    .build(),
                // A large mean with a spread of 1 ns: nothing lost to
                // cancellation (1e9 ± 0.5 ns: stddev 0.5345 ns).
                ThreadFixture::new(3)
                    .samples(
                        &[1_000_000_000, 1_000_000_001, 1_000_000_000, 1_000_000_001],
                        Resolution::Nanos,
                        0,
                        None,
                    )
                    .build(),
            ],
        );
        let v = parse(&json(&r, "cyclictest -N -t 4"));
        assert_eq!(v["thread"]["0"]["stddev"], serde_json::json!(2.138));
        assert_eq!(v["thread"]["1"]["stddev"], serde_json::json!(11.398));
        assert_eq!(v["thread"]["2"]["stddev"], serde_json::json!(0.0));
        assert_eq!(v["thread"]["3"]["stddev"], serde_json::json!(0.001));
    }

    #[test]
    fn stddev_is_left_out_without_a_sum_of_squares() {
        let mut thread = ThreadFixture::new(0)
            .samples(&[3, 4], Resolution::Micros, 0, None)
            .build();
        thread.precise.sum_sq_ns = None;
        let text = json(&run(Resolution::Micros, vec![thread]), "cyclictest");
        assert!(!text.contains("stddev"), "{text}");
        assert!(parse(&text)["thread"]["0"].get("stddev").is_none());
    }

    #[test]
    fn avg_rounds_like_printf() {
        // glibc's %.2f rounds the exact binary value; ties go to even.
        assert_eq!(round_decimals(0.125, 2).to_string(), "0.12");
        assert_eq!(round_decimals(0.375, 2).to_string(), "0.38");
        assert_eq!(round_decimals(1.005, 2).to_string(), "1");
        assert_eq!(round_decimals(23.335, 2).to_string(), "23.34");
        assert_eq!(round_decimals(2.675, 2).to_string(), "2.67");
        let c = CompatStats {
            cycles: 3,
            min: 1,
            max: 2,
            act: 1,
            sum: 4,
        };
        assert_eq!(c.avg().map(|a| round_decimals(a, 2)), Some(1.33));
    }

    /// A run of one thread beside a staged load of two phases (idle,
    /// then cpu), the second cut short by the end of the run.
    pub(crate) fn staged_load() -> (
        RunReport,
        rtlat_core::load::LoadSchedule,
        rtlat_core::load::LoadSummary,
    ) {
        use rtlat_core::PhaseReport;
        use rtlat_core::load::Activity;
        use rtlat_core::load::{KindFigures, LoadPhase, LoadSchedule, LoadSummary, PhaseLoad};
        use rtlat_core::load::{KindReport, LoadKind};
        use std::time::Duration;

        let phase = |cycles: u64, min: i64, max: i64, sum: i64, sum_sq: i64| PhaseReport {
            reached: true,
            compat: CompatStats {
                cycles,
                min,
                max,
                act: max,
                sum,
            },
            precise: rtlat_core::PreciseStats {
                min: Some(Nanos::from_micros(min)),
                max: Some(Nanos::from_micros(max)),
                sum_ns: i128::from(sum) * 1000,
                sum_sq_ns: Some(u128::from((sum_sq * 1_000_000) as u64)),
                overruns: 0,
            },
            distribution: None,
        };
        let mut thread = ThreadFixture::new(0)
            .samples(&[3, 4, 9], Resolution::Micros, 0, None)
            .build();
        thread.phases = vec![phase(2, 3, 4, 7, 25), phase(1, 9, 9, 9, 81)];
        let report = run(Resolution::Micros, vec![thread]);
        let schedule = LoadSchedule {
            text: "idle=1,cpu:1=1".into(),
            phases: vec![
                LoadPhase {
                    name: "idle".into(),
                    plan: None,
                    length: Some(Nanos::from_secs(1)),
                },
                LoadPhase {
                    name: "cpu:1".into(),
                    plan: None,
                    length: Some(Nanos::from_secs(1)),
                },
            ],
        };
        let activity = Activity {
            cpu_busy_percent: 50.04,
            context_switches_per_sec: 1000.4,
            interrupts_per_sec: 500.6,
        };
        let cpu = KindFigures {
            report: KindReport {
                kind: LoadKind::Cpu,
                workers: 1,
                ops: 2000,
            },
            elapsed: Duration::from_millis(1000),
        };
        let summary = LoadSummary {
            phases: vec![
                PhaseLoad {
                    index: 0,
                    started: Duration::ZERO,
                    elapsed: Duration::from_millis(1002),
                    kinds: Vec::new(),
                    activity: Some(activity),
                },
                PhaseLoad {
                    index: 1,
                    started: Duration::from_millis(1003),
                    elapsed: Duration::from_millis(1000),
                    kinds: vec![cpu],
                    activity: None,
                },
            ],
            kinds: vec![cpu],
            elapsed: Duration::from_millis(2003),
            activity: Some(activity),
            errors: Vec::new(),
        };
        (report, schedule, summary)
    }

    #[test]
    fn load_and_phases_follow_the_threads() {
        let (report, schedule, summary) = staged_load();
        let load = LoadResults {
            schedule: &schedule,
            summary: &summary,
            run_time: Some(std::time::Duration::from_millis(1500)),
        };
        let text = render(|w| {
            let verdict = verdict_of(&report);
            write_json(
                w,
                &report,
                &meta("x"),
                &default_config(),
                Some(&load),
                &verdict,
            )
        });
        insta::assert_snapshot!(text);
        let v = parse(&text);
        let tail = key_order_in_text(&text, &["thread", "load", "phases", "verdict"]);
        assert!(tail.windows(2).all(|w| w[0] < w[1]), "{tail:?}");
        assert_eq!(v["load"]["kinds"][0]["ops_per_sec"], 2000.0);
        // The run ended half-way through the second phase.
        assert_eq!(v["phases"][1]["duration"], 0.5);
        assert_eq!(v["phases"][1]["planned_duration"], 1.0);
        assert_eq!(v["phases"][1]["load"]["cpu_busy_percent"], Value::Null);
        assert_eq!(v["phases"][0]["thread"]["0"]["avg"], 3.5);
        // 3 and 4 µs: sample stddev 0.707 µs.
        assert_eq!(v["phases"][0]["thread"]["0"]["stddev"], 0.707);
    }
}

#[cfg(test)]
mod schema_tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, meta, render};
    use crate::report::verdict::tests::{fixture_audit, quiet_system};
    use rtlat_core::WakeupLatencies;
    use serde_json::Value;

    /// A cyclictest document with every key rtlat can write: thread keys
    /// (`-h` histogram, `--smi`, disturbances, percentiles, distribution,
    /// `--explain` latencies, blocks), a staged load with each phase's
    /// percentiles, `--explain`'s explanations with a trace window, the
    /// audit of two CPUs (one without cpufreq, one with a governor and
    /// idle states), and a verdict with the hypervisor's steal counted, a
    /// worst sample and a projection with a deadline and a horizon beyond
    /// the run; then the same run without the system's counters and with
    /// the default projection (no deadline), and with too few blocks,
    /// whose projection is refused. Its keys are pinned per `file_version` (`report::schema`).
    #[test]
    fn the_keys_of_a_full_document_change_only_with_its_version() {
        let (mut report, schedule, summary) = super::tests::staged_load();
        let samples = [3_000, 4_000, 9_000, 120_000];
        let full = ThreadFixture::new(0)
            .tid(4242)
            .pinned(1, 0)
            .samples(&[3, 4, 9, 120], Resolution::Micros, 0, Some(100))
            .distribution(&samples)
            .build();
        let mut phases = std::mem::take(&mut report.threads[0].phases);
        for phase in &mut phases {
            phase.distribution = full.distribution.clone();
        }
        report.threads[0] = full;
        report.threads[0].phases = phases;
        report.threads[0].smi_count = Some(0);
        report.threads[0].disturbances = Some(Disturbances {
            involuntary_switches: 1,
            migrations: Some(0),
            minor_faults: 2,
            major_faults: 0,
        });
        let d = report.threads[0]
            .distribution
            .clone()
            .expect("a distribution");
        report.threads[0].wakeup_latencies = Some(WakeupLatencies {
            irq_latency: d.clone(),
            thread_latency: d,
            switch_traced: 3,
            switch_not_traced: 1,
        });
        let load = LoadResults {
            schedule: &schedule,
            summary: &summary,
            run_time: Some(std::time::Duration::from_millis(1500)),
        };
        let mut outcome = crate::report::explain::tests::outcome();
        let first = &mut outcome.report.explanations[0];
        first.window = Some(rtlat_explain::TraceWindow {
            cpu: 1,
            from_ns: first.deadline_ns + 100_000,
            to_ns: first.wake_ns,
            causes: first.components[0].causes.clone(),
        });
        let mut m = meta("cyclictest --explain -h 100 --smi");
        m.audit = Some(fixture_audit("tuned-rt", vec![1, 2], 95));
        let mut series = BlockSeries::new(10_000_000_000, rtlat_stats::blocks::DEFAULT_CAPACITY);
        for i in 0..360 {
            series.push(rtlat_stats::blocks::Block::new(
                10_000,
                Some(5_000 + (i % 7) * 100),
                10_000 * 3_000,
            ));
        }
        m.blocks = vec![series.clone()];
        // 3600 s of blocks project to 1000 times as long: the second
        // horizon is beyond; the deadline is within the maxima.
        m.projection = rtlat_stats::projection::Request {
            horizons_s: vec![3_600.0, 1e7],
            deadline_ns: Some(5_500),
        };
        let system = quiet_system();
        let judge = |m: &RunMeta, system| {
            let mut verdict = crate::report::verdict::judge(&report, m, system);
            verdict.worst_sample = outcome.worst_sample();
            verdict
        };
        let verdict = judge(&m, Some(&system));
        assert!(
            matches!(
                verdict.projection,
                Some(rtlat_stats::projection::Projection::Projected(_))
            ),
            "{:?}",
            verdict.projection
        );
        let document = |m: &RunMeta, verdict: &Verdict| {
            render(|w| {
                let extras = Extras {
                    load: Some(&load),
                    verdict,
                    explain: Some(&outcome),
                    timeline: Some(crate::report::test_support::timeline()),
                };
                write_json_with(w, &report, m, &CyclicConfig::new(Vec::new()), extras)
            })
        };
        let text = document(&m, &verdict);
        let v: Value = serde_json::from_str(&text).unwrap();
        // Each optional part is there, so its keys are pinned.
        let projection = &v["verdict"]["projection"];
        assert_eq!(projection["beyond"][0]["horizon_s"], 1e7, "{projection}");
        assert!(projection["deadline"]["observed_blocks"].as_u64() > Some(0));
        assert_eq!(v["verdict"]["steal_share"], 0.0);
        assert!(v["phases"][0]["thread"]["0"]["percentiles"].is_object());
        let cpus = &v["environment"]["cpus"];
        assert_eq!(cpus[0]["governor"], Value::Null, "{cpus}");
        assert!(cpus[1]["governor"].is_string(), "{cpus}");
        assert!(cpus[1]["idle_states"][0]["name"].is_string(), "{cpus}");
        // Without the system's counters or a deadline: both `null`.
        m.projection = rtlat_stats::projection::Request::default();
        let plain = document(&m, &judge(&m, None));
        let p: Value = serde_json::from_str(&plain).unwrap();
        assert_eq!(p["verdict"]["steal_share"], Value::Null);
        assert_eq!(p["verdict"]["projection"]["deadline"], Value::Null);
        // Too few blocks: the projection is refused, saying how much more.
        m.blocks = vec![BlockSeries::from_blocks(
            series.block_ns(),
            series.blocks()[..10].to_vec(),
        )];
        let refused = document(&m, &judge(&m, None));
        let r: Value = serde_json::from_str(&refused).unwrap();
        assert_eq!(r["verdict"]["projection"]["outcome"], "refused");
        assert!(r["verdict"]["projection"]["more_s"].is_number());
        crate::report::schema::check("cyclictest", &[&text, &plain, &refused]);
    }
}
