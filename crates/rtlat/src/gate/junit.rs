//! The gate's outcomes as a JUnit XML report (`--junit FILE`, one of
//! [`super::run::GATE_FORMATS`]) and as stderr lines.

use std::io::{self, Write};

use super::evaluate::{Outcome, Verdict};
use super::judged::Judged;
use crate::output::{OutputTarget, Stdout, write_to};
use crate::report::formats::Format;

/// `--junit FILE`: the JUnit report, written whole or not at all like
/// every output file (see [`crate::output::write_to`]).
pub struct Junit;

impl Format<Judged<'_>> for Junit {
    fn write(&self, run: &Judged<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        let Some(path) = &run.plan.junit else {
            return Ok(());
        };
        write_to(&OutputTarget::File(path.clone()), out, "--junit", |w| {
            write_junit(w, run.tool, run.outcomes, run.duration_s)
        })
    }
}

/// Writes `outcomes` as JUnit XML: one `<testsuites name="rtlat">`
/// holding one `<testsuite name=SUITE>` (SUITE is the tool, e.g.
/// `cyclictest`) and one `<testcase classname=SUITE name="thread 0: max >
/// 100us">` per outcome. A broken limit carries `<failure message="max =
/// 153.2 us > 100 us" type="limit">`, a limit without data `<failure
/// message="max > 100 us: no samples" type="no data">`; a passed one says what was
/// measured in `<system-out>`. `duration_s` (the run's length) is the
/// suite's `time`; test cases take no time of their own.
pub fn write_junit(
    w: &mut dyn Write,
    suite_name: &str,
    outcomes: &[Outcome],
    duration_s: f64,
) -> io::Result<()> {
    let tests = outcomes.len();
    let failures = outcomes.iter().filter(|o| o.failed()).count();
    let suite = crate::markup::escape(suite_name);
    let time = format!("{:.3}", duration_s.max(0.0));
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        w,
        r#"<testsuites name="rtlat" tests="{tests}" failures="{failures}" errors="0" time="{time}">"#
    )?;
    writeln!(
        w,
        r#"  <testsuite name="{suite}" tests="{tests}" failures="{failures}" errors="0" skipped="0" time="{time}">"#
    )?;
    for o in outcomes {
        let name = crate::markup::escape(&o.name());
        writeln!(
            w,
            r#"    <testcase classname="{suite}" name="{name}" time="0">"#
        )?;
        let finding = crate::markup::escape(&o.finding());
        let kind = match &o.verdict {
            Verdict::Passed { .. } => None,
            Verdict::Failed { .. } => Some("limit"),
            Verdict::NoData { .. } => Some("no data"),
        };
        match kind {
            None => writeln!(w, "      <system-out>{finding}</system-out>")?,
            Some(kind) => {
                writeln!(
                    w,
                    r#"      <failure message="{finding}" type="{kind}">{}: {finding}</failure>"#,
                    crate::markup::escape(&o.subject)
                )?;
            }
        }
        writeln!(w, "    </testcase>")?;
    }
    writeln!(w, "  </testsuite>")?;
    writeln!(w, "</testsuites>")
}

/// One stderr line per failed outcome, without the program prefix (print
/// them as `{prog}: {line}`): `--fail-if: thread 1: max = 153.2 us > 100
/// us`, `--fail-if: thread 2: max > 100 us: no samples`.
pub fn summary_lines(outcomes: &[Outcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter(|o| o.failed())
        .map(|o| format!("--fail-if: {}: {}", o.subject, o.finding()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::evaluate::tests::subjects;
    use crate::gate::{Metrics, Subject, evaluate, parse};

    fn junit(suite: &str, outcomes: &[Outcome], duration_s: f64) -> String {
        let mut out = Vec::new();
        write_junit(&mut out, suite, outcomes, duration_s).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn example() -> Vec<Outcome> {
        evaluate(&parse("max>100us,p99.9>40us").unwrap(), &subjects())
    }

    #[test]
    fn report_of_passes_failures_and_missing_data() {
        let outcomes = example();
        let xml = junit("cyclictest", &outcomes, 10.0);
        insta::assert_snapshot!(xml);
        let read = check_well_formed(&xml);
        let expected: Vec<(String, Option<String>)> = outcomes
            .iter()
            .map(|o| (o.name(), o.failed().then(|| o.finding())))
            .collect();
        assert_eq!(read, expected);
        assert_eq!(read[2].0, "thread 1: max > 100us");
        assert_eq!(read[2].1.as_deref(), Some("max = 153.2 us > 100 us"));
        assert_eq!(read[4].1.as_deref(), Some("max > 100 us: no samples"));
    }

    #[test]
    fn counts_and_one_case_per_outcome() {
        let outcomes = example();
        let xml = junit("cyclictest", &outcomes, 1.5);
        // thread 1 breaks both, thread 2 has no samples for both, all
        // threads break max.
        assert!(xml.contains(
            r#"<testsuites name="rtlat" tests="8" failures="5" errors="0" time="1.500">"#
        ));
        assert_eq!(xml.matches("<testcase ").count(), outcomes.len());
        assert_eq!(xml.matches("<failure ").count(), 5);
        assert_eq!(xml.matches("<system-out>").count(), 3);
    }

    #[test]
    fn no_limits_give_an_empty_suite() {
        let xml = junit("cyclictest", &[], 0.0);
        assert!(xml.contains(r#"tests="0" failures="0""#));
        check_well_formed(&xml);
    }

    #[test]
    fn names_are_escaped() {
        let subjects = [Subject {
            name: "thread <0> & \"friends\" 'x'\n\u{1}µ".into(),
            metrics: Metrics {
                samples: 1,
                max_ns: Some(200_000),
                ..Metrics::default()
            },
        }];
        let outcomes = evaluate(&parse("max>100us,max<=1ms").unwrap(), &subjects);
        let xml = junit("odd <suite> & \"name\"", &outcomes, 0.25);
        insta::assert_snapshot!(xml);
        let read = check_well_formed(&xml);
        // Everything but the forbidden control character reads back.
        let name = "thread <0> & \"friends\" 'x'\n\u{fffd}µ";
        assert_eq!(
            read[0],
            (
                format!("{name}: max > 100us"),
                Some("max = 200 us > 100 us".into())
            )
        );
        assert_eq!(
            read[1],
            (
                format!("{name}: max <= 1ms"),
                Some("max = 0.2 ms <= 1 ms".into())
            )
        );
        assert!(!xml.contains('\u{1}'));
    }

    #[test]
    fn summary_names_each_failed_limit() {
        assert_eq!(
            summary_lines(&example()),
            [
                "--fail-if: thread 1: max = 153.2 us > 100 us",
                "--fail-if: thread 1: p99.9 = 41 us > 40 us",
                "--fail-if: thread 2: max > 100 us: no samples",
                "--fail-if: thread 2: p99.9 > 40 us: no samples",
                "--fail-if: all threads: max = 153.2 us > 100 us",
            ]
        );
        let outcomes = evaluate(&parse("overruns >= 3").unwrap(), &subjects());
        assert_eq!(
            summary_lines(&outcomes),
            [
                "--fail-if: thread 1: overruns = 3 >= 3",
                "--fail-if: all threads: overruns = 3 >= 3",
            ]
        );
        let outcomes = evaluate(&parse("max>1s").unwrap(), &subjects());
        assert!(
            summary_lines(&outcomes)
                .iter()
                .all(|l| l.contains("no samples"))
        );
    }

    /// Parses `xml` with a real XML parser and checks the JUnit shape:
    /// testsuites > testsuite > testcase, the counts, and each case's name
    /// and failure read back unescaped.
    fn check_well_formed(xml: &str) -> Vec<(String, Option<String>)> {
        let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
        assert_eq!(suites.len(), 1);
        let suite = suites[0];
        assert_eq!(suite.tag_name().name(), "testsuite");
        let cases: Vec<_> = suite.children().filter(|n| n.is_element()).collect();
        let mut failures = 0;
        let read: Vec<(String, Option<String>)> = cases
            .iter()
            .map(|case| {
                assert_eq!(case.tag_name().name(), "testcase");
                assert_eq!(case.attribute("classname"), suite.attribute("name"));
                let failure = case
                    .children()
                    .find(|n| n.has_tag_name("failure"))
                    .map(|f| f.attribute("message").unwrap().to_string());
                failures += usize::from(failure.is_some());
                (case.attribute("name").unwrap().to_string(), failure)
            })
            .collect();
        for node in [root, suite] {
            assert_eq!(
                node.attribute("tests"),
                Some(cases.len().to_string().as_str())
            );
            assert_eq!(
                node.attribute("failures"),
                Some(failures.to_string().as_str())
            );
        }
        read
    }
}
