//! The validated settings of one `rtlat latency` run: the one measuring
//! thread ([`CyclicConfig`]) and Xenomai `latency`'s display and output
//! choices around it, and its results (`--json`, `--verdict`).

use std::path::PathBuf;

use rtlat_core::CyclicConfig;
use rtlat_core::Nanos;

use crate::output::OutputTarget;

/// Everything `rtlat latency` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The measuring thread: a periodic timerfd at `-p`, SCHED_FIFO `-P`,
    /// pinned with `-c`, a one-second warm-up, one-second intervals.
    pub engine: CyclicConfig,
    /// `-p`: the sampling period.
    pub period: Nanos,
    /// `-P`: the SCHED_FIFO priority.
    pub priority: u8,
    /// `-T`: seconds to measure after the warm-up; `None` until stopped.
    pub duration_secs: Option<u64>,
    /// `-l`: RTD lines between two RTT/RTH headers; 0: no header at all.
    pub lines_per_header: u64,
    /// `-q` (with `-T`): no RTT/RTH/RTD lines.
    pub quiet: bool,
    /// `-h`: print the three histograms.
    pub histograms: bool,
    /// `-g`: write the all-samples histogram as gnuplot data to this file.
    pub gnuplot: Option<PathBuf>,
    /// `-f`: freeze the kernel trace at each new maximum.
    pub freeze: bool,
    /// `--json`: write the results as cyclictest's JSON document there.
    pub json: Option<OutputTarget>,
    /// `--verdict[=STYLE]`: print the verdict at the end, in that style.
    pub verdict: Option<crate::report::verdict::text::Style>,
    /// `--horizon`, `--deadline`: what the verdict projects (the run's
    /// `RunMeta.projection`).
    pub projection: crate::cli::verdict_options::Asked,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// `--fail-if` and `--junit`, if given.
    pub gates: Option<crate::gate::GatePlan>,
    /// `--load` or `--load-schedule`, if given (phases start after the
    /// warm-up).
    pub load: Option<rtlat_core::load::LoadSchedule>,
    /// `--explain`, if given.
    pub explain: Option<crate::explain::ExplainPlan>,
}

/// Xenomai's warm-up, discarded.
pub const WARMUP: Nanos = Nanos::from_secs(1);
