//! The validated settings of one IPC tool run.

use rtlat_core::ipc::PairConfig;

use super::PairTool;
use crate::output::OutputTarget;

/// Everything one run of svsematest, pmqtest, ptsematest or sigwaittest
/// needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpcSettings {
    /// Which tool.
    pub tool: PairTool,
    /// The pairs and what they measure.
    pub engine: PairConfig,
    /// `-q`: no live display, one final frame.
    pub quiet: bool,
    /// `-f` (svsematest, sigwaittest): each side is a process of its own.
    pub fork: bool,
    /// `--json`, if requested.
    pub json: Option<OutputTarget>,
    /// `--verdict[=STYLE]`: print the verdict at the end, in that style.
    pub verdict: Option<crate::report::verdict::text::Style>,
    /// `--horizon`, `--deadline`: what the verdict projects (the run's
    /// `RunMeta.projection`).
    pub projection: crate::cli::verdict_options::Asked,
    /// `--rt-tests` (or `$RTLAT_RT_TESTS`): the rt-tests release whose
    /// output the run writes (the run's `RunMeta.rt_tests`).
    pub rt_tests: rtlat_core::RtTests,
    /// `--histogram` and where it goes (`--histfile`), if requested.
    pub histogram: Option<OutputTarget>,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// `--fail-if` and `--junit`, if given.
    pub gates: Option<crate::gate::GatePlan>,
    /// `--load`, if given (a constant load: one phase).
    pub load: Option<rtlat_core::load::LoadSchedule>,
}
