//! The time of each thread's maximum (`--verdict`, cyclictest's
//! `--percentiles`; [`crate::report::max_time`]), when the run has a
//! timeline, wrapped to stdout's width.

use rtlat_args::columns::{self, Stream};

use super::{Finished, Format};
use crate::output::Stdout;
use crate::report::max_time::write_max_times;

/// The times of the maxima.
pub struct MaxTimes;

impl Format<Finished<'_>> for MaxTimes {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        if let (Some(instants), Some(timeline)) = (run.asked.max_times, &run.extras.timeline) {
            let width = columns::width(Stream::Stdout);
            out.emit(|w| {
                columns::write_wrapped(w, width, |b| {
                    write_max_times(b, run.report, timeline, instants)
                })
            });
        }
        Ok(())
    }
}
