//! The validated settings of one `rtlat cyclicdeadline` run.

use rtlat_core::Nanos;
use rtlat_core::deadline::DeadlineConfig;
use rtlat_core::load::LoadSchedule;

use crate::gate::GatePlan;
use crate::output::OutputTarget;

/// Everything `rtlat cyclicdeadline` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The deadline threads.
    pub config: DeadlineConfig,
    /// Print "Using all CPUS" (C prints it when the CPU list, given or
    /// not, is every CPU, but not for `-a` alone).
    pub using_all_cpus: bool,
    /// `-D`: how long the run lasts (`None`: until a signal).
    pub duration: Option<Nanos>,
    /// `-q`: no live display, the `T:` lines at the end.
    pub quiet: bool,
    /// `--tracemark`: write a trace mark at a `-b` break.
    pub tracemark: bool,
    /// `--histogram` (with its buckets in `config`): where the block goes
    /// (`--histfile`, else stdout).
    pub histogram: Option<OutputTarget>,
    /// The `interval:` and `Tested at` lines (2.4; from 2.6 `--verbose`).
    pub info_lines: bool,
    /// The `deadline thread`, `thread[N] runtime=` and `main thread`
    /// lines (2.4; from 2.6 `--debug`).
    pub debug_lines: bool,
    /// `--rt-tests`: the release whose output is imitated.
    pub rt_tests: rtlat_core::RtTests,
    /// `--json`, if requested.
    pub json: Option<OutputTarget>,
    /// `--hgrm` (and `--hgrm-per-thread`), if requested.
    pub hgrm: Option<crate::report::hgrm::HgrmOutput>,
    /// `--verdict[=STYLE]`.
    pub verdict: Option<crate::report::verdict::text::Style>,
    /// `--horizon`, `--deadline`: what the verdict projects.
    pub projection: crate::cli::verdict_options::Asked,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// `--fail-if` and `--junit`.
    pub gates: Option<GatePlan>,
    /// `--load`: load beside the threads.
    pub load: Option<LoadSchedule>,
}
