//! `-b`: the thread ids and the break's lines
//! ([`crate::report::breaktrace`]).

use super::{Finished, Format};
use crate::output::Stdout;
use crate::report::breaktrace::write_break_info;

/// The break's lines.
pub struct Breaktrace;

impl Format<Finished<'_>> for Breaktrace {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        if run.asked.breaktrace {
            out.emit(|w| write_break_info(w, run.report));
        }
        Ok(())
    }
}
