//! `-h`/`-H`/`--histfile` (the IPC tools' `--histogram`): the histogram
//! block ([`crate::report::histogram`]), on stdout or in a file.

use super::{Finished, Format};
use crate::output::{Stdout, write_to};
use crate::report::histogram::write_histogram;

/// The histogram block.
pub struct Histogram;

impl Format<Finished<'_>> for Histogram {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        let Some(asked) = &run.asked.histogram else {
            return Ok(());
        };
        write_to(asked.target, out, "--histfile", |mut w| {
            write_histogram(&mut w, run.report, asked.summary_column, asked.rt_tests)
        })
    }
}
