//! A small deterministic random number generator (SplitMix64) for the
//! goodness-of-fit bootstrap and the tests: the same seed gives the same
//! draws on every machine, so the same data always get the same answer.

/// SplitMix64 (Steele, Lea and Flood, 2014): one 64-bit state, one
/// multiply-xorshift mix per draw; plenty for simulation at this scale.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform draw in the open interval (0, 1): 53 bits, never 0 or 1,
    /// so that its logarithm is always finite.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A draw from the standard exponential distribution.
    pub fn exponential(&mut self) -> f64 {
        -self.uniform().ln()
    }

    /// A draw from the standard normal distribution (Box–Muller, one of
    /// the pair).
    pub fn normal(&mut self) -> f64 {
        let radius = (2.0 * self.exponential()).sqrt();
        radius * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_draws_stay_inside_and_average_one_half() {
        let mut rng = SplitMix64::new(7);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = rng.uniform();
            assert!(u > 0.0 && u < 1.0);
            sum += u;
        }
        assert!((sum / n as f64 - 0.5).abs() < 0.005);
        let again: Vec<u64> = (0..3).map(|_| SplitMix64::new(7).next_u64()).collect();
        assert!(again.iter().all(|&x| x == again[0]));
    }
}
