//! Reading the results `rtlat plot` draws: [`rtlat_results::Samples`],
//! whatever wrote them (rtlat's or rt-tests' JSON, the `-h` histogram
//! block), told from the content, not the file name; for the timeline
//! plot, [`rtlat_results::timeline::Timeline`]s (`--stats-file` lines or a
//! monitor checkpoint).

use rtlat_results::file::{InputError, StdinOr};
pub use rtlat_results::samples::{Bucket, Samples, ThreadSamples};
use rtlat_results::timeline::Timeline;

/// What plot reads, for the messages of an input that is not text.
const EXPECTED: &str = "expected JSON or cyclictest -h output";

/// Reads and parses one input (bounded, a byte-order mark skipped: see
/// [`rtlat_results::file`]).
pub fn read(source: &StdinOr) -> Result<Samples, InputError> {
    Samples::read(source, EXPECTED)
}

/// Reads and parses one input of the timeline plot.
pub fn read_timeline(source: &StdinOr) -> Result<Timeline, InputError> {
    Timeline::read(source)
}
