//! What the `rtlat cyclictest` command line keeps while it is read
//! ([`Raw`], before validation), which command line it is ([`Flavour`]),
//! and the bounds that the options' modules share: the bottom of
//! `cli/cyclictest/`, which every sibling may use and which uses none.

use std::ffi::OsString;

use rtlat_core::Nanos;

use crate::cli::explain::{ExplainArgs, HasExplain};
use crate::cli::monitor::{HasMonitor, MonitorArgs};
use crate::cli::shared::{HasShared, SharedArgs};
use crate::cli::verdict_options::HasVerdictStyle;
use crate::report::verdict::text::Style;

/// The raw values, last one wins; validated afterwards.
#[derive(Default)]
pub(super) struct Raw {
    /// `Some(None)`: `-a` without a set.
    pub(super) affinity: Option<Option<String>>,
    pub(super) clock: Option<String>,
    pub(super) distance: Option<String>,
    pub(super) interval: Option<String>,
    pub(super) mlockall: bool,
    pub(super) main_affinity: Option<String>,
    pub(super) nsecs: bool,
    pub(super) priority: Option<String>,
    pub(super) policy: Option<String>,
    /// `-p` came after the last `--policy`: like C, `-p` itself switches a
    /// non-real-time policy to fifo, without a warning.
    pub(super) priority_sets_fifo: bool,
    pub(super) priospread: bool,
    pub(super) quiet: bool,
    pub(super) relative: bool,
    pub(super) smp: bool,
    /// `Some(None)`: `-t` without a number.
    pub(super) threads: Option<Option<String>>,
    pub(super) unbuffered: bool,
    pub(super) verbose: bool,
    pub(super) laptop: bool,
    pub(super) latency: Option<String>,
    pub(super) default_system: bool,
    pub(super) deepest_idle_state: Option<String>,
    pub(super) inject_disturbances: Option<String>,
    /// `Some(None)`: `-A` without an offset.
    pub(super) aligned: Option<Option<String>>,
    /// `Some(None)`: `--secaligned` without an offset.
    pub(super) secaligned: Option<Option<String>>,
    pub(super) breaktrace: Option<String>,
    pub(super) fifo: Option<OsString>,
    pub(super) refresh_on_max: bool,
    pub(super) oscope: Option<String>,
    pub(super) check_resolution: bool,
    pub(super) system: bool,
    pub(super) posix_timers: bool,
    pub(super) smi: bool,
    pub(super) spike: Option<String>,
    pub(super) spike_nodes: Option<String>,
    pub(super) tracemark: bool,
    pub(super) dbg_cyclictest: bool,
    pub(super) wait: Option<String>,
    pub(super) measure: Option<String>,
    pub(super) stats_interval: Option<String>,
    pub(super) stats_file: Option<OsString>,
    pub(super) bucket_width: Option<String>,
    pub(super) percentiles: bool,
    pub(super) verdict: Option<Style>,
    pub(super) no_progress: bool,
    pub(super) explain: ExplainArgs,
    pub(super) shared: SharedArgs,
    pub(super) monitor: MonitorArgs,
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
pub(super) const DEFAULT_BUCKET_WIDTH_NS: i64 = 1000;
pub(super) const MAX_BUCKET_WIDTH_NS: i64 = 1_000_000;
pub(super) const MAX_THREADS: u64 = 65_536;
pub(super) const MAX_SPIKE_NODES: i64 = 1_000_000;
pub(super) const DEFAULT_SPIKE_NODES: usize = 1024;
/// `--stats-interval` bounds: 10 ms to one day.
pub(super) const MIN_STATS_INTERVAL: Nanos = Nanos(10_000_000);
pub(super) const MAX_STATS_INTERVAL: Nanos = Nanos::from_secs(86_400);
/// What `--stats-interval` accepts, for the message of a bad value.
pub(super) const STATS_INTERVAL_EXPECTED: &str = "expected a length of 0.01 to 86400 seconds: seconds, \
     decimals allowed (0.5), or a number with a unit ms, s, m, h or d (100ms, 2s, 1.5m)";
/// Sealed intervals kept per thread for the `--stats-file` writer of a real
/// run: 64 intervals, at least 0.64 s of slack for a writer that drains
/// every 50 ms.
pub(super) const STATS_RING: usize = 64;
/// The length of a block of a run without `--stats-interval`, or the
/// unit of a longer one (`outputs::block_plan`).
pub(super) const BLOCK_BASE: Nanos = Nanos(100_000_000);
/// The most a synthetic run keeps (64 B each): its file is written after
/// the run, so the ring holds the whole of a bounded run, up to this.
pub(super) const MAX_SYNTHETIC_STATS_RING: u64 = 16_384;

/// Which command line [`parse_as`](super::parse_as) reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// `rtlat cyclictest`: the monitor's options are refused.
    Cyclictest,
    /// `rtlat monitor`: the monitor's options and defaults.
    Monitor,
}
