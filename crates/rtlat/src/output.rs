//! Writing a run's output: standard output that treats a closed pipe as
//! the end of the reader's interest (not an error), and the choice between
//! stdout and a file for the final outputs (`--json`, `--histfile`).
//! Shared by every tool.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use anyhow::Context;

pub use crate::cyclictest::settings::OutputTarget;

/// Runs `write` on stdout or on a new file; `option` names the option in
/// error messages.
pub fn write_to(
    target: &OutputTarget,
    out: &mut Stdout,
    option: &str,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    match target {
        OutputTarget::Stdout => out.emit(|w| write(w)),
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
