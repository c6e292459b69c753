//! `--load`, `--load-schedule`: the load's lines
//! ([`crate::report::load`]), wrapped to stdout's width.

use rtlat_args::columns::{self, Stream};

use super::{Finished, Format};
use crate::output::Stdout;
use crate::report::load::write_load;

/// The load's lines.
pub struct Load;

impl Format<Finished<'_>> for Load {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        if let Some(load) = run.extras.load {
            let width = columns::width(Stream::Stdout);
            let threads = &run.report.threads;
            out.emit(|w| columns::write_wrapped(w, width, |b| write_load(b, load, threads)));
        }
        Ok(())
    }
}
