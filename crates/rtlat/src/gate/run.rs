//! The gates as every tool runs them: the subjects of a finished
//! [`RunReport`] (each thread, then all threads together) and the end of a
//! gated run (JUnit file, stderr lines, exit status 3).

use std::path::PathBuf;

use crate::output::Stdout;
use crate::report::formats::{Format, write_list};
use rtlat_core::Distribution;
use rtlat_core::{PreciseStats, RunReport};

use crate::report::verdict::Verdict;

use super::judged::Judged;
use super::junit::Junit;
use super::{Limit, Metrics, Subject, any_failed, evaluate, summary_lines};

use rtlat_args::stdio::tell;

/// `--fail-if` and `--junit` of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatePlan {
    /// The limits, in the order given.
    pub limits: Vec<Limit>,
    /// Where the JUnit report goes, if anywhere.
    pub junit: Option<PathBuf>,
}

impl GatePlan {
    /// Whether a limit judges the run's verdict (`verdict=LEVEL`,
    /// `machine=LEVEL`, ...), whose set-up reasons need the audit made
    /// before the first sample.
    pub fn judges_verdict(&self) -> bool {
        self.limits.iter().any(|l| l.metric.is_level())
    }
}

/// Exit status of a run whose limit was broken.
pub const BROKEN_LIMIT_STATUS: u8 = 3;

/// One subject per thread (`thread N`; `name` names the threads, e.g.
/// `pair` for the IPC tools), one for all of them (`all threads`) and one
/// for the run's `verdict` (`run`).
pub fn subjects(report: &RunReport, name: &str, verdict: &Verdict) -> Vec<Subject> {
    let mut subjects: Vec<Subject> = report
        .threads
        .iter()
        .map(|t| Subject {
            name: format!("{name} {}", t.index),
            metrics: metrics(t.compat.cycles, &t.precise, t.distribution.as_ref()),
        })
        .collect();
    let (cycles, precise) = report.all_threads_precise();
    subjects.push(Subject {
        name: format!("all {name}s"),
        metrics: metrics(cycles, &precise, report.merged_distribution().as_ref()),
    });
    subjects.push(Subject {
        name: "run".to_string(),
        metrics: Metrics {
            verdict: Some(verdict.level),
            parts: Some((verdict.measurement, verdict.machine)),
            ..Metrics::default()
        },
    });
    subjects
}

fn metrics(cycles: u64, precise: &PreciseStats, d: Option<&Distribution>) -> Metrics {
    Metrics {
        samples: cycles,
        min_ns: precise.min.map(|n| n.as_nanos()),
        avg_ns: precise.mean(cycles),
        max_ns: precise.max.map(|n| n.as_nanos()),
        percentiles_ns: percentiles(d),
        overruns: precise.overruns,
        verdict: None,
        parts: None,
    }
}

/// The standard percentiles in ns; all unmeasured without a distribution.
fn percentiles(d: Option<&Distribution>) -> Vec<(&'static str, Option<i64>)> {
    match d {
        Some(d) => d
            .standard_percentiles()
            .into_iter()
            .filter(|(label, _)| *label != "max")
            .map(|(label, v)| (label, v.map(|n| n.as_nanos())))
            .collect(),
        None => rtlat_core::STANDARD_PERCENTILES
            .iter()
            .map(|&(label, _)| (label, None))
            .collect(),
    }
}

/// The end of every tool's run once its outputs are written and stdout
/// flushed: with gates, checks them on `report`'s subjects (threads called
/// `name`) and its `verdict`, and turns a run that ended well (`status` 0)
/// with a broken limit into [`BROKEN_LIMIT_STATUS`]; `tool` names the
/// JUnit suite.
pub fn apply(
    plan: Option<&GatePlan>,
    report: &RunReport,
    verdict: &Verdict,
    name: &str,
    tool: &str,
    duration_s: f64,
    status: u8,
) -> anyhow::Result<u8> {
    let Some(plan) = plan else {
        return Ok(status);
    };
    let broken = finish(plan, &subjects(report, name, verdict), tool, duration_s)?;
    Ok(if broken && status == 0 {
        BROKEN_LIMIT_STATUS
    } else {
        status
    })
}

/// The outputs written once the gates are judged, after stdout is
/// flushed: the JUnit report. (The other stage's list, and the trait, are
/// [`crate::report::formats`].)
pub static GATE_FORMATS: &[&dyn for<'a> Format<Judged<'a>>] = &[&Junit];

/// After a run's other outputs: evaluates `plan` on `subjects`, writes
/// the outputs of [`GATE_FORMATS`] (the JUnit report, suite `tool`),
/// prints one stderr line per broken limit (prefixed with the program's
/// name) and returns whether a limit was broken. A JUnit file that cannot
/// be written is an error naming it (and the lines are not printed).
pub fn finish(
    plan: &GatePlan,
    subjects: &[Subject],
    tool: &str,
    duration_s: f64,
) -> anyhow::Result<bool> {
    let outcomes = evaluate(&plan.limits, subjects);
    let judged = Judged {
        plan,
        outcomes: &outcomes,
        tool,
        duration_s,
    };
    let mut out = Stdout::new(false);
    write_list(GATE_FORMATS, &judged, &mut out)?;
    out.finish()?;
    for line in summary_lines(&outcomes) {
        tell!("{line}");
    }
    Ok(any_failed(&outcomes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, meta, run};
    use rtlat_core::Resolution;

    #[test]
    fn threads_then_all_threads() {
        let report = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&[5, 7, 9], Resolution::Micros, 100, None)
                    .distribution(&[5_100, 7_100, 9_100])
                    .overruns(2)
                    .build(),
                ThreadFixture::new(1)
                    .samples(&[3, 40], Resolution::Micros, 100, None)
                    .distribution(&[3_100, 40_100])
                    .build(),
            ],
        );
        let verdict = crate::report::verdict::judge(&report, &meta("x"), None);
        let s = subjects(&report, "thread", &verdict);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["thread 0", "thread 1", "all threads", "run"]);
        assert_eq!(s[3].metrics.verdict, Some(verdict.level));
        assert!(s[..3].iter().all(|s| s.metrics.verdict.is_none()));
        let all = &s[2].metrics;
        assert_eq!((all.samples, all.overruns), (5, 2));
        assert_eq!((all.min_ns, all.max_ns), (Some(3_100), Some(40_100)));
        assert_eq!(all.avg_ns, Some(12_900.0));
        let p50 = all.percentiles_ns.iter().find(|(l, _)| *l == "p50");
        assert_eq!(p50, Some(&("p50", Some(7_000))));
        assert_eq!(s[0].metrics.percentiles_ns.len(), 6);
    }

    #[test]
    fn no_distribution_means_percentiles_not_measured() {
        let report = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .samples(&[5], Resolution::Micros, 0, None)
                    .build(),
            ],
        );
        let verdict = crate::report::verdict::judge(&report, &meta("x"), None);
        let s = subjects(&report, "pair", &verdict);
        assert_eq!(s[1].name, "all pairs");
        assert!(s[0].metrics.percentiles_ns.iter().all(|(_, v)| v.is_none()));
    }
}
