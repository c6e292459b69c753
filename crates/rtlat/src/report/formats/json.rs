//! `--json`: the tool's result document, on stdout or in a file (a
//! measuring tool's run, and a [`Document`] command's result).

use super::document::Document;
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

impl Format<dyn Document + '_> for Json {
    fn write(&self, run: &(dyn Document + '_), out: &mut Stdout) -> anyhow::Result<()> {
        let Some(target) = run.json_target() else {
            return Ok(());
        };
        write_to(target, out, "--json", |w| run.write_json(w))
    }
}
