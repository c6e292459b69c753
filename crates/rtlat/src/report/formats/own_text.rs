//! A tool's own text (C's lines that only that tool writes) at its
//! [`Place`] among the shared formats.

use super::{Finished, Format, Place};
use crate::output::Stdout;

/// The tool's own text at one place.
pub struct OwnText(pub Place);

impl Format<Finished<'_>> for OwnText {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        run.tool.write_text(self.0, out)
    }
}
