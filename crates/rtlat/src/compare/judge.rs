//! When a difference between two runs is a change, and not noise.
//!
//! Two runs of an unchanged system differ: by sampling (a percentile is
//! an estimate from n samples), by resolution (the distribution's
//! buckets), and by what varies between runs. A row is "worse" or
//! "better" only when both of these hold:
//!
//! 1. **The interval of the difference excludes 0.** Each side's
//!    percentile gets an interval from its own run, and the two are
//!    combined (below). The intervals are family-wise: see
//!    "several rows" below.
//! 2. **The change is above the practical threshold**, `--noise`:
//!
//!    ```text
//!    |NEW - BASE| > max(NOISE % of |BASE|, 2 bucket widths at that value)
//!    ```
//!
//!    (NOISE is 10 by default). The bucket term is the resolution of the
//!    figures (a percentile is the lower bound of the bucket holding it,
//!    1 µs wide by default); the percentage is the variation between runs
//!    that no interval from within one run can see (another day, another
//!    neighbour on the host).
//!
//! # A percentile's interval: order statistics with an effective n
//!
//! The value of row p is the run's exact percentile, as the file says
//! it. For n independent samples the number of samples below the true
//! quantile is Binomial(n, p), so the quantile lies between the samples
//! of ranks `n·p ∓ z·sqrt(n·p·(1−p))`. Latency samples are not
//! independent: one host stall or one burst of interrupts makes several
//! late samples in a row, and the count of late samples varies more
//! than the binomial's `n·p·(1−p)`. The ranks' spread is widened by the
//! **dispersion** D ≥ 1 of that count, measured on the run's blocks
//! (`"blocks"`: each block's samples and its counts at or above the
//! steps of [`LADDER_NS`]): at the ladder step whose fraction of samples
//! at or above it is nearest to the row's tail `1 − p` (so that the count
//! measured is the one whose variance sets the rank's, which the step
//! nearest in value need not be: the step above p50 = 15 µs may hold 1 %
//! of the samples), with `c_i` of `n_i` samples of block i at or above
//! it and `p̂ = Σc/Σn`,
//!
//! ```text
//! D = [Σ (c_i − n_i·p̂)² / (k − 1)] / [mean(n_i) · p̂ · (1 − p̂)]
//! ```
//!
//! measured at every time scale from the blocks to a tenth of the run
//! (blocks merged 2, 4, 8 ... at a time while [`MIN_BLOCKS`] remain;
//! the variance-time method of batch means): late samples on this VM
//! cluster at every scale up to seconds (a host's busy second, disk
//! interrupts), and D measured on 100 ms blocks alone was a third of D on
//! 1 s blocks, which made 9 false alarms in 20 A/A pairs (BENCHMARKS.md);
//! the scale whose D is the largest is used, each D
//! taken at the upper end of its one-sided 95 % interval (`D·(k−1)/
//! χ²(0.05; k−1)`: from 12 blocks an estimate may be half the truth, and a
//! D too low is a false alarm; from 100 blocks the factor is 1.28), and
//! clamped to at least 1 (a run cannot be more regular than independent
//! samples; a value below 1 is the estimate's own noise). Both runs use
//! the larger of their two D: the question is whether they differ, and
//! if they do not they are one process, whose burstiness the calmer run
//! understates (on this VM a run without a host stall shows D ≈ 1 and its
//! twin with one D ≈ 13: judged each by its own, the calm run's narrow
//! interval made a false alarm). The ranks become
//! `n·p ∓ z·sqrt(n·p·(1−p)·D)`, i.e. an effective sample size of `n / D`. D needs at least [`MIN_BLOCKS`] blocks with samples; with
//! fewer the row is not judged ("too few blocks"). A file without blocks
//! (the C tool's, rtlat's before they were written) gets D = 1: its
//! intervals assume independent samples, and the output says so.
//!
//! **Between runs.** D measured inside a run says how far the run's own
//! count strays; two runs of one machine stray further apart, by the
//! drift of the machine between them (another minute of the host's load,
//! another neighbour). On the reference VM the share of samples at or
//! above a step varied between identical runs up to 20 times more than
//! the D of each run said (thread 1 at 10 to 50 µs; BENCHMARKS.md), and
//! about as much as it varies between the tenths of one run (0.1 to 2.3
//! times). So a run is also predicted to differ from its twin as much
//! as one of its tenths differs from another: with the tenths' own
//! dispersion `D_10` (the formula above over the ten tenths, the blocks
//! as the floor groups them), the prediction is `D = 10 · D_10`, and it
//! is used when it is larger than the D measured at the run's scales
//! ([`Spread::Predicted`]; `"how": "predicted"` in `--json`). This is
//! the same rule as the floor's (two single tenths, not two means of
//! ten), in the ranks' terms.
//!
//! The values at those ranks are read from the distribution's buckets
//! conservatively: the lower rank's bucket's lower bound, the upper
//! rank's bucket's upper bound, within the run's minimum and maximum (a
//! rank beyond the buckets, among a C histogram's overflows, is bounded
//! by the maximum). Without a distribution there is no interval, and the
//! row is not judged.
//!
//! Why this and not a block bootstrap: the blocks carry counts at fixed
//! latencies, not the samples, so a bootstrap could only resample
//! per-block counts at the ladder's steps (a coarse 1-2-5 grid) and would
//! read each resampled percentile off that grid; the order-statistic
//! interval keeps the distribution's 1 µs resolution, uses the blocks for
//! what they measure well (how much the count of late samples varies from
//! block to block) and costs nothing to compute.
//!
//! # The difference of two runs
//!
//! The runs are independent, so the half-widths add in quadrature, each
//! side's own (the intervals are asymmetric):
//!
//! ```text
//! lower = d − sqrt((NEW − NEW_lower)² + (BASE_upper − BASE)²)
//! upper = d + sqrt((NEW_upper − NEW)² + (BASE − BASE_lower)²)
//! ```
//!
//! with `d = NEW − BASE`.
//!
//! # Several rows are several tests
//!
//! Every judged row (percentile rows of every thread and of all threads)
//! is a test; with nine of them at 95 % each, an unchanged system would
//! be called worse somewhere far more often than 1 run in 20. The
//! intervals are widened by **Bonferroni**: with m judged rows, each is
//! at `1 − 0.05/m`, so that the chance of any false "worse" or "better"
//! is at most 5 % (family-wise, whatever the dependence between rows:
//! "all threads" shares its samples with the threads). Bonferroni rather
//! than Holm: its per-row intervals are the ones the decision rests on,
//! so the table shows intervals a reader can check against 0; Holm would
//! judge with intervals the table cannot show.
//!
//! # The extremes
//!
//! `min` and `max` are one sample each; the maximum of a heavy tail
//! differs by factors between identical runs, so neither is judged
//! sample against sample: both are information only, with the reason.
//! When both runs' blocks support a projection
//! ([`rtlat_stats::projection::project`], the default request), the
//! maxima are judged by the projected maximum over the first horizon (1
//! hour): worse only when NEW's interval lies wholly above BASE's (and the
//! change of the projected values is above the threshold), better the
//! other way round.
//!
//! # The floor
//!
//! The row `floor` is the latency nearly every window of the run reaches
//! ([`rtlat_stats::floor`]): the run's windows (its blocks, 100 ms
//! long, or the longer of the two runs' when their blocks differ) are cut
//! into ten segments, each segment's floor is the 10th percentile of its
//! windows' maxima, and the run's is their geometric mean. A disturbance
//! that recurs in every window (a thread of higher priority that runs
//! every 50 ms) raises it; a host stall of a few seconds does not. It is
//! judged by a Student t interval of the ratio NEW/BASE on the segments'
//! log floors, as wide as the difference of two single segments (the
//! drift between runs is about the drift between a run's segments, not a
//! tenth of it: see the crate's documentation), at the family's
//! per-row confidence; worse when the interval is above 1 and the change
//! above `--noise` % of BASE. It needs 50 windows in each run (5 s at
//! 100 ms); a run without blocks has no windows.
//!
//! # Host stalls
//!
//! A virtual machine's CPU is taken away by its host for milliseconds at
//! a time, for seconds together; its samples then hold the host's stalls,
//! which come and go with the host's load, not with the system under
//! test. On the reference VM every run whose measured CPUs lost more than
//! [`HOST_STALLS_STEAL`] of their time to the hypervisor (the run's
//! `"verdict".steal_share`) had seconds of millisecond latencies, and
//! the percentiles of two identical such runs differed beyond their
//! intervals (BENCHMARKS.md). When either run is above it, the rows made
//! of samples (p50, p99, p99.9, max) are not judged ("host stalls", with
//! both shares); the floor, which such stalls do not reach unless they
//! fill most of the run, still is. A file that does not record its steal
//! (the C tools', older rtlat results) is judged as if the host had taken
//! nothing, and the output says so.
//!
//! A tail percentile is judged only when each run has at least 10
//! samples at or beyond it (p50 needs 20 samples, p99 1 000, p99.9
//! 10 000): with fewer, the normal approximation of the ranks fails and
//! the percentile is as erratic as the maximum ("too few samples").

use rtlat_stats::blocks::{BlockSeries, LADDER_NS};
use rtlat_stats::floor::{self, Floor, FloorChange, NoFloor};
use rtlat_stats::projection::{self, Estimate, Projection, Request};
use rtlat_stats::special::normal_quantile;

use super::figures::{Figures, Row};

/// The family-wise confidence of the judgement.
pub const CONFIDENCE: f64 = 0.95;

/// Blocks with samples a run needs for its dispersion to be estimated.
pub const MIN_BLOCKS: usize = 10;

/// How the family's error rate is controlled (for the output).
pub const CORRECTION: &str = "bonferroni";

/// The share of the measured CPUs' time stolen by the hypervisor above
/// which a run's samples hold the host's stalls (see the module
/// documentation).
pub const HOST_STALLS_STEAL: f64 = 0.01;

/// How a row changed from BASE to NEW (lower latency is better).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Lower: the interval and the threshold say so.
    Better,
    /// Higher: the interval and the threshold say so.
    Worse,
    /// Judged, and within the noise.
    Noise,
    /// Not judged: a run has fewer samples than the row needs.
    TooFewSamples,
    /// Not judged: a run has blocks, too few to measure their dispersion.
    TooFewBlocks,
    /// Not judged: a run has no distribution to read an interval from.
    NoDistribution,
    /// A single sample (min, max without projections): shown, not judged.
    Information,
    /// Not judged: a run lost more than [`HOST_STALLS_STEAL`] of its
    /// CPUs' time to the hypervisor, and its samples hold the host's
    /// stalls.
    HostStalls,
    /// A side has no value (no samples).
    NoData,
}

impl Change {
    /// How the verdict lines say it.
    pub const fn describe(self) -> &'static str {
        match self {
            Change::Better => "better",
            Change::Worse => "worse",
            Change::Noise => "within noise",
            Change::TooFewSamples => "within noise (too few samples)",
            Change::TooFewBlocks => "within noise (too few blocks)",
            Change::NoDistribution => "not judged (no distribution)",
            Change::Information => "information only",
            Change::HostStalls => "not judged (host stalls)",
            Change::NoData => "no data",
        }
    }

    /// How the table's narrow verdict column says it.
    pub const fn short(self) -> &'static str {
        match self {
            Change::Better => "better",
            Change::Worse => "worse",
            Change::Noise => "noise",
            Change::TooFewSamples => "few samples",
            Change::TooFewBlocks => "few blocks",
            Change::NoDistribution => "no buckets",
            Change::Information => "info only",
            Change::HostStalls => "host stalls",
            Change::NoData => "no data",
        }
    }

    /// Whether the row took part in the family of tests.
    pub const fn judged(self) -> bool {
        matches!(self, Change::Better | Change::Worse | Change::Noise)
    }
}

/// The practical threshold: `--noise`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseRule {
    /// The relative term, percent of BASE.
    pub percent: f64,
}

/// When the files have no distribution: the default bucket width, 1 µs.
pub const DEFAULT_BUCKET_NS: i64 = 1_000;

impl NoiseRule {
    /// The rule without `--noise`: 10 % of BASE (`rtlat compare`'s
    /// default, and `rtlat evaluate --compare`'s).
    pub const DEFAULT: NoiseRule = NoiseRule { percent: 10.0 };

    /// The largest change that is noise at BASE `b` and NEW `n`, ns.
    pub fn tolerance(&self, base: &Figures, new: &Figures, b: i64, n: i64) -> f64 {
        let width = bucket_width(&base.buckets, b).max(bucket_width(&new.buckets, n));
        (self.percent / 100.0 * b.abs() as f64).max(2.0 * width as f64)
    }
}

/// How the count of late samples varies from block to block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spread {
    /// No blocks: independent samples assumed (D = 1).
    Independent,
    /// Measured on `blocks` blocks at the ladder step `ladder_ns`: the
    /// raw estimate `raw`, D = max(1, raw).
    Measured {
        blocks: usize,
        ladder_ns: i64,
        raw: f64,
    },
    /// The dispersion `raw` of the count over the run's tenths (at
    /// `ladder_ns`), times their number `segments`: the D of a run
    /// predicted to differ from its twin as much as one of its tenths
    /// from another (see the module documentation).
    Predicted {
        segments: usize,
        ladder_ns: i64,
        raw: f64,
    },
    /// Blocks, but no ladder step with samples on both sides of it: D = 1.
    NoStep { blocks: usize },
    /// Blocks, fewer than [`MIN_BLOCKS`] with samples.
    TooFewBlocks { blocks: usize },
}

impl Spread {
    /// The dispersion D (≥ 1); `None` with too few blocks.
    pub fn dispersion(&self) -> Option<f64> {
        match *self {
            Spread::Independent | Spread::NoStep { .. } => Some(1.0),
            Spread::Measured { raw, blocks, .. } => Some(upper_bound(raw, blocks).max(1.0)),
            Spread::Predicted { raw, segments, .. } => Some((raw * segments as f64).max(1.0)),
            Spread::TooFewBlocks { .. } => None,
        }
    }
}

/// The upper end of a one-sided 95 % interval of a dispersion estimated
/// as `raw` from `blocks` blocks: `raw · (k−1) / χ²(0.05; k−1)`, the
/// chi-square quantile by Wilson and Hilferty's cube (within 1 % from 5
/// degrees of freedom). An estimate from few blocks may be low by a
/// factor of two, and a D too low is a false alarm.
pub fn upper_bound(raw: f64, blocks: usize) -> f64 {
    let df = blocks.saturating_sub(1).max(1) as f64;
    let z = normal_quantile(0.05);
    let a = 2.0 / (9.0 * df);
    let quantile = df * (1.0 - a + z * a.sqrt()).powi(3);
    raw * df / quantile.max(f64::MIN_POSITIVE)
}

/// The dispersion of the count of samples at or above the ladder step
/// whose share of the samples is nearest to `tail` (`1 − p`), over the
/// blocks of `series` (see the module documentation). Late samples
/// cluster at every time scale up to the run's length (a host's busy
/// second, a neighbour's build): the count's dispersion is measured on
/// the blocks, then on blocks merged 2, 4, 8 ... at a time while at least
/// [`MIN_BLOCKS`] remain, and the scale whose upper bound is the largest
/// is the one used (the variance-time method of batch means: the
/// dispersion of the run's total is that of the longest correlation);
/// then the prediction from the run's tenths ([`Spread::Predicted`]) is
/// used when it is larger.
pub fn spread(series: Option<&BlockSeries>, tail: f64) -> Spread {
    let Some(series) = series else {
        return Spread::Independent;
    };
    let mut best: Option<Spread> = None;
    let mut group = 1;
    loop {
        let merged: Vec<_> = series
            .coarsened(group)
            .into_iter()
            .filter(|b| b.cycles > 0)
            .collect();
        let here = spread_of(&merged, tail);
        let larger = match (&best, &here) {
            (None, _) => true,
            (Some(b), Spread::Measured { .. }) => {
                here.dispersion().unwrap_or(0.0) > b.dispersion().unwrap_or(0.0)
            }
            _ => false,
        };
        if larger {
            best = Some(here);
        }
        if merged.len() / 2 < MIN_BLOCKS {
            break;
        }
        group *= 2;
    }
    let best = best.unwrap_or(Spread::TooFewBlocks { blocks: 0 });
    let Some(within) = best.dispersion() else {
        return best;
    };
    let filled: Vec<_> = series
        .blocks()
        .iter()
        .filter(|b| b.cycles > 0)
        .copied()
        .collect();
    let tenths = tenths(&filled);
    match spread_of(&tenths, tail) {
        Spread::Measured { raw, ladder_ns, .. } => {
            let predicted = Spread::Predicted {
                segments: tenths.len(),
                ladder_ns,
                raw,
            };
            if predicted.dispersion().unwrap_or(0.0) > within {
                predicted
            } else {
                best
            }
        }
        _ => best,
    }
}

/// `blocks` in [`floor::SEGMENTS`] consecutive groups, merged, as the
/// floor cuts a run ([`floor::split`]); none with fewer blocks.
fn tenths(blocks: &[rtlat_stats::blocks::Block]) -> Vec<rtlat_stats::blocks::Block> {
    if blocks.len() < floor::SEGMENTS {
        return Vec::new();
    }
    floor::split(blocks, floor::SEGMENTS)
        .map(|group| {
            let mut merged = group[0];
            for other in &group[1..] {
                merged.absorb(other);
            }
            merged
        })
        .collect()
}

/// [`spread`] at one scale: over `blocks` as they are.
fn spread_of(blocks: &[rtlat_stats::blocks::Block], tail: f64) -> Spread {
    let k = blocks.len();
    if k < MIN_BLOCKS {
        return Spread::TooFewBlocks { blocks: k };
    }
    let total: u64 = blocks.iter().map(|b| b.cycles).sum();
    let share = |step: usize| {
        let above: u64 = blocks.iter().map(|b| b.at_or_above[step]).sum();
        above as f64 / total as f64
    };
    let step = (0..LADDER_NS.len())
        .filter(|&j| {
            let s = share(j);
            s > 0.0 && s < 1.0
        })
        .min_by(|&a, &b| {
            let distance = |j: usize| (share(j) / tail).ln().abs();
            distance(a).total_cmp(&distance(b))
        });
    let Some(step) = step else {
        return Spread::NoStep { blocks: k };
    };
    let p = share(step);
    let squares: f64 = blocks
        .iter()
        .map(|b| {
            let expected = b.cycles as f64 * p;
            (b.at_or_above[step] as f64 - expected).powi(2)
        })
        .sum();
    let mean_n = total as f64 / k as f64;
    let raw = squares / (k - 1) as f64 / (mean_n * p * (1.0 - p));
    Spread::Measured {
        blocks: k,
        ladder_ns: LADDER_NS[step],
        raw,
    }
}

/// The family of tests: how many rows are judged, and the `z` each
/// row's interval uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Family {
    /// Rows judged (m).
    pub rows: usize,
    /// Each row's confidence: `1 − (1 − CONFIDENCE)/m`.
    pub per_row: f64,
    /// The two-sided normal quantile of `per_row`.
    pub z: f64,
}

impl Family {
    /// The family of `rows` tests (at least 1 counted).
    pub fn of(rows: usize) -> Family {
        let per_row = 1.0 - (1.0 - CONFIDENCE) / rows.max(1) as f64;
        Family {
            rows,
            per_row,
            z: normal_quantile(1.0 - (1.0 - per_row) / 2.0),
        }
    }
}

/// One side's percentile with its interval, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Side {
    /// The run's percentile.
    pub value: i64,
    /// The interval's ends (they hold `value`).
    pub lower: i64,
    pub upper: i64,
    /// How its own blocks spread the late samples.
    pub spread: Spread,
    /// The D its interval used: the larger of both runs' (see the module
    /// documentation).
    pub dispersion: f64,
    /// `n / D`.
    pub effective_n: f64,
}

/// The change and its interval, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    /// NEW − BASE.
    pub value: f64,
    /// Its interval (an end may be infinite: a projection without an
    /// upper bound).
    pub lower: f64,
    pub upper: f64,
    /// The practical threshold at these values.
    pub tolerance: f64,
}

/// How the maxima are compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Maxima {
    /// Both runs' blocks support a projection: the maximum over
    /// `horizon_s` of each.
    Projected {
        horizon_s: f64,
        base: Estimate,
        new: Estimate,
    },
    /// Information only, for this reason.
    Information(String),
}

impl Maxima {
    /// The projections by `project` of both sides' `blocks` (by
    /// [`default_projection`], or, in tests, one whose answer they know),
    /// or why the maxima are information only.
    pub fn projected_by(base: &Figures, new: &Figures, project: &Projector) -> Maxima {
        let single = "one sample each, not a statistic";
        let (Some(b), Some(n)) = (&base.blocks, &new.blocks) else {
            return Maxima::Information(format!("{single}; no blocks to project from"));
        };
        let level = |series: &BlockSeries, side: &str| match project(series) {
            Projection::Projected(p) => p
                .levels
                .first()
                .map(|l| (l.horizon_s, l.max_ns))
                .ok_or_else(|| format!("{side}: no horizon projected")),
            Projection::Refused(r) => Err(format!("{side} not projected: {}", r.reason)),
        };
        match (level(b, "BASE"), level(n, "NEW")) {
            (Ok((horizon_s, base)), Ok((_, new))) => Maxima::Projected {
                horizon_s,
                base,
                new,
            },
            (Err(e), _) | (_, Err(e)) => Maxima::Information(format!("{single}; {e}")),
        }
    }
}

/// How a side's blocks are projected.
pub type Projector = dyn Fn(&BlockSeries) -> Projection;

/// The projection compare asks of each side: the default request.
pub fn default_projection(series: &BlockSeries) -> Projection {
    projection::project(series, &Request::default())
}

/// The floors of a subject's two runs, at a common window length.
#[derive(Clone, Debug, PartialEq)]
pub enum Floors {
    /// Both runs have one.
    Both { base: Floor, new: Floor },
    /// Not judged: the row's verdict, and why.
    Not(Change, String),
}

impl Floors {
    /// The floors of `base` and `new` from their blocks, at the longer of
    /// their block lengths (the shorter one's blocks merged to it).
    pub fn of(base: &Figures, new: &Figures) -> Floors {
        let (Some(b), Some(n)) = (&base.blocks, &new.blocks) else {
            return Floors::Not(Change::NoData, "no blocks, so no windows".into());
        };
        let window_ns = b.block_ns().max(n.block_ns());
        let (Some(bw), Some(nw)) = (windows(b, window_ns), windows(n, window_ns)) else {
            return Floors::Not(
                Change::NoData,
                format!(
                    "windows of {} and {} cannot be matched",
                    seconds(b.block_ns()),
                    seconds(n.block_ns())
                ),
            );
        };
        match (Floor::of(&bw, window_ns), Floor::of(&nw, window_ns)) {
            (Ok(base), Ok(new)) => Floors::Both { base, new },
            (Err(NoFloor::TooFewWindows { windows, needed }), _)
            | (_, Err(NoFloor::TooFewWindows { windows, needed })) => Floors::Not(
                Change::TooFewBlocks,
                format!(
                    "{windows} windows of {}, and a floor needs {needed}",
                    seconds(window_ns)
                ),
            ),
        }
    }

    /// Each side's floor, ns.
    pub fn values(&self) -> (Option<i64>, Option<i64>) {
        match self {
            Floors::Both { base, new } => (
                Some(base.value_ns().round() as i64),
                Some(new.value_ns().round() as i64),
            ),
            Floors::Not(..) => (None, None),
        }
    }
}

/// The maxima of `series`' windows of `window_ns` (its blocks merged),
/// those without samples left out; `None` when `window_ns` is not a
/// multiple of its blocks.
fn windows(series: &BlockSeries, window_ns: i64) -> Option<Vec<i64>> {
    if window_ns % series.block_ns() != 0 {
        return None;
    }
    let merge = (window_ns / series.block_ns()) as usize;
    Some(
        series
            .coarsened(merge)
            .iter()
            .filter(|b| b.cycles > 0)
            .filter_map(|b| b.max_ns)
            .collect(),
    )
}

/// `0.1 s`.
fn seconds(ns: i64) -> String {
    format!("{} s", ns as f64 / 1e9)
}

/// Runs whose measured CPUs lost more than [`HOST_STALLS_STEAL`] of
/// their time to the hypervisor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostStalls {
    /// Each run's share, when recorded.
    pub base: Option<f64>,
    pub new: Option<f64>,
}

impl HostStalls {
    /// `Some` when either share is above [`HOST_STALLS_STEAL`].
    pub fn of(base: Option<f64>, new: Option<f64>) -> Option<HostStalls> {
        let above = |s: Option<f64>| s.is_some_and(|s| s > HOST_STALLS_STEAL);
        (above(base) || above(new)).then_some(HostStalls { base, new })
    }

    /// Why the rows of samples are not judged.
    pub fn reason(&self) -> String {
        let share = |s: Option<f64>| {
            s.map_or("an unrecorded share".to_string(), |s| {
                format!("{:.2}%", s * 100.0)
            })
        };
        format!(
            "the hypervisor took {} of BASE's measured CPUs' time and {} of NEW's \
             (above {}%, a run's samples hold the host's stalls)",
            share(self.base),
            share(self.new),
            HOST_STALLS_STEAL * 100.0
        )
    }
}

/// What a subject's rows are judged with besides their figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    /// How the maxima are compared.
    pub maxima: Maxima,
    /// The floors.
    pub floors: Floors,
    /// Whether either run's samples hold the host's stalls.
    pub stalls: Option<HostStalls>,
}

impl Context {
    /// The context of `base` and `new` (of runs whose steal shares are
    /// `stalls`' or below the limit), their maxima projected by `project`.
    pub fn of(
        base: &Figures,
        new: &Figures,
        stalls: Option<HostStalls>,
        project: &Projector,
    ) -> Context {
        Context {
            maxima: Maxima::projected_by(base, new, project),
            floors: Floors::of(base, new),
            stalls,
        }
    }
}

/// A row of one subject, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub change: Change,
    /// A percentile row's sides with their intervals.
    pub sides: Option<(Side, Side)>,
    /// The difference and its interval (percentile rows with intervals,
    /// projected maxima and the floor).
    pub difference: Option<Difference>,
    /// The floor's ratio and its interval.
    pub floor: Option<FloorChange>,
    /// Why a row is information only, or not judged.
    pub reason: Option<String>,
}

impl Judgement {
    fn plain(change: Change) -> Judgement {
        Judgement {
            change,
            sides: None,
            difference: None,
            floor: None,
            reason: None,
        }
    }

    fn because(change: Change, reason: String) -> Judgement {
        Judgement {
            reason: Some(reason),
            ..Judgement::plain(change)
        }
    }
}

/// Whether `row` of a subject is judged (and so counted in the family):
/// `Ok` when it is, else the verdict it gets unjudged.
pub fn judgeable(row: Row, base: &Figures, new: &Figures, ctx: &Context) -> Result<(), Change> {
    match row {
        Row::Floor => match &ctx.floors {
            Floors::Both { .. } => Ok(()),
            Floors::Not(change, _) => Err(*change),
        },
        _ if ctx.stalls.is_some() && row != Row::Min => Err(Change::HostStalls),
        Row::Max => match (&ctx.maxima, base.value(row), new.value(row)) {
            (_, None, _) | (_, _, None) => Err(Change::NoData),
            (Maxima::Projected { .. }, ..) => Ok(()),
            (Maxima::Information(_), ..) => Err(Change::Information),
        },
        _ => percentile_judgeable(row, base, new).map(|_| ()),
    }
}

/// Whether percentile `row` of a subject can be judged: `Ok` with its
/// fraction when everything its interval needs is there, else the
/// verdict it gets unjudged.
fn percentile_judgeable(row: Row, base: &Figures, new: &Figures) -> Result<f64, Change> {
    let (Some(_), Some(_)) = (base.value(row), new.value(row)) else {
        return Err(Change::NoData);
    };
    let Some(p) = row.fraction() else {
        return Err(Change::Information);
    };
    if base.samples.min(new.samples) < row.min_samples() {
        return Err(Change::TooFewSamples);
    }
    if base.buckets.is_empty() || new.buckets.is_empty() {
        return Err(Change::NoDistribution);
    }
    for f in [base, new] {
        if spread(f.blocks.as_ref(), 1.0 - p).dispersion().is_none() {
            return Err(Change::TooFewBlocks);
        }
    }
    Ok(p)
}

/// Judges `row` of a subject in `family` by `rule`.
pub fn judge(
    rule: &NoiseRule,
    row: Row,
    base: &Figures,
    new: &Figures,
    family: &Family,
    ctx: &Context,
) -> Judgement {
    if row == Row::Floor {
        return match &ctx.floors {
            Floors::Both { base, new } => judge_floor(rule, base, new, family),
            Floors::Not(change, reason) => Judgement::because(*change, reason.clone()),
        };
    }
    if let Some(stalls) = &ctx.stalls
        && row != Row::Min
        && base.value(row).is_some()
        && new.value(row).is_some()
    {
        return Judgement::because(Change::HostStalls, stalls.reason());
    }
    if row == Row::Max
        && let (Some(_), Some(_)) = (base.value(row), new.value(row))
    {
        return judge_maxima(rule, base, new, &ctx.maxima);
    }
    let p = match percentile_judgeable(row, base, new) {
        Ok(p) => p,
        Err(change) => {
            let mut j = Judgement::plain(change);
            if change == Change::Information {
                j.reason = Some("one sample, not a statistic".into());
            }
            return j;
        }
    };
    // Under "no change" both runs are one process: the calmer run's own
    // blocks understate how bursty it can be, so both use the larger D.
    let dispersion = |f: &Figures| spread(f.blocks.as_ref(), 1.0 - p).dispersion();
    let (Some(db), Some(dn)) = (dispersion(base), dispersion(new)) else {
        return Judgement::plain(Change::TooFewBlocks);
    };
    let d = db.max(dn);
    let (Some(b), Some(n)) = (
        side(base, row, p, family.z, d),
        side(new, row, p, family.z, d),
    ) else {
        return Judgement::plain(Change::NoData);
    };
    let d = (n.value - b.value) as f64;
    let lower = d - ((n.value - n.lower) as f64).hypot((b.upper - b.value) as f64);
    let upper = d + ((n.upper - n.value) as f64).hypot((b.value - b.lower) as f64);
    let tolerance = rule.tolerance(base, new, b.value, n.value);
    let change = decide(d, lower, upper, tolerance);
    Judgement {
        change,
        sides: Some((b, n)),
        difference: Some(Difference {
            value: d,
            lower,
            upper,
            tolerance,
        }),
        floor: None,
        reason: None,
    }
}

/// The floor row: the ratio's interval at the family's per-row
/// confidence, as a difference of BASE's floor; the threshold is
/// `--noise` % of BASE (the windows' maxima are exact: no bucket term).
fn judge_floor(rule: &NoiseRule, base: &Floor, new: &Floor, family: &Family) -> Judgement {
    let c = floor::change(base, new, family.per_row);
    let b = base.value_ns();
    let difference = Difference {
        value: new.value_ns() - b,
        lower: b * (c.lower - 1.0),
        upper: b * (c.upper - 1.0),
        tolerance: rule.percent / 100.0 * b,
    };
    Judgement {
        change: decide(
            difference.value,
            difference.lower,
            difference.upper,
            difference.tolerance,
        ),
        sides: None,
        difference: Some(difference),
        floor: Some(c),
        reason: None,
    }
}

/// Worse when the interval is above 0 and the change above the
/// threshold; better the other way round.
fn decide(d: f64, lower: f64, upper: f64, tolerance: f64) -> Change {
    if lower > 0.0 && d > tolerance {
        Change::Worse
    } else if upper < 0.0 && -d > tolerance {
        Change::Better
    } else {
        Change::Noise
    }
}

fn judge_maxima(rule: &NoiseRule, base: &Figures, new: &Figures, maxima: &Maxima) -> Judgement {
    match maxima {
        Maxima::Information(reason) => Judgement::because(Change::Information, reason.clone()),
        Maxima::Projected {
            base: b, new: n, ..
        } => {
            let d = n.value - b.value;
            // The intervals do not overlap exactly when this one
            // excludes 0.
            let lower = n.lower - b.upper;
            let upper = n.upper - b.lower;
            let tolerance = rule.tolerance(base, new, b.value as i64, n.value as i64);
            Judgement {
                change: decide(d, lower, upper, tolerance),
                sides: None,
                difference: Some(Difference {
                    value: d,
                    lower,
                    upper,
                    tolerance,
                }),
                floor: None,
                reason: None,
            }
        }
    }
}

/// `f`'s percentile `p` (row `row`) with its interval at `z`, its ranks
/// spread by the larger of its own dispersion and `other` (the other
/// run's).
fn side(f: &Figures, row: Row, p: f64, z: f64, other: f64) -> Option<Side> {
    let value = f.value(row)?;
    let spread = spread(f.blocks.as_ref(), 1.0 - p);
    let d = spread.dispersion()?.max(other);
    let n = f.samples as f64;
    let centre = n * p;
    let half = z * (n * p * (1.0 - p) * d).sqrt();
    let min = f.value(Row::Min);
    let max = f.value(Row::Max);
    let lower = rank_bound(&f.buckets, centre - half, Bound::Lower, min, max)?;
    let upper = rank_bound(&f.buckets, centre + half, Bound::Upper, min, max)?;
    Some(Side {
        value,
        lower: lower.min(value),
        upper: upper.max(value),
        spread,
        dispersion: d,
        effective_n: n / d,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Bound {
    Lower,
    Upper,
}

/// A conservative bound of the sample of (fractional) rank `rank`, from
/// 1: the lower bound of the bucket holding rank ⌊rank⌋, or the upper
/// bound of the one holding ⌈rank⌉; ranks before the first sample are
/// the minimum, beyond the buckets the maximum (or the last bucket's
/// upper bound without one).
fn rank_bound(
    buckets: &[(i64, i64, u64)],
    rank: f64,
    bound: Bound,
    min: Option<i64>,
    max: Option<i64>,
) -> Option<i64> {
    let (first, last) = (buckets.first()?, buckets.last()?);
    let rank = match bound {
        Bound::Lower => rank.floor(),
        Bound::Upper => rank.ceil(),
    };
    let found = if rank < 1.0 {
        None
    } else {
        let mut seen = 0u64;
        buckets
            .iter()
            .find(|&&(_, _, count)| {
                seen = seen.saturating_add(count);
                seen as f64 >= rank
            })
            .copied()
    };
    let value = match (found, bound) {
        (Some((from, _, _)), Bound::Lower) => from,
        (Some((_, to, _)), Bound::Upper) => to,
        (None, Bound::Lower) if rank < 1.0 => min.unwrap_or(first.0),
        (None, Bound::Lower) => last.1,
        (None, Bound::Upper) if rank < 1.0 => first.1,
        (None, Bound::Upper) => max.unwrap_or(last.1),
    };
    let value = min.map_or(value, |m| value.max(m));
    Some(max.map_or(value, |m| value.min(m)))
}

/// The width of the bucket holding `value` (or the nearest one);
/// [`DEFAULT_BUCKET_NS`] without buckets.
pub fn bucket_width(buckets: &[(i64, i64, u64)], value: i64) -> i64 {
    buckets
        .iter()
        .min_by_key(|&&(from, to, _)| {
            if (from..to).contains(&value) {
                0
            } else {
                (from - value).abs().min((to - 1 - value).abs()).max(1)
            }
        })
        .map_or(DEFAULT_BUCKET_NS, |&(from, to, _)| to - from)
}

/// The change in percent of BASE; `None` when BASE is 0 and NEW is not.
pub fn percent(base: i64, new: i64) -> Option<f64> {
    if base == 0 {
        (new == 0).then_some(0.0)
    } else {
        Some((new - base) as f64 / base.abs() as f64 * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::figures::ROWS;
    use crate::compare::fixtures::{self, Thread};
    use crate::compare::input::parse;

    /// A one-thread run of `thread`, through a result's JSON (with or
    /// without its blocks) and the reader.
    fn run_of(thread: &Thread, with_blocks: bool) -> Figures {
        let text = fixtures::document(std::slice::from_ref(thread), with_blocks);
        parse("x.json", &text).unwrap().threads[&0].clone()
    }

    fn blocks(late_ns: i64, late_in: impl Fn(usize) -> usize) -> Thread {
        fixtures::thread(late_ns, late_in)
    }

    const RULE: NoiseRule = NoiseRule { percent: 10.0 };

    /// A projection that refuses, as the estimator may for these short
    /// fixtures (the tests of the percentiles do not depend on it).
    fn refuse(_: &BlockSeries) -> Projection {
        Projection::Refused(projection::Refusal {
            id: "too_few_blocks",
            reason: "too few blocks".into(),
            advice: String::new(),
            more_s: None,
        })
    }

    /// The context of two runs without host stalls, maxima refused.
    fn context(base: &Figures, new: &Figures) -> Context {
        Context::of(base, new, None, &refuse)
    }

    fn judged(base: &Figures, new: &Figures, row: Row, rows: usize) -> Judgement {
        judge(
            &RULE,
            row,
            base,
            new,
            &Family::of(rows),
            &context(base, new),
        )
    }

    #[test]
    fn identical_runs_are_never_flagged() {
        // Even, clustered, with and without blocks.
        for late_in in [|_| 10, |i| if i % 10 == 0 { 100 } else { 0 }] {
            for with_blocks in [true, false] {
                let run = run_of(&blocks(40_000, late_in), with_blocks);
                for row in ROWS {
                    for rows in [1, 9] {
                        let j = judged(&run, &run, row, rows);
                        assert!(
                            !matches!(j.change, Change::Worse | Change::Better),
                            "{row:?} {j:?}"
                        );
                        if let Some(d) = j.difference {
                            assert!(d.lower <= 0.0 && d.upper >= 0.0, "{row:?} {d:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_clearly_worse_run_is_flagged() {
        // 1 % of the samples at 40 µs, then at 80 µs: p99.9 doubles.
        let base = run_of(&blocks(40_000, |_| 10), true);
        let new = run_of(&blocks(80_000, |_| 10), true);
        let j = judged(&base, &new, Row::P99_9, 9);
        assert_eq!(j.change, Change::Worse, "{j:?}");
        assert!(j.difference.unwrap().lower > 0.0);
        // The other way round it is better.
        assert_eq!(judged(&new, &base, Row::P99_9, 9).change, Change::Better);
        // The median did not move.
        assert_eq!(judged(&base, &new, Row::P50, 9).change, Change::Noise);
    }

    #[test]
    fn a_change_below_the_threshold_is_noise_however_sure() {
        // p99.9 from 40 to 43 µs, 7.5 %: the interval excludes 0, the
        // change is below 10 %.
        let base = run_of(&blocks(40_000, |_| 10), true);
        let new = run_of(&blocks(43_000, |_| 10), true);
        let j = judged(&base, &new, Row::P99_9, 1);
        assert!(j.difference.unwrap().lower > 0.0, "{j:?}");
        assert_eq!(j.change, Change::Noise);
        let strict = NoiseRule { percent: 1.0 };
        let ctx = context(&base, &new);
        let j = judge(&strict, Row::P99_9, &base, &new, &Family::of(1), &ctx);
        assert_eq!(j.change, Change::Worse);
    }

    #[test]
    fn clustered_late_samples_widen_the_interval() {
        // The same 1 % of late samples: in every block alike, or all in
        // one block of ten.
        let even = blocks(40_000, |_| 10);
        let clustered = blocks(40_000, |i| if i % 10 == 0 { 100 } else { 0 });
        let tail = 1.0 - 0.99;
        let d_even = spread(Some(&run_of(&even, true).blocks.unwrap()), tail);
        let d_clustered = spread(Some(&run_of(&clustered, true).blocks.unwrap()), tail);
        assert_eq!(d_even.dispersion(), Some(1.0), "{d_even:?}");
        let Spread::Measured {
            ladder_ns,
            raw,
            blocks: k,
        } = d_clustered
        else {
            panic!("{d_clustered:?}");
        };
        assert_eq!(ladder_ns, 20_000, "the step whose share is nearest 1 %");
        assert!(raw > 50.0, "{raw}");
        // p99 sits at the edge of the late samples: its interval is wider
        // clustered than independent.
        let width = |f: &Figures| {
            let s = side(f, Row::P99, 0.99, Family::of(1).z, 1.0).unwrap();
            s.upper - s.lower
        };
        let clustered_run = run_of(&clustered, true);
        let as_independent = run_of(&clustered, false);
        assert!(
            width(&clustered_run) > width(&as_independent),
            "{} vs {}",
            width(&clustered_run),
            width(&as_independent)
        );
        let s = side(&clustered_run, Row::P99, 0.99, 1.96, 1.0).unwrap();
        let d = upper_bound(raw, k);
        assert!((s.effective_n - 100_000.0 / d).abs() < 1e-6);
    }

    #[test]
    fn a_slow_change_of_regime_is_measured_at_its_own_scale() {
        // 1 % of late samples on average, but 2 % for 20 blocks, then none
        // for 20: block by block the counts hardly vary within a regime;
        // merged 16 at a time they swing between the regimes.
        let slow = blocks(40_000, |i| if (i / 20) % 2 == 0 { 20 } else { 0 });
        let series = run_of(&slow, true).blocks.unwrap();
        let blocks: Vec<_> = series.blocks().to_vec();
        let finest = spread_of(&blocks, 0.01);
        let chosen = spread(Some(&series), 0.01);
        // A coarser scale, or the tenths' prediction (larger still).
        let k = match chosen {
            Spread::Measured { blocks: k, .. } => k,
            Spread::Predicted { segments, .. } => segments,
            _ => panic!("{chosen:?}"),
        };
        assert!(k < blocks.len(), "a coarser scale is chosen: {chosen:?}");
        assert!(
            chosen.dispersion().unwrap() > finest.dispersion().unwrap(),
            "{chosen:?} against {finest:?}"
        );
    }

    #[test]
    fn a_run_drifting_between_its_tenths_predicts_its_twin_by_them() {
        // 1 % of late samples on average: 0.5 % in the first half, 1.5 %
        // in the second, steady within each. Merged at every scale the
        // count hardly varies but at the halves; its tenths say that a
        // twin may sit anywhere between the two.
        let drifting = blocks(40_000, |i| if i < 50 { 5 } else { 15 });
        let series = run_of(&drifting, true).blocks.unwrap();
        let chosen = spread(Some(&series), 0.01);
        let Spread::Predicted { segments, raw, .. } = chosen else {
            panic!("{chosen:?}");
        };
        assert_eq!(segments, 10);
        // Tenths of 10 000 samples, 50 or 150 late (p = 0.01): the
        // variance of the counts is 2 500 · 10/9, so D_10 = 2 778 / 99.
        assert!((raw - 2_500.0 * 10.0 / 9.0 / 99.0).abs() < 1e-6, "{raw}");
        assert!((chosen.dispersion().unwrap() - 10.0 * raw).abs() < 1e-9);
        // Evenly spread late samples predict nothing beyond D = 1.
        let even = run_of(&blocks(40_000, |_| 10), true).blocks.unwrap();
        assert_eq!(spread(Some(&even), 0.01).dispersion(), Some(1.0));
    }

    #[test]
    fn clustering_turns_a_sure_change_into_noise() {
        // p99 sits among the late samples (2 % of them) in both runs, NEW's
        // 25 % higher. Spread evenly over the blocks, that is a change;
        // in bursts (every 10th block holds them all), the same counts
        // say far less, and the interval takes in 0.
        let late = |at, clustered: bool| {
            blocks(at, move |i| match (clustered, i % 10) {
                (false, _) => 20,
                (true, 0) => 200,
                (true, _) => 0,
            })
        };
        for (clustered, expected) in [(false, Change::Worse), (true, Change::Noise)] {
            let base = run_of(&late(40_000, clustered), true);
            let new = run_of(&late(50_000, clustered), true);
            // One block of late samples more in NEW's count would move
            // nothing: the change is in the values, the interval from
            // the counts.
            let j = judged(&base, &new, Row::P99, 9);
            assert_eq!(j.change, expected, "clustered {clustered}: {j:?}");
        }
    }

    #[test]
    fn a_calm_run_is_judged_with_its_burstier_twins_dispersion() {
        // The same 2 % of late samples: spread evenly in BASE (D = 1), in
        // bursts in NEW, 25 % higher there. Both intervals use NEW's D
        // (the verdict flip this prevents was seen on real runs: the
        // A/A pair in BENCHMARKS.md, "compare: A/A ...").
        let base = run_of(&blocks(40_000, |_| 20), true);
        let new = run_of(&blocks(50_000, |i| if i % 10 == 0 { 200 } else { 0 }), true);
        let j = judged(&base, &new, Row::P99, 9);
        assert_eq!(j.change, Change::Noise, "{j:?}");
        let (b, n) = j.sides.unwrap();
        assert_eq!(b.spread.dispersion(), Some(1.0));
        assert!(n.spread.dispersion().unwrap() > 50.0, "{n:?}");
        assert_eq!(b.dispersion, n.dispersion);
        assert_eq!(b.dispersion, n.spread.dispersion().unwrap());
    }

    #[test]
    fn too_few_blocks_are_not_judged() {
        let few: Vec<Vec<i64>> = blocks(40_000, |_| 10).into_iter().take(9).collect();
        let run = run_of(&few, true);
        assert_eq!(
            spread(run.blocks.as_ref(), 0.01),
            Spread::TooFewBlocks { blocks: 9 }
        );
        assert_eq!(
            judgeable(Row::P99, &run, &run, &context(&run, &run)),
            Err(Change::TooFewBlocks)
        );
        // Without blocks: independent samples assumed.
        let plain = run_of(&few, false);
        assert_eq!(spread(plain.blocks.as_ref(), 0.01), Spread::Independent);
        assert_eq!(
            judgeable(Row::P99, &plain, &plain, &context(&plain, &plain)),
            Ok(())
        );
    }

    #[test]
    fn the_extremes_are_information_only_without_projections() {
        let base = run_of(&blocks(40_000, |_| 10), true);
        let new = run_of(&blocks(900_000, |_| 10), true);
        for row in [Row::Min, Row::Max] {
            let j = judged(&base, &new, row, 9);
            assert_eq!(j.change, Change::Information, "{row:?}");
            assert!(j.reason.unwrap().starts_with("one sample"));
        }
        assert_eq!(
            Maxima::projected_by(&base, &new, &refuse),
            Maxima::Information(
                "one sample each, not a statistic; BASE not projected: too few blocks".into()
            )
        );
        // The real estimator projects both or says why not.
        match Maxima::projected_by(&base, &new, &default_projection) {
            Maxima::Projected { horizon_s, .. } => assert_eq!(horizon_s, 3600.0),
            Maxima::Information(reason) => assert!(reason.contains("projected"), "{reason}"),
        }
        let plain = run_of(&blocks(40_000, |_| 10), false);
        assert_eq!(
            Maxima::projected_by(&plain, &new, &default_projection),
            Maxima::Information(
                "one sample each, not a statistic; no blocks to project from".into()
            )
        );
    }

    #[test]
    fn projected_maxima_are_judged_by_their_intervals() {
        let base = run_of(&blocks(40_000, |_| 10), true);
        let at = |value, lower, upper| Estimate {
            value,
            lower,
            upper,
        };
        let maxima = |b, n| Maxima::Projected {
            horizon_s: 3600.0,
            base: b,
            new: n,
        };
        let family = Family::of(9);
        let cases = [
            // Overlapping intervals: noise, however far the values.
            (
                at(100e3, 80e3, 150e3),
                at(200e3, 140e3, 400e3),
                Change::Noise,
            ),
            (
                at(100e3, 80e3, 150e3),
                at(200e3, 160e3, 400e3),
                Change::Worse,
            ),
            (
                at(100e3, 80e3, f64::INFINITY),
                at(900e3, 800e3, 1e6),
                Change::Noise,
            ),
            (
                at(200e3, 160e3, 400e3),
                at(100e3, 80e3, 150e3),
                Change::Better,
            ),
            // Apart, but within the 10 % threshold.
            (
                at(100e3, 99e3, 101e3),
                at(105e3, 104e3, 106e3),
                Change::Noise,
            ),
        ];
        for (b, n, expected) in cases {
            let ctx = Context {
                maxima: maxima(b, n),
                ..context(&base, &base)
            };
            let j = judge(&RULE, Row::Max, &base, &base, &family, &ctx);
            assert_eq!(j.change, expected, "{b:?} {n:?}");
        }
    }

    #[test]
    fn the_dispersion_is_taken_at_its_upper_bound() {
        // χ²(0.05; 11) = 4.575, χ²(0.05; 99) = 77.05.
        assert!(
            (upper_bound(1.0, 12) - 11.0 / 4.575).abs() < 0.03,
            "{}",
            upper_bound(1.0, 12)
        );
        assert!((upper_bound(1.0, 100) - 99.0 / 77.05).abs() < 0.01);
        assert_eq!(upper_bound(0.0, 12), 0.0);
        let measured = Spread::Measured {
            blocks: 100,
            ladder_ns: 20_000,
            raw: 2.0,
        };
        assert!((measured.dispersion().unwrap() - 2.0 * 99.0 / 77.05).abs() < 0.02);
    }

    #[test]
    fn the_family_widens_each_interval() {
        assert!((Family::of(1).z - 1.959_964).abs() < 1e-4);
        let nine = Family::of(9);
        assert!((nine.per_row - (1.0 - 0.05 / 9.0)).abs() < 1e-12);
        assert!((nine.z - 2.772_9).abs() < 1e-3, "{}", nine.z);
        // No row judged: still a z.
        assert!(Family::of(0).z.is_finite());
    }

    #[test]
    fn ranks_are_read_conservatively() {
        let b = [(1_000, 2_000, 10), (5_000, 6_000, 10), (9_000, 10_000, 5)];
        let at = |rank, bound| rank_bound(&b, rank, bound, Some(1_200), Some(12_000));
        assert_eq!(at(10.5, Bound::Lower), Some(1_200), "within the minimum");
        assert_eq!(at(10.5, Bound::Upper), Some(6_000));
        assert_eq!(at(11.0, Bound::Lower), Some(5_000));
        assert_eq!(at(0.2, Bound::Lower), Some(1_200));
        // Beyond the buckets (a C histogram's overflows): the maximum.
        assert_eq!(at(26.0, Bound::Upper), Some(12_000));
        assert_eq!(rank_bound(&[], 3.0, Bound::Upper, None, None), None);
    }

    #[test]
    fn the_threshold_is_a_percentage_or_two_buckets() {
        let f = |buckets| Figures {
            samples: 1,
            values: [None; ROWS.len()],
            buckets,
            blocks: None,
        };
        let plain = f(vec![]);
        assert_eq!(RULE.tolerance(&plain, &plain, 100_000, 0), 10_000.0);
        assert_eq!(RULE.tolerance(&plain, &plain, 2_000, 0), 2_000.0);
        assert_eq!(RULE.tolerance(&plain, &plain, -100_000, 0), 10_000.0);
        let wide = f(vec![(100_000, 110_000, 1)]);
        assert_eq!(RULE.tolerance(&wide, &plain, 100_000, 100_000), 20_000.0);
    }

    #[test]
    fn bucket_width_at_a_value() {
        let b = [
            (1_000, 2_000, 1),
            (2_000, 3_000, 1),
            (5_013_504, 5_046_272, 1),
        ];
        assert_eq!(bucket_width(&b, 1_500), 1_000);
        assert_eq!(bucket_width(&b, 5_020_000), 32_768);
        // Not in any bucket: the nearest.
        assert_eq!(bucket_width(&b, 5_000_000), 32_768);
        assert_eq!(bucket_width(&[], 5_000_000), DEFAULT_BUCKET_NS);
    }

    #[test]
    fn percent_of_base() {
        assert_eq!(percent(100, 110), Some(10.0));
        assert_eq!(percent(-100, -50), Some(50.0));
        assert_eq!(percent(0, 0), Some(0.0));
        assert_eq!(percent(0, 5), None);
    }

    /// 100 blocks of 1000 samples of 5 to 14 µs; the blocks `stalled`
    /// says hold 20 samples of `late_ns` and up to 6 µs above.
    fn windows_of(late_ns: i64, stalled: impl Fn(usize) -> bool) -> Figures {
        run_of(&blocks(late_ns, |i| if stalled(i) { 20 } else { 0 }), true)
    }

    #[test]
    fn a_disturbance_in_every_window_raises_the_floor() {
        // BASE: 300 µs in one window of ten; NEW: in every window.
        let base = windows_of(300_000, |i| i % 10 == 3);
        let new = windows_of(300_000, |_| true);
        let j = judged(&base, &new, Row::Floor, 12);
        assert_eq!(j.change, Change::Worse, "{j:?}");
        let c = j.floor.unwrap();
        assert!(c.lower > 1.0 && c.ratio > 10.0, "{c:?}");
        // The other way round it is better; against itself, noise.
        assert_eq!(judged(&new, &base, Row::Floor, 12).change, Change::Better);
        assert_eq!(judged(&base, &base, Row::Floor, 12).change, Change::Noise);
    }

    #[test]
    fn a_stall_of_two_seconds_moves_the_tail_not_the_floor() {
        // NEW stalled 2 ms in every window of 2 s of its 10: its p99.9
        // is the stall's; its floor's interval takes it in.
        let base = windows_of(2_000_000, |_| false);
        let new = windows_of(2_000_000, |i| (30..50).contains(&i));
        assert!(new.value(Row::P99_9).unwrap() >= 2_000_000);
        assert!(base.value(Row::P99_9).unwrap() < 20_000);
        let j = judged(&base, &new, Row::Floor, 12);
        assert_eq!(j.change, Change::Noise, "{j:?}");
        assert!(j.floor.unwrap().ratio > 1.5, "{j:?}");
    }

    #[test]
    fn host_stalls_leave_the_rows_of_samples_unjudged() {
        let base = windows_of(2_000_000, |_| false);
        let new = windows_of(2_000_000, |i| (30..50).contains(&i));
        let stalls = HostStalls::of(Some(0.001), Some(0.03));
        assert!(stalls.is_some());
        let ctx = Context::of(&base, &new, stalls, &refuse);
        for row in ROWS {
            let j = judge(&RULE, row, &base, &new, &Family::of(3), &ctx);
            let expected = match row {
                Row::Min => Change::Information,
                Row::Floor => Change::Noise,
                _ => Change::HostStalls,
            };
            assert_eq!(j.change, expected, "{row:?}");
            assert_eq!(
                judgeable(row, &base, &new, &ctx).is_ok(),
                row == Row::Floor,
                "{row:?}"
            );
            if expected == Change::HostStalls {
                let reason = j.reason.unwrap();
                assert!(reason.contains("0.10% of BASE") && reason.contains("3.00% of NEW"));
            }
        }
    }

    #[test]
    fn host_stalls_need_a_share_above_the_limit() {
        assert_eq!(HostStalls::of(None, None), None);
        assert_eq!(HostStalls::of(Some(0.01), Some(0.0)), None);
        assert_eq!(
            HostStalls::of(None, Some(0.0101)),
            Some(HostStalls {
                base: None,
                new: Some(0.0101)
            })
        );
        let text = HostStalls::of(None, Some(0.02)).unwrap().reason();
        assert!(
            text.contains("took an unrecorded share of BASE's"),
            "{text}"
        );
    }

    #[test]
    fn windows_of_different_lengths_are_matched_or_refused() {
        let base = windows_of(300_000, |i| i % 10 == 3);
        // NEW's blocks twice as long: BASE's are merged in pairs to match.
        let mut new = windows_of(300_000, |_| true);
        let merged = new.blocks.as_ref().unwrap().coarsened(2);
        new.blocks = Some(BlockSeries::from_blocks(200_000_000, merged));
        match Floors::of(&base, &new) {
            Floors::Both { base, new } => {
                assert_eq!((base.window_ns, new.window_ns), (200_000_000, 200_000_000));
                assert_eq!((base.windows, new.windows), (50, 50));
            }
            other => panic!("{other:?}"),
        }
        // Lengths that are not multiples of one another.
        let blocks = new.blocks.as_ref().unwrap().blocks().to_vec();
        new.blocks = Some(BlockSeries::from_blocks(150_000_000, blocks));
        assert_eq!(
            Floors::of(&base, &new),
            Floors::Not(
                Change::NoData,
                "windows of 0.1 s and 0.15 s cannot be matched".into()
            )
        );
    }

    #[test]
    fn too_few_windows_have_no_floor() {
        let few: Vec<Vec<i64>> = blocks(40_000, |_| 10).into_iter().take(49).collect();
        let run = run_of(&few, true);
        let j = judged(&run, &run, Row::Floor, 1);
        assert_eq!(j.change, Change::TooFewBlocks);
        assert_eq!(
            j.reason.as_deref(),
            Some("49 windows of 0.1 s, and a floor needs 50")
        );
        let plain = run_of(&few, false);
        assert_eq!(
            judged(&plain, &plain, Row::Floor, 1).reason.as_deref(),
            Some("no blocks, so no windows")
        );
    }
}
