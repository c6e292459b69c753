//! Final outputs: each takes the finished
//! [`RunReport`](rtlat_core::RunReport) (plus run metadata
//! where the format needs it) and writes to any `io::Write`.
//!
//! One module per format:
//! - [`status`]: the `T:` status line, shared with the live display;
//! - [`histogram`]: the `-h`/`-H` histogram block;
//! - [`hgrm`]: the `--hgrm` percentile distribution (HdrHistogram's text);
//! - [`json`]: the `--json` document (rt-tests keys plus our additions);
//! - [`load`]: the `--load` and `--load-schedule` lines;
//! - [`percentiles`]: the `--percentiles` table;
//! - [`max_time`]: when each thread's maximum was taken (`--percentiles`,
//!   `--verdict`);
//! - [`spikes`]: the `--spike` list;
//! - [`stats_stream`]: the `--stats-file` lines, written during the run;
//! - [`breaktrace`]: the `-b` thread ids and break lines;
//! - [`verdict`]: the verdict on a run (JSON `"verdict"`, `--verdict`);
//! - [`explain`]: the `--explain` lines, JSON and `--explain-trace` file;
//! - [`formats`]: the final outputs, one [`formats::Format`] per file in
//!   one ordered list, which every measuring tool writes through;
//! - [`run_clock`]: the run's clock mapped to the wall clock, for the
//!   outputs that show a time;
//! - `schema` (tests only): every key path of a document pinned per
//!   `file_version`;
//! - [`sample_time`]: a sample's deadline and wake-up in the run, in the
//!   same words wherever a line places one.

pub mod breaktrace;
pub mod explain;
pub mod formats;
pub mod hgrm;
pub mod histogram;
pub mod json;
pub mod load;
pub mod max_time;
pub mod percentiles;
pub mod run_clock;
pub mod sample_time;
#[cfg(test)]
pub(crate) mod schema;
pub mod spikes;
pub mod stats_stream;
pub mod status;
#[cfg(test)]
pub(crate) mod test_support;
pub mod verdict;

/// Whole seconds as `hh:mm:ss` (hours keep growing past 99, as Xenomai's
/// `%.2ld` does): latency's elapsed and duration, the progress line.
pub fn clock_time(secs: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Facts about the run and the machine that are not measurements, for
/// formats that carry them (JSON). Built by the binary, pinned in tests.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMeta {
    /// The command line as given, arguments joined by single spaces.
    pub cmdline: String,
    /// Start time, formatted as rt-tests does (`Sun, 22 Nov 2026 01:44:57 +0000`).
    pub start_time: String,
    /// End time, same format.
    pub end_time: String,
    /// The exit status the run ends with.
    pub return_code: i32,
    /// `uname` and real-time kernel facts.
    pub sysinfo: SysInfo,
    /// The audit of the run's CPUs, made before the first sample (the
    /// `"environment"` and `"audit"` keys); `None` where none was made.
    pub audit: Option<rtlat_audit::Audit>,
    /// Each thread's run as blocks of equal length (the JSON's `"blocks"`,
    /// what the verdict projects from), in thread order; empty where the
    /// tool keeps none.
    pub blocks: Vec<rtlat_stats::blocks::BlockSeries>,
    /// What the verdict projects (`--horizon`, `--deadline`).
    pub projection: rtlat_stats::projection::Request,
    /// The rt-tests release the document imitates (`--rt-tests`): its
    /// `"rt_test_version:"` and the keys that release writes.
    pub rt_tests: rtlat_core::RtTests,
}

/// The `sysinfo` object of the JSON envelope: `uname` and real-time
/// kernel facts, the type the results documents read.
pub use rtlat_results::document::SysInfo;
