//! The validated settings of one `rtlat signaltest` run: the ring itself
//! ([`RingConfig`]) and the process set-up and output choices around it.

use rtlat_core::RingConfig;
use rtlat_core::load::LoadSchedule;

use crate::gate::GatePlan;
use crate::output::OutputTarget;

/// Everything `rtlat signaltest` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The ring and what it measures.
    pub ring: RingConfig,
    /// `-q`: no live display.
    pub quiet: bool,
    /// `-v`: print every sample of thread 0 instead of the live display.
    pub verbose: bool,
    /// `--histogram`: where the histogram block goes (stdout or
    /// `--histfile`).
    pub histogram: Option<OutputTarget>,
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
    /// `-m`: lock all current and future memory.
    pub mlockall: bool,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// `--fail-if` and `--junit`.
    pub gates: Option<GatePlan>,
    /// `--load`: load beside the ring (one constant phase).
    pub load: Option<LoadSchedule>,
}
