//! The validated settings of one `rtlat oslat` run.

use rtlat_core::load::LoadSchedule;
use rtlat_core::oslat::OslatConfig;

use crate::gate::GatePlan;
use crate::output::OutputTarget;

/// Everything `rtlat oslat` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The threads and their loops.
    pub config: OslatConfig,
    /// `-c` as given, for the header (`all` without it, as C shows it).
    pub cpu_list_text: Option<String>,
    /// `-C`: the main thread's CPU.
    pub main_cpu: usize,
    /// `-B`.
    pub bias: bool,
    /// `-q`.
    pub quiet: bool,
    /// `-s`.
    pub single_preheat: bool,
    /// `-z`.
    pub zero_omit: bool,
    /// `--rt-tests`: the release whose output is imitated.
    pub rt_tests: rtlat_core::RtTests,
    /// `-v`: print the version line and end.
    pub version_only: bool,
    /// `--json`.
    pub json: Option<OutputTarget>,
    /// `--hgrm` (and `--hgrm-per-thread`).
    pub hgrm: Option<crate::report::hgrm::HgrmOutput>,
    /// `--verdict[=STYLE]`.
    pub verdict: Option<crate::report::verdict::text::Style>,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// `--fail-if` and `--junit`.
    pub gates: Option<GatePlan>,
    /// `--horizon`, `--deadline`.
    pub projection: crate::cli::verdict_options::Asked,
    /// `--load`.
    pub load: Option<LoadSchedule>,
}
