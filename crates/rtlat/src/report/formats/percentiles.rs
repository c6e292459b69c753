//! `--percentiles`: the percentile table
//! ([`crate::report::percentiles`]), as wide as stdout.

use rtlat_args::columns::{self, Stream};

use super::{Finished, Format};
use crate::output::Stdout;
use crate::report::percentiles::write_percentiles;

/// The percentile table.
pub struct Percentiles;

impl Format<Finished<'_>> for Percentiles {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        if run.asked.percentiles {
            let width = columns::width(Stream::Stdout);
            out.emit(|w| write_percentiles(w, run.report, width));
        }
        Ok(())
    }
}
