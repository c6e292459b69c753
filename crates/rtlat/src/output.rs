//! Writing a run's output: the choice between stdout ([`Stdout`], whose
//! failures `crate::stdio` explains) and a file for the final outputs
//! (`--json`, `--histfile`), and the end of every tool's run. Shared by
//! every tool.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use anyhow::Context;

pub use crate::cyclictest::settings::OutputTarget;
pub use crate::stdio::Stdout;
use crate::stdio::note;

/// Runs `write` on stdout or on a new file; `option` names the option in
/// error messages.
pub fn write_to(
    target: &OutputTarget,
    out: &mut Stdout,
    option: &str,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    match target {
        OutputTarget::Stdout => {
            out.emit(|w| write(w));
            Ok(())
        }
        OutputTarget::File(path) => {
            let file = File::create(path)
                .with_context(|| format!("{option}: cannot create '{}'", path.display()))?;
            let mut w = BufWriter::new(file);
            write(&mut w)
                .and_then(|()| w.flush())
                .with_context(|| format!("{option}: cannot write '{}'", path.display()))
        }
    }
}

/// How every tool's run ends once its final outputs are `written`: stdout
/// is flushed, then the line saying what failed (if anything) goes to
/// stderr, then the first error of the final outputs is returned, else
/// the error that stopped stdout, else `status`. When both a file and
/// stdout failed, stdout's error gets its own line.
pub fn end_run(
    out: &mut Stdout,
    written: anyhow::Result<()>,
    failure: Option<String>,
    status: u8,
) -> anyhow::Result<u8> {
    let shown = out.finish();
    if let Some(line) = failure {
        note!("rtlat: {line}");
    }
    match (written, shown) {
        (Err(e), Err(stdout_error)) => {
            note!("rtlat: {stdout_error:#}");
            Err(e)
        }
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(status),
    }
}
