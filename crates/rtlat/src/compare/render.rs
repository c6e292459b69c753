//! The comparison of two runs, and its text.

use std::fmt::Write as _;
use std::io::{self, Write};

use rtlat_args::escape::Escaped;

use super::environment::EnvironmentDiff;
use super::input::{Figures, RunFile};
use super::judge::{Change, NoiseRule, ROWS, Row, percent};

/// One thread (or all threads) of both runs, judged row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared<'a> {
    /// `thread 0`, `all threads`.
    pub name: String,
    /// BASE's figures.
    pub base: &'a Figures,
    /// NEW's figures.
    pub new: &'a Figures,
    /// The change of each of [`ROWS`].
    pub changes: [Change; ROWS.len()],
}

/// Two runs compared.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison<'a> {
    /// BASE.
    pub base: &'a RunFile,
    /// NEW.
    pub new: &'a RunFile,
    /// The rule applied.
    pub rule: NoiseRule,
    /// The threads both runs have, by index, then all threads.
    pub subjects: Vec<Compared<'a>>,
    /// Thread indexes only BASE has.
    pub only_base: Vec<usize>,
    /// Thread indexes only NEW has.
    pub only_new: Vec<usize>,
    /// What differs between the runs' environments.
    pub environment: EnvironmentDiff,
}

/// Compares `new` with `base`: threads by index, then all threads.
pub fn compare<'a>(base: &'a RunFile, new: &'a RunFile, rule: NoiseRule) -> Comparison<'a> {
    let judged = |name: String, b: &'a Figures, n: &'a Figures| Compared {
        name,
        base: b,
        new: n,
        changes: ROWS.map(|row| rule.judge(row, b, n)),
    };
    let mut subjects: Vec<Compared<'a>> = base
        .threads
        .iter()
        .filter_map(|(i, b)| Some(judged(format!("thread {i}"), b, new.threads.get(i)?)))
        .collect();
    subjects.push(judged("all threads".into(), &base.all, &new.all));
    let only = |a: &RunFile, b: &RunFile| {
        a.threads
            .keys()
            .filter(|i| !b.threads.contains_key(i))
            .copied()
            .collect()
    };
    Comparison {
        base,
        new,
        rule,
        subjects,
        only_base: only(base, new),
        only_new: only(new, base),
        environment: EnvironmentDiff::of(base.environment.as_ref(), new.environment.as_ref()),
    }
}

impl Comparison<'_> {
    /// The subjects whose `row` changed as `change`.
    fn with(&self, row: Row, change: Change) -> Vec<&Compared<'_>> {
        self.subjects
            .iter()
            .filter(|s| s.changes[row as usize] == change)
            .collect()
    }

    /// Whether any row of any subject is worse.
    pub fn any_worse(&self) -> bool {
        self.subjects
            .iter()
            .any(|s| s.changes.contains(&Change::Worse))
    }

    /// The verdict of `row` over all subjects: `worse: thread 1 +14.2%;
    /// better: thread 0 -11.3%`, `within noise`, with the subjects not
    /// judged after it.
    pub fn verdict(&self, row: Row) -> String {
        let changed = |change: Change| {
            let list: Vec<String> = self
                .with(row, change)
                .iter()
                .map(|s| format!("{} {}", s.name, change_text(row, s)))
                .collect();
            (!list.is_empty()).then(|| format!("{}: {}", change.describe(), list.join(", ")))
        };
        let named = |change: Change, what: &str| {
            let list: Vec<&str> = self
                .with(row, change)
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            (!list.is_empty()).then(|| format!("{what}: {}", list.join(", ")))
        };
        let mut parts: Vec<String> = [changed(Change::Worse), changed(Change::Better)]
            .into_iter()
            .flatten()
            .collect();
        if parts.is_empty() {
            parts.push(Change::Noise.describe().to_string());
        }
        parts.extend(named(Change::TooFewSamples, "too few samples"));
        parts.extend(named(Change::NoData, "no data"));
        parts.join("; ")
    }

    /// For `--fail-on-regression`: one line per worse row, `p99 worse:
    /// thread 0 +13.8%, all threads +10.3%`.
    pub fn regressions(&self) -> Vec<String> {
        ROWS.into_iter()
            .filter(|&row| !self.with(row, Change::Worse).is_empty())
            .map(|row| {
                let list: Vec<String> = self
                    .with(row, Change::Worse)
                    .iter()
                    .map(|s| format!("{} {}", s.name, change_text(row, s)))
                    .collect();
                format!("{} worse: {}", row.name(), list.join(", "))
            })
            .collect()
    }
}

/// `+13.8%`, `n/a` when BASE is 0, `-` without data.
fn change_text(row: Row, s: &Compared<'_>) -> String {
    match (s.base.value(row), s.new.value(row)) {
        (Some(b), Some(n)) => match percent(b, n) {
            Some(p) => format!("{p:+.1}%"),
            None => "n/a".to_string(),
        },
        _ => "-".to_string(),
    }
}

/// ns as µs with 3 decimals; `-` for none.
fn micros(ns: Option<i64>) -> String {
    match ns {
        Some(ns) => {
            let sign = if ns < 0 { "-" } else { "" };
            format!(
                "{sign}{}.{:03}",
                ns.unsigned_abs() / 1000,
                ns.unsigned_abs() % 1000
            )
        }
        None => "-".to_string(),
    }
}

fn thread_count(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

fn indexes(list: &[usize]) -> String {
    let names: Vec<String> = list.iter().map(|i| i.to_string()).collect();
    let noun = if list.len() == 1 { "thread" } else { "threads" };
    format!("{noun} {}", names.join(", "))
}

/// Writes the comparison: the two files, a table per subject (rows min,
/// p50, p99, p99.9, max in µs; BASE, NEW, change in percent of BASE, the
/// verdict), what differs between the runs' environments (nothing when
/// neither records one), then one verdict line per row over all subjects.
pub fn write_text(w: &mut dyn Write, c: &Comparison<'_>) -> io::Result<()> {
    let mut out = String::new();
    for (tag, run) in [("BASE", c.base), ("NEW ", c.new)] {
        let _ = write!(
            out,
            "{tag}  {}: {}, {} samples",
            Escaped(&run.label),
            thread_count(run.threads.len()),
            run.all.samples
        );
        let _ = match run.resolution {
            Some(how) => writeln!(out, " ({how})"),
            None => writeln!(out),
        };
    }
    if !c.only_base.is_empty() || !c.only_new.is_empty() {
        let mut parts = Vec::new();
        if !c.only_base.is_empty() {
            parts.push(format!("{} only in BASE", indexes(&c.only_base)));
        }
        if !c.only_new.is_empty() {
            parts.push(format!("{} only in NEW", indexes(&c.only_new)));
        }
        let _ = writeln!(
            out,
            "threads differ: {}, not compared; \"all threads\" takes every thread of each run",
            parts.join(", ")
        );
    }

    let label_width = c
        .subjects
        .iter()
        .map(|s| s.name.len() + " (us)".len())
        .max()
        .unwrap_or(0)
        .max("  samples".len());
    let value_width = c
        .subjects
        .iter()
        .flat_map(|s| {
            ROWS.iter()
                .flat_map(|&r| [micros(s.base.value(r)), micros(s.new.value(r))])
                .chain([s.base.samples.to_string(), s.new.samples.to_string()])
        })
        .map(|v| v.len())
        .max()
        .unwrap_or(0)
        .max(4)
        + 2;
    let change_width = c
        .subjects
        .iter()
        .flat_map(|s| ROWS.iter().map(|&r| change_text(r, s).len()))
        .max()
        .unwrap_or(0)
        .max("change".len())
        + 2;

    for s in &c.subjects {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<label_width$}{:>value_width$}{:>value_width$}{:>change_width$}  verdict",
            format!("{} (us)", s.name),
            "BASE",
            "NEW",
            "change"
        );
        let _ = writeln!(
            out,
            "{:<label_width$}{:>value_width$}{:>value_width$}",
            "  samples", s.base.samples, s.new.samples
        );
        for (row, change) in ROWS.iter().zip(s.changes) {
            let _ = writeln!(
                out,
                "{:<label_width$}{:>value_width$}{:>value_width$}{:>change_width$}  {}",
                format!("  {}", row.name()),
                micros(s.base.value(*row)),
                micros(s.new.value(*row)),
                change_text(*row, s),
                change.describe()
            );
        }
    }

    let _ = writeln!(out);
    let environment = c.environment.lines();
    if !environment.is_empty() {
        for line in environment {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "verdict (noise: max({}% of BASE, 2 buckets); tails need 10 samples beyond them)",
        c.rule.percent
    );
    for row in ROWS {
        let _ = writeln!(out, "  {:<7}{}", row.name(), c.verdict(row));
    }
    w.write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::parse;

    const BASE: &str = include_str!("testdata/base.json");
    const NEW: &str = include_str!("testdata/new.json");

    fn text(base: &RunFile, new: &RunFile, percent: f64) -> String {
        let c = compare(base, new, NoiseRule { percent });
        let mut out = Vec::new();
        write_text(&mut out, &c).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn fixtures() -> (RunFile, RunFile) {
        (
            parse("base.json", BASE).unwrap(),
            parse("new.json", NEW).unwrap(),
        )
    }

    #[test]
    fn fixtures_compared() {
        let (base, new) = fixtures();
        insta::assert_snapshot!(text(&base, &new, 10.0));
    }

    #[test]
    fn fixtures_compared_the_other_way() {
        let (base, new) = fixtures();
        insta::assert_snapshot!(text(&new, &base, 10.0));
    }

    #[test]
    fn a_run_with_itself_is_within_noise() {
        let (base, _) = fixtures();
        let c = compare(&base, &base, NoiseRule { percent: 0.0 });
        assert!(!c.any_worse());
        for s in &c.subjects {
            for (row, change) in ROWS.iter().zip(s.changes) {
                let expected =
                    if base.threads[&1].samples < row.min_samples() && s.name == "thread 1" {
                        Change::TooFewSamples
                    } else {
                        Change::Noise
                    };
                assert_eq!(change, expected, "{} {row:?}", s.name);
            }
        }
        assert!(c.regressions().is_empty());
    }

    #[test]
    fn verdicts_and_regressions() {
        let (base, new) = fixtures();
        let c = compare(&base, &new, NoiseRule { percent: 10.0 });
        assert!(c.any_worse());
        assert_eq!(
            c.regressions(),
            [
                "p99 worse: thread 0 +13.8%, all threads +10.3%",
                "max worse: thread 1 +137.5%",
            ]
        );
        assert_eq!(c.verdict(Row::P50), "within noise");
        assert_eq!(
            c.verdict(Row::P99_9),
            "better: thread 0 -10.5%; too few samples: thread 1"
        );
        // A wider margin hides the p99 change.
        let loose = compare(&base, &new, NoiseRule { percent: 20.0 });
        assert_eq!(loose.regressions(), ["max worse: thread 1 +137.5%"]);
    }

    #[test]
    fn thread_count_mismatch_compares_what_exists() {
        let (base, _) = fixtures();
        // NEW with a third thread, BASE with one thread only.
        let mut doc: serde_json::Value = serde_json::from_str(NEW).unwrap();
        doc["thread"]["2"] = doc["thread"]["1"].clone();
        doc["thread"]["2"]["cycles"] = 7.into();
        let new = parse("new3.json", &doc.to_string()).unwrap();
        let mut doc: serde_json::Value = serde_json::from_str(BASE).unwrap();
        doc["thread"].as_object_mut().unwrap().remove("1");
        let one = parse("base1.json", &doc.to_string()).unwrap();
        insta::assert_snapshot!(text(&base, &new, 10.0));
        let out = text(&one, &new, 10.0);
        assert!(
            out.contains(
                "threads differ: threads 1, 2 only in NEW, not compared; \"all threads\" takes \
                 every thread of each run\n"
            ),
            "{out}"
        );
        assert!(!out.contains("\nthread 1 (us)"), "{out}");
    }

    #[test]
    fn missing_values_show_as_dashes() {
        let (base, mut new) = fixtures();
        let t1 = new.threads.get_mut(&1).unwrap();
        t1.samples = 0;
        t1.values = [None; ROWS.len()];
        let c = compare(&base, &new, NoiseRule { percent: 10.0 });
        assert_eq!(
            c.verdict(Row::Max),
            "better: thread 0 -11.3%, all threads -11.3%; no data: thread 1"
        );
        let out = text(&base, &new, 10.0);
        assert!(
            out.contains("\n  max              400.000         -       -  no data\n"),
            "{out}"
        );
    }

    #[test]
    fn micros_keeps_ns_and_signs() {
        assert_eq!(micros(Some(2_908_406)), "2908.406");
        assert_eq!(micros(Some(-1_500)), "-1.500");
        assert_eq!(micros(Some(-500)), "-0.500");
        assert_eq!(micros(None), "-");
    }
}
