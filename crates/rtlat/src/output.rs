//! Writing a run's output: standard output that treats a closed pipe as
//! the end of the reader's interest (not an error), and the choice between
//! stdout and a file for the final outputs (`--json`, `--histfile`,
//! `--hgrm`, ...), a file being written whole or not at all
//! ([`crate::output_file`]). Shared by every tool.

use std::io::{self, BufWriter, Write};

use anyhow::{Context, anyhow};

pub use crate::cyclictest::settings::OutputTarget;
use crate::output_file::write_whole;
use crate::rtsetup::io_strerror;
use rtlat_sys::fs::is_open_as;

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
        OutputTarget::Stdout => out.emit(|w| write(w)),
        OutputTarget::File(path) if is_open_as(path, io::stdout()) => out.emit(|w| write(w)),
        OutputTarget::File(path) if is_open_as(path, io::stderr()) => {
            out.flush()?;
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
/// stderr, then the first error of the final outputs is returned, or
/// `status`.
pub fn end_run(
    out: &mut Stdout,
    written: anyhow::Result<()>,
    failure: Option<String>,
    status: u8,
) -> anyhow::Result<u8> {
    out.flush()?;
    if let Some(line) = failure {
        eprintln!("rtlat: {line}");
    }
    written?;
    Ok(status)
}

/// Standard output for a run: buffered and flushed once per frame (per line
/// with `-u`). A closed pipe (EPIPE) is not an error: the run ends quietly
/// and nothing more is written to stdout.
pub struct Stdout {
    inner: BufWriter<io::Stdout>,
    unbuffered: bool,
    closed: bool,
}

impl Stdout {
    /// Buffered stdout; with `unbuffered` every write is flushed at once.
    pub fn new(unbuffered: bool) -> Stdout {
        Stdout {
            inner: BufWriter::with_capacity(64 * 1024, io::stdout()),
            unbuffered,
            closed: false,
        }
    }

    /// Runs `write` on stdout unless the reader has gone.
    pub fn emit(
        &mut self,
        write: impl FnOnce(&mut BufWriter<io::Stdout>) -> io::Result<()>,
    ) -> anyhow::Result<()> {
        if self.closed {
            return Ok(());
        }
        let mut result = write(&mut self.inner);
        if result.is_ok() && self.unbuffered {
            result = self.inner.flush();
        }
        self.check(result)
    }

    /// Flushes stdout unless the reader has gone.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.check(result)
    }

    /// Whether the reader closed the pipe.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn check(&mut self, result: io::Result<()>) -> anyhow::Result<()> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(e).context("writing to standard output"),
        }
    }
}
