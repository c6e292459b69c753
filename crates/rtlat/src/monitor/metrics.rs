//! The monitor's metrics: what they are ([`Figures`]) and their text, in
//! the Prometheus text format (0.0.4) and in OpenMetrics, both encoded by
//! the Prometheus project's own client crate from one collector, so that
//! the two never say different things.
//!
//! Names follow Prometheus' naming practice: base units (seconds), `_total`
//! for counters, one `rtlat_` prefix. Every per-thread series has the
//! labels `cpu` (the CPU the thread is pinned to, `any` when it is not)
//! and `thread` (its number). The families:
//! - `rtlat_latency_seconds` (histogram): every sample since the start, in
//!   the log-linear buckets of [`BUCKET_BOUNDS_NS`] (1 µs steps up to
//!   40 µs, then 20 steps per power of two up to 10.24 ms, then 20, 50 and
//!   100 ms): 204 buckets with `+Inf`, the same on every host so that
//!   they add up across a fleet. From 20 µs to 10.24 ms no bucket is
//!   wider than 5 % of its lower bound, so `histogram_quantile` is within
//!   5 % of the exact percentile; below 20 µs the buckets are rtlat's own
//!   1 µs ones. A sample is counted by the bucket of rtlat's distribution
//!   it fell in: exactly below 2 ms (1 µs buckets, whose bounds are the
//!   `le` bounds; a bucket holds the samples below its `le`), within 0.8 %
//!   above.
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
//!   `rtlat_checkpoint_failures_total`;
//! - the worst-case projection of all threads together (their blocks,
//!   [`rtlat_stats::projection`]), recomputed at most every 10 s:
//!   `rtlat_projection_blocks` and `rtlat_projection_block_seconds` (what
//!   it is made from), `rtlat_projection_refused` (label `reason`: the
//!   refusal's id and 1, or `none` and 0 when projected),
//!   `rtlat_projection_more_seconds` (how much longer the run must be, when
//!   a refusal says), `rtlat_projected_max_seconds` (labels `horizon`, in
//!   seconds, and `bound`: `median`, `lower`, `upper` of the 95 %
//!   interval; an upper bound the data leave open is absent), and with a
//!   deadline `rtlat_deadline_seconds` and
//!   `rtlat_deadline_exceedances_per_hour` (label `bound`). Only the
//!   families of the outcome are there: a refused projection has no
//!   projected values.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use rtlat_stats::projection::{Estimate, Projection};

/// The `Content-Type` of the Prometheus text format.
pub use prometheus_client::encoding::prometheus_text::CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE;
/// The `Content-Type` of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Steps of the histogram per power of two, from [`FINE_START_NS`] on: a
/// bucket is at most 1/20 (5 %) of its lower bound wide.
pub const STEPS_PER_OCTAVE: i64 = 20;
/// Where the steps of 1 µs give way to [`STEPS_PER_OCTAVE`] per power of
/// two: 40 µs (up to there a step of 1 µs is at most 5 % of 20 µs and
/// more; below 20 µs it is the width of rtlat's own buckets).
pub const FINE_START_NS: i64 = 2 * STEPS_PER_OCTAVE * 1_000;
/// Powers of two cut in [`STEPS_PER_OCTAVE`]: 40 µs to 10.24 ms.
pub const FINE_OCTAVES: u32 = 8;
/// The coarse bounds beyond 10.24 ms, where only the order of magnitude
/// is kept (the maxima are exact gauges of their own).
pub const COARSE_TAIL_NS: [i64; 3] = [20_000_000, 50_000_000, 100_000_000];
/// How many finite bounds the histogram has.
pub const BUCKET_COUNT: usize = (FINE_START_NS / 1_000) as usize
    + (STEPS_PER_OCTAVE as usize) * FINE_OCTAVES as usize
    + COARSE_TAIL_NS.len();

/// The upper bounds of the histogram's buckets, ns (`+Inf` added): every
/// µs up to [`FINE_START_NS`], [`STEPS_PER_OCTAVE`] equal steps in each
/// of [`FINE_OCTAVES`] powers of two, then [`COARSE_TAIL_NS`]. Every
/// bound is a whole µs, a bound of rtlat's distribution (1 µs buckets up
/// to 2 ms), so that its samples fall on one side or the other.
pub const BUCKET_BOUNDS_NS: [i64; BUCKET_COUNT] = bucket_bounds();

const fn bucket_bounds() -> [i64; BUCKET_COUNT] {
    let mut bounds = [0; BUCKET_COUNT];
    let mut i = 0;
    while i < (FINE_START_NS / 1_000) as usize {
        bounds[i] = (i as i64 + 1) * 1_000;
        i += 1;
    }
    let mut octave = 0;
    while octave < FINE_OCTAVES {
        let start = FINE_START_NS << octave;
        let step = start / STEPS_PER_OCTAVE;
        let mut j = 1;
        while j <= STEPS_PER_OCTAVE {
            bounds[i] = start + j * step;
            i += 1;
            j += 1;
        }
        octave += 1;
    }
    let mut k = 0;
    while k < COARSE_TAIL_NS.len() {
        bounds[i] = COARSE_TAIL_NS[k];
        i += 1;
        k += 1;
    }
    bounds
}

/// The slot of [`ThreadFigures::buckets`] of samples from `lower_ns` (a
/// bucket of rtlat's distribution): the first bound above it, or the
/// last slot (`+Inf`).
pub fn bucket_slot(lower_ns: i64) -> usize {
    BUCKET_BOUNDS_NS.partition_point(|&le| le <= lower_ns)
}

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
    /// The projection of all threads together, once made.
    pub projection: Option<ProjectionFigures>,
}

/// The worst-case projection of all threads together, and what it was
/// made from.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionFigures {
    /// Blocks of all threads together.
    pub blocks: u64,
    /// Their length, seconds.
    pub block_s: f64,
    /// The projection, or why there is none.
    pub outcome: Projection,
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
        )?;
        match &f.projection {
            Some(p) => Self::projection(&mut encoder, p),
            None => Ok(()),
        }
    }
}

impl FiguresCollector {
    /// The projection's families.
    fn projection(encoder: &mut DescriptorEncoder, p: &ProjectionFigures) -> fmt::Result {
        let seconds = Unit::Seconds;
        let none = || -> Labels { Vec::new() };
        Self::family(
            encoder,
            "rtlat_projection_blocks",
            "Blocks of all threads together that the worst-case projection is made from",
            None,
            MetricType::Gauge,
            [(none(), p.blocks as f64)],
            gauge,
        )?;
        Self::family(
            encoder,
            "rtlat_projection_block",
            "Length of the blocks the worst-case projection is made from",
            Some(&seconds),
            MetricType::Gauge,
            [(none(), p.block_s)],
            gauge,
        )?;
        let (reason, refused, more_s) = match &p.outcome {
            Projection::Refused(r) => (r.id, 1.0, r.more_s),
            Projection::Projected(_) => ("none", 0.0, None),
        };
        Self::family(
            encoder,
            "rtlat_projection_refused",
            "Whether the worst-case projection is refused (1), and why (reason)",
            None,
            MetricType::Gauge,
            [(vec![("reason", reason.to_owned())], refused)],
            gauge,
        )?;
        if let Some(more_s) = more_s {
            Self::family(
                encoder,
                "rtlat_projection_more",
                "How much longer the run must be before the projection can be made",
                Some(&seconds),
                MetricType::Gauge,
                [(none(), more_s)],
                gauge,
            )?;
        }
        let Projection::Projected(projected) = &p.outcome else {
            return Ok(());
        };
        // Each bound of `e` in its unit (`e` / `per_unit`).
        let bounds = |e: Estimate, per_unit: f64, extra: Labels| {
            [("median", e.value), ("lower", e.lower), ("upper", e.upper)]
                .into_iter()
                .filter(|(_, v)| v.is_finite())
                .map(move |(bound, v)| {
                    let mut labels = extra.clone();
                    labels.push(("bound", bound.to_owned()));
                    (labels, v / per_unit)
                })
        };
        Self::family(
            encoder,
            "rtlat_projected_max",
            "The maximum latency projected over each horizon (seconds), with its 95 % interval",
            Some(&seconds),
            MetricType::Gauge,
            projected.levels.iter().flat_map(|level| {
                let horizon = vec![("horizon", level.horizon_s.to_string())];
                bounds(level.max_ns, 1e9, horizon)
            }),
            gauge,
        )?;
        if let Some(deadline) = &projected.deadline {
            Self::family(
                encoder,
                "rtlat_deadline",
                "The deadline whose exceedances are projected (--deadline)",
                Some(&seconds),
                MetricType::Gauge,
                [(none(), deadline.deadline_ns as f64 / 1e9)],
                gauge,
            )?;
            Self::family(
                encoder,
                "rtlat_deadline_exceedances_per_hour",
                "Blocks per hour whose maximum exceeds the deadline, with its 95 % interval",
                None,
                MetricType::Gauge,
                bounds(deadline.per_hour, 1.0, none()),
                gauge,
            )?;
        }
        Ok(())
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
                    b[4] = 9;
                    b[BUCKET_COUNT] = 1;
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

    fn projected() -> ProjectionFigures {
        use rtlat_stats::projection::{Exceedance, HorizonLevel, Projected};
        let estimate = |value: f64, lower: f64, upper: f64| Estimate {
            value,
            lower,
            upper,
        };
        ProjectionFigures {
            blocks: 600,
            block_s: 1.0,
            outcome: Projection::Projected(Projected {
                method: "hand-made".into(),
                block_s: 1.0,
                blocks: 600,
                blocks_left_out: 0,
                fit_p: 0.4,
                trend_p: 0.6,
                location_ns: 20_000.0,
                scale_ns: 3_000.0,
                shape: 0.05,
                levels: vec![
                    HorizonLevel {
                        horizon_s: 3600.0,
                        max_ns: estimate(142_000.0, 120_000.0, 190_000.0),
                        range_ns: (125_000.0, 170_000.0),
                    },
                    HorizonLevel {
                        horizon_s: 86_400.0,
                        max_ns: estimate(210_000.0, 150_000.0, f64::INFINITY),
                        range_ns: (180_000.0, 260_000.0),
                    },
                ],
                beyond: Vec::new(),
                deadline: Some(Exceedance {
                    deadline_ns: 100_000,
                    per_hour: estimate(3.1, 1.2, 6.4),
                    mean_time_between_s: Some(1161.0),
                    observed_blocks: 2,
                }),
            }),
        }
    }

    #[test]
    fn a_projection_is_its_levels_with_their_bounds() {
        let figures = Figures {
            projection: Some(projected()),
            ..figures()
        };
        let e = encode(figures);
        for text in [&e.prometheus, &e.openmetrics] {
            for (name, labels, value) in [
                ("rtlat_projection_blocks", vec![], 600.0),
                ("rtlat_projection_block_seconds", vec![], 1.0),
                ("rtlat_projection_refused", vec![("reason", "none")], 0.0),
                (
                    "rtlat_projected_max_seconds",
                    vec![("horizon", "3600"), ("bound", "median")],
                    142e-6,
                ),
                (
                    "rtlat_projected_max_seconds",
                    vec![("horizon", "3600"), ("bound", "upper")],
                    190e-6,
                ),
                (
                    "rtlat_projected_max_seconds",
                    vec![("horizon", "86400"), ("bound", "lower")],
                    150e-6,
                ),
                ("rtlat_deadline_seconds", vec![], 100e-6),
                (
                    "rtlat_deadline_exceedances_per_hour",
                    vec![("bound", "median")],
                    3.1,
                ),
                (
                    "rtlat_deadline_exceedances_per_hour",
                    vec![("bound", "lower")],
                    1.2,
                ),
            ] {
                assert!(
                    has_sample(text, name, &labels, value),
                    "{name} {labels:?} {value}\n{text}"
                );
            }
            // The open upper bound of 24 h is not a number to show.
            assert!(
                !text.contains("horizon=\"86400\",bound=\"upper\"")
                    && !text.contains("bound=\"upper\",horizon=\"86400\""),
                "{text}"
            );
            assert!(!text.contains("rtlat_projection_more"));
        }
    }

    #[test]
    fn a_refused_projection_says_why_and_projects_nothing() {
        use rtlat_stats::projection::Refusal;
        let figures = Figures {
            projection: Some(ProjectionFigures {
                blocks: 12,
                block_s: 1.0,
                outcome: Projection::Refused(Refusal {
                    id: "too_few_blocks",
                    reason: "12 blocks".into(),
                    advice: "run longer".into(),
                    more_s: Some(48.0),
                }),
            }),
            ..figures()
        };
        let e = encode(figures);
        for text in [&e.prometheus, &e.openmetrics] {
            assert!(has_sample(
                text,
                "rtlat_projection_refused",
                &[("reason", "too_few_blocks")],
                1.0
            ));
            assert!(has_sample(text, "rtlat_projection_more_seconds", &[], 48.0));
            assert!(!text.contains("rtlat_projected_max"), "{text}");
            assert!(!text.contains("rtlat_deadline"), "{text}");
        }
        // Before the first projection: no family of it.
        assert!(
            !encode(figures_without_projection())
                .prometheus
                .contains("rtlat_projection")
        );
    }

    fn figures_without_projection() -> Figures {
        figures()
    }

    #[test]
    fn the_buckets_are_whole_microseconds_and_at_most_five_percent_wide() {
        assert_eq!(BUCKET_BOUNDS_NS.len(), 203);
        assert_eq!(BUCKET_BOUNDS_NS[0], 1_000);
        assert_eq!(BUCKET_BOUNDS_NS[39], 40_000);
        assert_eq!(BUCKET_BOUNDS_NS[40], 42_000);
        assert_eq!(BUCKET_BOUNDS_NS[199], 10_240_000);
        assert_eq!(BUCKET_BOUNDS_NS[202], 100_000_000);
        for pair in BUCKET_BOUNDS_NS.windows(2) {
            let (lower, upper) = (pair[0], pair[1]);
            assert!(lower < upper && upper % 1_000 == 0, "{lower} {upper}");
            if (20_000..10_240_000).contains(&lower) {
                // Linear interpolation within (lower, upper] is at most
                // this far from any value in it: 5 % of the value.
                assert!((upper - lower) * 20 <= lower, "{lower} {upper}");
            }
        }
    }

    #[test]
    fn a_bucket_of_the_distribution_lands_below_the_first_bound_above_it() {
        // rtlat's bucket [36 µs, 37 µs) is counted under le = 37 µs.
        assert_eq!(BUCKET_BOUNDS_NS[bucket_slot(36_000)], 37_000);
        assert_eq!(BUCKET_BOUNDS_NS[bucket_slot(0)], 1_000);
        assert_eq!(BUCKET_BOUNDS_NS[bucket_slot(40_000)], 42_000);
        assert_eq!(BUCKET_BOUNDS_NS[bucket_slot(41_000)], 42_000);
        assert_eq!(bucket_slot(i64::MIN), 0);
        assert_eq!(bucket_slot(100_000_000), BUCKET_COUNT);
        assert_eq!(bucket_slot(1 << 36), BUCKET_COUNT);
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
