//! The comparison of two runs, and its text: the answer on the first
//! line, the two files, one table per subject (values, change, the
//! interval of the difference and the verdict of [`judge`]), how the
//! rows were judged, what differs between the machines, and one verdict
//! line per row.

use std::fmt::Write as _;
use std::io::{self, Write};

use rtlat_args::columns;
use rtlat_args::escape::Escaped;

use super::environment::EnvironmentDiff;
use super::figures::{Figures, ROWS, Row};
use super::input::RunFile;
use super::judge::{
    self, CONFIDENCE, Change, Context, Family, Floors, HostStalls, Judgement, Maxima, NoiseRule,
    percent,
};

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
    /// How each of [`ROWS`] was judged: intervals, difference, reason.
    pub judgements: Vec<Judgement>,
    /// What the rows were judged with: the maxima's projections, the
    /// floors, the host's stalls.
    pub ctx: Context,
}

impl Compared<'_> {
    /// BASE's and NEW's value of `row`, ns (the floor's from the
    /// windows both runs were cut into).
    pub fn values(&self, row: Row) -> (Option<i64>, Option<i64>) {
        match row {
            Row::Floor => self.ctx.floors.values(),
            _ => (self.base.value(row), self.new.value(row)),
        }
    }
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
    /// The family of judged rows (their number, each one's confidence).
    pub family: Family,
    /// The threads both runs have, by index, then all threads.
    pub subjects: Vec<Compared<'a>>,
    /// Thread indexes only BASE has.
    pub only_base: Vec<usize>,
    /// Thread indexes only NEW has.
    pub only_new: Vec<usize>,
    /// What differs between the runs' environments.
    pub environment: EnvironmentDiff,
}

/// Compares `new` with `base`: threads by index, then all threads. The
/// rows that can be judged are counted first: their number sets each
/// row's confidence ([`Family`]).
pub fn compare<'a>(base: &'a RunFile, new: &'a RunFile, rule: NoiseRule) -> Comparison<'a> {
    compare_projected_by(base, new, rule, &judge::default_projection)
}

/// [`compare`] with `project` as the projection of the maxima.
pub fn compare_projected_by<'a>(
    base: &'a RunFile,
    new: &'a RunFile,
    rule: NoiseRule,
    project: &judge::Projector,
) -> Comparison<'a> {
    let mut pairs: Vec<(String, &'a Figures, &'a Figures)> = base
        .threads
        .iter()
        .filter_map(|(i, b)| Some((format!("thread {i}"), b, new.threads.get(i)?)))
        .collect();
    pairs.push(("all threads".into(), &base.all, &new.all));
    let stalls = HostStalls::of(base.steal_share, new.steal_share);
    let contexts: Vec<Context> = pairs
        .iter()
        .map(|(_, b, n)| Context::of(b, n, stalls, project))
        .collect();
    let judged_rows = pairs
        .iter()
        .zip(&contexts)
        .map(|((_, b, n), ctx)| {
            ROWS.iter()
                .filter(|&&row| judge::judgeable(row, b, n, ctx).is_ok())
                .count()
        })
        .sum();
    let family = Family::of(judged_rows);
    let subjects = pairs
        .into_iter()
        .zip(contexts)
        .map(|((name, b, n), ctx)| {
            let judgements: Vec<Judgement> = ROWS
                .iter()
                .map(|&row| judge::judge(&rule, row, b, n, &family, &ctx))
                .collect();
            Compared {
                name,
                base: b,
                new: n,
                changes: ROWS.map(|row| judgements[row as usize].change),
                judgements,
                ctx,
            }
        })
        .collect();
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
        family,
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
            let judged = self
                .subjects
                .iter()
                .any(|s| s.changes[row as usize] == Change::Noise);
            let informative = self
                .subjects
                .iter()
                .any(|s| s.changes[row as usize] == Change::Information);
            let unjudgeable = self.subjects.iter().all(|s| {
                matches!(
                    s.changes[row as usize],
                    Change::NoData | Change::HostStalls | Change::NoDistribution
                )
            });
            if !judged && unjudgeable {
                parts.push("not judged".to_string());
            } else if judged || !informative {
                parts.push(Change::Noise.describe().to_string());
            } else {
                parts.push(Change::Information.describe().to_string());
            }
        }
        parts.extend(named(Change::TooFewSamples, "too few samples"));
        parts.extend(named(Change::TooFewBlocks, "too few blocks"));
        parts.extend(named(Change::NoDistribution, "no distribution"));
        parts.extend(named(Change::NoData, "no data"));
        parts.extend(named(Change::HostStalls, "host stalls"));
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

impl Comparison<'_> {
    /// The answer, first line of the text: `No change beyond noise`, or
    /// `Worse: thread 1 p99.9 +412.0%, ...` (then the better ones), as
    /// many as fit in 80 columns and how many more.
    pub fn headline(&self) -> String {
        let listed = |change: Change| -> Vec<String> {
            ROWS.iter()
                .flat_map(|&row| {
                    self.subjects
                        .iter()
                        .filter(move |s| s.changes[row as usize] == change)
                        .map(move |s| format!("{} {} {}", s.name, row.name(), change_text(row, s)))
                })
                .collect()
        };
        let (worse, better) = (listed(Change::Worse), listed(Change::Better));
        if worse.is_empty() && better.is_empty() {
            return format!(
                "No change beyond noise ({:.0}% family-wise, {} rows judged)",
                CONFIDENCE * 100.0,
                self.family.rows
            );
        }
        let mut items: Vec<String> = Vec::new();
        for (word, list) in [("Worse", &worse), ("Better", &better)] {
            for (i, item) in list.iter().enumerate() {
                items.push(if i == 0 {
                    let word = if items.is_empty() {
                        word.to_string()
                    } else {
                        format!("; {}", word.to_lowercase())
                    };
                    format!("{word}: {item}")
                } else {
                    format!(", {item}")
                });
            }
        }
        let total = items.len();
        // The confidence, when it fits after what is listed.
        let confidence = format!(" ({:.0}% family-wise)", CONFIDENCE * 100.0);
        let mut line = String::new();
        for (shown, item) in items.iter().enumerate() {
            let rest = total - shown - 1;
            let tail = if rest > 0 {
                format!(" and {rest} more")
            } else {
                String::new()
            };
            if shown > 0 && line.len() + item.len() + tail.len() > WIDTH {
                let _ = write!(line, " and {} more", total - shown);
                break;
            }
            line.push_str(item);
        }
        if line.len() + confidence.len() <= WIDTH {
            line.push_str(&confidence);
        }
        line
    }
}

/// The headline's width (the JSON carries it too, so it does not follow
/// the terminal).
const WIDTH: usize = 80;

/// `text` in lines of at most `width` columns, the lines after the first
/// indented by `indent` columns (runs of spaces inside, a column's
/// padding, stay).
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    columns::wrap(text, width, &" ".repeat(indent))
}

/// An interval of the difference in µs, `[+2.6, +5.4]`.
fn interval_text(j: &Judgement) -> String {
    let Some(d) = j.difference else {
        return String::new();
    };
    let end = |ns: f64| {
        if ns.is_finite() {
            format!("{:+.1}", ns / 1000.0)
        } else if ns > 0.0 {
            "+inf".to_string()
        } else {
            "-inf".to_string()
        }
    };
    format!("[{}, {}]", end(d.lower), end(d.upper))
}

/// `+13.8%`, `n/a` when BASE is 0, `-` without data.
fn change_text(row: Row, s: &Compared<'_>) -> String {
    match s.values(row) {
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

/// Writes the comparison: the answer, the two files, a table per subject
/// (rows min, p50, p99, p99.9 and max in µs; BASE, NEW, the change in
/// percent of BASE, the interval of the difference, the verdict), how
/// the rows were judged, what differs between the runs' environments
/// (nothing when neither records one), then one verdict line per row
/// over all subjects. Every line fits `width` columns (a table row wider
/// than a narrow terminal continues under its values).
pub fn write_text(w: &mut dyn Write, c: &Comparison<'_>, width: usize) -> io::Result<()> {
    write_text_of(w, c, width, true)
}

/// [`write_text`] without what differs between the runs' environments:
/// a phase of an evaluation, whose environment is said once for all its
/// phases.
pub fn write_phase_text(w: &mut dyn Write, c: &Comparison<'_>, width: usize) -> io::Result<()> {
    write_text_of(w, c, width, false)
}

/// [`write_text`], with the environment's lines or without.
fn write_text_of(
    w: &mut dyn Write,
    c: &Comparison<'_>,
    width: usize,
    with_environment: bool,
) -> io::Result<()> {
    let mut out = String::new();
    let _ = writeln!(out, "{}", c.headline());
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
        let text = format!(
            "threads differ: {}, not compared; \"all threads\" takes every thread of each run",
            parts.join(", ")
        );
        for line in wrap(&text, width, 2) {
            let _ = writeln!(out, "{line}");
        }
    }
    let without: Vec<&str> = [("BASE", c.base), ("NEW", c.new)]
        .into_iter()
        .filter(|(_, run)| run.threads.values().any(|f| f.blocks.is_none()))
        .map(|(tag, _)| tag)
        .collect();
    if !without.is_empty() {
        let _ = writeln!(
            out,
            "{} without blocks: intervals assume independent samples (D = 1)",
            without.join(" and ")
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
                .flat_map(|&r| {
                    let (b, n) = s.values(r);
                    [micros(b), micros(n)]
                })
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
    let interval_width = c
        .subjects
        .iter()
        .flat_map(|s| s.judgements.iter().map(|j| interval_text(j).len()))
        .max()
        .unwrap_or(0)
        .max("difference".len());

    for s in &c.subjects {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<label_width$}{:>value_width$}{:>value_width$}{:>change_width$}  \
             {:<interval_width$}  verdict",
            format!("{} (us)", s.name),
            "BASE",
            "NEW",
            "change",
            "difference"
        );
        let _ = writeln!(
            out,
            "{:<label_width$}{:>value_width$}{:>value_width$}",
            "  samples", s.base.samples, s.new.samples
        );
        for (row, j) in ROWS.iter().zip(&s.judgements) {
            let _ = writeln!(
                out,
                "{:<label_width$}{:>value_width$}{:>value_width$}{:>change_width$}  \
                 {:<interval_width$}  {}",
                format!("  {}", row.name()),
                micros(s.values(*row).0),
                micros(s.values(*row).1),
                change_text(*row, s),
                interval_text(j),
                j.change.short()
            );
        }
    }

    let _ = writeln!(out);
    for line in method_lines(c, width) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    let environment = c.environment.lines();
    if with_environment && !environment.is_empty() {
        for line in environment.iter().flat_map(|l| wrap(l, width, 4)) {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "verdict");
    for row in ROWS {
        for line in wrap(&format!("  {:<7}{}", row.name(), c.verdict(row)), width, 9) {
            let _ = writeln!(out, "{line}");
        }
    }
    // What is not wrapped above (the headline, the files' names, the
    // table's rows) is wrapped here when the terminal is narrower.
    for line in out.lines() {
        for piece in wrap(line, width, 6) {
            writeln!(w, "{piece}")?;
        }
    }
    Ok(())
}

/// How the rows were judged, wrapped: the intervals' confidence and
/// correction, the threshold, why the extremes are information only.
fn method_lines(c: &Comparison<'_>, width: usize) -> Vec<String> {
    let f = &c.family;
    let mut text = vec![format!(
        "difference: its interval, {:.0}% family-wise over {} judged rows \
         (Bonferroni: each at {:.2}%), from order statistics, their ranks \
         widened by the dispersion D of late samples over each run's blocks \
         and tenths",
        CONFIDENCE * 100.0,
        f.rows,
        f.per_row * 100.0
    )];
    text.push(format!(
        "worse or better: the interval excludes 0 and the change is above \
         the noise, max({}% of BASE, 2 buckets); tails need 10 samples beyond them",
        c.rule.percent
    ));
    text.push(floor_line(c));
    let stalls = c.subjects.first().and_then(|s| s.ctx.stalls);
    match stalls {
        Some(stalls) => text.push(format!("p50 to max: not judged: {}", stalls.reason())),
        None => {
            let unknown: Vec<&str> = [("BASE", c.base), ("NEW", c.new)]
                .into_iter()
                .filter(|(_, run)| run.steal_share.is_none())
                .map(|(side, _)| side)
                .collect();
            let (verb, their) = if unknown.len() > 1 {
                ("do", "their")
            } else {
                ("does", "its")
            };
            if !unknown.is_empty() {
                text.push(format!(
                    "host stalls: {} {verb} not record the hypervisor's steal, so \
                     {their} samples are judged as if the host took no time",
                    unknown.join(" and ")
                ));
            }
        }
    }
    text.push("min: information only (one sample, not a statistic)".into());
    if stalls.is_none() {
        let mut reasons: Vec<&str> = Vec::new();
        for s in &c.subjects {
            if let Maxima::Information(reason) = &s.ctx.maxima
                && !reasons.contains(&reason.as_str())
            {
                reasons.push(reason);
            }
        }
        for reason in reasons {
            text.push(format!("max: information only ({reason})"));
        }
        if let Some(horizon_s) = c.subjects.iter().find_map(|s| match s.ctx.maxima {
            Maxima::Projected { horizon_s, .. } => Some(horizon_s),
            Maxima::Information(_) => None,
        }) {
            text.push(format!(
                "max: judged by the projected maximum over {} (worse only when \
                 the 95% intervals do not overlap)",
                duration(horizon_s)
            ));
        }
    }
    text.iter().flat_map(|t| wrap(t, width, 2)).collect()
}

/// How the floor was judged, or why it was not (the first subject's
/// reason: every subject's windows are the same runs').
fn floor_line(c: &Comparison<'_>) -> String {
    let judged = c.subjects.iter().find_map(|s| match &s.ctx.floors {
        Floors::Both { base, .. } => Some(base.window_ns),
        Floors::Not(..) => None,
    });
    match judged {
        Some(window_ns) => format!(
            "floor: the latency 9 windows of {} in 10 reach (each tenth of the \
             run: the 10th percentile of its windows' maxima; their geometric \
             mean); its interval: Student's t over the tenths' logs, as wide \
             as two single tenths differ (the drift between runs)",
            if window_ns < 1_000_000_000 {
                format!("{} ms", window_ns as f64 / 1e6)
            } else {
                duration(window_ns as f64 / 1e9)
            }
        ),
        None => {
            let reason = c.subjects.iter().find_map(|s| match &s.ctx.floors {
                Floors::Not(_, reason) => Some(reason.as_str()),
                Floors::Both { .. } => None,
            });
            format!("floor: not judged ({})", reason.unwrap_or("no subject"))
        }
    }
}

/// `1 h`, `24 h`, `10 min`, `30 s`.
fn duration(s: f64) -> String {
    if s >= 3600.0 && s % 3600.0 == 0.0 {
        format!("{} h", s / 3600.0)
    } else if s >= 60.0 && s % 60.0 == 0.0 {
        format!("{} min", s / 60.0)
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::parse;
    use rtlat_stats::projection::{Projection, Refusal};

    const BASE: &str = include_str!("testdata/base.json");
    const NEW: &str = include_str!("testdata/new.json");

    fn text(base: &RunFile, new: &RunFile, percent: f64) -> String {
        let c = compare(base, new, NoiseRule { percent });
        let mut out = Vec::new();
        write_text(&mut out, &c, 80).unwrap();
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
                let expected = if matches!(row, Row::Min | Row::Max) {
                    Change::Information
                } else if *row == Row::Floor && s.base.blocks.is_none() {
                    Change::NoData
                } else if base.threads[&1].samples < row.min_samples() && s.name == "thread 1" {
                    Change::TooFewSamples
                } else {
                    Change::Noise
                };
                assert_eq!(change, expected, "{} {row:?}", s.name);
            }
        }
        assert!(c.regressions().is_empty());
        assert!(c.headline().starts_with("No change beyond noise"));
    }

    /// Two threads: thread 0 with 1 % of its samples at `late0`, thread 1
    /// at 40 µs; both spread evenly over the blocks.
    fn made(late0: i64, with_blocks: bool) -> RunFile {
        let threads = [
            crate::compare::fixtures::thread(late0, |_| 10),
            crate::compare::fixtures::thread(40_000, |_| 10),
        ];
        let text = crate::compare::fixtures::document(&threads, with_blocks);
        parse(
            if with_blocks {
                "blocks.json"
            } else {
                "plain.json"
            },
            &text,
        )
        .unwrap()
    }

    /// The comparison of runs with blocks, their projection refused (as
    /// the estimator may: the snapshots do not depend on it).
    fn refused<'a>(base: &'a RunFile, new: &'a RunFile, percent: f64) -> Comparison<'a> {
        compare_projected_by(base, new, NoiseRule { percent }, &|_| {
            Projection::Refused(Refusal {
                id: "too_few_blocks",
                reason: "100 blocks of 0.1 s are too few for 1 h".into(),
                advice: String::new(),
                more_s: None,
            })
        })
    }

    #[test]
    fn verdicts_and_regressions() {
        let (base, new) = (made(40_000, true), made(80_000, true));
        let c = refused(&base, &new, 10.0);
        assert!(c.any_worse());
        // Thread 0's late samples are in every window: its floor (their
        // windows' maxima, 46 and 86 us) moves with them.
        assert_eq!(
            c.regressions(),
            [
                "p99.9 worse: thread 0 +88.9%, all threads +86.7%",
                "floor worse: thread 0 +87.0%, all threads +87.0%"
            ]
        );
        assert_eq!(
            c.headline(),
            "Worse: thread 0 p99.9 +88.9%, all threads p99.9 +86.7% and 2 more"
        );
        let mut out = Vec::new();
        write_text(&mut out, &c, 80).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
        assert_eq!(c.verdict(Row::P50), "within noise");
        assert_eq!(c.verdict(Row::Max), "information only");
        // Three percentile rows and the floor of three subjects.
        assert_eq!(c.family.rows, 12);
        // A wider margin hides the change.
        let loose = compare(&base, &new, NoiseRule { percent: 150.0 });
        assert!(loose.regressions().is_empty());
        let other_way = compare(&new, &base, NoiseRule { percent: 10.0 });
        assert!(!other_way.any_worse());
        assert!(
            other_way
                .headline()
                .starts_with("Better: thread 0 p99.9 -47.1%"),
            "{}",
            other_way.headline()
        );
    }

    /// The defect of issue 26: two runs alike but for their largest
    /// sample (one sample of a heavy tail, which differs by factors
    /// between identical runs) failed the gate as "max worse".
    #[test]
    fn a_larger_maximum_alone_is_not_worse() {
        let base = made(40_000, true);
        let mut new = made(40_000, true);
        for f in new.threads.values_mut().chain([&mut new.all]) {
            let max = f.values[Row::Max as usize].unwrap();
            f.values[Row::Max as usize] = Some(max * 3);
        }
        let c = compare(&base, &new, NoiseRule { percent: 10.0 });
        assert!(!c.any_worse(), "{:?}", c.regressions());
        assert_eq!(c.verdict(Row::Max), "information only");
    }

    #[test]
    fn host_stalls_are_said_and_leave_the_floor_to_judge() {
        let base = made(40_000, true);
        let mut new = made(80_000, true);
        new.steal_share = Some(0.03);
        let c = refused(&base, &new, 10.0);
        assert_eq!(
            c.regressions(),
            ["floor worse: thread 0 +87.0%, all threads +87.0%"]
        );
        assert_eq!(
            c.verdict(Row::P99_9),
            "not judged; host stalls: thread 0, thread 1, all threads"
        );
        assert_eq!(c.family.rows, 3);
        let mut out = Vec::new();
        write_text(&mut out, &c, 80).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains(
                "p50 to max: not judged: the hypervisor took an unrecorded share of BASE's\n  \
                 measured CPUs' time and 3.00% of NEW's (above 1%, a run's samples hold the\n  \
                 host's stalls)"
            ),
            "{out}"
        );
        assert!(
            out.contains("p99.9           45.000  85.000  +88.9%                  host stalls"),
            "{out}"
        );
        for line in out.lines() {
            assert!(line.chars().count() <= 80, "{line:?}\n{out}");
        }
    }

    #[test]
    fn every_line_fits_80_columns() {
        let (base, new) = fixtures();
        for (b, n) in [(&base, &new), (&made(40_000, true), &made(80_000, false))] {
            let out = text(b, n, 10.0);
            for line in out.lines() {
                assert!(line.chars().count() <= 80, "{line:?}\n{out}");
            }
        }
    }

    #[test]
    fn runs_without_blocks_are_said_to_assume_independence() {
        let out = text(&made(40_000, true), &made(40_000, false), 10.0);
        assert!(
            out.contains("\nNEW without blocks: intervals assume independent samples (D = 1)\n"),
            "{out}"
        );
        let out = text(&made(40_000, true), &made(40_000, true), 10.0);
        assert!(!out.contains("without blocks"), "{out}");
    }

    #[test]
    fn the_headline_fits_and_counts_the_rest() {
        let (base, new) = (made(40_000, false), made(200_000, false));
        let mut c = compare(&base, &new, NoiseRule { percent: 10.0 });
        // Many subjects worse: as many as fit, then how many more.
        let worse = c.subjects[0].clone();
        for i in 0..6 {
            let mut s = worse.clone();
            s.name = format!("thread {}", 10 + i);
            c.subjects.push(s);
        }
        let line = c.headline();
        assert!(line.len() <= 80, "{line}");
        assert!(line.starts_with("Worse: thread 0 p99.9 +"), "{line}");
        assert!(line.ends_with(" more"), "{line}");
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
                "threads differ: threads 1, 2 only in NEW, not compared; \"all threads\" takes\n  \
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
        assert_eq!(c.verdict(Row::Max), "information only; no data: thread 1");
        let out = text(&base, &new, 10.0);
        assert!(
            out.contains(
                "\n  max              400.000         -       -                      no data\n"
            ),
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
