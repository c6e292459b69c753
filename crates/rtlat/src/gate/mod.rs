//! Gates for CI: `--fail-if 'max>100us,p99.9>40us'` and `--junit FILE`.
//!
//! The tools use [`GatePlan`], [`subjects`] and [`finish`] (module
//! `run`), which do the following with the pieces below.
//!
//! A tool turns the option's text into [`Limit`]s with [`parse`], fills one
//! [`Subject`] per thread and one for all threads together from its
//! finished run, and asks [`evaluate`] for one
//! [`Outcome`](evaluate::Outcome) per subject and limit. After writing all its other outputs it writes the JUnit report
//! ([`junit::write_junit`], through the output list `GATE_FORMATS`,
//! module `run`), prints [`summary_lines`] on stderr and exits 3 when
//! [`any_failed`]:
//!
//! ```text
//! let limits = gate::parse(text)?;                 // at option parsing: exit 2 on error
//! ...run, write the other outputs...
//! let subjects = vec![
//!     Subject { name: "thread 0".into(), metrics: Metrics { samples, min_ns, .. } },
//!     Subject { name: "all threads".into(), metrics: .. },
//! ];
//! let outcomes = gate::evaluate(&limits, &subjects);
//! if let Some(path) = junit {
//!     gate::write_junit(&mut file, "cyclictest", &outcomes, duration_s)?;
//! }
//! for line in gate::summary_lines(&outcomes) {
//!     tell!("{line}");   // rtlat cyclictest: --fail-if: thread 1: max = 153.2 us > 100 us
//! }
//! if gate::any_failed(&outcomes) { return Ok(3); }
//! ```
//!
//! # Grammar
//!
//! Comma-separated limits `METRIC OP VALUE[UNIT]`, blanks allowed around
//! each token:
//! - METRIC: `min`, `avg`, `max`, `p50`, `p90`, `p99`, `p99.9`, `p99.99`,
//!   `p99.999` (latencies) or `overruns` (a count of missed periods);
//! - OP: `>`, `>=`, `<`, `<=`, the condition that FAILS the gate;
//! - VALUE: a decimal number (`100`, `2.5`, `.5`), negative allowed for
//!   latencies (a clock stepped back gives negative ones); for `overruns` a
//!   whole number without a unit;
//! - UNIT: `ns`, `us`, `µs` (or Greek `μs`), `ms`, `s`; `us` when left out.
//!   A latency limit must be a whole number of nanoseconds (`0.5ns` is
//!   refused).
//!
//! - `verdict=LEVEL` and `verdict!=LEVEL`, LEVEL one of `trustworthy`,
//!   `caveats`, `untrustworthy` (see [`crate::report::verdict`]): unlike
//!   the other limits these say what is REQUIRED (`verdict=trustworthy`
//!   fails every run that is not trustworthy) or refused
//!   (`verdict!=untrustworthy` fails the untrustworthy ones), the way CI
//!   reads "require a run it can trust".
//! - `measurement=LEVEL`, `measurement!=LEVEL` (LEVEL `valid`, `doubtful`,
//!   `invalid`) and `machine=LEVEL`, `machine!=LEVEL` (`ready`,
//!   `caveats`, `not-ready`): the same for each part of the verdict
//!   (`measurement=valid`: a number measured right; `machine!=not-ready`:
//!   no `bad` finding of the audit on the measured CPUs).
//!
//! Every latency and `overruns` limit applies to every thread subject and
//! to all threads together; a level limit applies to one subject, `run`.
//! Errors ([`GateError`]) are one
//! line naming the option, the offending limit and what is accepted:
//! `--fail-if: 'p95>3us': unknown metric 'p95'; expected one of min, avg,
//! max, p50, ...`; the tool maps them to its usage error (exit 2).
//!
//! # Evaluation
//!
//! A latency limit on a subject without samples, or on a metric the tool
//! did not measure (`None`), FAILS with the reason (`no samples`, `not
//! measured`): a gate that could not look is not a pass. `overruns` is
//! always measured. Comparisons are on nanoseconds (`f64`, exact for any
//! latency below 104 days).
//!
//! # JUnit
//!
//! One `<testsuites>` with one `<testsuite name=SUITE>` and one
//! `<testcase classname=SUITE name="thread 0: max > 100us">` per outcome;
//! a broken limit or missing data carries a `<failure message=...>`, a
//! passed one a `<system-out>` with the measured value. Jenkins' JUnit
//! plugin and GitLab's `artifacts:reports:junit` read this shape.

mod evaluate;
mod grammar;
mod judged;
mod junit;
mod run;

pub use evaluate::{Metrics, Subject};
use evaluate::{any_failed, evaluate};
pub use grammar::{Limit, latency_ns, parse};
use junit::summary_lines;
pub use run::{BROKEN_LIMIT_STATUS, GatePlan, apply, finish};

#[cfg(test)]
mod tests {
    //! The module documentation's flow.
    use super::evaluate::{Measured, Verdict};
    use super::grammar::{GateError, Metric, Op, Threshold, Unit};
    use super::junit::write_junit;
    use super::*;

    #[test]
    fn the_documented_flow() {
        let limits: Vec<Limit> = parse("max>100us, overruns>0").unwrap();
        assert_eq!(limits[0].metric, Metric::Max);
        assert_eq!(limits[0].op, Op::Gt);
        assert_eq!(
            limits[0].threshold,
            Threshold::Time {
                ns: 100_000,
                unit: Unit::Us
            }
        );
        let bad: GateError = parse("p95>3us").unwrap_err();
        assert_eq!(bad.limit.as_deref(), Some("p95>3us"));

        let thread = |name: &str, max_us: i64| Subject {
            name: name.into(),
            metrics: Metrics {
                samples: 1000,
                min_ns: Some(1_000),
                avg_ns: Some(5_000.0),
                max_ns: Some(max_us * 1000),
                percentiles_ns: vec![("p99", Some(9_000))],
                overruns: 0,
                verdict: None,
                parts: None,
            },
        };
        let subjects = [
            thread("thread 0", 50),
            thread("thread 1", 153),
            thread("all threads", 153),
        ];
        let outcomes: Vec<evaluate::Outcome> = evaluate(&limits, &subjects);
        assert_eq!(outcomes.len(), 6);
        let measured: Measured = 153_000.0;
        assert_eq!(outcomes[2].verdict, Verdict::Failed { measured });
        assert!(any_failed(&outcomes));

        let mut junit = Vec::new();
        write_junit(&mut junit, "cyclictest", &outcomes, 2.0).unwrap();
        assert!(
            String::from_utf8(junit)
                .unwrap()
                .contains(r#"failures="2""#)
        );
        assert_eq!(
            summary_lines(&outcomes),
            [
                "--fail-if: thread 1: max = 153 us > 100 us",
                "--fail-if: all threads: max = 153 us > 100 us",
            ]
        );
    }
}
