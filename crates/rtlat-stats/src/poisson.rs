//! Exact intervals for a rate from a count of events: `k` events seen in
//! an exposure `T` (a time, a number of blocks) bound the rate of a
//! Poisson process by Garwood's interval,
//! `[χ²((1-c)/2; 2k)/2, χ²((1+c)/2; 2k+2)/2] / T` at confidence `c`,
//! which is never too narrow (it holds its confidence for every rate)
//! and still has an upper end at `k = 0`. Used by `rtlat compare` for
//! counts above a latency.

use crate::special::{gamma_quantile, ln_gamma};

/// Garwood's interval for the rate of a Poisson process that gave `k`
/// events in `exposure` (> 0), at `confidence` in (0, 1); both ends are
/// rates per unit of `exposure` (the lower one 0 at `k = 0`). NaNs for an
/// exposure or a confidence outside those ranges.
pub fn poisson_interval(k: u64, exposure: f64, confidence: f64) -> (f64, f64) {
    let valid = exposure > 0.0 && exposure.is_finite() && confidence > 0.0 && confidence < 1.0;
    if !valid {
        return (f64::NAN, f64::NAN);
    }
    let tail = (1.0 - confidence) / 2.0;
    // χ²(p; 2a)/2 is the unit gamma distribution's quantile of shape a.
    let lower = if k == 0 {
        0.0
    } else {
        gamma_quantile(k as f64, tail)
    };
    let upper = gamma_quantile(k as f64 + 1.0, 1.0 - tail);
    (lower / exposure, upper / exposure)
}

/// `ln P(K = k)` for a Poisson count of mean `mean`.
pub fn ln_probability(k: u64, mean: f64) -> f64 {
    k as f64 * mean.ln() - mean - ln_gamma(k as f64 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garwood_intervals_match_the_tables() {
        // Values from the exact chi-square quantiles (scipy.stats.chi2).
        let cases = [
            (0, 0.0, 3.688_879_454_113_935_4),
            (1, 0.025_317_807_984_289_876, 5.571_643_390_938_898),
            (5, 1.623_486_390_118_420_7, 11.668_332_079_322_67),
            (100, 81.363_991_250_923_14, 121.626_793_792_426_38),
        ];
        for (k, low, high) in cases {
            let (l, h) = poisson_interval(k, 1.0, 0.95);
            assert!(
                (l - low).abs() <= 1e-9 * low.max(1.0),
                "k {k}: {l} vs {low}"
            );
            assert!((h - high).abs() <= 1e-9 * high, "k {k}: {h} vs {high}");
        }
        let (l, h) = poisson_interval(5, 2.0, 0.95);
        assert!((l - 1.623_486_390_118_420_7 / 2.0).abs() < 1e-9 && h > l);
        assert!(poisson_interval(1, 0.0, 0.95).0.is_nan());
        assert!(poisson_interval(1, 1.0, 1.0).1.is_nan());
    }

    #[test]
    fn the_interval_covers_a_rate_as_often_as_it_says() {
        // Exact coverage at mean 3: the sum of P(k) over the k whose
        // interval holds 3 is at least 95 %.
        let mean = 3.0;
        let covered: f64 = (0..60)
            .filter(|&k| {
                let (l, h) = poisson_interval(k, 1.0, 0.95);
                l <= mean && mean <= h
            })
            .map(|k| ln_probability(k, mean).exp())
            .sum();
        assert!((0.95..0.995).contains(&covered), "{covered}");
    }
}
