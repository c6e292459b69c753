//! The generalized extreme value (GEV) distribution: what the maxima of
//! long blocks follow, its maximum-likelihood fit and profile likelihoods.
//!
//! `G(z) = exp(-[1 + ξ (z-μ)/σ]^(-1/ξ))`, the Gumbel distribution
//! `exp(-exp(-(z-μ)/σ))` at ξ = 0. Everything here goes through the
//! reduced variate `h(z) = ln(1 + ξ t)/ξ` with `t = (z-μ)/σ` (`h = t` at
//! ξ = 0), computed with `ln_1p` and a series where `ξ t` is tiny, so
//! that the Gumbel case is the limit of the general one rather than a
//! branch: `-ln G(z) = e^(-h)` and the log-density is
//! `-ln σ - (1+ξ) h - e^(-h)`.
//!
//! The fit works on the maxima standardised to mean 0 and deviation 1
//! (the likelihood's shape then does not depend on the units), by
//! Nelder–Mead over (μ, ln σ, ξ), ξ kept in (-1, [`MAX_FIT_SHAPE`]]:
//! below -1 the likelihood is unbounded (Smith, 1985), far above the
//! projection's own bound nothing is projected anyway.
//!
//! Profiles: a level `z` and its exceedance rate per block
//! `y = -ln G(z)` determine the location, `μ = z - σ (y^(-ξ) - 1)/ξ`, so
//! the likelihood as a function of (y, z, σ, ξ) serves both intervals:
//! fix y and profile z (a horizon's level), or fix z and profile ln y (a
//! deadline's rate), maximising over (ln σ, ξ) each time.
//! Each end of an interval is where the profile's deviance crosses
//! [`PROFILE_CUT_95`]: bracketed by steps aimed with the deviance's
//! local parabola, then found by regula falsi on its square root.
//!
//! Maxima recorded to a coarse resolution (whole µs) are fitted as the
//! intervals they were rounded from ([`Maxima::with_resolution`]).

use crate::optimize::{Tolerance, nelder_mead};

/// The largest shape the fit considers.
pub const MAX_FIT_SHAPE: f64 = 3.0;

/// The χ²₁ quantile at 95 %: a profile interval holds the values whose
/// log-likelihood is within half of it of the maximum.
pub const PROFILE_CUT_95: f64 = 3.841_458_820_694_124;

/// A GEV distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gev {
    /// μ.
    pub location: f64,
    /// σ > 0.
    pub scale: f64,
    /// ξ.
    pub shape: f64,
}

/// `ln(1 + ξ t)/ξ`, `t` at ξ = 0; `None` outside the support.
fn reduced(t: f64, shape: f64) -> Option<f64> {
    let w = shape * t;
    if w.abs() < 1e-8 {
        Some(t * (1.0 - w / 2.0 + w * w / 3.0))
    } else if w > -1.0 {
        Some(w.ln_1p() / shape)
    } else {
        None
    }
}

/// `(y^(-ξ) - 1)/ξ`, `-ln y` at ξ = 0: how many scales above the
/// location the level of exceedance rate `y` lies.
pub fn level_offset(y: f64, shape: f64) -> f64 {
    let v = -shape * y.ln();
    if v.abs() < 1e-8 {
        -y.ln() * (1.0 + v / 2.0 + v * v / 6.0)
    } else {
        v.exp_m1() / shape
    }
}

impl Gev {
    /// `-ln G(z)`: the rate per block of maxima above `z` (0 above a
    /// bounded tail's end, `inf` below a heavy tail's start).
    pub fn exceedance_rate(&self, z: f64) -> f64 {
        match reduced((z - self.location) / self.scale, self.shape) {
            Some(h) => (-h).exp(),
            None if self.shape < 0.0 => 0.0,
            None => f64::INFINITY,
        }
    }

    /// `G(z)`.
    pub fn cdf(&self, z: f64) -> f64 {
        (-self.exceedance_rate(z)).exp()
    }

    /// The level `z` with `-ln G(z) = y`.
    pub fn level(&self, y: f64) -> f64 {
        self.location + self.scale * level_offset(y, self.shape)
    }

    /// The log-likelihood of `data` (`-inf` outside the support or the
    /// parameter space).
    pub fn log_likelihood(&self, data: &[f64]) -> f64 {
        log_likelihood(data, self.location, self.scale, self.shape)
    }
}

fn log_likelihood(data: &[f64], location: f64, scale: f64, shape: f64) -> f64 {
    let grouped: Vec<(f64, f64)> = data.iter().map(|&x| (x, 1.0)).collect();
    grouped_log_likelihood(&grouped, location, scale, shape)
}

/// The log-likelihood of values with counts (`(x, n)`).
fn grouped_log_likelihood(data: &[(f64, f64)], location: f64, scale: f64, shape: f64) -> f64 {
    let valid = scale > 0.0 && scale.is_finite() && shape > -1.0 && shape <= MAX_FIT_SHAPE;
    if !valid {
        return f64::NEG_INFINITY;
    }
    let inverse = 1.0 / scale;
    let (mut sum, mut n) = (0.0, 0.0);
    for &(x, count) in data {
        let Some(h) = reduced((x - location) * inverse, shape) else {
            return f64::NEG_INFINITY;
        };
        sum += count * ((1.0 + shape) * h + (-h).exp());
        n += count;
    }
    -n * scale.ln() - sum
}

/// A fitted GEV.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// In the data's units.
    pub gev: Gev,
    /// The maximised log-likelihood (of the standardised data, or of
    /// their intervals when the resolution is modelled).
    pub log_likelihood: f64,
    /// The same distribution in standardised units.
    standard: Gev,
}

/// Block maxima, standardised, ready to fit and profile.
#[derive(Clone, Debug)]
pub struct Maxima {
    /// Each maximum, standardised, in the order given.
    standard: Vec<f64>,
    /// What the likelihood sums over.
    sample: Sample,
    mean: f64,
    deviation: f64,
}

/// The standardised maxima as the likelihood sees them: distinct values
/// with their counts, and half the resolution they were measured to.
///
/// Maxima recorded in whole µs, a few µs apart, repeat; to a density
/// (which treats each value as exact) a value that repeats is a value of
/// zero width, and the likelihood grows without bound as the
/// distribution's lower end closes in on it (ξ → 3, σ → 0: seen on
/// maxima of 20-29 µs). So when the resolution is not negligible
/// against their spread ([`DISCRETE_ABOVE`]), each value `x` stands for
/// the interval `x ± r/2` it was rounded from, and contributes
/// `ln(G(x + r/2) - G(x - r/2))` (a probability: bounded).
#[derive(Clone, Debug)]
struct Sample {
    values: Vec<(f64, f64)>,
    half_width: f64,
}

/// A resolution above this fraction of the maxima's deviation is
/// modelled (see [`Maxima::with_resolution`]); below it, rounding moves the fit by less
/// than its precision.
pub const DISCRETE_ABOVE: f64 = 1e-3;

impl Sample {
    fn new(standard: &[f64], half_width: f64) -> Sample {
        let mut sorted = standard.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut values: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
        for x in sorted {
            match values.last_mut() {
                Some((last, count)) if *last == x => *count += 1.0,
                _ => values.push((x, 1.0)),
            }
        }
        Sample { values, half_width }
    }

    fn log_likelihood(&self, location: f64, scale: f64, shape: f64) -> f64 {
        if self.half_width == 0.0 {
            return grouped_log_likelihood(&self.values, location, scale, shape);
        }
        let valid = scale > 0.0 && scale.is_finite() && shape > -1.0 && shape <= MAX_FIT_SHAPE;
        if !valid {
            return f64::NEG_INFINITY;
        }
        let g = Gev {
            location,
            scale,
            shape,
        };
        let mut sum = 0.0;
        for &(x, count) in &self.values {
            // G(b) - G(a) = e^(-y_b) (1 - e^-(y_a - y_b)), y = -ln G.
            let above = g.exceedance_rate(x + self.half_width);
            let below = g.exceedance_rate(x - self.half_width);
            sum += count * (-above + (-(-(below - above)).exp_m1()).ln());
        }
        if sum.is_nan() { f64::NEG_INFINITY } else { sum }
    }
}

/// The parameters of a profile's inner search: ln σ and ξ.
type Nuisance = [f64; 2];

/// The profiles' inner searches: a deviance to 1e-6 is plenty against a
/// cut of 3.84.
const INNER: Tolerance = Tolerance {
    x: 1e-3,
    value: 1e-6,
    evaluations: 1_000,
};

/// The bootstrap's refits: the Anderson–Darling statistic of a sample
/// moves by far less than its spread when the parameters move by 1e-4.
const REFIT: Tolerance = Tolerance {
    x: 1e-3,
    value: 1e-5,
    evaluations: 2_000,
};

impl Maxima {
    /// Maxima measured exactly (see [`Maxima::with_resolution`]).
    pub fn new(data: &[f64]) -> Option<Maxima> {
        Maxima::with_resolution(data, 0.0)
    }

    /// Maxima measured to multiples of `resolution` (their units);
    /// `None` for fewer than 3 values, or values that do not vary (no
    /// distribution to fit). When the resolution is above
    /// [`DISCRETE_ABOVE`] of their deviation, each maximum `x` counts as
    /// the interval `x ± resolution/2` it was rounded from: to a density,
    /// a value that repeats is a value of zero width, and the likelihood
    /// of maxima in whole µs grows without bound.
    pub fn with_resolution(data: &[f64], resolution: f64) -> Option<Maxima> {
        let n = data.len() as f64;
        if data.len() < 3 || data.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mean = data.iter().sum::<f64>() / n;
        let deviation = (data.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        if deviation.is_nan() || deviation <= 1e-12 * mean.abs().max(1.0) {
            return None;
        }
        let standard: Vec<f64> = data.iter().map(|x| (x - mean) / deviation).collect();
        let half_width = if resolution > DISCRETE_ABOVE * deviation {
            0.5 * resolution / deviation
        } else {
            0.0
        };
        Some(Maxima {
            sample: Sample::new(&standard, half_width),
            standard,
            mean,
            deviation,
        })
    }

    /// Whether the resolution is modelled (see [`Maxima::with_resolution`]).
    pub fn resolution_modelled(&self) -> bool {
        self.sample.half_width > 0.0
    }

    /// How many maxima.
    pub fn len(&self) -> usize {
        self.standard.len()
    }

    /// Always false (see [`Maxima::new`]).
    pub fn is_empty(&self) -> bool {
        self.standard.is_empty()
    }

    fn to_data(&self, z: f64) -> f64 {
        self.mean + self.deviation * z
    }

    fn to_standard(&self, z: f64) -> f64 {
        (z - self.mean) / self.deviation
    }

    fn unstandardised(&self, g: Gev) -> Gev {
        Gev {
            location: self.to_data(g.location),
            scale: self.deviation * g.scale,
            shape: g.shape,
        }
    }

    /// The maximum-likelihood fit, `None` when the search fails.
    pub fn fit(&self) -> Option<Fit> {
        // The Gumbel distribution with the data's mean and deviation.
        let scale = 6f64.sqrt() / std::f64::consts::PI;
        let start = Gev {
            location: -0.577_215_664_9 * scale,
            scale,
            shape: 0.1,
        };
        let first = self.fit_from(start, 0.1, Tolerance::default())?;
        // Once more from where it stopped: a simplex can collapse early.
        self.fit_from(first.standard, 0.02, Tolerance::default())
    }

    /// The fit started near `guess` (in the data's units), once: the
    /// bootstrap's refits of samples drawn from a fit.
    pub fn fit_near(&self, guess: Gev) -> Option<Fit> {
        let start = Gev {
            location: self.to_standard(guess.location),
            scale: guess.scale / self.deviation,
            shape: guess.shape,
        };
        self.fit_from(start, 0.05, REFIT)
    }

    fn fit_from(&self, start: Gev, step: f64, tolerance: Tolerance) -> Option<Fit> {
        let sample = &self.sample;
        let m = nelder_mead(
            |p: &[f64; 3]| -sample.log_likelihood(p[0], p[1].exp(), p[2]),
            [start.location, start.scale.ln(), start.shape],
            [step; 3],
            tolerance,
        );
        if !m.converged || !m.value.is_finite() {
            return None;
        }
        let standard = Gev {
            location: m.x[0],
            scale: m.x[1].exp(),
            shape: m.x[2],
        };
        Some(Fit {
            gev: self.unstandardised(standard),
            log_likelihood: -m.value,
            standard,
        })
    }

    /// `ln G` and `ln(1 - G)` at each maximum under `gev`, in the order
    /// of the maxima's size, both from the rate `y = -ln G` directly (no
    /// `1 - G` formed near G = 1, where it would round to 0).
    fn probabilities(&self, gev: &Gev) -> Vec<(f64, f64)> {
        let standard = Gev {
            location: self.to_standard(gev.location),
            scale: gev.scale / self.deviation,
            shape: gev.shape,
        };
        let mut logs: Vec<(f64, f64)> = self
            .standard
            .iter()
            .map(|&x| {
                let y = standard.exceedance_rate(x);
                let below = (-y).max(-745.0);
                let above = (-(-y).exp_m1()).max(1e-300).ln();
                (below, above)
            })
            .collect();
        logs.sort_by(|a, b| a.0.total_cmp(&b.0));
        logs
    }

    /// The Anderson–Darling statistic of the maxima against `gev`:
    /// `A² = -n - (1/n) Σ (2i-1) [ln G(x_(i)) + ln(1 - G(x_(n+1-i)))]`.
    pub fn anderson_darling(&self, gev: &Gev) -> f64 {
        let logs = self.probabilities(gev);
        let n = logs.len();
        let sum: f64 = (0..n)
            .map(|i| (2 * i + 1) as f64 * (logs[i].0 + logs[n - 1 - i].1))
            .sum();
        -(n as f64) - sum / n as f64
    }

    /// The profile log-likelihood where the level `z` has rate `y` per
    /// block (standardised units), searched from `start`, and searched
    /// again when it comes out below `doubt` (see below).
    fn profile(&self, y: f64, z: f64, start: Nuisance, doubt: f64) -> (f64, Nuisance) {
        let sample = &self.sample;
        let negative = |p: &Nuisance| {
            let scale = p[0].exp();
            -sample.log_likelihood(z - scale * level_offset(y, p[1]), scale, p[1])
        };
        // A larger scale widens the support at fixed (y, z, ξ) on the side
        // the data lie: double it until the start is inside.
        let mut start = start;
        for _ in 0..80 {
            if negative(&start).is_finite() {
                break;
            }
            start[0] += std::f64::consts::LN_2;
        }
        let m = nelder_mead(negative, start, [0.03, 0.02], INNER);
        if -m.value >= doubt {
            return (-m.value, m.x);
        }
        // Once more, from a wider simplex around where it stopped: a
        // small simplex started far from the maximum can stall on a ridge,
        // and a profile too low puts a point outside the interval that is
        // inside, making the interval too narrow. (One too low inside it
        // cannot: only points near or beyond the cut are searched twice.)
        let again = nelder_mead(negative, m.x, [0.1, 0.05], INNER);
        let best = if again.value < m.value { again } else { m };
        (-best.value, best.x)
    }

    /// The 95 % profile-likelihood interval of the level with rate `y`
    /// per block, in the data's units; an end the profile never reaches
    /// is infinite.
    pub fn level_interval(&self, fit: &Fit, y: f64) -> (f64, f64) {
        let g = fit.standard;
        let at = g.level(y);
        let start = [g.scale.ln(), g.shape];
        let step = 0.25 * g.scale;
        let doubt = fit.log_likelihood - PROFILE_CUT_95 / 4.0;
        let mut eval = |z: f64, from: Nuisance| self.profile(y, z, from, doubt);
        let lower = profile_end(fit.log_likelihood, at, start, -step, 40, &mut eval);
        let upper = profile_end(fit.log_likelihood, at, start, step, 40, &mut eval);
        (self.to_data(lower), self.to_data(upper))
    }

    /// The 95 % profile-likelihood interval of the rate per block of
    /// maxima above `z` (data units): 0 and `inf` where the profile never
    /// reaches the cut.
    pub fn rate_interval(&self, fit: &Fit, z: f64) -> (f64, f64) {
        let g = fit.standard;
        let z = self.to_standard(z);
        // The profile is walked in ln y; a rate of e^-200 per block (or 0,
        // above a bounded tail's end) is none in any horizon.
        let at = g.exceedance_rate(z).ln().clamp(-200.0, 50.0);
        let start = [g.scale.ln(), g.shape];
        let doubt = fit.log_likelihood - PROFILE_CUT_95 / 4.0;
        let mut eval = |ln_y: f64, from: Nuisance| self.profile(ln_y.exp(), z, from, doubt);
        let lower = profile_end(fit.log_likelihood, at, start, -0.5, 9, &mut eval);
        let upper = profile_end(fit.log_likelihood, at, start, 0.5, 8, &mut eval);
        (lower.exp(), upper.exp())
    }
}

/// Where the profile, walked from its maximum at `at` by `step`, doubled
/// at most `doublings` times, drops 3.84/2 below `best`: bracketed, then
/// found by regula falsi (Illinois); `±inf` when it never does.
fn profile_end(
    best: f64,
    at: f64,
    start: Nuisance,
    step: f64,
    doublings: u32,
    eval: &mut impl FnMut(f64, Nuisance) -> (f64, Nuisance),
) -> f64 {
    let cut = PROFILE_CUT_95;
    let deviance = |ll: f64| {
        if ll.is_finite() {
            2.0 * (best - ll)
        } else {
            f64::INFINITY
        }
    };
    let (mut inside, mut inside_d, mut nuisance) = (at, 0.0, start);
    let mut step = step;
    let (mut outside, mut outside_d);
    let mut tries = 0;
    loop {
        let theta = inside + step;
        let (ll, found) = eval(theta, nuisance);
        let d = deviance(ll);
        if d >= cut {
            (outside, outside_d) = (theta, d);
            break;
        }
        (inside, inside_d) = (theta, d.max(0.0));
        if ll.is_finite() {
            nuisance = found;
        }
        tries += 1;
        if tries > doublings {
            return f64::INFINITY.copysign(step);
        }
        // Near its maximum the deviance is close to a parabola: aim a
        // little beyond where that parabola crosses the cut, so that the
        // next try usually brackets the end.
        let farther = if d > 1e-3 {
            ((cut / d).sqrt() * 1.15).clamp(1.25, 8.0)
        } else {
            8.0
        };
        step = (inside - at) * (farther - 1.0);
    }
    // Regula falsi on the deviance's square root, close to linear near
    // the maximum (two or three evaluations find the end), with a
    // bisection whenever a step did not halve the bracket: the profile
    // can be flat for long and then steep (a bounded tail's rate).
    let root = cut.sqrt();
    let mut bisect = !outside_d.is_finite();
    for _ in 0..60 {
        let width = (outside - inside).abs();
        if width <= 1e-5 * (1.0 + (inside - at).abs()) {
            break;
        }
        let a = inside_d.sqrt() - root;
        let b = outside_d.sqrt() - root;
        let mut theta = inside + (outside - inside) * a / (a - b);
        if bisect || !theta.is_finite() || (theta - inside) * (theta - outside) >= 0.0 {
            theta = 0.5 * (inside + outside);
        }
        let (ll, found) = eval(theta, nuisance);
        let d = deviance(ll);
        if (d.sqrt() - root).abs() < 5e-3 {
            return theta;
        }
        if d < cut {
            (inside, inside_d, nuisance) = (theta, d.max(0.0), found);
        } else {
            (outside, outside_d) = (theta, d);
        }
        bisect = !outside_d.is_finite() || (outside - inside).abs() > 0.5 * width;
    }
    0.5 * (inside + outside)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn draw(gev: &Gev, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| gev.level(rng.exponential())).collect()
    }

    #[test]
    fn the_gumbel_case_is_the_limit_of_the_general_one() {
        let data = [-1.0, 0.0, 0.5, 2.0, 7.0];
        let at = |shape| log_likelihood(&data, 0.3, 1.7, shape);
        assert!((at(1e-10) - at(0.0)).abs() < 1e-8);
        assert!((at(-1e-7) - at(0.0)).abs() < 1e-5);
        assert!((at(1e-5) - at(0.0)).abs() < 1e-3);
        for y in [1e-6, 0.1, 3.0] {
            assert!((level_offset(y, 1e-12) + y.ln()).abs() < 1e-9);
            assert!((level_offset(y, 1e-7) - level_offset(y, 0.0)).abs() < 1e-5);
        }
        let g = Gev {
            location: 1.0,
            scale: 2.0,
            shape: 0.2,
        };
        for y in [1e-4, 0.5, 2.0] {
            assert!((g.exceedance_rate(g.level(y)) / y - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn the_fit_recovers_the_parameters_and_the_interval_holds_the_truth() {
        for (shape, seed) in [(0.0, 1), (0.2, 2), (-0.2, 3)] {
            let truth = Gev {
                location: 50_000.0,
                scale: 3_000.0,
                shape,
            };
            let maxima = Maxima::new(&draw(&truth, 400, seed)).unwrap();
            let fit = maxima.fit().unwrap();
            assert!(
                (fit.gev.location / truth.location - 1.0).abs() < 0.02,
                "{fit:?}"
            );
            assert!((fit.gev.scale / truth.scale - 1.0).abs() < 0.15, "{fit:?}");
            assert!((fit.gev.shape - shape).abs() < 0.1, "{fit:?}");
            let y = 0.01;
            let (lower, upper) = maxima.level_interval(&fit, y);
            let point = fit.gev.level(y);
            assert!(lower < point && point < upper, "{lower} {point} {upper}");
            assert!(lower < truth.level(y) && truth.level(y) < upper);
            let (low_rate, high_rate) = maxima.rate_interval(&fit, truth.level(y));
            assert!(low_rate < y && y < high_rate, "{low_rate} {high_rate}");
        }
    }
}
