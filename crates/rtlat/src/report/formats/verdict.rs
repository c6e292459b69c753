//! `--verdict`: the verdict's lines ([`crate::report::verdict`]), in the
//! style asked for, wrapped to stdout's width.

use rtlat_args::columns::{self, Stream};

use super::{Finished, Format};
use crate::output::Stdout;

/// The verdict's lines.
pub struct Verdict;

impl Format<Finished<'_>> for Verdict {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        if let Some(style) = run.asked.verdict {
            let width = columns::width(Stream::Stdout);
            let (report, subject) = (run.report, run.asked.subject);
            out.emit(|w| {
                crate::report::verdict::text::write(
                    run.extras.verdict,
                    w,
                    report,
                    subject,
                    style,
                    width,
                )
            });
        }
        Ok(())
    }
}
