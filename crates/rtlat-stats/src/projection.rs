//! The worst case over a longer horizon than the run, with its confidence.
//!
//! # Method, and why
//! Block maxima with a generalized extreme value (GEV) fit, by maximum
//! likelihood, intervals by profile likelihood (Coles, 2001, ch. 3):
//!
//! - Block maxima, not peaks over a threshold: rtlat's runs already keep
//!   every block's exact maximum ([`BlockSeries`]), blocks of 1 s or more
//!   are far longer than a burst of late samples (so their maxima are
//!   close to independent, where single samples are not), and there is
//!   no threshold to choose and no declustering to tune: nothing the user
//!   would have to judge. The price is fewer data (one value a block),
//!   paid for by refusing below [`MIN_BLOCKS`].
//! - GEV, not Gumbel alone: the shape ξ says whether the tail is bounded,
//!   light or heavy, and a heavy one ([`MAX_SHAPE`]) must be refused, not
//!   hidden by a model that cannot see it. The Gumbel case is the ξ → 0
//!   limit of the same likelihood ([`crate::gev`]), so it needs no test
//!   of its own.
//! - Profile likelihood, not the delta method or a bootstrap: a long
//!   horizon's level is skewed upwards, and the profile interval is too
//!   (the delta method's symmetric one is too narrow above); it costs a
//!   few dozen small fits where a bootstrap would cost hundreds, and it
//!   may say "no upper end" (`upper` infinite) when the data cannot
//!   exclude ever larger values: that is the honest answer then.
//!
//! A horizon H of `n = H / block` blocks is projected as the median of its
//! maximum, `G(z)^n = 1/2`, i.e. the level of rate `y = ln 2 / n` per block
//! (`y = -ln G(z)`); a deadline `d` as its rate `λ = -ln G(d)` per block,
//! scaled to an hour (the maxima above `d` are close to a Poisson process
//! of that rate). Both are profiled with the location written as
//! `μ = z - σ (y^(-ξ) - 1)/ξ`: fix y and profile z, or fix z and profile y.
//!
//! # The blocks fitted
//! The series' complete blocks, merged `k` at a time to the shortest
//! length of at least [`MIN_BLOCK_S`] that leaves at most
//! [`MAX_FIT_BLOCKS`] blocks (more would cost time and add little: the
//! fit's precision grows as the square root of the count, its bias falls
//! with the block length). A merged block with a lost interval or no
//! samples is left out (its maximum is not known).
//!
//! Maxima measured to a resolution that is not negligible against their
//! spread (whole µs, as C-compatible runs record them) are fitted as the
//! intervals they were rounded from ([`crate::gev`]); the goodness-of-fit
//! bootstrap rounds its simulated samples the same way.
//!
//! # Refusals, in the order they are checked
//! 1. `too_few_blocks`: fewer than [`MIN_BLOCKS`] blocks to fit.
//! 2. `trending`: the maxima still rise (Mann–Kendall, one-sided,
//!    p < [`TREND_P`]).
//! 3. `no_fit`: the maxima do not vary (a constant source), or the
//!    likelihood's search fails.
//! 4. `heavy_tail`: ξ̂ > [`MAX_SHAPE`].
//! 5. `poor_fit`: Anderson–Darling p ≤ [`FIT_P`] (parametric bootstrap of
//!    [`BOOTSTRAP_REFITS`] refits, seeded: the same data, the same p).
//! 6. `horizon_too_far`: every horizon asked is beyond
//!    [`MAX_HORIZON_FACTOR`] times the time the fitted blocks cover (when
//!    only some are, the others are projected and those listed in
//!    [`Projected::beyond`] with the time they need).

use serde::Serialize;

use crate::blocks::BlockSeries;
use crate::checks::{goodness_of_fit, mann_kendall};
use crate::gev::Maxima;

/// The horizons projected when none is asked: 1 hour and 24 hours.
pub const DEFAULT_HORIZONS_S: [f64; 2] = [3_600.0, 86_400.0];

/// The confidence of every interval: 95 %.
pub const CONFIDENCE: f64 = 0.95;

/// The fewest blocks fitted: below about 30, a GEV's three parameters
/// are barely identified and every interval is wide or wrong (Coles,
/// 2001, §3.4).
pub const MIN_BLOCKS: usize = 30;

/// The shortest block fitted, s: much longer than a burst of late
/// samples (a stall, an interrupt storm), so that maxima of neighbouring
/// blocks are close to independent.
pub const MIN_BLOCK_S: f64 = 1.0;

/// At most this many blocks are fitted (see the module documentation).
pub const MAX_FIT_BLOCKS: usize = 300;

/// Maxima that rise with this one-sided Mann–Kendall p-value or less are
/// a trend: 1 % keeps false refusals of a stationary run rare.
pub const TREND_P: f64 = 0.01;

/// The largest shape projected: above 0.5 the maxima's variance is
/// infinite, and a bound over a longer horizon is not credible.
pub const MAX_SHAPE: f64 = 0.5;

/// A fit with this Anderson–Darling p-value or less is refused.
pub const FIT_P: f64 = 0.05;

/// Samples simulated and refitted for the Anderson–Darling p-value: with
/// 19, p ≤ 0.05 means "the data fit worse than every simulated sample",
/// a test of exactly 5 % (a Monte Carlo test is exact when
/// (refits + 1) × level is a whole number); more refits would sharpen p
/// a little and cost most of the projection's time (each is a fit).
pub const BOOTSTRAP_REFITS: usize = 19;

/// The longest horizon projected, as a multiple of the time the fitted
/// blocks cover: 1 000 (a minute's run projects to 16 hours, an hour's to
/// 41 days). Beyond, the extrapolation rests on the model alone.
pub const MAX_HORIZON_FACTOR: f64 = 1_000.0;

/// The bootstrap's seed (fixed: the same data always get the same answer).
const BOOTSTRAP_SEED: u64 = 0x7274_6c61_7420_6576;

/// What to project.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Horizons, s, shortest first.
    pub horizons_s: Vec<f64>,
    /// `--deadline`: the latency whose exceedance rate is estimated.
    pub deadline_ns: Option<i64>,
}

impl Default for Request {
    fn default() -> Request {
        Request {
            horizons_s: DEFAULT_HORIZONS_S.to_vec(),
            deadline_ns: None,
        }
    }
}

/// A projection, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Projection {
    /// The data support a projection.
    Projected(Projected),
    /// They do not.
    Refused(Refusal),
}

/// A value with its interval at [`CONFIDENCE`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// The interval's lower end.
    pub lower: f64,
    /// Its upper end (may be `f64::INFINITY`: serialized as `null`).
    #[serde(serialize_with = "finite_or_null")]
    pub upper: f64,
}

fn finite_or_null<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f64(*x)
    } else {
        s.serialize_none()
    }
}

/// The maximum over one horizon.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HorizonLevel {
    /// The horizon, s.
    pub horizon_s: f64,
    /// The level the maximum over the horizon stays below with
    /// probability 1/2 (its median), ns, with its interval.
    pub max_ns: Estimate,
    /// Where the maximum over the horizon falls with probability 95 %
    /// under the fitted distribution (its 2.5 % and 97.5 % quantiles, ns;
    /// the fit's own uncertainty is in `max_ns`'s interval, not here).
    pub range_ns: (f64, f64),
}

/// A horizon asked that the run is too short to project.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Beyond {
    /// The horizon, s.
    pub horizon_s: f64,
    /// How much longer the run must be for it, s.
    pub more_s: f64,
}

/// How often a deadline is exceeded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exceedance {
    /// The deadline, ns.
    pub deadline_ns: i64,
    /// Exceedances per hour (blocks whose maximum is above it), with its
    /// interval.
    pub per_hour: Estimate,
    /// Mean time between exceedances, s (1 / rate); `None` at rate 0.
    pub mean_time_between_s: Option<f64>,
    /// Blocks of the run whose maximum was above it.
    pub observed_blocks: u64,
}

/// A projection the data support.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Projected {
    /// How it was made, in a sentence (method, fit, interval).
    pub method: String,
    /// Length of the blocks whose maxima were fitted, s.
    pub block_s: f64,
    /// How many blocks were fitted.
    pub blocks: usize,
    /// Blocks of that length left out: a lost interval or no samples.
    pub blocks_left_out: usize,
    /// The fit's Anderson–Darling p-value (parametric bootstrap).
    pub fit_p: f64,
    /// The Mann–Kendall p-value for rising maxima.
    pub trend_p: f64,
    /// The fitted distribution's location, scale (ns) and shape.
    pub location_ns: f64,
    pub scale_ns: f64,
    pub shape: f64,
    /// The maximum over each horizon asked that the run can project.
    pub levels: Vec<HorizonLevel>,
    /// The horizons asked beyond [`MAX_HORIZON_FACTOR`] times the time
    /// the fitted blocks cover, longest last.
    pub beyond: Vec<Beyond>,
    /// The deadline's exceedance rate, when one was given.
    pub deadline: Option<Exceedance>,
}

/// Why the data support no projection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    /// Stable identifier: `too_few_blocks`, `trending`, `heavy_tail`,
    /// `poor_fit`, `no_fit`, `horizon_too_far`.
    pub id: &'static str,
    /// Why, in a sentence.
    pub reason: String,
    /// What to do, in a sentence.
    pub advice: String,
    /// How much longer the run must be, s, when more time would help.
    pub more_s: Option<f64>,
}

/// The block maxima a projection fits: see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct FitBlocks {
    /// Their length, s.
    pub block_s: f64,
    /// Their maxima, ns, in the order of the run.
    pub maxima_ns: Vec<i64>,
    /// Blocks of that length left out (a lost interval, no samples).
    pub left_out: usize,
}

impl FitBlocks {
    /// The blocks of `series` to fit.
    pub fn of(series: &BlockSeries) -> FitBlocks {
        let block_ns = series.block_ns().max(1);
        let shortest = (MIN_BLOCK_S * 1e9 / block_ns as f64).ceil() as usize;
        let fewest = series.blocks().len().div_ceil(MAX_FIT_BLOCKS);
        let k = shortest.max(fewest).max(1);
        let mut fit = FitBlocks {
            block_s: block_ns as f64 * k as f64 / 1e9,
            maxima_ns: Vec::new(),
            left_out: 0,
        };
        for block in series.coarsened(k) {
            match block.max_ns {
                Some(max_ns) if block.lost == 0 && block.cycles > 0 => fit.maxima_ns.push(max_ns),
                _ => fit.left_out += 1,
            }
        }
        fit
    }

    /// The time the fitted blocks cover, s.
    pub fn covered_s(&self) -> f64 {
        self.maxima_ns.len() as f64 * self.block_s
    }
}

/// Projects `series` (block maxima) as `request` asks. Horizons that are
/// not positive and finite are left out.
pub fn project(series: &BlockSeries, request: &Request) -> Projection {
    let blocks = FitBlocks::of(series);
    let n = blocks.maxima_ns.len();
    let covered_s = blocks.covered_s();
    let left_out = match blocks.left_out {
        0 => String::new(),
        m => format!(" ({m} more left out: a lost interval or no samples)"),
    };
    if n < MIN_BLOCKS {
        let more_s = (MIN_BLOCKS - n) as f64 * blocks.block_s;
        return refuse(
            "too_few_blocks",
            format!(
                "only {n} blocks of {} to fit{left_out}, and a projection needs at least {MIN_BLOCKS}",
                seconds(blocks.block_s)
            ),
            format!("run at least {} more", seconds(more_s)),
            Some(more_s),
        );
    }
    let maxima: Vec<f64> = blocks.maxima_ns.iter().map(|&x| x as f64).collect();
    let (_, trend_p) = mann_kendall(&maxima);
    if trend_p < TREND_P {
        return refuse(
            "trending",
            format!(
                "the maxima are still growing (Mann–Kendall p {}): the run has not yet seen its tail, or the system drifts",
                p_value(trend_p)
            ),
            format!(
                "run at least {} more, and look for what changes during the run (load, thermal, memory)",
                seconds(covered_s)
            ),
            Some(covered_s),
        );
    }
    // The maxima's resolution: 1 ns, or 1 µs for a run that records µs.
    let resolution = blocks
        .maxima_ns
        .iter()
        .fold(0, |g, &x| gcd(g, x.unsigned_abs()));
    let Some(sample) = Maxima::with_resolution(&maxima, resolution as f64) else {
        return refuse(
            "no_fit",
            format!(
                "all {n} block maxima are {}: a constant source has no tail to fit",
                micros(maxima[0])
            ),
            "nothing to project: the maximum was the same in every block".into(),
            None,
        );
    };
    let Some(fit) = sample.fit() else {
        return refuse(
            "no_fit",
            format!("the maximum-likelihood fit to {n} block maxima did not converge"),
            "report the run's maximum as observed; a longer run may fit".into(),
            None,
        );
    };
    let shape = fit.gev.shape;
    if shape > MAX_SHAPE {
        return refuse(
            "heavy_tail",
            format!(
                "the tail is heavy (shape {shape:.2}, above {MAX_SHAPE}): host stalls dominate, and no bound over a longer horizon is credible"
            ),
            "find the stalls (rtlat audit, --explain; on a VM, the host) and isolate the measured CPUs, then measure again".into(),
            None,
        );
    }
    let fit_p = goodness_of_fit(
        &sample,
        &fit,
        resolution as f64,
        BOOTSTRAP_REFITS,
        BOOTSTRAP_SEED ^ n as u64,
    );
    if fit_p <= FIT_P {
        return refuse(
            "poor_fit",
            format!(
                "the block maxima do not follow an extreme-value distribution (Anderson–Darling p {}): several causes of latency mix",
                p_value(fit_p)
            ),
            format!(
                "run at least {} more (longer blocks fit better), or read the maximum as observed",
                seconds(covered_s)
            ),
            Some(covered_s),
        );
    }
    let horizons: Vec<f64> = request
        .horizons_s
        .iter()
        .copied()
        .filter(|h| *h > 0.0 && h.is_finite())
        .collect();
    let (horizons, beyond): (Vec<f64>, Vec<f64>) = horizons
        .iter()
        .partition(|&&h| h <= MAX_HORIZON_FACTOR * covered_s);
    // Refused only when no horizon asked is within reach; otherwise the
    // others are listed with the time they need.
    if horizons.is_empty()
        && let Some(&too_far) = beyond.iter().min_by(|a, b| a.total_cmp(b))
    {
        let more_s = too_far / MAX_HORIZON_FACTOR - covered_s;
        return refuse(
            "horizon_too_far",
            format!(
                "{} is more than {MAX_HORIZON_FACTOR} times the {} the fitted blocks cover",
                seconds(too_far),
                seconds(covered_s)
            ),
            format!(
                "run at least {} more, or ask a shorter horizon",
                seconds(more_s)
            ),
            Some(more_s),
        );
    }
    let mut beyond: Vec<Beyond> = beyond
        .into_iter()
        .map(|horizon_s| Beyond {
            horizon_s,
            more_s: horizon_s / MAX_HORIZON_FACTOR - covered_s,
        })
        .collect();
    beyond.sort_by(|a, b| a.horizon_s.total_cmp(&b.horizon_s));
    let levels = horizons
        .iter()
        .map(|&horizon_s| {
            // The level whose rate per block makes the maximum over the
            // horizon stay below it with probability `p`.
            let rate_for = |p: f64| -p.ln() * blocks.block_s / horizon_s;
            let rate = rate_for(0.5);
            let (lower, upper) = sample.level_interval(&fit, rate);
            HorizonLevel {
                horizon_s,
                max_ns: Estimate {
                    value: fit.gev.level(rate),
                    lower,
                    upper,
                },
                range_ns: (
                    fit.gev.level(rate_for(0.025)),
                    fit.gev.level(rate_for(0.975)),
                ),
            }
        })
        .collect();
    let deadline = request.deadline_ns.map(|deadline_ns| {
        let d = deadline_ns as f64;
        let per_hour = 3_600.0 / blocks.block_s;
        let rate = fit.gev.exceedance_rate(d) * per_hour;
        let (lower, upper) = sample.rate_interval(&fit, d);
        // Rates below e^-200 per block are walked from there: keep such a
        // (negligible) estimate inside its interval.
        let (lower, upper) = (lower.min(rate / per_hour), upper.max(rate / per_hour));
        Exceedance {
            deadline_ns,
            per_hour: Estimate {
                value: rate,
                lower: lower * per_hour,
                upper: upper * per_hour,
            },
            mean_time_between_s: (rate > 0.0).then(|| 3_600.0 / rate),
            observed_blocks: blocks
                .maxima_ns
                .iter()
                .filter(|&&x| x > deadline_ns)
                .count() as u64,
        }
    });
    let rounded = if sample.resolution_modelled() {
        format!(
            ", each the interval of its {} resolution",
            micros(resolution as f64)
        )
    } else {
        String::new()
    };
    Projection::Projected(Projected {
        method: format!(
            "GEV fit by maximum likelihood to {n} maxima of {} blocks{left_out}{rounded}; 95 % profile-likelihood intervals; Anderson–Darling p {} ({BOOTSTRAP_REFITS} bootstrap refits), Mann–Kendall p {}",
            seconds(blocks.block_s),
            p_value(fit_p),
            p_value(trend_p)
        ),
        block_s: blocks.block_s,
        blocks: n,
        blocks_left_out: blocks.left_out,
        fit_p,
        trend_p,
        location_ns: fit.gev.location,
        scale_ns: fit.gev.scale,
        shape,
        levels,
        beyond,
        deadline,
    })
}

/// How long a run must be for `horizon_s` to be projected at all: enough
/// for [`MIN_BLOCKS`] blocks of [`MIN_BLOCK_S`], and for the horizon to be
/// within [`MAX_HORIZON_FACTOR`] of it.
pub fn needed_duration_s(horizon_s: f64) -> f64 {
    (MIN_BLOCKS as f64 * MIN_BLOCK_S).max(horizon_s / MAX_HORIZON_FACTOR)
}

fn refuse(id: &'static str, reason: String, advice: String, more_s: Option<f64>) -> Projection {
    Projection::Refused(Refusal {
        id,
        reason,
        advice,
        more_s,
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A duration for a sentence: "45 s", "14.1 s", "12 min", "3.5 h".
fn seconds(s: f64) -> String {
    let (value, unit) = if s >= 7_200.0 {
        (s / 3_600.0, "h")
    } else if s >= 120.0 {
        (s / 60.0, "min")
    } else {
        (s, "s")
    };
    if (value - value.round()).abs() < 0.05 || value >= 100.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// A latency for a sentence, in µs.
fn micros(ns: f64) -> String {
    let us = ns / 1_000.0;
    if us.fract() == 0.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.3} µs")
    }
}

/// A p-value's comparison for a sentence: "= 0.41", "= 0.004",
/// "< 0.001".
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else if p < 0.01 {
        format!("= {p:.3}")
    } else {
        format!("= {p:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Block;
    use crate::rng::SplitMix64;

    /// A series of 1 s blocks with these maxima (1 000 samples each).
    fn series(maxima_ns: impl IntoIterator<Item = i64>) -> BlockSeries {
        let blocks = maxima_ns
            .into_iter()
            .map(|max_ns| Block::new(1_000, Some(max_ns), 0))
            .collect();
        BlockSeries::from_blocks(1_000_000_000, blocks)
    }

    /// `n` maxima of blocks of 1 000 samples of 20 µs plus an exponential
    /// tail of mean 2 µs, each drawn exactly as the largest of its block.
    fn light(n: usize, seed: u64) -> Vec<i64> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let u = rng.uniform().powf(1e-3);
                (20_000.0 - 2_000.0 * (-u).ln_1p()) as i64
            })
            .collect()
    }

    fn refusal(projection: Projection) -> Refusal {
        match projection {
            Projection::Refused(refusal) => refusal,
            Projection::Projected(p) => panic!("projected: {p:?}"),
        }
    }

    fn projected(projection: Projection) -> Projected {
        match projection {
            Projection::Projected(p) => p,
            Projection::Refused(r) => panic!("refused: {r:?}"),
        }
    }

    #[test]
    fn a_light_tail_is_projected_with_intervals_around_each_estimate() {
        let request = Request {
            horizons_s: vec![3_600.0, 86_400.0],
            deadline_ns: Some(40_000),
        };
        let p = projected(project(&series(light(200, 1)), &request));
        assert_eq!((p.blocks, p.block_s, p.blocks_left_out), (200, 1.0, 0));
        assert!(p.shape.abs() < 0.2, "{p:?}");
        assert!(p.fit_p > FIT_P && p.trend_p >= TREND_P);
        assert!(
            p.method
                .starts_with("GEV fit by maximum likelihood to 200 maxima of 1 s blocks")
        );
        let (hour, day) = (&p.levels[0].max_ns, &p.levels[1].max_ns);
        for e in [hour, day] {
            assert!(e.lower < e.value && e.value < e.upper, "{e:?}");
        }
        assert!(hour.value < day.value);
        // The truth: 20 µs + 2 µs × ln(n / ln 2) for n samples.
        let truth = |samples: f64| 20_000.0 + 2_000.0 * (samples / 2f64.ln()).ln();
        assert!(
            hour.lower < truth(3.6e6) && truth(3.6e6) < hour.upper,
            "{hour:?}"
        );
        let d = p.deadline.clone().expect("the deadline");
        assert!(d.per_hour.lower < d.per_hour.value && d.per_hour.value < d.per_hour.upper);
        assert!((d.mean_time_between_s.unwrap() - 3_600.0 / d.per_hour.value).abs() < 1e-6);
        // True rate: 1000 samples/s above 40 µs at e^-10 each = 163 per hour.
        let true_rate = 3_600_000.0 * (-10f64).exp();
        assert!(
            d.per_hour.lower < true_rate && true_rate < d.per_hour.upper,
            "{d:?}"
        );
        // Same data, same answer (the bootstrap is seeded).
        assert_eq!(
            project(&series(light(200, 1)), &request),
            Projection::Projected(p)
        );
    }

    #[test]
    fn maxima_in_whole_microseconds_are_fitted_as_intervals_and_say_so() {
        let in_us = light(200, 9).into_iter().map(|m| (m + 500) / 1_000 * 1_000);
        let p = projected(project(&series(in_us), &Request::default()));
        assert!(
            p.method
                .contains("each the interval of its 1 µs resolution"),
            "{}",
            p.method
        );
        let p = projected(project(&series(light(200, 9)), &Request::default()));
        assert!(!p.method.contains("resolution"), "{}", p.method);
    }

    #[test]
    fn ten_blocks_are_too_few_and_say_how_much_longer_to_run() {
        let r = refusal(project(&series(light(10, 2)), &Request::default()));
        assert_eq!(r.id, "too_few_blocks");
        assert_eq!(r.more_s, Some(20.0));
        assert!(r.advice.contains("20 s"), "{r:?}");
    }

    #[test]
    fn blocks_shorter_than_a_second_are_merged_and_lost_ones_left_out() {
        // 600 blocks of 250 ms: merged 4 at a time to 150 of 1 s; one
        // lost interval, and a second without samples, leave 148 to fit
        // (one empty block among full ones hides no maximum).
        let mut blocks: Vec<Block> = light(600, 3)
            .into_iter()
            .map(|m| Block::new(250, Some(m), 0))
            .collect();
        blocks[5] = Block::lost_interval();
        blocks[400..404].fill(Block::new(0, None, 0));
        blocks[501] = Block::new(0, None, 0);
        let fit = FitBlocks::of(&BlockSeries::from_blocks(250_000_000, blocks));
        assert_eq!(
            (fit.block_s, fit.maxima_ns.len(), fit.left_out),
            (1.0, 148, 2)
        );
        // 1 000 blocks of 1 s: merged 4 at a time, 250 blocks of 4 s.
        let fit = FitBlocks::of(&series(light(1_000, 4)));
        assert_eq!((fit.block_s, fit.maxima_ns.len()), (4.0, 250));
    }

    #[test]
    fn rising_maxima_are_a_trend() {
        let rising = light(120, 5)
            .into_iter()
            .enumerate()
            .map(|(i, m)| m + 100 * i as i64);
        let r = refusal(project(&series(rising), &Request::default()));
        assert_eq!(r.id, "trending", "{r:?}");
        assert!(r.reason.contains("still growing"));
    }

    #[test]
    fn a_pareto_tail_of_index_below_two_is_heavy() {
        // Maxima of 1 000 samples from a Pareto of index 1.5: ξ = 2/3.
        let mut rng = SplitMix64::new(6);
        let heavy = (0..200).map(|_| {
            let u = rng.uniform().powf(1e-3);
            (10_000.0 * (1.0 - u).powf(-1.0 / 1.5)) as i64
        });
        let r = refusal(project(&series(heavy), &Request::default()));
        assert_eq!(r.id, "heavy_tail", "{r:?}");
        assert!(r.reason.contains("host stalls dominate"));
    }

    #[test]
    fn two_kinds_of_maxima_fit_poorly() {
        // Half the blocks near 20 µs, half near 60 µs, interleaved.
        let mixed = light(200, 7)
            .into_iter()
            .enumerate()
            .map(|(i, m)| if i % 2 == 0 { m } else { m + 40_000 });
        let r = refusal(project(&series(mixed), &Request::default()));
        assert_eq!(r.id, "poor_fit", "{r:?}");
    }

    #[test]
    fn a_constant_source_has_nothing_to_fit() {
        let r = refusal(project(&series(vec![42_000; 100]), &Request::default()));
        assert_eq!(r.id, "no_fit");
        assert!(r.reason.contains("42 µs"), "{r:?}");
    }

    #[test]
    fn an_absurd_horizon_is_too_far_and_says_how_much_longer_to_run() {
        let absurd = Request {
            horizons_s: vec![1e9],
            deadline_ns: None,
        };
        let r = refusal(project(&series(light(100, 8)), &absurd));
        assert_eq!(r.id, "horizon_too_far");
        assert_eq!(r.more_s, Some(1e9 / MAX_HORIZON_FACTOR - 100.0));
        // Beside a horizon within reach, it is listed, not a refusal.
        let both = Request {
            horizons_s: vec![3_600.0, 1e9],
            deadline_ns: None,
        };
        let Projection::Projected(p) = project(&series(light(100, 8)), &both) else {
            panic!("the 1 h horizon is within reach");
        };
        assert_eq!(p.levels.len(), 1);
        assert_eq!(p.levels[0].horizon_s, 3_600.0);
        assert_eq!(
            p.beyond,
            vec![Beyond {
                horizon_s: 1e9,
                more_s: 1e9 / MAX_HORIZON_FACTOR - 100.0
            }]
        );
        // The maximum's 95 % range is around its median.
        let level = &p.levels[0];
        assert!(level.range_ns.0 < level.max_ns.value && level.max_ns.value < level.range_ns.1);
        assert_eq!(needed_duration_s(1e9), 1e6);
        assert_eq!(needed_duration_s(60.0), 30.0);
    }

    #[test]
    fn an_unreachable_upper_end_is_written_as_null() {
        let e = Estimate {
            value: 1.0,
            lower: 0.5,
            upper: f64::INFINITY,
        };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"value":1.0,"lower":0.5,"upper":null}"#);
    }
}

#[cfg(test)]
mod robustness {
    use super::*;
    use crate::blocks::Block;
    use crate::rng::SplitMix64;

    /// Odd data never panic, and every projection's intervals hold their
    /// estimates: ties at a µs resolution, a tiny spread on a large value,
    /// a two-valued source, deadlines far below and above the data, a
    /// horizon shorter than a block.
    #[test]
    fn odd_data_give_ordered_intervals_or_a_refusal() {
        let mut rng = SplitMix64::new(11);
        let cases: Vec<Vec<i64>> = vec![
            (0..100)
                .map(|_| 20_000 + 1_000 * (rng.exponential() * 2.0) as i64)
                .collect(),
            (0..100)
                .map(|_| 1_000_000_000 + (rng.uniform() * 3.0) as i64)
                .collect(),
            (0..100).map(|i| 10_000 + 1_000 * (i % 2)).collect(),
            (0..300)
                .map(|_| (5_000.0 * rng.exponential().powf(-0.3)) as i64)
                .collect(),
            (0..50)
                .map(|_| (30_000.0 + 100.0 * rng.normal()) as i64)
                .collect(),
        ];
        let mut projected = Vec::new();
        for (i, maxima) in cases.into_iter().enumerate() {
            let blocks = maxima
                .iter()
                .map(|&m| Block::new(100, Some(m), 0))
                .collect();
            let series = BlockSeries::from_blocks(1_000_000_000, blocks);
            for deadline_ns in [1, 25_000, i64::MAX / 4] {
                let request = Request {
                    horizons_s: vec![0.5, 600.0, 36_000.0, f64::NAN, -1.0],
                    deadline_ns: Some(deadline_ns),
                };
                let p = match project(&series, &request) {
                    Projection::Projected(p) => p,
                    Projection::Refused(r) => {
                        eprintln!("case {i}: {}", r.id);
                        continue;
                    }
                };
                projected.push(i);
                assert_eq!(p.levels.len(), 3, "case {i}: the bad horizons are left out");
                for level in &p.levels {
                    let e = level.max_ns;
                    assert!(e.lower <= e.value && e.value <= e.upper, "case {i}: {e:?}");
                    assert!(
                        e.lower.is_finite() && e.value.is_finite(),
                        "case {i}: {e:?}"
                    );
                }
                let rate = p.deadline.unwrap().per_hour;
                assert!(
                    rate.lower >= 0.0 && rate.lower <= rate.value && rate.value <= rate.upper,
                    "case {i}, deadline {deadline_ns}: {rate:?}"
                );
                // One likelihood, two questions: a deadline inside a
                // horizon's level interval has that horizon's rate inside
                // its own interval.
                for level in &p.levels {
                    let (e, d) = (level.max_ns, deadline_ns as f64);
                    let horizon_rate = 2f64.ln() / level.horizon_s * 3_600.0;
                    if e.lower * 1.01 < d && d < e.upper * 0.99 {
                        assert!(
                            rate.lower <= horizon_rate && horizon_rate <= rate.upper,
                            "case {i}, deadline {deadline_ns}: {e:?}, {rate:?}"
                        );
                    }
                }
            }
        }
        eprintln!("projected: {projected:?}");
        assert!(
            projected.len() >= 9,
            "most cases are projected: {projected:?}"
        );
    }
}
