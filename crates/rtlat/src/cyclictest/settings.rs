//! The validated settings of one `rtlat cyclictest` run.
//!
//! `cli::cyclictest` turns the command line into these; `cyclictest::run`
//! carries them out. Everything here is already checked: ranges, files'
//! directories, CPU numbers. The engine part is [`CyclicConfig`]; the rest is
//! process set-up and output choices that only the binary cares about.

use std::path::PathBuf;

use rtlat_core::CyclicConfig;
use rtlat_core::load::LoadSchedule;

use crate::gate::GatePlan;
use crate::output::OutputTarget;
pub use crate::report::hgrm::HgrmOutput;

/// The histogram block of `-h`/`-H`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistogramOutput {
    /// `-H`: add the all-threads sum column (printed only with >1 thread).
    pub summary_column: bool,
    /// Stdout, or `--histfile`.
    pub target: OutputTarget,
}

/// What the `/dev/cpu_dma_latency` step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaLatency {
    /// Write this value (µs) and hold the file open for the run (default 0).
    Set(i32),
    /// `--laptop`: leave it alone, with C's battery-power warning.
    SkipLaptop,
    /// `--default-system`: leave it alone, with C's warning.
    SkipDefaultSystem,
    /// `--deepest-idle-state`: leave it alone, the idle states are limited
    /// instead (rt-tests 2.8's warning).
    SkipDeepestIdleState,
}

/// `--deepest-idle-state`: the idle states deeper than `deepest` are
/// disabled on `cpus` for the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleStateLimit {
    /// The deepest state left enabled; -1: none.
    pub deepest: i32,
    /// The measured CPUs: the `-a` set, or every allowed CPU.
    pub cpus: Vec<usize>,
}

/// Everything `rtlat cyclictest` needs to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The measuring threads and what they measure.
    pub engine: CyclicConfig,
    /// `-q`: no live display, `T:` summary at the end (unless a histogram).
    pub quiet: bool,
    /// `-q` without `-v` or `--no-progress`: a progress line on stderr
    /// while the run goes on, when stderr is a terminal.
    pub progress: bool,
    /// `-v`: print every sample instead of the live display.
    pub verbose: bool,
    /// `-u`: write every line through at once.
    pub unbuffered: bool,
    /// `-h`/`-H` histogram block, if requested.
    pub histogram: Option<HistogramOutput>,
    /// `--json`, if requested.
    pub json: Option<OutputTarget>,
    /// `-m`: lock all current and future memory.
    pub mlockall: bool,
    /// `--latency`, `--laptop`, `--default-system`.
    pub dma_latency: DmaLatency,
    /// `--deepest-idle-state`, if given.
    pub deepest_idle_state: Option<IdleStateLimit>,
    /// `--inject-disturbances` (hidden, with `--synthetic` only): what
    /// the verdict is to see as counted.
    pub injected: Option<crate::report::verdict::injected::Injected>,
    /// `-a CPUSET` given with an explicit set: the main thread is restricted
    /// to these CPUs before the measuring threads are created.
    pub main_cpus_before_start: Option<Vec<usize>>,
    /// `--mainaffinity CPUSET`: the main thread moves here once the
    /// measuring threads exist.
    pub main_affinity: Option<Vec<usize>>,
    /// The policy text of the live header, as cyclictest prints it:
    /// `fifo`, `rr`, `other/other`, `batch/other`, ...
    pub header_policy: String,
    /// The command line as given, for the JSON `cmdline:` key.
    pub cmdline: String,
    /// `--tracemark`: with `-b`, write a marker to `trace_marker` at the
    /// break.
    pub tracemark: bool,
    /// `-F/--fifo PATH`: serve status lines through a named pipe.
    pub fifo: Option<PathBuf>,
    /// `-M`: redraw the live display only when a maximum grows.
    pub refresh_on_max: bool,
    /// `-o RED`: with `-v`, print one line per RED samples (the block's
    /// maximum and its cycle number). 1: every sample.
    pub oscope_reduction: u32,
    /// `-R`: measure the clock's resolution before the run.
    pub check_resolution: bool,
    /// `--dbg_cyclictest`: with `-R`, print every clock read.
    pub debug_resolution: bool,
    /// `--wait`/`--measure` chose a method other than abs + clock: a
    /// `# wait: ..., measure: ...` line goes before the
    /// `/dev/cpu_dma_latency` line (`-r`, `-s`, `-x` alone print nothing,
    /// as in C).
    pub show_methods: bool,
    /// `--stats-file FILE` (with `--stats-interval`, whose length is in
    /// `engine.intervals`): one JSON line per thread and interval, written
    /// while the run goes on.
    pub stats_file: Option<PathBuf>,
    /// `--percentiles`: print the percentiles after the summary.
    pub percentiles: bool,
    /// `--verdict[=STYLE]`: print the verdict at the end, in that style.
    pub verdict: Option<crate::report::verdict::text::Style>,
    /// `--horizon`, `--deadline`: what the verdict projects (the run's
    /// `RunMeta.projection`).
    pub projection: crate::cli::verdict_options::Asked,
    /// `--rt-tests` (or `$RTLAT_RT_TESTS`): the rt-tests release whose
    /// output the run writes (the run's `RunMeta.rt_tests`).
    pub rt_tests: rtlat_core::RtTests,
    /// `--hgrm FILE`, if requested.
    pub hgrm: Option<HgrmOutput>,
    /// `--fail-if` and `--junit`, if given.
    pub gates: Option<GatePlan>,
    /// `--load` or `--load-schedule`, if given.
    pub load: Option<LoadSchedule>,
    /// `--explain`, if given.
    pub explain: Option<crate::explain::ExplainPlan>,
    /// `rtlat monitor`: what it adds to the run.
    pub monitor: Option<crate::monitor::settings::MonitorPlan>,
}
