//! The validated settings of one `rtlat rt-migrate-test` run.

use rtlat_core::Nanos;
use rtlat_core::migrate::MigrateConfig;

use crate::output::OutputTarget;

/// Everything `rtlat rt-migrate-test` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The tasks and their intervals.
    pub engine: MigrateConfig,
    /// `-D`: stop after this long (as C: the run then ends with status 1).
    pub duration: Option<Nanos>,
    /// `-q`: no progress bar.
    pub quiet: bool,
    /// `--json`, if requested.
    pub json: Option<OutputTarget>,
    /// `--rt-tests` (or `$RTLAT_RT_TESTS`): the release whose JSON version
    /// string is written (the text and keys are the same in every one).
    pub rt_tests: rtlat_core::RtTests,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
}
