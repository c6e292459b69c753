//! `rtlat hwlatdetect --json FILE`: rt-tests' envelope (the script itself
//! writes no JSON), the run's `hwlatdetect` object, then rtlat's
//! `environment` and `audit`. No `verdict`: the tracer's samples are the
//! kernel's, taken by its own thread; rtlat judges none of them.

use serde::{Deserialize, Serialize};

/// hwlatdetect's one member, written after the envelope (an
/// [`crate::envelope::UnjudgedDocument`]'s members).
#[derive(Clone, Debug, Serialize)]
pub struct HwlatMembers<'a> {
    /// What the run found.
    pub hwlatdetect: &'a HwlatResult,
}

/// The run: the settings in force, the figures of the script's report and
/// 2.10's additions (`latencies_above_threshold`, `mtbf_s`), every sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HwlatResult {
    /// How long the tracer ran, as asked (s).
    pub duration_s: u64,
    /// `tracing_thresh` during the run (µs).
    pub threshold_us: u64,
    /// Above it the run exits 1 (µs).
    pub hardlimit_us: u64,
    /// `hwlat_detector/window` (µs).
    pub window_us: u64,
    /// `hwlat_detector/width` (µs).
    pub width_us: u64,
    /// `--cpu-list` as given; `null` without it.
    pub cpu_list: Option<String>,
    /// Ended early by a signal.
    pub interrupted: bool,
    /// The largest sample (µs); `null`: none above the threshold ("Below
    /// threshold").
    pub max_latency_us: Option<u64>,
    /// "Samples recorded".
    pub samples_recorded: u64,
    /// "Samples exceeding threshold" as 2.4 counts it (the samples).
    pub samples_exceeding_threshold: u64,
    /// The same as 2.10 counts it: the sum of the samples' `count:`
    /// fields where the kernel writes them, else the samples.
    pub latencies_above_threshold: u64,
    /// 2.10's "MTBF" (s): `null` unless more than one latency was above
    /// the threshold.
    pub mtbf_s: Option<f64>,
    /// SMIs counted on all CPUs during the run (MSR 0x34); `null` where
    /// the counter cannot be read.
    pub smis: Option<u64>,
    /// Every sample, in the order the tracer gave them.
    pub samples: Vec<HwlatSample>,
}

/// One sample of the tracer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HwlatSample {
    /// The tracer's `ts:` (seconds.nanoseconds, as written).
    pub ts: String,
    /// The largest gap inside the sampling loop (µs).
    pub inner_us: u64,
    /// The largest gap between turns of the loop (µs).
    pub outer_us: u64,
    /// Where it was taken, when the line says.
    pub cpu: Option<u32>,
    /// The kernel's `count:` (5.14 and later).
    pub count: Option<u64>,
}
