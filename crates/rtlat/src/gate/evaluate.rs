//! [`Limit`]s against a finished run's figures.

use super::grammar::{GateLevel, Limit, Metric, level_rank};
use crate::report::verdict::{Level, Machine, Measurement};

/// What a tool measured for one thread, or for all threads together.
/// Plain data, in nanoseconds at full precision (not the C-compatible
/// truncated µs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Samples taken; 0 makes every latency limit fail with "no samples".
    pub samples: u64,
    /// The smallest latency.
    pub min_ns: Option<i64>,
    /// The mean latency.
    pub avg_ns: Option<f64>,
    /// The largest latency.
    pub max_ns: Option<i64>,
    /// Percentiles by label, as `Distribution::standard_percentiles` gives
    /// them (`("p99.9", Some(ns))`; a `"max"` entry is ignored). A label
    /// that is missing or `None` is "not measured".
    pub percentiles_ns: Vec<(&'static str, Option<i64>)>,
    /// Missed periods.
    pub overruns: u64,
    /// The run's verdict: only the subject that stands for the whole run
    /// has one, and only the level limits (`verdict`, `measurement`,
    /// `machine`) apply to it.
    pub verdict: Option<Level>,
    /// The verdict's two parts, on the same subject as `verdict`.
    pub parts: Option<(Measurement, Machine)>,
}

impl Metrics {
    /// The value of `metric`, `None` when it was not measured.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Min => self.min_ns.map(|v| v as f64),
            Metric::Avg => self.avg_ns,
            Metric::Max => self.max_ns.map(|v| v as f64),
            Metric::Overruns => Some(self.overruns as f64),
            Metric::Verdict => self.verdict.map(level_rank),
            Metric::Measurement => self.parts.map(|(m, _)| GateLevel::Measurement(m).rank()),
            Metric::Machine => self.parts.map(|(_, m)| GateLevel::Machine(m).rank()),
            _ => {
                let label = metric.percentile_label()?;
                self.percentiles_ns
                    .iter()
                    .find(|(l, _)| *l == label)
                    .and_then(|(_, v)| v.map(|v| v as f64))
            }
        }
    }
}

/// One thing limits apply to: a thread or all threads together.
#[derive(Clone, Debug, PartialEq)]
pub struct Subject {
    /// `thread 0`, `all threads`: the start of test case names and messages.
    pub name: String,
    /// Its figures.
    pub metrics: Metrics,
}

/// A measured value: ns for latencies, a count for `overruns`.
pub type Measured = f64;

/// How one limit fared on one subject.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The failing condition does not hold.
    Passed {
        /// The value compared.
        measured: Measured,
    },
    /// The failing condition holds.
    Failed {
        /// The value compared.
        measured: Measured,
    },
    /// Nothing to compare: a failure too. `reason` is `no samples` or
    /// `not measured`.
    NoData {
        /// Why.
        reason: &'static str,
    },
}

/// One subject × one limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The subject's name.
    pub subject: String,
    /// The limit.
    pub limit: Limit,
    /// The result.
    pub verdict: Verdict,
}

impl Outcome {
    /// Whether this outcome fails the gate (a broken limit or no data).
    pub fn failed(&self) -> bool {
        !matches!(self.verdict, Verdict::Passed { .. })
    }

    /// The test case name: `thread 0: max > 100us`.
    pub fn name(&self) -> String {
        format!("{}: {}", self.subject, self.limit)
    }

    /// What was found, without the subject: `max = 153.2 us > 100 us`,
    /// `max = 45.1 us`, `max > 100 us: no samples`.
    pub fn finding(&self) -> String {
        let metric = self.limit.metric;
        if metric.is_level()
            && let Verdict::Failed { measured } = &self.verdict
        {
            let what = if self.limit.op == super::grammar::Op::Is {
                "required"
            } else {
                "refused"
            };
            return format!(
                "{metric} = {} ({} {what})",
                self.limit.measured_display(*measured),
                self.limit.value_display()
            );
        }
        match &self.verdict {
            Verdict::Failed { measured } => format!(
                "{metric} = {} {} {}",
                self.limit.measured_display(*measured),
                self.limit.op,
                self.limit.value_display()
            ),
            Verdict::Passed { measured } => {
                format!("{metric} = {}", self.limit.measured_display(*measured))
            }
            Verdict::NoData { reason } => format!(
                "{metric} {} {}: {reason}",
                self.limit.op,
                self.limit.value_display()
            ),
        }
    }
}

/// Every limit on every subject it applies to: for each subject in order,
/// each limit in order. A level limit (`verdict`, `measurement`,
/// `machine`) applies to the subjects with a verdict (the whole run),
/// every other limit to those without (threads).
pub fn evaluate(limits: &[Limit], subjects: &[Subject]) -> Vec<Outcome> {
    subjects
        .iter()
        .flat_map(|subject| {
            let applies =
                move |limit: &&Limit| limit.metric.is_level() == subject.metrics.verdict.is_some();
            limits.iter().filter(applies).map(move |limit| Outcome {
                subject: subject.name.clone(),
                limit: limit.clone(),
                verdict: judge(limit, &subject.metrics),
            })
        })
        .collect()
}

fn judge(limit: &Limit, metrics: &Metrics) -> Verdict {
    if limit.metric.is_latency() && metrics.samples == 0 {
        return Verdict::NoData {
            reason: "no samples",
        };
    }
    match metrics.value(limit.metric) {
        None => Verdict::NoData {
            reason: "not measured",
        },
        Some(measured) if limit.op.fails(measured, limit.threshold.as_f64()) => {
            Verdict::Failed { measured }
        }
        Some(measured) => Verdict::Passed { measured },
    }
}

/// Whether any outcome fails the gate: the tool then exits 3.
pub fn any_failed(outcomes: &[Outcome]) -> bool {
    outcomes.iter().any(Outcome::failed)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::gate::parse;

    /// Thread 0 within the limits, thread 1 above them, thread 2 without
    /// samples, and all threads together.
    pub fn subjects() -> Vec<Subject> {
        let metrics = |samples, min, avg, max, p99_9, overruns| Metrics {
            samples,
            min_ns: min,
            avg_ns: avg,
            max_ns: max,
            percentiles_ns: vec![
                ("p50", min.map(|m| m + 1_000)),
                ("p90", min.map(|m| m + 2_000)),
                ("p99", min.map(|m| m + 3_000)),
                ("p99.9", p99_9),
                ("p99.99", max),
                ("p99.999", max),
                ("max", max),
            ],
            overruns,
            verdict: None,
            parts: None,
        };
        vec![
            Subject {
                name: "thread 0".into(),
                metrics: metrics(
                    20_000,
                    Some(1_000),
                    Some(16_718.2),
                    Some(45_100),
                    Some(31_000),
                    0,
                ),
            },
            Subject {
                name: "thread 1".into(),
                metrics: metrics(
                    13_338,
                    Some(2_000),
                    Some(15_002.5),
                    Some(153_200),
                    Some(41_000),
                    3,
                ),
            },
            Subject {
                name: "thread 2".into(),
                metrics: metrics(0, None, None, None, None, 0),
            },
            Subject {
                name: "all threads".into(),
                metrics: metrics(
                    33_338,
                    Some(1_000),
                    Some(16_000.0),
                    Some(153_200),
                    Some(40_000),
                    3,
                ),
            },
        ]
    }

    fn verdicts(expr: &str) -> Vec<(String, Verdict)> {
        evaluate(&parse(expr).unwrap(), &subjects())
            .into_iter()
            .map(|o| (o.name(), o.verdict))
            .collect()
    }

    #[test]
    fn one_outcome_per_subject_and_limit_subject_first() {
        let names: Vec<String> = verdicts("max>100us,overruns>0")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names,
            [
                "thread 0: max > 100us",
                "thread 0: overruns > 0",
                "thread 1: max > 100us",
                "thread 1: overruns > 0",
                "thread 2: max > 100us",
                "thread 2: overruns > 0",
                "all threads: max > 100us",
                "all threads: overruns > 0",
            ]
        );
    }

    #[test]
    fn operators_are_the_failing_condition_at_the_boundary() {
        // p99.9 of all threads is exactly 40 us.
        let at = |expr: &str| verdicts(expr).pop().unwrap().1;
        assert_eq!(at("p99.9>40us"), Verdict::Passed { measured: 40_000.0 });
        assert_eq!(at("p99.9>=40us"), Verdict::Failed { measured: 40_000.0 });
        assert_eq!(at("p99.9<40us"), Verdict::Passed { measured: 40_000.0 });
        assert_eq!(at("p99.9<=40us"), Verdict::Failed { measured: 40_000.0 });
        assert_eq!(at("p99.9>39999ns"), Verdict::Failed { measured: 40_000.0 });
        assert_eq!(at("p99.9>0.04ms"), Verdict::Passed { measured: 40_000.0 });
    }

    #[test]
    fn every_metric_reads_its_own_figure() {
        let thread0 = &subjects()[0].metrics;
        let cases = [
            (Metric::Min, 1_000.0),
            (Metric::Avg, 16_718.2),
            (Metric::Max, 45_100.0),
            (Metric::P50, 2_000.0),
            (Metric::P90, 3_000.0),
            (Metric::P99, 4_000.0),
            (Metric::P99_9, 31_000.0),
            (Metric::P99_99, 45_100.0),
            (Metric::P99_999, 45_100.0),
            (Metric::Overruns, 0.0),
        ];
        for (metric, value) in cases {
            assert_eq!(thread0.value(metric), Some(value), "{metric}");
        }
    }

    #[test]
    fn no_samples_is_a_failure_but_overruns_are_counted() {
        let v = verdicts("max>100us,overruns>0");
        assert_eq!(
            v[4],
            (
                "thread 2: max > 100us".to_string(),
                Verdict::NoData {
                    reason: "no samples"
                }
            )
        );
        assert_eq!(v[5].1, Verdict::Passed { measured: 0.0 });
        assert_eq!(v[3].1, Verdict::Failed { measured: 3.0 });
    }

    #[test]
    fn a_metric_not_measured_is_a_failure() {
        let mut subject = subjects().remove(0);
        subject.metrics.percentiles_ns.clear();
        subject.metrics.avg_ns = None;
        let outcomes = evaluate(&parse("p99>1ms,avg>1ms,max>1ms").unwrap(), &[subject]);
        let v: Vec<&Verdict> = outcomes.iter().map(|o| &o.verdict).collect();
        assert_eq!(
            v,
            [
                &Verdict::NoData {
                    reason: "not measured"
                },
                &Verdict::NoData {
                    reason: "not measured"
                },
                &Verdict::Passed { measured: 45_100.0 },
            ]
        );
        assert!(any_failed(&outcomes));
        assert!(!any_failed(&outcomes[2..]));
    }

    #[test]
    fn verdict_limits_apply_to_the_run_only() {
        let mut with_run = subjects();
        with_run.push(Subject {
            name: "run".into(),
            metrics: Metrics {
                verdict: Some(Level::Caveats),
                ..Metrics::default()
            },
        });
        let limits = parse("verdict=trustworthy,verdict!=untrustworthy,max>1s").unwrap();
        let outcomes = evaluate(&limits, &with_run);
        let run: Vec<&Outcome> = outcomes.iter().filter(|o| o.subject == "run").collect();
        assert_eq!(run.len(), 2, "only the verdict limits: {run:?}");
        assert!(run[0].failed());
        assert_eq!(run[0].finding(), "verdict = caveats (trustworthy required)");
        assert!(!run[1].failed());
        assert_eq!(run[1].finding(), "verdict = caveats");
        // No thread is judged on the verdict, and thread 2's missing
        // samples fail only its latency limit.
        assert!(
            outcomes
                .iter()
                .filter(|o| o.subject != "run")
                .all(|o| o.limit.metric != Metric::Verdict)
        );
        assert_eq!(outcomes.len(), 4 + 2);

        with_run.last_mut().unwrap().metrics.verdict = Some(Level::Untrustworthy);
        let outcomes = evaluate(&parse("verdict!=untrustworthy").unwrap(), &with_run);
        assert_eq!(outcomes.len(), 1);
        assert_eq!(
            outcomes[0].finding(),
            "verdict = untrustworthy (untrustworthy refused)"
        );
    }

    #[test]
    fn measurement_and_machine_limits_judge_the_parts() {
        let mut with_run = subjects();
        with_run.push(Subject {
            name: "run".into(),
            metrics: Metrics {
                verdict: Some(Level::Caveats),
                parts: Some((Measurement::Valid, Machine::NotReady)),
                ..Metrics::default()
            },
        });
        let limits =
            parse("measurement=valid,measurement!=invalid,machine=ready,machine!=not-ready,max>1s")
                .unwrap();
        let outcomes = evaluate(&limits, &with_run);
        let run: Vec<(bool, String)> = outcomes
            .iter()
            .filter(|o| o.subject == "run")
            .map(|o| (o.failed(), o.finding()))
            .collect();
        assert_eq!(
            run,
            [
                (false, "measurement = valid".to_string()),
                (false, "measurement = valid".to_string()),
                (true, "machine = not-ready (ready required)".to_string()),
                (true, "machine = not-ready (not-ready refused)".to_string()),
            ]
        );
        // No thread is judged on a part.
        assert!(
            outcomes
                .iter()
                .filter(|o| o.subject != "run")
                .all(|o| !o.limit.metric.is_level())
        );
        // A run whose parts were not judged: a failure, not a pass.
        with_run.last_mut().unwrap().metrics.parts = None;
        let outcomes = evaluate(&parse("machine!=not-ready").unwrap(), &with_run);
        assert_eq!(
            outcomes[0].verdict,
            Verdict::NoData {
                reason: "not measured"
            }
        );
    }

    #[test]
    fn findings_in_the_limits_unit() {
        let outcomes = evaluate(&parse("max>100us,avg<=0.02ms,max>1s").unwrap(), &subjects());
        let findings: Vec<String> = outcomes[..6].iter().map(Outcome::finding).collect();
        assert_eq!(
            findings,
            [
                "max = 45.1 us",
                "avg = 0.0167182 ms <= 0.02 ms",
                "max = 0.0000451 s",
                "max = 153.2 us > 100 us",
                "avg = 0.0150025 ms <= 0.02 ms",
                "max = 0.0001532 s",
            ]
        );
        assert_eq!(outcomes[6].finding(), "max > 100 us: no samples");
    }
}
