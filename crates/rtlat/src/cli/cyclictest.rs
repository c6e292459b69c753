//! The `rtlat cyclictest` command line: cyclictest 2.4's options, read the
//! way its getopt reads them, turned into validated [`Settings`].
//!
//! Scanning is [`getopt`](rtlat_args::getopt)'s job; the options are
//! defined once each in [`flags`] (spellings, help, what each keeps in
//! [`Raw`], the last of a repeated option winning), `--help` is made from
//! them in [`help`], and only then [`build`] validates and combines the
//! values in the order C does, so warnings come out as C prints them, one
//! concern per module (`timing`, `threads`, `scheduling`, `breaks`,
//! `power`, `outputs`; `monitor_mode` for rtlat monitor). Unlike C, every
//! value is checked and a bad one is a one-line [`UsageError`] naming the
//! option, the value and what is accepted.

use std::ffi::OsString;

use rtlat_core::Nanos;

use super::explain::{ExplainArgs, HasExplain};
use super::monitor::{self, HasMonitor, MonitorArgs};
use super::shared::{HasShared, Measure, SharedArgs};
use super::verdict_options::HasVerdictStyle;
use crate::cyclictest::settings::Settings;
use crate::report::verdict::text::Style;
pub use rtlat_args::UsageError;
use rtlat_args::options::{self, Read};
use rtlat_args::values::OptionName;
pub use rtlat_args::values::SystemView;

mod breaks;
mod build;
mod flags;
mod help;
mod monitor_mode;
mod outputs;
mod power;
mod scheduling;
#[cfg(test)]
mod tests;
mod threads;
mod timing;

use build::build;
use flags::FLAGS;
pub use help::{SUMMARY, help_model, help_text, table};
use monitor_mode::{monitor_defaults, monitor_settings};

/// What the command line asks for: [`help_text`], or to measure.
pub type Invocation = rtlat_args::Invocation<Measure<Settings>>;

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
