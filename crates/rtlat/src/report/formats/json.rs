//! `--json`: the tool's result document, on stdout or in a file.

use super::{Finished, Format};
use crate::output::{Stdout, write_to};

/// The JSON document.
pub struct Json;

impl Format<Finished<'_>> for Json {
    fn write(&self, run: &Finished<'_>, out: &mut Stdout) -> anyhow::Result<()> {
        let Some(target) = run.asked.json else {
            return Ok(());
        };
        write_to(target, out, "--json", |w| run.tool.write_document(w))
    }
}
