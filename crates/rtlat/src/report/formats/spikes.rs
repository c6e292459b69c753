//! `--spike`: the list of samples above the threshold
//! ([`crate::report::spikes`]).

use super::{Finished, Format};
use crate::output::Stdout;
use crate::report::spikes::write_spikes;

/// The spike list.
pub struct Spikes;

impl Format<Finished<'_>> for Spikes {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        if let Some(spikes) = &run.report.spikes {
            out.emit(|w| write_spikes(w, spikes));
        }
        Ok(())
    }
}
