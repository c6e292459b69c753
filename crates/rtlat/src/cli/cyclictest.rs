//! The `rtlat cyclictest` command line: cyclictest 2.4's options, read the
//! way its getopt reads them, turned into validated [`Settings`].
//!
//! Scanning is [`getopt`](rtlat_args::getopt)'s job; this module holds the option
//! table, collects the values (the last of a repeated option wins), and only
//! then validates and combines them in the order C does, so warnings come
//! out as C prints them. Unlike C, every value is checked and a bad one is a
//! one-line [`UsageError`] naming the option, the value and what is accepted.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::LazyLock;

use rtlat_core::config::{
    Alignment, BreakPlan, ClockKind, CyclicConfig, HistogramPlan, IntervalPlan, MeasureMode,
    RunConfig, SchedPolicy, SpikePlan, ThreadPlan, TimeSourceKind, WaitMode,
};
use rtlat_core::cpuset::parse_cpu_list;
use rtlat_core::distribution::DistributionPlan;
use rtlat_core::load::schedule::LoadSchedule;
use rtlat_core::units::{Nanos, Resolution};

use super::explain::{ExplainArgs, ExplainIds, ExplainObstacles, HasExplain, explain_plan};
use super::load_options::run_duration;
use super::monitor::{self, HasMonitor, MonitorArgs};
use super::output_options::{self as outputs, output_path, output_target};
use super::shared::{self, HasShared, Measure, SharedArgs, SharedOpt};
use super::stop_options as stop;
use super::verdict_options::{self, HasVerdictStyle};
use crate::cyclictest::settings::{
    DmaLatency, HgrmOutput, HistogramOutput, IdleStateLimit, Settings,
};
use crate::monitor::settings::MonitorPlan;
use crate::output::OutputTarget;
use crate::report::verdict::text::Style;
pub use rtlat_args::UsageError;
use rtlat_args::docs::help::Help;
use rtlat_args::getopt::{NO, OPT_CPUS, OPT_NUM, OptSpec, REQ};
use rtlat_args::options::{self, Flag, Name, Page, Part, Read, name_of, pick};
pub use rtlat_args::values::SystemView;
use rtlat_args::values::{DirReport, OptionName, int, int_in, int_in_or, invalid};

#[cfg(test)]
mod tests;

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Settings>>;

/// Every option cyclictest 2.4 knows, plus ours and our hidden test seams,
/// in the table's order (C's, then ours as they came): each defined once,
/// with its help and what it keeps in [`Raw`].
static FLAGS: LazyLock<Vec<Flag<Raw>>> = LazyLock::new(|| {
    let mut flags = vec![
        Flag::c(Some('a'), "affinity", OPT_CPUS, "CPUS")
            .help(&[
                "pin thread i to the i-th CPU of CPUS, round robin,",
                "and keep the main thread on CPUS too; CPUS is like",
                "0-3,8 or all, !LIST for all but LIST, +LIST to count",
                "within the allowed CPUs. Alone: use the CPUs the",
                "process may use. Without -a or -S threads are",
                "not pinned.",
            ])
            .apply(|r: &mut Raw, v| {
                r.affinity = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('c'), "clock", REQ, "CLOCK")
            .help(&[
                "0 or monotonic: CLOCK_MONOTONIC; 1 or realtime:",
                "CLOCK_REALTIME",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.clock = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('d'), "distance", REQ, "US")
            .help(&[
                "each further thread's period is US microseconds",
                "longer (may be negative); 0 with -h/-H",
            ])
            .default("500")
            .apply(|r: &mut Raw, v| {
                r.distance = Some(v.text()?);
                Ok(())
            }),
        stop::duration(),
        outputs::histogram(
            &outputs::HISTOGRAM_C,
            &[
                "print a latency histogram of US one-microsecond",
                "buckets (1 to 1000000) at the end; sets -d to 0.",
                "(-h is the histogram; help is --help or -?)",
            ],
        ),
        outputs::histofall(),
        outputs::histfile(&outputs::HISTFILE_C),
        Flag::c(Some('i'), "interval", REQ, "US")
            .help(&[
                "wake-up period of thread 0 in microseconds,",
                "1 to 2147483647",
            ])
            .default("1000")
            .apply(|r: &mut Raw, v| {
                r.interval = Some(v.text()?);
                Ok(())
            }),
        outputs::json(&outputs::JSON),
        stop::loops(&[
            "each thread stops after N wake-ups; the run ends",
            "when the first thread is done; 0: no limit",
        ]),
        Flag::c(Some('m'), "mlockall", NO, "")
            .help(&["lock current and future memory in RAM"])
            .apply(|r: &mut Raw, _| {
                r.mlockall = true;
                Ok(())
            }),
        Flag::c(None, "mainaffinity", REQ, "CPUS")
            .help(&[
                "move the main thread to CPUS once the measuring",
                "threads run",
            ])
            .apply(|r: &mut Raw, v| {
                r.main_affinity = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('N'), "nsecs", NO, "")
            .help(&["report latencies in nanoseconds"])
            .apply(|r: &mut Raw, _| {
                r.nsecs = true;
                Ok(())
            }),
        Flag::c(Some('p'), "priority", REQ, "N")
            .help(&[
                "real-time priority, 0 to 99; a non-zero value makes",
                "the policy fifo unless it is rr",
            ])
            .default("none")
            .apply(|r: &mut Raw, v| {
                r.priority = Some(v.text()?);
                r.priority_sets_fifo = true;
                Ok(())
            }),
        Flag::c(None, "policy", REQ, "NAME")
            .help(&[
                "other (also: normal), batch, idle, fifo or rr; fifo",
                "and rr without -p run at priority threads+1",
            ])
            .default("other")
            .apply(|r: &mut Raw, v| {
                r.policy = Some(v.text()?);
                r.priority_sets_fifo = false;
                Ok(())
            }),
        Flag::c(None, "priospread", NO, "")
            .help(&["thread i runs at priority N-i instead of all at N"])
            .apply(|r: &mut Raw, _| {
                r.priospread = true;
                Ok(())
            }),
        Flag::c(Some('q'), "quiet", NO, "")
            .help(&[
                "no live display, one summary line per thread at",
                "the end (none when a histogram is printed); on a",
                "terminal, a progress line on stderr until then",
            ])
            .apply(|r: &mut Raw, _| {
                r.quiet = true;
                Ok(())
            }),
        Flag::c(Some('r'), "relative", NO, "")
            .help(&[
                "sleep one period from the previous wake-up instead",
                "of until an absolute deadline",
            ])
            .apply(|r: &mut Raw, _| {
                r.relative = true;
                Ok(())
            }),
        Flag::c(Some('S'), "smp", NO, "")
            .help(&[
                "one thread per allowed CPU, each pinned to its own;",
                "-t and -a are then ignored",
            ])
            .apply(|r: &mut Raw, _| {
                r.smp = true;
                Ok(())
            }),
        Flag::c(Some('t'), "threads", OPT_NUM, "N")
            .help(&[
                "number of measuring threads; -t alone or -t 0 starts",
                "one per CPU the process may use (or per CPU of -a's",
                "list)",
            ])
            .default("1")
            .apply(|r: &mut Raw, v| {
                r.threads = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('u'), "unbuffered", NO, "")
            .help(&["send every line out at once"])
            .apply(|r: &mut Raw, _| {
                r.unbuffered = true;
                Ok(())
            }),
        Flag::c(Some('v'), "verbose", NO, "")
            .help(&["print every sample instead of the live display"])
            .apply(|r: &mut Raw, _| {
                r.verbose = true;
                Ok(())
            }),
        Flag::c(None, "laptop", NO, "")
            .help(&["leave /dev/cpu_dma_latency alone (saves battery)"])
            .apply(|r: &mut Raw, _| {
                r.laptop = true;
                Ok(())
            }),
        Flag::c(None, "latency", REQ, "US")
            .help(&[
                "value held in /dev/cpu_dma_latency for the run,",
                "0 to 2147483647",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.latency = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "default-system", NO, "")
            .help(&["leave /dev/cpu_dma_latency alone"])
            .apply(|r: &mut Raw, _| {
                r.default_system = true;
                Ok(())
            }),
        Flag::c(Some('?'), "help", NO, "")
            .help(&["print this help and exit"])
            .shows_help(),
        Flag::c(Some('A'), "aligned", OPT_NUM, "US")
            .help(&[
                "start the threads together: thread i's first",
                "deadline is a common time + i*US microseconds",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.aligned = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(Some('b'), "breaktrace", REQ, "US")
            .help(&[
                "stop the run at the first wake-up later than US",
                "(nanoseconds with -N), 1 to 2147483647, and report",
                "which thread it was",
            ])
            .apply(|r: &mut Raw, v| {
                r.breaktrace = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('F'), "fifo", REQ, "PATH")
            .help(&[
                "create a named pipe at PATH that gives the current",
                "status lines to each reader",
            ])
            .apply(|r: &mut Raw, v| {
                r.fifo = Some(v.os());
                Ok(())
            }),
        Flag::c(Some('M'), "refresh_on_max", NO, "")
            .help(&["redraw the live display only when a maximum grows"])
            .apply(|r: &mut Raw, _| {
                r.refresh_on_max = true;
                Ok(())
            }),
        Flag::c(Some('o'), "oscope", REQ, "N")
            .help(&[
                "with -v: print one line per N samples, the largest",
                "of them, 1 to 2147483647",
            ])
            .default("1")
            .apply(|r: &mut Raw, v| {
                r.oscope = Some(v.text()?);
                Ok(())
            }),
        Flag::c(Some('R'), "resolution", NO, "")
            .help(&["measure how fine the clock reads are before the run"])
            .apply(|r: &mut Raw, _| {
                r.check_resolution = true;
                Ok(())
            }),
        Flag::c(Some('s'), "system", NO, "")
            .help(&["sleep with plain nanosleep (always relative)"])
            .apply(|r: &mut Raw, _| {
                r.system = true;
                Ok(())
            }),
        Flag::c(Some('x'), "posix_timers", NO, "")
            .help(&[
                "wake up through a per-thread POSIX timer signal;",
                "-s and -x together fall back to clock_nanosleep",
            ])
            .apply(|r: &mut Raw, _| {
                r.posix_timers = true;
                Ok(())
            }),
        Flag::c(None, "secaligned", OPT_NUM, "US")
            .help(&[
                "start all threads US microseconds after the next",
                "full second; not together with -A",
            ])
            .default("0")
            .apply(|r: &mut Raw, v| {
                r.secaligned = Some(v.optional()?);
                Ok(())
            }),
        Flag::c(None, "smi", NO, "")
            .help(&[
                "count System Management Interrupts on each thread's",
                "CPU (x86, needs -a or -S and access to the MSRs)",
            ])
            .apply(|r: &mut Raw, _| {
                r.smi = true;
                Ok(())
            }),
        Flag::c(None, "spike", REQ, "US")
            .help(&[
                "list every wake-up later than US (nanoseconds with",
                "-N) at the end, 1 to 2147483647",
            ])
            .apply(|r: &mut Raw, v| {
                r.spike = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "spike-nodes", REQ, "N")
            .help(&["keep at most N of those spikes, 1 to 1000000"])
            .default("1024")
            .apply(|r: &mut Raw, v| {
                r.spike_nodes = Some(v.text()?);
                Ok(())
            }),
        Flag::c(None, "tracemark", NO, "")
            .help(&[
                "with -b: write a marker to the kernel trace buffer",
                "and stop tracing at the break",
            ])
            .apply(|r: &mut Raw, _| {
                r.tracemark = true;
                Ok(())
            }),
        Flag::c(None, "dbg_cyclictest", NO, "")
            .help(&["with -R: print every clock read of that measurement"])
            .apply(|r: &mut Raw, _| {
                r.dbg_cyclictest = true;
                Ok(())
            }),
        // Not in 2.4, not in the help: the deterministic test seam. Being newer,
        // it never changes what a 2.4 abbreviation means (`--sy` is --system).
        shared::synthetic(),
        // The verdict's test seam: disturbances a synthetic run stands in for.
        Flag::new_long("inject-disturbances", REQ, "LIST")
            .hidden()
            .apply(|r: &mut Raw, v| {
                r.inject_disturbances = Some(v.text()?);
                Ok(())
            }),
        // Newer than 2.4 too: `--m`, `--w` keep what they meant in 2.4.
        Flag::new_long("wait", REQ, "METHOD")
            .help(&[
                "how the threads wait: abs (clock_nanosleep to an",
                "absolute deadline), rel (-r), nanosleep (-s),",
                "posix-timer (-x), timerfd (a periodic timerfd and",
                "read), std-sleep (std::thread::sleep), busy (spin",
                "on the clock: no system call; use --policy other",
                "or few threads)",
            ])
            .default("abs")
            .apply(|r: &mut Raw, v| {
                r.wait = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("measure", REQ, "METHOD")
            .help(&[
                "how the wake-up time is read: clock (the -c clock),",
                "tsc (the x86_64 time-stamp counter, calibrated at",
                "the start), timer (with --wait timerfd: the",
                "timer's own time left)",
            ])
            .default("clock")
            .apply(|r: &mut Raw, v| {
                r.measure = Some(v.text()?);
                Ok(())
            }),
        // No 2.4 name starts with `st`: every 2.4 abbreviation keeps its meaning.
        Flag::new_long("stats-interval", REQ, "TIME")
            .help(&[
                "cut the run into intervals of TIME (seconds,",
                "decimals allowed, or with a unit ms, s, m, h or d:",
                "0.5, 100ms, 2s; 10ms to 1d) and write each",
                "thread's cycles, min, avg, max and overruns in",
                "each of them to --stats-file",
            ])
            .apply(|r: &mut Raw, v| {
                r.stats_interval = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("stats-file", REQ, "FILE")
            .help(&[
                "where those go: one JSON line per interval and",
                "thread, written while the run goes on",
            ])
            .apply(|r: &mut Raw, v| {
                r.stats_file = Some(v.os());
                Ok(())
            }),
        // New names: a 2.4 prefix (`--b` for --breaktrace, `--h` ambiguous)
        // keeps its meaning; `--bu`, `--pe`, `--hg` reach these.
        Flag::new_long("bucket-width", REQ, "NS")
            .help(&[
                "width of the exact buckets, 1 to 1000000 ns [1000];",
                "they cover the larger of -h and 2 ms, then buckets",
                "within 1 % go up to over a minute",
            ])
            .apply(|r: &mut Raw, v| {
                r.bucket_width = Some(v.text()?);
                Ok(())
            }),
        Flag::new_long("percentiles", NO, "")
            .help(&[
                "print p50 to p99.999 and max of each thread and of",
                "all threads after the summary (also in the JSON);",
                "a value with fewer than 10 samples beyond it is",
                "marked *",
            ])
            .apply(|r: &mut Raw, _| {
                r.percentiles = true;
                Ok(())
            }),
        verdict_options::verdict(),
        // No 2.4 name starts with `no`: `--n` stays --nsecs.
        Flag::new_long("no-progress", NO, "")
            .help(&["with -q: no progress line"])
            .apply(|r: &mut Raw, _| {
                r.no_progress = true;
                Ok(())
            }),
        Flag::new_long("hgrm", REQ, "FILE")
            .help(&[
                "write the distribution of all threads in",
                "HdrHistogram's .hgrm percentile format (- for",
                "stdout)",
            ])
            .apply(|r: &mut Raw, v| {
                r.hgrm = Some(v.os());
                Ok(())
            }),
        Flag::new_long("hgrm-per-thread", NO, "")
            .help(&[
                "with --hgrm: also one file per thread (FILE with",
                ".N before its extension)",
            ])
            .apply(|r: &mut Raw, _| {
                r.hgrm_per_thread = true;
                Ok(())
            }),
    ];
    // `--j` stays --json (2.4), `--f` stays ambiguous: `--fa`, `--ju`.
    flags.extend(shared::gate_and_load_flags());
    // rt-tests 2.8: `--de` stays --default-system (2.4), `--dee` is this.
    flags.push(
        Flag::new_long("deepest-idle-state", REQ, "N")
            .help(&[
                "",
                "disable the idle states deeper than N (-1: all) on",
                "the measured CPUs (the -a set, else all) for the",
                "run, instead of setting /dev/cpu_dma_latency; one",
                "such run at a time",
            ])
            .apply(|r: &mut Raw, v| {
                r.deepest_idle_state = Some(v.text()?);
                Ok(())
            }),
    );
    flags.extend(super::explain::flags());
    flags.extend(super::monitor::flags());
    flags
});

/// How messages spell the option whose long name is `long`.
fn name(long: &str) -> Name {
    name_of(&FLAGS, long)
}

/// How messages spell a shared option in this tool.
fn shared(which: SharedOpt) -> Name {
    name(which.long())
}

/// The raw values, last one wins; validated afterwards.
#[derive(Default)]
struct Raw {
    /// `Some(None)`: `-a` without a set.
    affinity: Option<Option<String>>,
    clock: Option<String>,
    distance: Option<String>,
    interval: Option<String>,
    mlockall: bool,
    main_affinity: Option<String>,
    nsecs: bool,
    priority: Option<String>,
    policy: Option<String>,
    /// `-p` came after the last `--policy`: like C, `-p` itself switches a
    /// non-real-time policy to fifo, without a warning.
    priority_sets_fifo: bool,
    priospread: bool,
    quiet: bool,
    relative: bool,
    smp: bool,
    /// `Some(None)`: `-t` without a number.
    threads: Option<Option<String>>,
    unbuffered: bool,
    verbose: bool,
    laptop: bool,
    latency: Option<String>,
    default_system: bool,
    deepest_idle_state: Option<String>,
    inject_disturbances: Option<String>,
    /// `Some(None)`: `-A` without an offset.
    aligned: Option<Option<String>>,
    /// `Some(None)`: `--secaligned` without an offset.
    secaligned: Option<Option<String>>,
    breaktrace: Option<String>,
    fifo: Option<OsString>,
    refresh_on_max: bool,
    oscope: Option<String>,
    check_resolution: bool,
    system: bool,
    posix_timers: bool,
    smi: bool,
    spike: Option<String>,
    spike_nodes: Option<String>,
    tracemark: bool,
    dbg_cyclictest: bool,
    wait: Option<String>,
    measure: Option<String>,
    stats_interval: Option<String>,
    stats_file: Option<OsString>,
    bucket_width: Option<String>,
    percentiles: bool,
    verdict: Option<Style>,
    no_progress: bool,
    hgrm: Option<OsString>,
    hgrm_per_thread: bool,
    explain: ExplainArgs,
    shared: SharedArgs,
    monitor: MonitorArgs,
}

impl HasShared for Raw {
    fn shared(&mut self) -> &mut SharedArgs {
        &mut self.shared
    }
}

impl HasVerdictStyle for Raw {
    fn verdict_style(&mut self) -> &mut Option<Style> {
        &mut self.verdict
    }
}

impl HasExplain for Raw {
    fn explain(&mut self) -> &mut ExplainArgs {
        &mut self.explain
    }
}

impl HasMonitor for Raw {
    fn monitor(&mut self) -> &mut MonitorArgs {
        &mut self.monitor
    }
}

pub(crate) const MAX_INTERVAL_US: i64 = i32::MAX as i64;
/// `--bucket-width`: 1 µs by default, at most 1 ms.
const DEFAULT_BUCKET_WIDTH_NS: i64 = 1000;
const MAX_BUCKET_WIDTH_NS: i64 = 1_000_000;
const MAX_THREADS: u64 = 65_536;
const MAX_SPIKE_NODES: i64 = 1_000_000;
const DEFAULT_SPIKE_NODES: usize = 1024;
/// `--stats-interval` bounds: 10 ms to one day.
const MIN_STATS_INTERVAL: Nanos = Nanos(10_000_000);
const MAX_STATS_INTERVAL: Nanos = Nanos::from_secs(86_400);
/// What `--stats-interval` accepts, for the message of a bad value.
const STATS_INTERVAL_EXPECTED: &str = "expected a length of 0.01 to 86400 seconds: seconds, \
     decimals allowed (0.5), or a number with a unit ms, s, m, h or d (100ms, 2s, 1.5m)";
/// Sealed intervals kept per thread for the `--stats-file` writer of a real
/// run: 64 intervals, at least 0.64 s of slack for a writer that drains
/// every 50 ms.
const STATS_RING: usize = 64;
/// The length of a block of a run without `--stats-interval`, or the
/// unit of a longer one ([`block_plan`]).
const BLOCK_BASE: Nanos = Nanos(100_000_000);
/// The most a synthetic run keeps (64 B each): its file is written after
/// the run, so the ring holds the whole of a bounded run, up to this.
const MAX_SYNTHETIC_STATS_RING: u64 = 16_384;

/// Reads the `rtlat cyclictest` command line.
///
/// `args` excludes the program name (and the subcommand); `cmdline` is
/// stored as given for the JSON output.
pub fn parse(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    parse_as(Flavour::Cyclictest, args, cmdline, system)
}

/// Reads a command line of `flavour`.
fn parse_as(
    flavour: Flavour,
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    let mut raw = Raw::default();
    if options::parse(&FLAGS, args, &mut raw)? == Read::Help {
        return Ok(Invocation::Help);
    }
    match flavour {
        Flavour::Cyclictest => {
            if let Some(which) = raw.monitor.first_given() {
                return Err(UsageError(format!(
                    "{}: an option of rtlat monitor, not of cyclictest (rtlat monitor --help)",
                    monitor::name(which).spelling()
                )));
            }
        }
        Flavour::Monitor => monitor_defaults(&mut raw)?,
    }
    let monitor = match flavour {
        Flavour::Monitor => Some(raw.monitor.validate(monitor::name)?),
        Flavour::Cyclictest => None,
    };
    let (mut settings, warnings) = build(raw, cmdline, system)?;
    if let Some(plan) = monitor {
        monitor_settings(&mut settings, plan)?;
    }
    Ok(Invocation::Run(Measure { settings, warnings }))
}

/// Which command line [`parse_as`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// `rtlat cyclictest`: the monitor's options are refused.
    Cyclictest,
    /// `rtlat monitor`: the monitor's options and defaults.
    Monitor,
}

/// Reads the `rtlat monitor` command line: cyclictest's options with the
/// monitor's defaults, and the monitor's own.
pub fn parse_monitor(
    args: &[OsString],
    cmdline: String,
    system: &SystemView,
) -> Result<Invocation, UsageError> {
    parse_as(Flavour::Monitor, args, cmdline, system)
}

/// The monitor's defaults where the command line says nothing: one
/// thread per allowed CPU (or per CPU of `-a`'s list), each pinned, all
/// at the same interval (`-d 0`);
/// SCHED_FIFO priority 95 (above the threaded interrupt handlers' 50,
/// below the kernel's own per-CPU threads at 99); memory locked; no live
/// display. What only makes sense with a display is refused.
fn monitor_defaults(raw: &mut Raw) -> Result<(), UsageError> {
    let refuse = |id: Name, why: &str| -> Result<(), UsageError> {
        Err(UsageError(format!(
            "{}: not with rtlat monitor ({why})",
            id.spelling()
        )))
    };
    if raw.verbose {
        return refuse(
            name("verbose"),
            "it prints no samples: its figures are at /metrics",
        );
    }
    if raw.refresh_on_max {
        return refuse(name("refresh_on_max"), "it has no live display");
    }
    if raw.oscope.is_some() {
        return refuse(name("oscope"), "it prints no samples");
    }
    if !raw.smp && raw.threads.is_none() {
        if raw.affinity.is_none() {
            raw.affinity = Some(None);
        }
        raw.threads = Some(None);
    }
    if raw.distance.is_none() {
        raw.distance = Some("0".to_owned());
    }
    if raw.priority.is_none() && raw.policy.is_none() {
        raw.priority = Some("95".to_owned());
        raw.priority_sets_fifo = true;
    }
    raw.mlockall = true;
    raw.quiet = true;
    raw.no_progress = true;
    Ok(())
}

/// The monitor's plan into `settings`, and what the run it makes cannot
/// have: a synthetic clock (the monitor's figures come second by second,
/// in real time), the `-h` block (its histogram is
/// `rtlat_latency_seconds`, and the distribution of `--json`), intervals
/// longer than the second whose maximum it reads.
fn monitor_settings(settings: &mut Settings, plan: MonitorPlan) -> Result<(), UsageError> {
    if matches!(settings.engine.run.source, TimeSourceKind::Synthetic { .. }) {
        return Err(UsageError(
            "--synthetic: not with rtlat monitor (its figures come second by second, in real \
             time)"
                .to_owned(),
        ));
    }
    if settings.histogram.is_some() {
        return Err(UsageError(
            "-h/--histogram: not with rtlat monitor (its histogram is rtlat_latency_seconds, and \
             every sample is in the distribution of --json and --checkpoint)"
                .to_owned(),
        ));
    }
    // Without --stats-interval, the run's intervals are its blocks':
    // the monitor's are of one second.
    let intervals = settings
        .engine
        .intervals
        .filter(|_| settings.stats_file.is_some());
    match &intervals {
        Some(i) if i.length > Nanos::from_secs(1) => {
            return Err(UsageError(format!(
                "{}: at most 1 s with rtlat monitor (it reads each second's maximum from the \
                 intervals)",
                name("stats-interval").spelling()
            )));
        }
        Some(_) => {}
        None => {
            settings.engine.intervals = Some(IntervalPlan {
                length: Nanos::from_secs(1),
                ring: STATS_RING,
            });
        }
    }
    settings.monitor = Some(plan);
    Ok(())
}

/// How the measuring threads are placed on CPUs.
enum Pinning {
    None,
    /// Thread i on the i-th allowed CPU, round robin.
    UseAll,
    /// Thread i on the i-th CPU of the set, round robin.
    Set(Vec<usize>),
}

fn build(
    raw: Raw,
    cmdline: String,
    system: &SystemView,
) -> Result<(Settings, Vec<String>), UsageError> {
    let mut warnings = Vec::new();

    // How the threads wait. C settles -s with -x first of all.
    let wait = if raw.system && raw.posix_timers {
        warnings.extend(
            [
                "WARN: The system option requires clock_nanosleep",
                "WARN: and is not compatible with posix_timers",
                "WARN: Using clock_nanosleep",
            ]
            .map(str::to_owned),
        );
        if raw.relative {
            WaitMode::Relative
        } else {
            WaitMode::Absolute
        }
    } else if raw.system {
        WaitMode::Nanosleep
    } else if raw.posix_timers {
        WaitMode::PosixTimer {
            armed_relative: raw.relative,
        }
    } else if raw.relative {
        WaitMode::Relative
    } else {
        WaitMode::Absolute
    };
    let wait = match &raw.wait {
        Some(text) => wait_method(&raw, text)?,
        None => wait,
    };
    let measure = match &raw.measure {
        Some(text) => measure_method(&raw, text, wait)?,
        None => MeasureMode::Clock,
    };

    let mut allowed = system.allowed_cpus.clone();
    allowed.sort_unstable();
    allowed.dedup();
    let cpus = |id: Name, text: &str| {
        parse_cpu_list(text, &allowed, system.configured_cpus).map_err(|e| invalid(id, text, e))
    };

    // CPUs and the number of threads.
    let pinning = if raw.smp {
        Pinning::UseAll
    } else {
        match &raw.affinity {
            None => Pinning::None,
            Some(None) => Pinning::UseAll,
            Some(Some(text)) => Pinning::Set(cpus(name("affinity"), text)?),
        }
    };
    let per_cpu = match &pinning {
        Pinning::Set(set) => set.len(),
        _ => allowed.len(),
    };
    // The CPUs whose idle states --deepest-idle-state limits.
    let measured_cpus = match &pinning {
        Pinning::Set(set) => set.clone(),
        _ => allowed.clone(),
    };
    let nthreads = if raw.smp {
        if raw.threads.is_some() {
            warnings.push("WARN: -t ignored due to smp mode".to_owned());
        }
        if raw.affinity.is_some() {
            warnings.push("WARN: -a ignored due to smp mode".to_owned());
        }
        allowed.len()
    } else {
        match &raw.threads {
            None => 1,
            Some(None) => per_cpu,
            Some(Some(text)) => match int::<u64>(text) {
                Some(0) => per_cpu,
                Some(n) if n <= MAX_THREADS => n as usize,
                _ => {
                    return Err(invalid(
                        name("threads"),
                        text,
                        format_args!(
                            "expected a number of threads, 1 to {MAX_THREADS}, or 0 for one per CPU"
                        ),
                    ));
                }
            },
        }
    };
    if nthreads == 0 {
        return Err(UsageError(
            "no CPU is available to this process, so there is no thread to start".to_owned(),
        ));
    }
    // The SMI counter is read per CPU: each thread must stay on one.
    if raw.smi && matches!(pinning, Pinning::None) {
        return Err(UsageError(format!(
            "{}: needs threads pinned to CPUs: add -a or -S",
            name("smi").spelling()
        )));
    }

    // Intervals.
    let interval = int_in_or(
        name("interval"),
        raw.interval.as_deref(),
        1..=MAX_INTERVAL_US,
        "an interval in microseconds",
        1000,
    )?;
    let distance_given = match &raw.distance {
        Some(text) => Some(int::<i64>(text).ok_or_else(|| {
            invalid(
                name("distance"),
                text,
                "expected a whole number of microseconds (may be negative)",
            )
        })?),
        None => None,
    };

    // Histogram, and the other outputs of the shared options.
    let (resolution, unit) = rtlat_args::values::resolution(raw.nsecs, "-N");
    let outputs = raw.shared.outputs(shared, &unit)?;
    let buckets = outputs.buckets.map(|b| b as i64);
    let distance = if buckets.is_some() {
        if distance_given.is_some() {
            warnings
                .push("WARN: distance is ignored and set to 0, if histogram enabled".to_owned());
        }
        0
    } else {
        let distance = distance_given.unwrap_or(500);
        check_distance(&raw, interval, distance, nthreads)?;
        distance
    };
    warnings.extend(outputs.warnings);

    // Scheduling.
    let mut priority = match &raw.priority {
        Some(text) => int_in(name("priority"), text, 0..=99, "a real-time priority")?,
        None => 0,
    };
    let mut policy = match &raw.policy {
        Some(text) => policy_from_name(text)?,
        None => SchedPolicy::Other,
    };
    if raw.priority_sets_fifo && !policy.is_realtime() {
        policy = SchedPolicy::Fifo;
    }
    let default_priority = |why: &str| -> Result<i64, UsageError> {
        let p = nthreads as i64 + 1;
        if p > 99 {
            return Err(UsageError(format!(
                "{why} needs a real-time priority, and the default (number of threads + 1 = {p}) \
                 is above 99: give -p/--priority"
            )));
        }
        Ok(p)
    };
    if raw.priospread && priority == 0 {
        priority = default_priority("--priospread")?;
        warnings.push(format!("defaulting realtime priority to {priority}"));
    }
    if priority != 0 && !policy.is_realtime() {
        policy = SchedPolicy::Fifo;
        warnings.push("policy and priority don't match: setting policy to SCHED_FIFO".to_owned());
    }
    if policy.is_realtime() && priority == 0 {
        priority = default_priority(&format!("--policy {}", policy.name()))?;
        warnings.push(format!("defaulting realtime priority to {priority}"));
    }
    if raw.priospread && priority < nthreads as i64 {
        let lowest = nthreads - 1;
        let hint = if nthreads <= 99 {
            format!("give -p {nthreads} or more")
        } else {
            "it works with at most 99 threads".to_owned()
        };
        return Err(UsageError(format!(
            "--priospread: with priority {priority} and {nthreads} threads, thread {lowest} \
             would get priority {}; {hint}",
            priority - lowest as i64
        )));
    }
    let header_policy = if policy.is_realtime() {
        policy.name().to_owned()
    } else {
        format!("{}/other", policy.name())
    };

    // Threads.
    let threads: Vec<ThreadPlan> = (0..nthreads)
        .map(|i| {
            let prio = if raw.priospread {
                priority - i as i64
            } else {
                priority
            };
            ThreadPlan {
                index: i,
                interval: Nanos::from_micros(interval + i as i64 * distance),
                policy,
                priority: u8::try_from(prio).unwrap_or(0),
                cpu: match &pinning {
                    Pinning::None => None,
                    Pinning::UseAll => Some(allowed[i % allowed.len()]),
                    Pinning::Set(set) => Some(set[i % set.len()]),
                },
            }
        })
        .collect();

    // Stopping.
    let stop = raw.shared.stop(shared)?;
    let loops = stop.loops;
    let load = raw.shared.load(shared, system)?;
    // A schedule ends the run when it ends, unless -D comes first.
    let duration = run_duration(stop.duration, load.as_ref());

    let clock = match &raw.clock {
        Some(text) => match text.trim().to_ascii_lowercase().as_str() {
            "monotonic" => ClockKind::Monotonic,
            "realtime" => ClockKind::Realtime,
            t => match int::<i64>(t) {
                Some(0) => ClockKind::Monotonic,
                Some(1) => ClockKind::Realtime,
                _ => {
                    return Err(invalid(
                        name("clock"),
                        text,
                        "expected 0 or monotonic (CLOCK_MONOTONIC), 1 or realtime (CLOCK_REALTIME)",
                    ));
                }
            },
        },
        None => ClockKind::Monotonic,
    };

    // Verbose reduction.
    let oscope_reduction = int_in_or(
        name("oscope"),
        raw.oscope.as_deref(),
        1..=i64::from(i32::MAX),
        "a number of samples per printed line",
        1,
    )?;
    if oscope_reduction > 1 && !raw.verbose {
        return Err(UsageError(format!(
            "{}: only meaningful with {}",
            name("oscope").spelling(),
            name("verbose").spelling()
        )));
    }

    // Break, spikes, alignment.
    let breaktrace = match &raw.breaktrace {
        Some(text) => Some(BreakPlan {
            threshold: int_in(
                name("breaktrace"),
                text,
                1..=i64::from(i32::MAX),
                &format!("a latency threshold in {unit}"),
            )?,
        }),
        None => None,
    };
    let capacity = int_in_or(
        name("spike-nodes"),
        raw.spike_nodes.as_deref(),
        1..=MAX_SPIKE_NODES,
        "a number of spikes to keep",
        DEFAULT_SPIKE_NODES as i64,
    )? as usize;
    let spikes = match &raw.spike {
        Some(text) => Some(SpikePlan {
            trigger: int_in(
                name("spike"),
                text,
                1..=i64::from(i32::MAX),
                &format!("a latency trigger in {unit}"),
            )?,
            capacity,
        }),
        None => None,
    };
    let offset = |id: Name, value: &Option<String>| -> Result<Nanos, UsageError> {
        match value {
            Some(text) => Ok(Nanos::from_micros(int_in(
                id,
                text,
                0..=MAX_INTERVAL_US,
                "an offset in microseconds",
            )?)),
            None => Ok(Nanos(0)),
        }
    };
    let alignment = match (&raw.aligned, &raw.secaligned) {
        (Some(a), None) => Some(Alignment::Threads {
            offset: offset(name("aligned"), a)?,
        }),
        (None, Some(s)) => Some(Alignment::NextSecond {
            offset: offset(name("secaligned"), s)?,
        }),
        (Some(a), Some(s)) => {
            offset(name("aligned"), a)?;
            offset(name("secaligned"), s)?;
            return Err(UsageError(format!(
                "{} and {} cannot be used together",
                name("aligned").spelling(),
                name("secaligned").spelling()
            )));
        }
        (None, None) => None,
    };

    // The rest.
    let latency = int_in_or(
        name("latency"),
        raw.latency.as_deref(),
        0..=MAX_INTERVAL_US,
        "a /dev/cpu_dma_latency value in microseconds",
        0,
    )?;
    let deepest_idle_state = match &raw.deepest_idle_state {
        Some(text) => Some(IdleStateLimit {
            deepest: i32::try_from(int_in(
                name("deepest-idle-state"),
                text,
                -1..=i64::from(i32::MAX),
                "the deepest idle state left enabled (-1: none)",
            )?)
            .unwrap_or(i32::MAX),
            cpus: measured_cpus.clone(),
        }),
        None => None,
    };
    let dma_latency = if raw.laptop {
        DmaLatency::SkipLaptop
    } else if raw.default_system {
        DmaLatency::SkipDefaultSystem
    } else if deepest_idle_state.is_some() {
        DmaLatency::SkipDeepestIdleState
    } else {
        DmaLatency::Set(i32::try_from(latency).unwrap_or(i32::MAX))
    };
    let main_affinity = match &raw.main_affinity {
        Some(text) => Some(cpus(name("mainaffinity"), text)?),
        None => None,
    };
    let source = raw.shared.source(shared)?;
    let injected = match (&raw.inject_disturbances, &raw.shared.synthetic) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(UsageError(
                "--inject-disturbances: only with --synthetic (a real run counts its own)"
                    .to_owned(),
            ));
        }
        (Some(list), Some(_)) => Some(
            crate::report::verdict::injected::Injected::parse(list)
                .map_err(|why| invalid(name("inject-disturbances"), list, why))?,
        ),
    };
    let fifo = match &raw.fifo {
        Some(text) => Some(rtlat_args::values::new_node_path(
            name("fifo"),
            text,
            "create",
            DirReport::Detailed,
        )?),
        None => None,
    };
    let (intervals, stats_file) = stats_stream(&raw, source, loops, duration, &threads)?;
    let distribution = distribution_plan(&raw, buckets, resolution)?;
    let hgrm = match &raw.hgrm {
        Some(text) => Some(output_target(name("hgrm"), text)?),
        None => None,
    };
    let gates = raw.shared.gates(shared)?;
    let projection = raw.shared.projection(shared)?;
    if let (true, Some(OutputTarget::File(all))) = (raw.hgrm_per_thread, &hgrm) {
        // The longest of the per-thread names must fit too.
        let last = crate::report::hgrm::per_thread_path(all, nthreads - 1);
        rtlat_args::output_file::check_name(&last).map_err(|why| {
            UsageError(format!(
                "{}: cannot write '{}': {why}",
                name("hgrm-per-thread").spelling(),
                last.display()
            ))
        })?;
    }
    if raw.hgrm_per_thread && !matches!(hgrm, Some(OutputTarget::File(_))) {
        return Err(UsageError(format!(
            "{} needs {} FILE{}: the per-thread files are named after it",
            name("hgrm-per-thread").spelling(),
            name("hgrm").spelling(),
            if hgrm.is_some() {
                ", not - (standard output)"
            } else {
                ""
            }
        )));
    }

    let explain = explain_plan(
        ExplainIds {
            explain: name("explain"),
            threshold: name("explain-threshold"),
            trace: name("explain-trace"),
        },
        &raw.explain,
        ExplainObstacles {
            synthetic: raw.shared.synthetic.is_some(),
            other_clock: (clock != ClockKind::Monotonic).then_some("--clock 1 (CLOCK_REALTIME)"),
        },
        measured_cpus,
    )?;

    // Options that only act together with another one.
    if raw.tracemark && breaktrace.is_none() {
        warnings.push(format!(
            "WARN: {} has no effect without {}",
            name("tracemark").spelling(),
            name("breaktrace").spelling()
        ));
    }
    if raw.spike_nodes.is_some() && spikes.is_none() {
        warnings.push(format!(
            "WARN: {} has no effect without {}",
            name("spike-nodes").spelling(),
            name("spike").spelling()
        ));
    }
    if raw.dbg_cyclictest && !raw.check_resolution {
        warnings.push(format!(
            "WARN: {} has no effect without {}",
            name("dbg_cyclictest").spelling(),
            name("resolution").spelling()
        ));
    }

    let settings = Settings {
        engine: CyclicConfig {
            threads,
            run: RunConfig {
                loops,
                duration,
                resolution,
                source,
                distribution: Some(distribution),
                phases: load.as_ref().and_then(LoadSchedule::phase_plan),
            },
            clock,
            wait,
            measure,
            histogram: buckets.map(|b| HistogramPlan {
                buckets: b as usize,
            }),
            sample_ring: raw.verbose,
            breaktrace,
            spikes,
            alignment,
            smi: raw.smi,
            intervals,
            explain: explain.as_ref().map(|plan| plan.trigger),
            ..CyclicConfig::new(Vec::new())
        },
        quiet: raw.quiet,
        progress: raw.quiet && !raw.verbose && !raw.no_progress,
        verbose: raw.verbose,
        unbuffered: raw.unbuffered,
        histogram: outputs.histogram.map(|target| HistogramOutput {
            summary_column: outputs.histofall,
            target,
        }),
        json: outputs.json,
        mlockall: raw.mlockall,
        dma_latency,
        deepest_idle_state,
        injected,
        main_cpus_before_start: match pinning {
            Pinning::Set(set) => Some(set),
            _ => None,
        },
        main_affinity,
        header_policy,
        cmdline,
        tracemark: raw.tracemark,
        fifo,
        refresh_on_max: raw.refresh_on_max,
        oscope_reduction: u32::try_from(oscope_reduction).unwrap_or(u32::MAX),
        check_resolution: raw.check_resolution,
        debug_resolution: raw.dbg_cyclictest,
        show_methods: (raw.wait.is_some() || raw.measure.is_some())
            && (wait != WaitMode::Absolute || measure != MeasureMode::Clock),
        stats_file,
        percentiles: raw.percentiles,
        verdict: raw.verdict,
        projection,
        hgrm: hgrm.map(|target| HgrmOutput {
            target,
            per_thread: raw.hgrm_per_thread,
        }),
        gates,
        load,
        explain,
        monitor: None,
    };
    Ok((settings, warnings))
}

/// The full distribution every run keeps: exact buckets of
/// `--bucket-width` ns (1 µs by default) over the larger of the `-h` range
/// and 2 ms, then log-linear buckets.
fn distribution_plan(
    raw: &Raw,
    buckets: Option<i64>,
    resolution: Resolution,
) -> Result<DistributionPlan, UsageError> {
    let width = int_in_or(
        name("bucket-width"),
        raw.bucket_width.as_deref(),
        1..=MAX_BUCKET_WIDTH_NS,
        "a bucket width in nanoseconds",
        DEFAULT_BUCKET_WIDTH_NS,
    )?;
    let histogram_range = Nanos(
        buckets
            .unwrap_or(0)
            .saturating_mul(resolution.nanos_per_unit()),
    );
    DistributionPlan::new(width as u64, histogram_range).map_err(|e| match &raw.bucket_width {
        Some(text) => invalid(name("bucket-width"), text, e),
        None => UsageError(format!("the -h range needs a wider --bucket-width: {e}")),
    })
}

/// `--stats-interval SECONDS` with `--stats-file FILE`: both or neither.
/// Returns the engine's interval plan and the file.
fn stats_stream(
    raw: &Raw,
    source: TimeSourceKind,
    loops: Option<u64>,
    duration: Option<Nanos>,
    threads: &[ThreadPlan],
) -> Result<(Option<IntervalPlan>, Option<PathBuf>), UsageError> {
    let length = match &raw.stats_interval {
        Some(text) => Some(
            rtlat_args::values::decimal_duration(text)
                .filter(|l| (MIN_STATS_INTERVAL..=MAX_STATS_INTERVAL).contains(l))
                .ok_or_else(|| invalid(name("stats-interval"), text, STATS_INTERVAL_EXPECTED))?,
        ),
        None => None,
    };
    let file = match &raw.stats_file {
        Some(text) => Some(output_path(name("stats-file"), text)?),
        None => None,
    };
    match (length, file) {
        (None, None) => Ok((Some(block_plan(source, loops, duration, threads)), None)),
        (Some(_), None) => Err(UsageError(format!(
            "{} needs {} FILE: the file the per-interval lines go to",
            name("stats-interval").spelling(),
            name("stats-file").spelling()
        ))),
        (None, Some(_)) => Err(UsageError(format!(
            "{} needs {} SECONDS: how long each interval is",
            name("stats-file").spelling(),
            name("stats-interval").spelling()
        ))),
        (Some(length), Some(file)) => {
            let ring = match source {
                TimeSourceKind::Real => STATS_RING,
                TimeSourceKind::Synthetic { .. } => {
                    synthetic_stats_ring(length, loops, duration, threads)
                }
            };
            Ok((Some(IntervalPlan { length, ring }), Some(file)))
        }
    }
}

/// The intervals of a run without `--stats-interval`: its blocks'
/// (`cyclictest::blocks`). 100 ms, or ten periods of the slowest thread
/// when that is longer (in whole 100 ms), so that a block is rarely
/// empty; a bounded synthetic run's are doubled until its ring holds the
/// whole run (see [`synthetic_stats_ring`]), which is what its series, at most
/// [`rtlat_stats::blocks::DEFAULT_CAPACITY`] blocks, would merge them into
/// anyway.
fn block_plan(
    source: TimeSourceKind,
    loops: Option<u64>,
    duration: Option<Nanos>,
    threads: &[ThreadPlan],
) -> IntervalPlan {
    let slowest = threads
        .iter()
        .map(|t| t.interval.as_nanos())
        .max()
        .unwrap_or(0);
    let base = BLOCK_BASE.as_nanos();
    let steps = slowest.saturating_mul(10).max(1).saturating_add(base - 1) / base;
    let mut length = Nanos(base.saturating_mul(steps));
    match source {
        TimeSourceKind::Real => IntervalPlan {
            length,
            ring: STATS_RING,
        },
        TimeSourceKind::Synthetic { .. } => loop {
            let ring = synthetic_stats_ring(length, loops, duration, threads);
            // Unbounded (stopped by a signal): the ring keeps the end.
            let unbounded = loops.is_none() && duration.is_none();
            if ring < MAX_SYNTHETIC_STATS_RING as usize || unbounded || length >= MAX_STATS_INTERVAL
            {
                break IntervalPlan { length, ring };
            }
            length = Nanos(length.as_nanos().saturating_mul(2));
        },
    }
}

/// A synthetic run takes its samples as fast as it can, and its file is
/// written after the run (so that it is the same every time): its ring
/// holds every interval of the run, bounded by `-l` or `-D` (with room for
/// periods skipped by late wake-ups), up to [`MAX_SYNTHETIC_STATS_RING`].
fn synthetic_stats_ring(
    length: Nanos,
    loops: Option<u64>,
    duration: Option<Nanos>,
    threads: &[ThreadPlan],
) -> usize {
    let longest = threads
        .iter()
        .map(|t| t.interval.as_nanos())
        .max()
        .unwrap_or(0);
    let by_loops = loops.map(|n| u128::from(n) * 2 * longest.unsigned_abs() as u128);
    let by_duration = duration.map(|d| d.as_nanos().unsigned_abs() as u128);
    let span = match (by_loops, by_duration) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => u128::MAX,
    };
    let intervals = span / length.as_nanos().unsigned_abs().max(1) as u128 + 2;
    intervals.clamp(STATS_RING as u128, u128::from(MAX_SYNTHETIC_STATS_RING)) as usize
}

/// `--wait METHOD`, checked against `-r`/`-s`/`-x`: they may repeat what
/// `--wait` says (`--wait rel -r`, `--wait posix-timer -x`, and `-r` with
/// posix-timer arms the timer relatively, as `-x -r` does), never
/// contradict it.
fn wait_method(raw: &Raw, text: &str) -> Result<WaitMode, UsageError> {
    let wait = match text.trim().to_ascii_lowercase().as_str() {
        "abs" | "absolute" => WaitMode::Absolute,
        "rel" | "relative" => WaitMode::Relative,
        "nanosleep" => WaitMode::Nanosleep,
        "posix-timer" | "posix_timer" => WaitMode::PosixTimer {
            armed_relative: raw.relative,
        },
        "timerfd" => WaitMode::Timerfd,
        "std-sleep" | "std_sleep" => WaitMode::StdSleep,
        "busy" => WaitMode::Busy,
        _ => {
            return Err(invalid(
                name("wait"),
                text,
                "expected one of abs, rel, nanosleep, posix-timer, timerfd, std-sleep, busy",
            ));
        }
    };
    let allowed: &[Name] = match wait {
        WaitMode::Relative => &[name("relative")],
        WaitMode::Nanosleep => &[name("system")],
        WaitMode::PosixTimer { .. } => &[name("posix_timers"), name("relative")],
        _ => &[],
    };
    let given = [
        (raw.relative, name("relative")),
        (raw.system, name("system")),
        (raw.posix_timers, name("posix_timers")),
    ];
    if let Some((_, clash)) = given.iter().find(|(set, id)| *set && !allowed.contains(id)) {
        return Err(UsageError(format!(
            "{} {}: cannot be combined with {}",
            name("wait").spelling(),
            wait.name(),
            clash.spelling(),
        )));
    }
    Ok(wait)
}

/// `--measure METHOD`, checked against the wait method and `--synthetic`.
fn measure_method(raw: &Raw, text: &str, wait: WaitMode) -> Result<MeasureMode, UsageError> {
    let measure = match text.trim().to_ascii_lowercase().as_str() {
        "clock" => MeasureMode::Clock,
        "tsc" => MeasureMode::Tsc,
        "timer" => MeasureMode::Timer,
        _ => {
            return Err(invalid(
                name("measure"),
                text,
                "expected one of clock, tsc, timer",
            ));
        }
    };
    let name = || format!("{} {}", name("measure").spelling(), measure.name());
    if measure == MeasureMode::Timer && wait != WaitMode::Timerfd {
        return Err(UsageError(format!(
            "{}: reads the timerfd's own time, so it needs --wait timerfd (not {})",
            name(),
            wait.name()
        )));
    }
    if measure != MeasureMode::Clock && raw.shared.synthetic.is_some() {
        return Err(UsageError(format!(
            "{}: measures real time, not the --synthetic clock",
            name()
        )));
    }
    Ok(measure)
}

/// Every thread's interval (`interval + i * distance`) must stay within
/// 1..=2147483647 µs.
fn check_distance(
    raw: &Raw,
    interval: i64,
    distance: i64,
    nthreads: usize,
) -> Result<(), UsageError> {
    let last = nthreads as i128 - 1;
    let longest = i128::from(interval) + last * i128::from(distance);
    let range = 1..=i128::from(MAX_INTERVAL_US);
    if last == 0 || range.contains(&longest) {
        return Ok(());
    }
    // The distances that keep the last thread in range.
    let lo = -((i128::from(interval) - 1).div_euclid(last));
    let hi = (i128::from(MAX_INTERVAL_US) - i128::from(interval)).div_euclid(last);
    let text = raw.distance.clone().unwrap_or_else(|| distance.to_string());
    Err(invalid(
        name("distance"),
        &text,
        format_args!(
            "thread {last} would get an interval of {longest} us; with an interval of \
             {interval} us and {nthreads} threads the distance must be {lo} to {hi}"
        ),
    ))
}

fn policy_from_name(text: &str) -> Result<SchedPolicy, UsageError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "other" | "normal" => Ok(SchedPolicy::Other),
        "batch" => Ok(SchedPolicy::Batch),
        "idle" => Ok(SchedPolicy::Idle),
        "fifo" => Ok(SchedPolicy::Fifo),
        "rr" => Ok(SchedPolicy::RoundRobin),
        _ => Err(invalid(
            name("policy"),
            text,
            "expected one of other, normal, batch, idle, fifo, rr",
        )),
    }
}

/// The option table of `flavour`, as the man page and the completions see
/// it: rtlat monitor's has every row, rtlat cyclictest's all but the
/// monitor's own.
pub fn table(flavour: Flavour) -> Vec<OptSpec<()>> {
    FLAGS
        .iter()
        .filter(|flag| flavour == Flavour::Monitor || !monitor::is_own(flag.name()))
        .map(Flag::row)
        .collect()
}

/// The text of `rtlat cyclictest --help`.
pub fn help_text() -> String {
    help_page().render()
}

/// `rtlat cyclictest --help` as the man pages and completions read it.
pub fn help_model() -> Help {
    help_page().model()
}

/// `rtlat cyclictest --help`: its prose and the groups of its options.
fn help_page() -> Page<'static, Raw> {
    let group = |longs: &[&str]| pick(&FLAGS, longs);
    Page {
        title: super::dispatch::Tool::Cyclictest.help_title(),
        usage: vec!["rtlat cyclictest [OPTIONS]".to_owned()],
        parts: vec![
            Part::Paragraph(
                "\
Each measuring thread sleeps until its next deadline, reads the clock as soon
as it runs again and records how late it woke up. Figures are in microseconds
(nanoseconds with -N). The options are those of rt-tests cyclictest 2.4:
short options group (-qmu), values may be attached (-p99) or separate
(-p 99), and long options may be shortened while unambiguous (--dur)."
                    .to_owned(),
            ),
            Part::Heading("Threads and timing"),
            group(&[
                "threads",
                "interval",
                "distance",
                "clock",
                "relative",
                "system",
                "posix_timers",
                "wait",
                "measure",
                "aligned",
                "secaligned",
                "nsecs",
            ]),
            Part::Heading("Scheduling, CPUs and memory"),
            group(&[
                "priority",
                "policy",
                "priospread",
                "affinity",
                "smp",
                "mainaffinity",
                "mlockall",
                "smi",
            ]),
            Part::Heading("When to stop (by default the run goes on until Ctrl-C)"),
            group(&["loops", "duration", "breaktrace", "tracemark"]),
            Part::Heading("Output"),
            group(&[
                "quiet",
                "no-progress",
                "verbose",
                "oscope",
                "refresh_on_max",
                "unbuffered",
                "histogram",
                "histofall",
                "histfile",
                "json",
                "stats-interval",
                "stats-file",
            ]),
            Part::Heading("Percentiles (every run keeps every sample's bucket, whatever -h says)"),
            group(&[
                "percentiles",
                "bucket-width",
                "verdict",
                "horizon",
                "deadline",
                "hgrm",
                "hgrm-per-thread",
            ]),
            Part::Heading("Background load (see rtlat load --help for the kinds)"),
            group(&["load", "load-schedule", "load-cpus"]),
            Part::Heading("Gates for CI (checked after every output is written; exit status 3)"),
            group(&[
                "fail-if",
                "junit",
                "spike",
                "spike-nodes",
                "fifo",
                "resolution",
                "dbg_cyclictest",
            ]),
            Part::Heading("Why was it late (kernel trace events; needs root and tracefs)"),
            group(&["explain", "explain-threshold", "explain-trace"]),
            Part::Heading("Power management (/dev/cpu_dma_latency)"),
            group(&["latency", "laptop", "default-system", "deepest-idle-state"]),
            group(&["help"]),
            Part::Paragraph(
                "\
Example: one thread per CPU at priority 90, 200 us period, for one minute,
with a 400-bucket histogram at the end:"
                    .to_owned(),
            ),
            Part::Example("rtlat cyclictest -m -S -p 90 -i 200 -D 1m -q -h 400"),
        ],
    }
}
