//! `--percentiles`: each thread's latency percentiles, and all threads'
//! together, printed after the summary. Every line starts with `#`, as the
//! comment lines of cyclictest's histogram block do, so scripts that read
//! the `T:` lines are not disturbed. Values in µs with three decimals,
//! exact to the bucket width (1 µs by default) below the exact range and
//! within 1 % above it; `max` is the exact maximum.
//!
//! A percentile with fewer than 10 samples beyond it is not supported by
//! the data (see [`super::verdict`]): its value is marked `*`, and a
//! footnote under the table says, for each row with a mark, how many
//! samples it rests on:
//! `# * T: 0: from 20000 samples, p99.99 has 2 beyond it, p99.999 is the maximum; 10 are needed`.
//!
//! The table's rows are data, one row a line whatever the terminal (96
//! columns with the standard percentiles); the footnotes are for a
//! person, wrapped to the width given, `#` kept on every line.

use std::io::{self, Write};

use rtlat_args::columns;
use rtlat_core::RunReport;
use rtlat_core::{Distribution, STANDARD_PERCENTILES};

use super::verdict::{SAMPLES_BEYOND_NEEDED, samples_beyond, supported};

/// Writes the percentile table of `report` (nothing when no thread kept a
/// distribution), its footnotes wrapped to `width`.
pub fn write_percentiles(w: &mut impl Write, report: &RunReport, width: usize) -> io::Result<()> {
    let Some(all) = report.merged_distribution() else {
        return Ok(());
    };
    write!(w, "# Percentiles (us)")?;
    for (label, _) in STANDARD_PERCENTILES {
        write!(w, " {label:>10}")?;
    }
    writeln!(w, " {:>10}", "max")?;
    let mut rows: Vec<(String, &Distribution)> = report
        .threads
        .iter()
        .filter_map(|t| Some((format!("T:{:2}", t.index), t.distribution.as_ref()?)))
        .collect();
    rows.push(("All".to_string(), &all));
    for (name, d) in &rows {
        write_row(w, name, d)?;
    }
    for (name, d) in &rows {
        columns::write_wrapped(w, width, |b| write_footnote(b, name, d))?;
    }
    Ok(())
}

fn write_row(w: &mut impl Write, name: &str, d: &Distribution) -> io::Result<()> {
    write!(w, "# {name:<16}")?;
    let fractions = STANDARD_PERCENTILES.iter().map(|&(_, f)| Some(f));
    // `max` has no fraction: it is never marked.
    for ((_, value), fraction) in d
        .standard_percentiles()
        .into_iter()
        .zip(fractions.chain([None]))
    {
        let marked = fraction.is_some_and(|f| !supported(d.count(), f));
        match (value, marked) {
            (Some(v), false) => write!(w, " {:>10.3}", v.as_nanos() as f64 / 1000.0)?,
            (Some(v), true) => write!(w, " {:>9.3}*", v.as_nanos() as f64 / 1000.0)?,
            (None, _) => write!(w, " {:>10}", "-")?,
        }
    }
    writeln!(w)
}

/// The footnote of a row with marked values (nothing for a row without
/// samples or without a mark).
fn write_footnote(w: &mut impl Write, name: &str, d: &Distribution) -> io::Result<()> {
    let n = d.count();
    let short: Vec<(&str, u64)> = STANDARD_PERCENTILES
        .iter()
        .filter(|&&(_, f)| n > 0 && !supported(n, f))
        .map(|&(label, f)| (label, samples_beyond(n, f)))
        .collect();
    let mut notes: Vec<String> = short
        .iter()
        .filter(|(_, beyond)| *beyond > 0)
        .map(|(label, beyond)| format!("{label} has {beyond} beyond it"))
        .collect();
    let at_max: Vec<&str> = short
        .iter()
        .filter(|(_, beyond)| *beyond == 0)
        .map(|(label, _)| *label)
        .collect();
    match at_max.as_slice() {
        [] => {}
        [one] => notes.push(format!("{one} is the maximum")),
        [first, second] => notes.push(format!("{first} and {second} are the maximum")),
        [first, .., last] => notes.push(format!("{first} to {last} are the maximum")),
    }
    if notes.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "# * {}: from {n} samples, {}; {SAMPLES_BEYOND_NEEDED} are needed",
        name,
        notes.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, run};
    use rtlat_core::Resolution;

    #[test]
    fn one_row_per_thread_and_all() {
        let report = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0)
                    .distribution(&[5_200, 6_100, 7_900, 120_000])
                    .build(),
                ThreadFixture::new(1).distribution(&[4_000, 9_999]).build(),
            ],
        );
        let mut out = Vec::new();
        write_percentiles(&mut out, &report, 80).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }

    #[test]
    fn values_with_too_few_samples_beyond_are_marked() {
        let samples: Vec<i64> = (0..20_000).map(|i| 1_000 + i % 100).collect();
        let report = run(
            Resolution::Micros,
            vec![ThreadFixture::new(0).distribution(&samples).build()],
        );
        let mut out = Vec::new();
        write_percentiles(&mut out, &report, 80).unwrap();
        let text = String::from_utf8(out).unwrap();
        let row = text.lines().nth(1).unwrap();
        assert_eq!(row.matches('*').count(), 2, "{text}");
        assert!(
            row.ends_with("1.000*      1.099"),
            "max is never marked: {row}"
        );
        let stars: Vec<&str> = row
            .split_whitespace()
            .filter(|v| v.ends_with('*'))
            .collect();
        assert_eq!(stars, ["1.000*", "1.000*"], "{row}");
        assert!(
            text.contains(
                "# * T: 0: from 20000 samples, p99.99 has 2 beyond it, p99.999 is the maximum; \
                 10\n#   are needed\n"
            ),
            "{text}"
        );
        assert!(text.contains("# * All: from 20000 samples"), "{text}");
    }

    #[test]
    fn nothing_without_distributions() {
        let report = run(Resolution::Micros, vec![ThreadFixture::new(0).build()]);
        let mut out = Vec::new();
        write_percentiles(&mut out, &report, 80).unwrap();
        assert!(out.is_empty());
    }
}
