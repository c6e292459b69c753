//! The `-b` lines at the very end of a run, in cyclictest's layout:
//! `# Thread Ids:` with every thread's id (` %05d` each), then, if a sample
//! broke the run, `# Break thread: %d` and `# Break value: %llu`.

use std::io::{self, Write};

use rtlat_core::RunReport;

/// Writes the break lines.
pub fn write_break_info(w: &mut impl Write, report: &RunReport) -> io::Result<()> {
    write!(w, "# Thread Ids:")?;
    for t in &report.threads {
        write!(w, " {:05}", t.tid)?;
    }
    writeln!(w)?;
    if let Some(b) = &report.break_info {
        writeln!(w, "# Break thread: {}", b.tid)?;
        writeln!(w, "# Break value: {}", b.value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{ThreadFixture, render, run};
    use rtlat_core::BreakReport;
    use rtlat_core::Resolution;

    #[test]
    fn thread_ids_then_the_break() {
        let mut r = run(
            Resolution::Micros,
            vec![
                ThreadFixture::new(0).tid(6011).build(),
                ThreadFixture::new(1).tid(6012).build(),
            ],
        );
        assert_eq!(
            render(|w| write_break_info(w, &r)),
            "# Thread Ids: 06011 06012\n"
        );
        r.break_info = Some(BreakReport {
            thread: 0,
            tid: 6011,
            value: 32,
        });
        assert_eq!(
            render(|w| write_break_info(w, &r)),
            "# Thread Ids: 06011 06012\n# Break thread: 6011\n# Break value: 32\n"
        );
    }
}
