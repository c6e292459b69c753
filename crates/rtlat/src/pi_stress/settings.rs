//! The validated settings of one `rtlat pi_stress` run.

use rtlat_core::Nanos;
use rtlat_core::inversion::{DeadlineSched, RoleSched};

use crate::output::OutputTarget;

/// Everything `rtlat pi_stress` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `-V`: print the version and exit (nothing else is read, as in C).
    pub version_only: bool,
    /// The CPU of each group (its three threads are pinned to it).
    pub group_cpus: Vec<usize>,
    /// The CPU of the main (admin) thread.
    pub admin_cpu: usize,
    /// `-u`, or only one CPU allowed: everything on one CPU.
    pub one_cpu: bool,
    /// `-D`: how long the run lasts; `None`: until stopped.
    pub duration: Option<Nanos>,
    /// `-i`: inversions per group; `None`: no limit.
    pub inversions: Option<u64>,
    /// The low, medium and high threads' and the admin thread's
    /// scheduling (`-r`, `-s`).
    pub low: RoleSched,
    /// The medium threads'.
    pub medium: RoleSched,
    /// The high threads'.
    pub high: RoleSched,
    /// `-s id=high,policy=deadline,...`: the high threads take
    /// SCHED_DEADLINE (and `high` is unused).
    pub high_deadline: Option<DeadlineSched>,
    /// The main thread's.
    pub admin: RoleSched,
    /// `-q`.
    pub quiet: bool,
    /// `-v`.
    pub verbose: bool,
    /// `-d`.
    pub debug: bool,
    /// `-p`.
    pub prompt: bool,
    /// `-m`.
    pub mlockall: bool,
    /// `--json`.
    pub json: Option<OutputTarget>,
    /// `--rt-tests` (or `$RTLAT_RT_TESTS`): the release whose JSON version
    /// string is written (the text and keys are the same in every one).
    pub rt_tests: rtlat_core::RtTests,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// The hidden test seam: this group never finishes its inversion.
    pub stuck_group: Option<usize>,
}
