//! `--explain`: the explanations' lines and the `--explain-trace` file
//! ([`crate::explain::write_outputs`]).

use super::{Finished, Format};
use crate::output::Stdout;

/// The explanations.
pub struct Explain;

impl Format<Finished<'_>> for Explain {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        match run.extras.explain {
            Some(outcome) => crate::explain::write_outputs(outcome, run.asked.explain, out),
            None => Ok(()),
        }
    }
}
