//! What block maxima must pass before they are projected: no trend, and
//! a good fit.
//!
//! - Trend: the Mann–Kendall test (one-sided, rising), on the maxima in
//!   the order of the run. It uses only the signs of differences, so a
//!   heavy tail or a few stalls do not fake a trend, and ties (maxima
//!   measured in µs repeat) are allowed for in its variance.
//! - Fit: the Anderson–Darling statistic, which weights the tails, with
//!   its p-value from a parametric bootstrap: the parameters were
//!   estimated from the same data, so the textbook tables (for a known
//!   distribution) would be far too lenient. Each simulated sample is
//!   rounded to the data's own resolution and fitted again.

use crate::gev::{Fit, Maxima};
use crate::rng::SplitMix64;
use crate::special::normal_cdf;

/// The Mann–Kendall test for a rising trend: its statistic
/// `S = Σ_{i<j} sign(x_j - x_i)` and the one-sided p-value (normal
/// approximation with continuity correction and the tie-corrected
/// variance); p = 1 without a pair that differs.
pub fn mann_kendall(data: &[f64]) -> (i64, f64) {
    let n = data.len();
    let mut s = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            s += match data[j].partial_cmp(&data[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted = data.to_vec();
    sorted.sort_by(f64::total_cmp);
    let term = |t: f64| t * (t - 1.0) * (2.0 * t + 5.0);
    let mut ties = 0.0;
    let mut run = 1.0;
    for i in 1..=n {
        if i < n && sorted[i] == sorted[i - 1] {
            run += 1.0;
        } else {
            ties += term(run);
            run = 1.0;
        }
    }
    let variance = (term(n as f64) - ties) / 18.0;
    if variance <= 0.0 {
        return (s, 1.0);
    }
    let corrected = s as f64 - (s.signum() as f64);
    (s, normal_cdf(-corrected / variance.sqrt()))
}

/// The Anderson–Darling p-value of `fit` to `maxima` (`values`, in
/// ns, in the same order) from `refits` samples simulated from the fit,
/// each rounded to multiples of `resolution` ns and fitted again; seeded,
/// so the same data always get the same p. p = (1 + samples whose
/// statistic is at least the data's) / (1 + refits); samples whose refit
/// fails are not counted.
pub fn goodness_of_fit(
    maxima: &Maxima,
    fit: &Fit,
    resolution: f64,
    refits: usize,
    seed: u64,
) -> f64 {
    let observed = maxima.anderson_darling(&fit.gev);
    let mut rng = SplitMix64::new(seed);
    let mut sample = vec![0.0; maxima.len()];
    let (mut at_least, mut done) = (0usize, 0usize);
    for _ in 0..refits {
        for x in sample.iter_mut() {
            let z = fit.gev.level(rng.exponential());
            *x = if resolution > 1.0 {
                (z / resolution).round() * resolution
            } else {
                z
            };
        }
        let Some(simulated) = Maxima::with_resolution(&sample, resolution) else {
            continue;
        };
        let Some(refit) = simulated.fit_near(fit.gev) else {
            continue;
        };
        done += 1;
        if simulated.anderson_darling(&refit.gev) >= observed {
            at_least += 1;
        }
    }
    (1 + at_least) as f64 / (1 + done) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_kendall_sees_a_rise_and_not_noise_or_ties() {
        let rising: Vec<f64> = (0..50).map(|i| i as f64 + (i % 7) as f64 * 3.0).collect();
        assert!(mann_kendall(&rising).1 < 1e-6);
        let falling: Vec<f64> = rising.iter().rev().copied().collect();
        assert!(mann_kendall(&falling).1 > 0.99);
        let flat = vec![5.0; 40];
        assert_eq!(mann_kendall(&flat), (0, 1.0));
        // A textbook case: S = 10 - 0 for 1..5, variance 5·4·15/18.
        let (s, p) = mann_kendall(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(s, 10);
        let z = 9.0 / (5.0f64 * 4.0 * 15.0 / 18.0).sqrt();
        assert!((p - normal_cdf(-z)).abs() < 1e-12);
        let mut rng = SplitMix64::new(3);
        let noise: Vec<f64> = (0..200)
            .map(|_| (rng.exponential() * 4.0).round())
            .collect();
        assert!(mann_kendall(&noise).1 > 0.01);
    }
}
