//! Command-line plumbing shared by rtlat's two binaries (`rtlat` and
//! `rtlat-plot`), so that neither includes the other's files by path:
//!
//! - [`error`]: the usage error (exit status 2);
//! - [`invocation`]: what a command line asks for (the help, or a run);
//! - [`getopt`]: the hand-written getopt_long that reproduces the C tools'
//!   parsing (why not clap: see its module documentation);
//! - [`options`]: one definition per option, from which the getopt
//!   table, the messages' spellings, `--help`, the man pages and the
//!   completions are made;
//! - [`values`]: parsers of option values (numbers in ranges, durations,
//!   paths) that name the option, the value and what is accepted;
//! - [`output_file`]: files named on the command line, checked before the
//!   first sample and written whole (temporary file, rename);
//! - [`stdio`]: standard output and error that may fail without a panic,
//!   and the exit status that follows;
//! - [`escape`]: text from the system or an input file made safe for a
//!   terminal or a line-based output (every message of [`stdio`] passes
//!   through it, and every text writer of both binaries uses it);
//! - [`columns`]: the width text for a person is written to (`COLUMNS`,
//!   the terminal's, 80) and the breaking of its lines;
//! - [`tools`]: each tool's one-line summary, for every help;
//! - [`docs`]: man pages and shell completions from the option tables and
//!   the help texts;
//! - [`version`]: the `--version` line (version, commit, target).
#![forbid(unsafe_code)]

/// Lines of help text as one string, joined by newlines, at compile time:
/// `lines!["first line", "second line"]`. A definition's help is one
/// `&'static str`, not a table of them: each table entry is a pointer that
/// the loader relocates, and `-m` locks every page the tables and their
/// relocations fill.
#[macro_export]
macro_rules! lines {
    () => { "" };
    ($first:expr $(, $rest:expr)* $(,)?) => { concat!($first $(, "\n", $rest)*) };
}

pub mod columns;
pub mod docs;
pub mod error;
pub mod escape;
pub mod getopt;
pub mod invocation;
pub mod options;
pub mod output_file;
pub mod stdio;
pub mod tools;
pub mod values;
pub mod version;

pub use error::UsageError;
pub use invocation::Invocation;
