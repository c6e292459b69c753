//! What a latency run prints and writes: `-l`, `-H`, `-B`, `-g`,
//! `--json`, and `-q`, which without `-T` only warns, as in Xenomai.

use std::path::PathBuf;

use rtlat_args::UsageError;
use rtlat_args::values::int_in_or;

use super::flags::{name, short};
use super::{DEFAULT_BUCKET_NS, DEFAULT_BUCKETS, DEFAULT_LINES, MAX_BUCKET_NS, MAX_LINES, Raw};
use crate::cli::output_options::{self as outputs, output_path};
use crate::output::OutputTarget;

/// The printed lines, the histograms' shape and the files.
pub(super) struct Printing {
    /// `-l`.
    pub lines_per_header: u64,
    /// `-H`: buckets on each side of zero.
    pub buckets: i64,
    /// `-B`.
    pub bucket_ns: i64,
    /// `-g`.
    pub gnuplot: Option<PathBuf>,
    /// `--json`.
    pub json: Option<OutputTarget>,
    /// `-q`, kept only with a duration.
    pub quiet: bool,
}

/// Reads them in the order their errors are reported; `-q` without a
/// duration adds Xenomai's warning to `warnings`.
pub(super) fn printing(
    raw: &Raw,
    duration_secs: Option<u64>,
    warnings: &mut Vec<String>,
) -> Result<Printing, UsageError> {
    let lines_per_header = int_in_or(
        short('l'),
        raw.lines.as_deref(),
        0..=MAX_LINES,
        "a number of data lines per header, 0 for no header",
        DEFAULT_LINES as i64,
    )? as u64;
    let buckets = int_in_or(
        short('H'),
        raw.histogram_size.as_deref(),
        1..=outputs::MAX_BUCKETS,
        "a number of histogram buckets",
        DEFAULT_BUCKETS,
    )?;
    let bucket_ns = int_in_or(
        short('B'),
        raw.bucket_size.as_deref(),
        1..=MAX_BUCKET_NS,
        "a bucket width in nanoseconds",
        DEFAULT_BUCKET_NS,
    )?;
    let gnuplot = match &raw.gnuplot {
        Some(text) => Some(output_path(short('g'), text)?),
        None => None,
    };
    let json = raw.shared.outputs(name, "microseconds")?.json;
    let quiet = match (raw.quiet, duration_secs) {
        (true, None) => {
            // Xenomai's own warning, and like Xenomai the run goes on
            // with the live lines.
            warnings.push("latency: -q only works if -T has been given.".to_owned());
            false
        }
        (quiet, _) => quiet,
    };
    Ok(Printing {
        lines_per_header,
        buckets,
        bucket_ns,
        gnuplot,
        json,
        quiet,
    })
}
