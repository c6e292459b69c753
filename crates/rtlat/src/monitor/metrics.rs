//! The monitor's metrics: what they are ([`Figures`]) and their text, in
//! the Prometheus text format (0.0.4) and in OpenMetrics, both encoded by
//! the Prometheus project's own client crate from one collector, so that
//! the two never say different things.
//!
//! Names follow Prometheus' naming practice: base units (seconds), `_total`
//! for counters, one `rtlat_` prefix. Every per-thread series has the
//! labels `cpu` (the CPU the thread is pinned to, `any` when it is not)
//! and `thread` (its number). The families:
//! - `rtlat_latency_seconds` (histogram): every sample since the start,
//!   log-spaced buckets from 1 µs to 100 ms (1, 2, 5 per decade). A sample
//!   is counted by the bucket of rtlat's distribution it fell in: exactly
//!   below 2 ms (1 µs buckets, whose bounds are the `le` bounds), within
//!   0.8 % above.
//! - `rtlat_latency_max_seconds` and `rtlat_latency_percentile_seconds`
//!   (gauges, label `window`: each `--window`, and `all` since the start;
//!   the percentiles also `percentile`: `99`, `99.9`, `99.99`; not
//!   `quantile`, which Prometheus keeps for summaries): the largest sample
//!   (exact) and the percentiles (to the bucket) of the window; absent
//!   while a window has no sample.
//! - `rtlat_samples_total`, `rtlat_missed_periods_total`,
//!   `rtlat_smis_total` (with `--smi` only) per thread;
//! - `rtlat_verdict_level` (0 trustworthy, 1 caveats, 2 untrustworthy:
//!   the verdict of `--verdict` on the figures so far);
//! - `rtlat_info` (version, kernel release, preemption model),
//!   `rtlat_start_time_seconds` (the first start of a resumed run),
//!   `rtlat_resumed_gaps_total` and `rtlat_resumed_gap_seconds_total`
//!   (time not measured between a checkpoint and a resumed start),
//!   `rtlat_intervals_lost_total` (seconds whose exact maximum the reader
//!   fell too far behind to read), `rtlat_checkpoint_time_seconds`,
//!   `rtlat_checkpoint_failures_total`.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

/// The `Content-Type` of the Prometheus text format.
pub use prometheus_client::encoding::prometheus_text::CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE;
/// The `Content-Type` of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The upper bounds of the histogram's buckets, seconds (+Inf added).
pub const BUCKET_BOUNDS_NS: [i64; 16] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
];

/// The `rtlat_info` labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Info {
    /// rtlat's version.
    pub version: String,
    /// `uname -r`.
    pub kernel: String,
    /// The preemption model (`PREEMPT_RT`, `PREEMPT_DYNAMIC`, ...).
    pub preemption: String,
}

/// A window's figures, in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowSeconds {
    /// `window` label.
    pub label: String,
    /// Largest sample.
    pub max: Option<f64>,
    /// (percentile label, value).
    pub quantiles: Vec<(&'static str, Option<f64>)>,
}

/// One thread's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadFigures {
    /// `cpu` label.
    pub cpu: String,
    /// `thread` label.
    pub thread: String,
    /// Samples (the histogram's count).
    pub samples: u64,
    /// Sum of the samples, seconds.
    pub sum_s: f64,
    /// Samples per bucket of [`BUCKET_BOUNDS_NS`], then above the last.
    pub buckets: Vec<u64>,
    /// Periods missed.
    pub missed_periods: u64,
    /// SMIs counted, with `--smi`.
    pub smis: Option<u64>,
    /// The windows, then `all`.
    pub windows: Vec<WindowSeconds>,
}

/// Everything one update publishes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// `rtlat_info`.
    pub info: Info,
    /// Unix seconds of the first start.
    pub start_time_s: f64,
    /// Per thread.
    pub threads: Vec<ThreadFigures>,
    /// 0, 1, 2.
    pub verdict_level: u8,
    /// Gaps recorded by `--resume`, and their total length.
    pub gaps: u64,
    /// Seconds.
    pub gap_s: f64,
    /// Seconds whose maximum was lost.
    pub intervals_lost: u64,
    /// Unix seconds of the last checkpoint written.
    pub checkpoint_time_s: Option<f64>,
    /// Checkpoints that could not be written.
    pub checkpoint_failures: u64,
}

/// Both texts of one update.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    /// Prometheus text format 0.0.4.
    pub prometheus: String,
    /// OpenMetrics 1.0 (with its `# EOF`).
    pub openmetrics: String,
}

/// Encodes `figures` both ways.
pub fn encode(figures: Figures) -> Encoded {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(FiguresCollector(figures)));
    let mut encoded = Encoded::default();
    // Writing into a String cannot fail; the collector itself returns no
    // error of its own.
    let _ =
        prometheus_client::encoding::prometheus_text::encode(&mut encoded.prometheus, &registry);
    let _ = prometheus_client::encoding::text::encode(&mut encoded.openmetrics, &registry);
    encoded
}

#[derive(Debug)]
struct FiguresCollector(Figures);

type Labels = Vec<(&'static str, String)>;
/// A window's values of one family, each with its `percentile` label.
type Picked = Vec<(Option<&'static str>, Option<f64>)>;

impl FiguresCollector {
    fn thread_labels(t: &ThreadFigures) -> Labels {
        vec![("cpu", t.cpu.clone()), ("thread", t.thread.clone())]
    }

    /// One family with a value per label set.
    fn family<V>(
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        unit: Option<&Unit>,
        kind: MetricType,
        series: impl IntoIterator<Item = (Labels, V)>,
        mut write: impl FnMut(&mut prometheus_client::encoding::MetricEncoder, V) -> fmt::Result,
    ) -> fmt::Result {
        let mut family = encoder.encode_descriptor(name, help, unit, kind)?;
        for (labels, value) in series {
            write(&mut family.encode_family(&labels)?, value)?;
        }
        Ok(())
    }
}

fn gauge(m: &mut prometheus_client::encoding::MetricEncoder, v: f64) -> fmt::Result {
    m.encode_gauge(&v)
}

fn counter(m: &mut prometheus_client::encoding::MetricEncoder, v: u64) -> fmt::Result {
    m.encode_counter::<NoLabelSet, _, u64>(&v, None)
}

fn counter_f64(m: &mut prometheus_client::encoding::MetricEncoder, v: f64) -> fmt::Result {
    m.encode_counter::<NoLabelSet, _, f64>(&v, None)
}

impl Collector for FiguresCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let f = &self.0;
        let seconds = Unit::Seconds;
        let per_thread = |value: fn(&ThreadFigures) -> Option<u64>| {
            f.threads
                .iter()
                .filter_map(move |t| Some((Self::thread_labels(t), value(t)?)))
        };
        Self::family(
            &mut encoder,
            "rtlat_latency",
            "How late each measuring thread woke up, every sample since the start",
            Some(&seconds),
            MetricType::Histogram,
            f.threads.iter().map(|t| (Self::thread_labels(t), t)),
            |m, t| {
                let bounds = BUCKET_BOUNDS_NS
                    .iter()
                    .map(|&ns| ns as f64 / 1e9)
                    .chain(std::iter::once(f64::INFINITY));
                let buckets: Vec<(f64, u64)> = bounds.zip(t.buckets.iter().copied()).collect();
                m.encode_histogram::<NoLabelSet>(t.sum_s, t.samples, &buckets, None)
            },
        )?;
        let windows = |pick: fn(&WindowSeconds) -> Picked| {
            f.threads.iter().flat_map(move |t| {
                t.windows.iter().flat_map(move |w| {
                    pick(w).into_iter().filter_map(move |(percentile, value)| {
                        let mut labels = Self::thread_labels(t);
                        labels.push(("window", w.label.clone()));
                        if let Some(p) = percentile {
                            labels.push(("percentile", p.to_string()));
                        }
                        Some((labels, value?))
                    })
                })
            })
        };
        Self::family(
            &mut encoder,
            "rtlat_latency_max",
            "The largest latency of each window ('all': since the start)",
            Some(&seconds),
            MetricType::Gauge,
            windows(|w| vec![(None, w.max)]),
            gauge,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_latency_percentile",
            "Latency percentiles of each window ('all': since the start), to the bucket",
            Some(&seconds),
            MetricType::Gauge,
            windows(|w| w.quantiles.iter().map(|&(q, v)| (Some(q), v)).collect()),
            gauge,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_samples",
            "Samples taken by each measuring thread",
            None,
            MetricType::Counter,
            per_thread(|t| Some(t.samples)),
            counter,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_missed_periods",
            "Periods a measuring thread skipped because it woke up after the next deadline",
            None,
            MetricType::Counter,
            per_thread(|t| Some(t.missed_periods)),
            counter,
        )?;
        if f.threads.iter().any(|t| t.smis.is_some()) {
            Self::family(
                &mut encoder,
                "rtlat_smis",
                "System management interrupts counted on each measuring thread's CPU",
                None,
                MetricType::Counter,
                per_thread(|t| t.smis),
                counter,
            )?;
        }
        let none = || -> Labels { Vec::new() };
        Self::family(
            &mut encoder,
            "rtlat_verdict_level",
            "The verdict on the figures so far: 0 trustworthy, 1 caveats, 2 untrustworthy",
            None,
            MetricType::Gauge,
            [(none(), f64::from(f.verdict_level))],
            gauge,
        )?;
        let info = vec![
            ("version", f.info.version.clone()),
            ("kernel", f.info.kernel.clone()),
            ("preemption", f.info.preemption.clone()),
        ];
        let mut family =
            encoder.encode_descriptor("rtlat", "rtlat and the kernel", None, MetricType::Info)?;
        family.encode_info(&info)?;
        Self::family(
            &mut encoder,
            "rtlat_start_time",
            "When the monitored run first started, Unix time",
            Some(&seconds),
            MetricType::Gauge,
            [(none(), f.start_time_s)],
            gauge,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_resumed_gaps",
            "Gaps between a checkpoint and the start that resumed from it",
            None,
            MetricType::Counter,
            [(none(), f.gaps)],
            counter,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_resumed_gap",
            "Time not measured between checkpoints and the starts that resumed from them",
            Some(&seconds),
            MetricType::Counter,
            [(none(), f.gap_s)],
            counter_f64,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_intervals_lost",
            "Seconds whose exact maximum the monitor fell too far behind to read",
            None,
            MetricType::Counter,
            [(none(), f.intervals_lost)],
            counter,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_checkpoint_time",
            "When the last checkpoint was written, Unix time",
            Some(&seconds),
            MetricType::Gauge,
            f.checkpoint_time_s.map(|t| (none(), t)),
            gauge,
        )?;
        Self::family(
            &mut encoder,
            "rtlat_checkpoint_failures",
            "Checkpoints that could not be written",
            None,
            MetricType::Counter,
            [(none(), f.checkpoint_failures)],
            counter,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Figures {
        Figures {
            info: Info {
                version: "0.1.0".into(),
                kernel: "6.1.0-rt".into(),
                preemption: "PREEMPT_RT".into(),
            },
            start_time_s: 1_700_000_000.0,
            threads: vec![ThreadFigures {
                cpu: "1".into(),
                thread: "0".into(),
                samples: 10,
                sum_s: 0.00005,
                buckets: {
                    let mut b = vec![0; BUCKET_BOUNDS_NS.len() + 1];
                    b[2] = 9;
                    b[16] = 1;
                    b
                },
                missed_periods: 2,
                smis: None,
                windows: vec![WindowSeconds {
                    label: "1m".into(),
                    max: Some(0.2),
                    quantiles: vec![("99", Some(0.2)), ("99.9", None)],
                }],
            }],
            verdict_level: 1,
            ..Figures::default()
        }
    }

    /// Whether `text` has a sample `name{labels} value`, the labels in
    /// any order, numbers (`le` too) compared as numbers: the two
    /// encoders order and spell them each their own way.
    fn has_sample(text: &str, name: &str, labels: &[(&str, &str)], value: f64) -> bool {
        let number = |s: &str| match s {
            "+Inf" => Some(f64::INFINITY),
            s => s.parse::<f64>().ok(),
        };
        text.lines().filter(|l| !l.starts_with('#')).any(|line| {
            let (series, v) = line.rsplit_once(' ').unwrap_or((line, ""));
            let (n, rest) = series.split_once('{').unwrap_or((series, "}"));
            let found: Vec<(&str, &str)> = rest
                .trim_end_matches('}')
                .split(',')
                .filter(|p| !p.is_empty())
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k, v.trim_matches('"')))
                .collect();
            n == name
                && number(v) == Some(value)
                && found.len() == labels.len()
                && labels.iter().all(|(k, want)| {
                    found.iter().any(|(fk, fv)| {
                        fk == k
                            && (fv == want || (number(fv).is_some() && number(fv) == number(want)))
                    })
                })
        })
    }

    #[test]
    fn both_formats_carry_the_same_series() {
        let e = encode(figures());
        let thread = [("cpu", "1"), ("thread", "0")];
        let with = |more: &[(&'static str, &'static str)]| {
            let mut l = thread.to_vec();
            l.extend_from_slice(more);
            l
        };
        for text in [&e.prometheus, &e.openmetrics] {
            for (name, labels, value) in [
                ("rtlat_latency_seconds_bucket", with(&[("le", "5e-6")]), 9.0),
                ("rtlat_latency_seconds_bucket", with(&[("le", "2e-6")]), 0.0),
                (
                    "rtlat_latency_seconds_bucket",
                    with(&[("le", "+Inf")]),
                    10.0,
                ),
                ("rtlat_latency_seconds_count", with(&[]), 10.0),
                ("rtlat_latency_seconds_sum", with(&[]), 0.00005),
                ("rtlat_latency_max_seconds", with(&[("window", "1m")]), 0.2),
                (
                    "rtlat_latency_percentile_seconds",
                    with(&[("window", "1m"), ("percentile", "99")]),
                    0.2,
                ),
                ("rtlat_samples_total", with(&[]), 10.0),
                ("rtlat_missed_periods_total", with(&[]), 2.0),
                ("rtlat_verdict_level", vec![], 1.0),
                (
                    "rtlat_info",
                    vec![
                        ("version", "0.1.0"),
                        ("kernel", "6.1.0-rt"),
                        ("preemption", "PREEMPT_RT"),
                    ],
                    1.0,
                ),
            ] {
                assert!(
                    has_sample(text, name, &labels, value),
                    "{name} {labels:?} {value}\n{text}"
                );
            }
            assert!(!text.contains("percentile=\"99.9\""), "no value, no sample");
            assert!(!text.contains("rtlat_smis"), "not counted, not shown");
            assert!(
                !text
                    .lines()
                    .any(|l| l.starts_with("rtlat_checkpoint_time_seconds"))
            );
        }
        assert!(e.openmetrics.ends_with("# EOF\n"));
        assert!(!e.prometheus.contains("# EOF"));
        assert!(e.prometheus.contains("# TYPE rtlat_samples_total counter"));
        assert!(e.openmetrics.contains("# TYPE rtlat_samples counter"));
    }
}
