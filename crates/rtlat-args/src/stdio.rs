//! Standard output and standard error that may fail, for both binaries
//! (`rtlat`, `rtlat-plot`). The policy, in one place:
//!
//! - stdout closed by its reader (EPIPE, `| head`): nothing more is written
//!   to it and the run ends quietly;
//! - stdout failing otherwise (ENOSPC on `/dev/full`, EIO): nothing more is
//!   written to it, the run goes on and writes its files, and
//!   [`Stdout::finish`] returns the error, so the tool exits 1 with one
//!   line naming standard output;
//! - stderr failing: the line ([`note!`]) is lost and the run goes on, but
//!   [`exit_status`] turns a 0 into 1, as GNU tools do; 2 (usage) and 3
//!   (a gate) stay. A stderr closed by its reader is not a failure.
//!
//! Nothing here panics: the print macros of std do on a failed write, so
//! the tools use [`Stdout`] and [`note!`] instead.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

use crate::columns;
use crate::escape::Escaped;

/// Set once a line could not be written to stderr.
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// `eprintln!` that never panics: one line on stderr (a note, a warning, the
/// error that ends a run), written at once; a failure is remembered for
/// [`exit_status`].
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::stdio::write_note(format_args!($($arg)*))
    };
}
pub use crate::note;

/// `note!` with the program's name in front, `rtlat cyclictest: LINE`
/// (`cyclictest: LINE` when started through a symlink; see
/// [`set_program_name`]): every message of rtlat's own goes through it, so
/// they all start the same way. Lines copied from the C tools (`WARN: ...`)
/// keep their own form and use `note!`.
#[macro_export]
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::stdio::write_note(format_args!(
            "{}: {}",
            $crate::stdio::program_name(),
            format_args!($($arg)*)
        ))
    };
}
pub use crate::tell;

/// The name messages start with, set once by `main` when it knows the
/// tool.
static PROGRAM_NAME: OnceLock<String> = OnceLock::new();

/// Names the program for [`tell!`]: `rtlat cyclictest`, or `cyclictest`
/// under a symlink. The first call wins.
pub fn set_program_name(name: String) {
    let _ = PROGRAM_NAME.set(name);
}

/// The name [`tell!`] puts in front: `rtlat` until [`set_program_name`].
pub fn program_name() -> &'static str {
    PROGRAM_NAME.get().map_or("rtlat", String::as_str)
}

/// Writes `line` and a newline to stderr in one write (see [`note!`]).
/// A message is one line of our own words, but it may quote what came
/// from elsewhere (a path, a file's content, a task name): it is written
/// escaped ([`Escaped`]), so that nothing quoted drives the terminal or
/// starts a line of its own.
///
/// On a terminal, a message wider than it is wrapped, its continuation
/// lines indented by two spaces ([`columns::terminal_width`]); to a log
/// or a pipe it stays one line.
pub fn write_note(line: fmt::Arguments<'_>) {
    let mut text = note_line(line);
    if let Some(width) = columns::terminal_width(columns::Stream::Stderr) {
        text = wrapped_note(&text, width);
    }
    to_stderr(|w| w.write_all(text.as_bytes()));
}

/// `text` (lines, each ending in a newline) wrapped to `width`, the lines
/// after each one's first indented by two spaces.
fn wrapped_note(text: &str, width: usize) -> String {
    text.lines()
        .flat_map(|line| columns::wrap(line, width, "  "))
        .map(|line| line + "\n")
        .collect()
}

/// The bytes [`write_note`] writes: `line` escaped, and a newline.
fn note_line(line: fmt::Arguments<'_>) -> String {
    format!("{}\n", Escaped(&line.to_string()))
}

/// Runs `write` on stderr (a block such as the SIGUSR1 status); a failure
/// is remembered for [`exit_status`], a reader that has gone is not.
pub fn to_stderr(write: impl FnOnce(&mut io::StderrLock<'static>) -> io::Result<()>) {
    let result = write(&mut io::stderr().lock());
    if let Err(e) = result
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
}

/// The exit status of a tool that ended with `status`: a normal end (0)
/// whose stderr lost a line is 1; any other status stays.
pub fn exit_status(status: u8) -> u8 {
    if status == 0 && STDERR_FAILED.load(Ordering::Relaxed) {
        1
    } else {
        status
    }
}

/// Writes `text` (a help text, the version) to stdout: `Ok` also when the
/// reader has gone, an error naming standard output when it failed.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = Stdout::new(false);
    out.emit(|w| w.write_all(text.as_bytes()));
    out.finish()
}

/// Standard output for a run: buffered and flushed once per frame (per line
/// with `-u`). A write that fails ends the writing, never the run: a closed
/// pipe quietly, any other error is kept for [`Stdout::finish`].
#[derive(Debug)]
pub struct Stdout {
    inner: BufWriter<io::Stdout>,
    unbuffered: bool,
    state: State,
}

/// Whether stdout still takes what is written.
#[derive(Debug)]
enum State {
    Open,
    /// The reader closed the pipe (EPIPE).
    ReaderGone,
    /// Any other error; taken by `finish`.
    Failed(Option<io::Error>),
}

impl Stdout {
    /// Buffered stdout; with `unbuffered` every write is flushed at once.
    pub fn new(unbuffered: bool) -> Stdout {
        Stdout {
            inner: BufWriter::with_capacity(64 * 1024, io::stdout()),
            unbuffered,
            state: State::Open,
        }
    }

    /// Runs `write` on stdout while it takes output.
    pub fn emit(&mut self, write: impl FnOnce(&mut BufWriter<io::Stdout>) -> io::Result<()>) {
        if !matches!(self.state, State::Open) {
            return;
        }
        let mut result = write(&mut self.inner);
        if result.is_ok() && self.unbuffered {
            result = self.inner.flush();
        }
        self.check(result);
    }

    /// Flushes stdout while it takes output.
    pub fn flush(&mut self) {
        if matches!(self.state, State::Open) {
            let result = self.inner.flush();
            self.check(result);
        }
    }

    /// Whether the reader closed the pipe: the run has no one to show
    /// its output to.
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::ReaderGone)
    }

    /// Flushes, then returns the error that stopped the output, if any
    /// (once; a closed pipe is none).
    pub fn finish(&mut self) -> anyhow::Result<()> {
        self.flush();
        match &mut self.state {
            State::Failed(error) => match error.take() {
                Some(e) => Err(e).context("writing to standard output"),
                None => Ok(()),
            },
            State::Open | State::ReaderGone => Ok(()),
        }
    }

    fn check(&mut self, result: io::Result<()>) {
        let Err(e) = result else { return };
        self.state = if e.kind() == io::ErrorKind::BrokenPipe {
            State::ReaderGone
        } else {
            State::Failed(Some(e))
        };
        // What is still buffered is dropped here, not tried again when
        // the buffer is dropped.
        let unbuffered = BufWriter::with_capacity(0, io::stdout());
        let _ = std::mem::replace(&mut self.inner, unbuffered).into_parts();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_quoting_hostile_text_stays_one_harmless_line() {
        let path = "runs/\x1b]0;OWNED\x07\nrtlat: ok.json";
        assert_eq!(
            note_line(format_args!("{path}: not a result")),
            "runs/\\e]0;OWNED\\x07\\nrtlat: ok.json: not a result\n"
        );
        assert_eq!(note_line(format_args!("12.5 µs über")), "12.5 µs über\n");
    }

    #[test]
    fn a_message_on_a_terminal_wraps_with_its_continuation_indented() {
        let hostile = "\x1b]0;OWNED\x07\nrtlat: ok";
        let text = note_line(format_args!(
            "rtlat cyclictest: --load: invalid value '{hostile}': unknown load kind (kinds: cpu, memory, cache, io, messaging)"
        ));
        let wrapped = wrapped_note(&text, 40);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() > 2, "{wrapped}");
        assert!(lines.iter().all(|l| columns::columns(l) <= 40), "{wrapped}");
        assert!(
            lines[1..]
                .iter()
                .all(|l| l.starts_with("  ") && !l.starts_with("   "))
        );
        assert!(!wrapped.contains('\x1b') && wrapped.ends_with('\n'));
        let short = note_line(format_args!("rtlat: short"));
        assert_eq!(wrapped_note(&short, 40), short);
    }
}
