//! What a validated `rtlat hwlatdetect` command line asks for: plain data,
//! read by [`super::run`].

use rtlat_core::RtTests;
use std::path::PathBuf;

use crate::gate::GatePlan;
use crate::output::OutputTarget;

/// The settings of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `--duration`, in seconds (120 without it, as the script).
    pub duration_s: u64,
    /// `--threshold` in µs, written to `tracing_thresh`; `None`: the
    /// tracer's own.
    pub threshold_us: Option<u64>,
    /// `--hardlimit` in µs; `None`: the threshold in force.
    pub hardlimit_us: Option<u64>,
    /// `--window` in µs.
    pub window_us: Option<u64>,
    /// `--width` in µs.
    pub width_us: Option<u64>,
    /// `--report FILE`: the samples, one line each.
    pub report: Option<PathBuf>,
    /// `--cpu-list` as given (the header prints it) and its CPUs.
    pub cpu_list: Option<(String, Vec<usize>)>,
    /// `--debug`.
    pub debug: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// `--watch`.
    pub watch: bool,
    /// `--json FILE` (ours).
    pub json: Option<OutputTarget>,
    /// `--fail-if`, `--junit` (ours).
    pub gates: Option<GatePlan>,
    /// The dialect (`--rt-tests`, `$RTLAT_RT_TESTS`): from 2.6 each
    /// sample's `cpu:`; from 2.10 `Sample window:` one space further,
    /// each sample's `count:`, "Samples exceeding threshold" as the sum
    /// of the counts and the `MTBF:` line.
    pub rt_tests: RtTests,
    /// The command line as given, for the JSON.
    pub cmdline: String,
    /// The tracing directory to drive instead of the kernel's: the hidden
    /// test seam (`RTLAT_HWLAT_TRACEFS`), a tree that imitates the
    /// tracer's files. `None`: the machine's tracefs.
    pub fixture: Option<PathBuf>,
}

/// The script's test duration when `--duration` is not given (2 minutes).
pub const DEFAULT_DURATION_S: u64 = 120;

/// The environment variable naming a fixture tracing directory (the test
/// seam): not documented for users.
pub const FIXTURE_ENV: &str = "RTLAT_HWLAT_TRACEFS";
