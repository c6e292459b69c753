//! `--percentiles`: each thread's latency percentiles, and all threads'
//! together, printed after the summary. Every line starts with `#`, as the
//! comment lines of cyclictest's histogram block do, so scripts that read
//! the `T:` lines are not disturbed. Values in µs with three decimals,
//! exact to the bucket width (1 µs by default) below the exact range and
//! within 1 % above it; `max` is the exact maximum.

use std::io::{self, Write};

use rtlat_core::distribution::{Distribution, STANDARD_PERCENTILES};
use rtlat_core::report::RunReport;

/// Writes the percentile table of `report` (nothing when no thread kept a
/// distribution).
pub fn write_percentiles(w: &mut impl Write, report: &RunReport) -> io::Result<()> {
    let Some(all) = report.merged_distribution() else {
        return Ok(());
    };
    write!(w, "# Percentiles (us)")?;
    for (label, _) in STANDARD_PERCENTILES {
        write!(w, " {label:>10}")?;
    }
    writeln!(w, " {:>10}", "max")?;
    for thread in &report.threads {
        if let Some(d) = &thread.distribution {
            write_row(w, &format!("T:{:2}", thread.index), d)?;
        }
    }
    write_row(w, "All", &all)
}

fn write_row(w: &mut impl Write, name: &str, d: &Distribution) -> io::Result<()> {
    write!(w, "# {name:<16}")?;
    for (_, value) in d.standard_percentiles() {
        match value {
            Some(v) => write!(w, " {:>10.3}", v.as_nanos() as f64 / 1000.0)?,
            None => write!(w, " {:>10}", "-")?,
        }
    }
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, run};
    use rtlat_core::units::Resolution;

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
        write_percentiles(&mut out, &report).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }

    #[test]
    fn nothing_without_distributions() {
        let report = run(Resolution::Micros, vec![ThreadFixture::new(0).build()]);
        let mut out = Vec::new();
        write_percentiles(&mut out, &report).unwrap();
        assert!(out.is_empty());
    }
}
