//! The verdict as `--verdict` prints it.
//!
//! Short (the default): the answer first, at most six lines of at most 80
//! columns, fewer on a narrower terminal (a line too long ends in `…`): the level
//! and where the details are, each part with its count and most important
//! reason, the worst case projected, the deadline's exceedance rate
//! (`--deadline`), the worst sample explained (`--explain`).
//!
//! Full (`--verdict=full`): each thread's missed periods, every reason
//! (the audit's findings summarised to their facts: `rtlat audit` says why
//! and what to do), the suggested duration and every detail of the
//! projection, each line wrapped to the terminal's width (80 columns when
//! stdout is not a terminal: [`rtlat_args::columns`]), a `#` on every
//! continuation line.
//!
//! Text from the system (task names, the kernel command line) is escaped:
//! one reason never becomes two lines of its own making.

use std::io::{self, Write};

use rtlat_args::columns;
use rtlat_args::escape::Escaped;
use rtlat_core::RunReport;
use rtlat_stats::projection::{CONFIDENCE, Estimate, Exceedance, Projected, Projection};

use super::{Machine, Part, Reason, ReasonLevel, SAMPLES_BEYOND_NEEDED, Verdict};
use crate::report::explain::micros;
use crate::report::sample_time::SampleInstants;
use rtlat_verdict::words::significant;

/// How much `--verdict` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// The answer in at most [`SHORT_LINES`] lines of [`SHORT_WIDTH`]
    /// columns.
    #[default]
    Short,
    /// Every reason and every detail, wrapped.
    Full,
}

impl Style {
    /// Every style, as `--verdict=STYLE` spells them.
    pub const ALL: [Style; 2] = [Style::Short, Style::Full];

    /// `short`, `full`.
    pub const fn name(self) -> &'static str {
        match self {
            Style::Short => "short",
            Style::Full => "full",
        }
    }

    /// The style of a name, `None` for anything else.
    pub fn from_name(name: &str) -> Option<Style> {
        Style::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The most lines the short verdict has.
pub const SHORT_LINES: usize = 6;

/// The widest a line of the short verdict is, in columns.
pub const SHORT_WIDTH: usize = 80;

/// Writes `verdict` in `style`: full text wrapped to `width`, short
/// lines cut to it (and to [`SHORT_WIDTH`]).
pub fn write(
    verdict: &Verdict,
    w: &mut impl Write,
    report: &RunReport,
    thread: &str,
    style: Style,
    width: usize,
) -> io::Result<()> {
    let lines = match style {
        Style::Short => short_lines(verdict)
            .into_iter()
            .map(|l| fit(&l, SHORT_WIDTH.min(width.max(columns::NARROWEST))))
            .collect(),
        Style::Full => full_lines(verdict, report, thread)
            .into_iter()
            .flat_map(|(line, indent)| columns::wrap(&line, width.max(columns::NARROWEST), indent))
            .collect::<Vec<String>>(),
    };
    debug_assert!(style == Style::Full || lines.len() <= SHORT_LINES);
    for line in lines {
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// The short verdict's lines, not yet fitted to the width.
fn short_lines(v: &Verdict) -> Vec<String> {
    let findings = v.reasons_of(Part::Machine);
    let audit = if findings.is_empty() {
        ""
    } else {
        ", rtlat audit"
    };
    let mut lines = vec![
        format!(
            "# Verdict: {} (details: --verdict=full{audit})",
            v.level.name()
        ),
        part_line(
            "Measurement",
            v.measurement.name(),
            &v.reasons_of(Part::Measurement),
            "reason",
        ),
    ];
    let mut machine = part_line("Machine", machine_words(v.machine), &findings, "finding");
    if !v.audited && findings.is_empty() {
        machine.push_str(" (no audit was made)");
    }
    lines.push(machine);
    if let Some(projection) = &v.projection {
        lines.push(match projection {
            Projection::Projected(p) => worst_case_line(p),
            Projection::Refused(r) => {
                format!("# Worst case: not projected: {}", Escaped(&r.reason))
            }
        });
        if let Projection::Projected(Projected {
            deadline: Some(d), ..
        }) = projection
        {
            lines.push(deadline_line(d));
        }
    }
    lines.extend(worst_sample_line(v));
    lines
}

/// `# Measurement: doubtful, 3 reasons; first: ID: TEXT`.
fn part_line(name: &str, level: &str, reasons: &[&Reason], noun: &str) -> String {
    match reasons.first() {
        None => format!("# {name}: {level}"),
        Some(first) => format!(
            "# {name}: {level}, {} {noun}{}; first: {}",
            reasons.len(),
            if reasons.len() == 1 { "" } else { "s" },
            summary(first)
        ),
    }
}

/// A reason in one line: `ID: TEXT`, a finding of the audit `CHECK:
/// FACT` (its id without `setup.`), escaped.
fn summary(reason: &Reason) -> String {
    match &reason.fact {
        Some(fact) => format!(
            "{}: {}",
            reason.id.strip_prefix("setup.").unwrap_or(&reason.id),
            Escaped(fact)
        ),
        None => format!("{}: {}", reason.id, Escaped(&reason.text)),
    }
}

/// `ready`, `caveats`, `not ready`: the machine's level in a sentence.
fn machine_words(machine: Machine) -> &'static str {
    match machine {
        Machine::NotReady => "not ready",
        other => other.name(),
    }
}

/// `# Worst case: 1 h 142 us (95 % 120-190), 24 h 210 us (150-380)`.
fn worst_case_line(p: &Projected) -> String {
    let levels: Vec<String> = p
        .levels
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let e = level.max_ns;
            let confidence = if i == 0 {
                format!("{} % ", percent(CONFIDENCE))
            } else {
                String::new()
            };
            format!(
                "{} {} us ({confidence}{})",
                horizon(level.horizon_s),
                us(e.value),
                range(e, us)
            )
        })
        .collect();
    // Horizons the run is too short for: how much longer it must be.
    let beyond = p
        .beyond
        .iter()
        .map(|b| format!("{}: run {} more", horizon(b.horizon_s), span(b.more_s)));
    let all: Vec<String> = levels.into_iter().chain(beyond).collect();
    format!("# Worst case: {}", all.join(", "))
}

/// `# Above 100 us: 3.1 per hour (95 % 1.2-6.4), one every 19 min`.
fn deadline_line(d: &Exceedance) -> String {
    let every = match d.mean_time_between_s {
        Some(s) => format!(", one every {}", span(s)),
        None => String::new(),
    };
    format!(
        "# Above {} us: {} per hour ({} % {}){every}",
        us(d.deadline_ns as f64),
        rate(d.per_hour.value),
        percent(CONFIDENCE),
        range(d.per_hour, rate)
    )
}

/// `# Worst sample: T:0 61.2 us: thread_latency 50.1 us, mostly task
/// spin[42] (40.0 us), due 1.500000 s into the run, woke 1.500061 s`;
/// when the latency began before the trace window, the cause is what the
/// window showed: `mostly task spin (978000.0 us of the 980000.0 us
/// traced)`.
fn worst_sample_line(v: &Verdict) -> Option<String> {
    let worst = v.worst_sample.as_ref()?;
    let cause = worst.cause.as_ref().map_or(String::new(), |c| {
        let name = Escaped(&c.name);
        let traced = worst.window_ns.map_or(String::new(), |ns| {
            format!(" of the {} us traced", micros(ns))
        });
        format!(", mostly {} {name} ({} us{traced})", c.kind, micros(c.ns))
    });
    Some(format!(
        "# Worst sample: T:{} {} us: {} {} us{cause}, {}",
        worst.thread,
        micros(worst.latency_ns),
        worst.component,
        micros(worst.component_ns),
        SampleInstants::DueWoke.text(worst.due_at_ns, worst.at_ns),
    ))
}

/// The full verdict's lines, each with the indent its continuation lines
/// take.
fn full_lines(v: &Verdict, report: &RunReport, thread: &str) -> Vec<(String, &'static str)> {
    const TOP: &str = "#     ";
    const ITEM: &str = "#     ";
    let mut lines = Vec::new();
    for t in &report.threads {
        lines.push((
            format!(
                "# {thread} {}: missed periods: {}",
                t.index, t.precise.overruns
            ),
            TOP,
        ));
    }
    lines.push((
        format!(
            "# Verdict: {} (measurement {}, machine {})",
            v.level.name(),
            v.measurement.name(),
            machine_words(v.machine)
        ),
        TOP,
    ));
    let measured = v.reasons_of(Part::Measurement);
    lines.push((
        format!(
            "# Measurement: {}{}",
            v.measurement.name(),
            count(measured.len(), "reason")
        ),
        TOP,
    ));
    for r in measured {
        lines.push((
            format!("#   {} ({}): {}", r.id, r.level.name(), Escaped(&r.text)),
            ITEM,
        ));
    }
    let findings = v.reasons_of(Part::Machine);
    let machine = if !v.audited && findings.is_empty() {
        format!(
            "# Machine: {} (no audit was made)",
            machine_words(v.machine)
        )
    } else if findings.is_empty() {
        format!("# Machine: {}", machine_words(v.machine))
    } else {
        format!(
            "# Machine: {}{} of the audit (why and what to do: rtlat audit)",
            machine_words(v.machine),
            count(findings.len(), "finding")
        )
    };
    lines.push((machine, TOP));
    for r in findings {
        let status = match r.level {
            ReasonLevel::Machine(Machine::NotReady) => "bad",
            _ => "warn",
        };
        lines.push((format!("#   {status} {}", summary(r)), ITEM));
    }
    if let Some(line) = suggested_line(v) {
        lines.push((line, TOP));
    }
    match &v.projection {
        None => lines.push(("# Projection: none (the run kept no blocks)".into(), TOP)),
        Some(Projection::Refused(r)) => {
            lines.push((
                format!("# Projection: refused ({}): {}", r.id, Escaped(&r.reason)),
                TOP,
            ));
            if !r.advice.is_empty() {
                lines.push((format!("#   {}", Escaped(&r.advice)), ITEM));
            }
            // The advice names the time already when it is about time.
            if let Some(more) = r.more_s
                && !r.advice.contains("run at least")
            {
                lines.push((format!("#   run at least {} more", span(more)), ITEM));
            }
            lines.extend(other_fields(r, &["id", "reason", "advice", "more_s"], ITEM));
        }
        Some(Projection::Projected(p)) => {
            lines.push((format!("# Projection: {}", Escaped(&p.method)), TOP));
            lines.push((
                format!(
                    "#   fitted: {} blocks of {} s; location {} us, scale {} us, shape {:.3}",
                    p.blocks,
                    seconds_text(p.block_s),
                    us(p.location_ns),
                    us(p.scale_ns),
                    p.shape
                ),
                ITEM,
            ));
            for level in &p.levels {
                let (low, high) = level.range_ns;
                lines.push((
                    format!(
                        "#   worst case over {}: {} us ({} % interval {} us); the maximum \
                         falls in {}-{} us 95 % of the time by the fit",
                        horizon(level.horizon_s),
                        us(level.max_ns.value),
                        percent(CONFIDENCE),
                        range(level.max_ns, us),
                        us(low),
                        us(high)
                    ),
                    ITEM,
                ));
            }
            for b in &p.beyond {
                lines.push((
                    format!(
                        "#   worst case over {}: not projected: the run is too short, run {} \
                         more",
                        horizon(b.horizon_s),
                        span(b.more_s)
                    ),
                    ITEM,
                ));
            }
            if let Some(d) = &p.deadline {
                let every = d
                    .mean_time_between_s
                    .map_or(String::new(), |s| format!(", one every {}", span(s)));
                lines.push((
                    format!(
                        "#   above {} us: {} per hour ({} % interval {}){every}; {} blocks \
                         of the run above it",
                        us(d.deadline_ns as f64),
                        rate(d.per_hour.value),
                        percent(CONFIDENCE),
                        range(d.per_hour, rate),
                        d.observed_blocks
                    ),
                    ITEM,
                ));
            }
            lines.extend(other_fields(
                p,
                &[
                    "method",
                    "block_s",
                    "blocks",
                    "location_ns",
                    "scale_ns",
                    "shape",
                    "levels",
                    "beyond",
                    "deadline",
                ],
                ITEM,
            ));
        }
    }
    if let Some(line) = worst_sample_line(v) {
        lines.push((line, TOP));
    }
    lines
}

/// Every field of `value`'s JSON but `shown`, one `#   KEY: VALUE` line
/// each (VALUE as JSON): the estimator's details this text does not name
/// (goodness-of-fit and trend p-values, ...) are printed all the same.
fn other_fields(
    value: &impl serde::Serialize,
    shown: &[&str],
    indent: &'static str,
) -> Vec<(String, &'static str)> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(value) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter(|(key, _)| !shown.contains(&key.as_str()) && key != "outcome")
        .map(|(key, value)| {
            (
                format!("#   {key}: {}", Escaped(&value.to_string())),
                indent,
            )
        })
        .collect()
}

/// `# Suggested duration: 500 s, for 10 samples beyond the highest
/// percentile quoted` (or to project the longest horizon, or both).
fn suggested_line(v: &Verdict) -> Option<String> {
    let total = v.suggested_duration_s?;
    let percentiles = v.needs.percentiles_s.map(|s| {
        (
            s,
            format!("for {SAMPLES_BEYOND_NEEDED} samples beyond the highest percentile quoted"),
        )
    });
    let projection = v
        .needs
        .projection_s
        .map(|(h, s)| (s, format!("to project the worst case over {}", horizon(h))));
    Some(match (percentiles, projection) {
        (Some((p, why_p)), Some((q, why_q))) => format!(
            "# Suggested duration: {} s: {} s {why_p}, {} s {why_q}",
            seconds_text(total),
            seconds_text(p),
            seconds_text(q)
        ),
        (Some((_, why)), None) | (None, Some((_, why))) => {
            format!("# Suggested duration: {} s, {why}", seconds_text(total))
        }
        (None, None) => return None,
    })
}

/// `, 3 reasons`, `, 1 finding`, nothing for 0.
fn count(n: usize, noun: &str) -> String {
    match n {
        0 => String::new(),
        1 => format!(", 1 {noun}"),
        n => format!(", {n} {noun}s"),
    }
}

/// An interval's ends in `unit`: `120-190`, `120-unbounded`.
fn range(e: Estimate, unit: fn(f64) -> String) -> String {
    let upper = if e.upper.is_finite() {
        unit(e.upper)
    } else {
        "unbounded".to_string()
    };
    format!("{}-{upper}", unit(e.lower))
}

/// ns as µs with three significant digits or whole: `142`, `9.45`.
fn us(ns: f64) -> String {
    significant(ns / 1000.0)
}

/// A rate: `3.1`, `0.25`, `12`.
fn rate(per_hour: f64) -> String {
    significant(per_hour)
}

/// Seconds with at most three decimals: `1000`, `0.5`.
fn seconds_text(seconds: f64) -> String {
    let text = format!("{seconds:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `95` for 0.95.
fn percent(fraction: f64) -> String {
    significant(fraction * 100.0)
}

/// A horizon: `30 min`, `1 h`, `24 h`, `7 d`, `90 s`.
pub fn horizon(s: f64) -> String {
    let whole = s.round() as u64;
    if (s - whole as f64).abs() > 1e-9 {
        return format!("{} s", seconds_text(s));
    }
    match whole {
        w if w >= 2 * 86_400 && w % 86_400 == 0 => format!("{} d", w / 86_400),
        w if w >= 3_600 && w % 3_600 == 0 => format!("{} h", w / 3_600),
        w if w >= 60 && w % 60 == 0 => format!("{} min", w / 60),
        w => format!("{w} s"),
    }
}

/// A span of time, roughly: `45 s`, `19 min`, `3.5 h`, `2.1 d`.
fn span(s: f64) -> String {
    if s < 120.0 {
        format!("{} s", significant(s))
    } else if s < 2.0 * 3_600.0 {
        format!("{} min", significant(s / 60.0))
    } else if s < 2.0 * 86_400.0 {
        format!("{} h", significant(s / 3_600.0))
    } else {
        format!("{} d", significant(s / 86_400.0))
    }
}

/// `line` cut to `width` columns, the cut marked with `…`.
pub fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_the_text_does_not_name_are_printed_all_the_same() {
        #[derive(serde::Serialize)]
        struct Fit {
            method: &'static str,
            trend_p: f64,
        }
        let fit = Fit {
            method: "GEV",
            trend_p: 0.42,
        };
        assert_eq!(
            other_fields(&fit, &["method"], "#     "),
            [("#   trend_p: 0.42".to_string(), "#     ")]
        );
    }

    #[test]
    fn fit_marks_the_cut() {
        assert_eq!(fit("# abc", 80), "# abc");
        let cut = fit(&"x".repeat(100), 80);
        assert_eq!(cut.chars().count(), 80);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn numbers_and_durations_in_words() {
        assert_eq!(horizon(3_600.0), "1 h");
        assert_eq!(horizon(86_400.0), "24 h");
        assert_eq!(horizon(7.0 * 86_400.0), "7 d");
        assert_eq!(horizon(1_800.0), "30 min");
        assert_eq!(horizon(90.0), "90 s");
        assert_eq!(span(19.0 * 60.0), "19 min");
        assert_eq!(span(45.0), "45 s");
        assert_eq!(us(142_400.0), "142");
        assert_eq!(us(9_450.0), "9.45");
        assert_eq!(rate(3.12), "3.12");
        assert_eq!(rate(12.34), "12.3");
        assert_eq!(Style::from_name("full"), Some(Style::Full));
        assert_eq!(Style::from_name("long"), None);
    }
}
