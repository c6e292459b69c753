//! Writing a run's output: the choice between stdout ([`Stdout`], whose
//! failures `rtlat_args::stdio` explains) and a file for the final outputs
//! (`--json`, `--histfile`, `--hgrm`, ...), a file being written whole or
//! not at all ([`rtlat_args::output_file`]), and the end of every tool's run.
//! Shared by every tool.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, anyhow};

use crate::rtsetup::io_strerror;
use rtlat_args::output_file::write_whole;
pub use rtlat_args::stdio::Stdout;
use rtlat_args::stdio::tell;
use rtlat_sys::fs::is_open_as;

/// Where an output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// Standard output (`-` on the command line, or no file given).
    Stdout,
    /// A file, checked writable before the run and replaced whole when it
    /// ends (see [`rtlat_args::output_file`]).
    File(PathBuf),
}

/// The outputs of a run are all attempted even when one fails: this keeps
/// the first failure, which ends the run with its message.
#[derive(Debug, Default)]
pub struct FirstFailure(Option<anyhow::Error>);

impl FirstFailure {
    /// Keeps `result`'s error if it is the first.
    pub fn keep(&mut self, result: anyhow::Result<()>) {
        if let Err(e) = result {
            self.0.get_or_insert(e);
        }
    }

    /// The first failure, if any.
    pub fn into_result(self) -> anyhow::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Runs `write` on stdout or on a file, replaced whole; `option` names the
/// option in error messages. A file that is this process's standard output
/// or error (`--json=/dev/stdout`) is written through it, in its place
/// among the other lines.
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
        OutputTarget::File(path) if is_open_as(path, io::stdout()) => {
            out.emit(|w| write(w));
            Ok(())
        }
        OutputTarget::File(path) if is_open_as(path, io::stderr()) => {
            out.flush();
            let mut err = io::stderr().lock();
            write(&mut err)
                .and_then(|()| err.flush())
                .context("writing to standard error")
        }
        OutputTarget::File(path) => write_whole(path, write).map_err(|e| {
            anyhow!(
                "{option}: cannot write '{}': {}",
                path.display(),
                io_strerror(&e)
            )
        }),
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
        tell!("{line}");
    }
    match (written, shown) {
        (Err(e), Err(stdout_error)) => {
            tell!("{stdout_error:#}");
            Err(e)
        }
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(status),
    }
}
