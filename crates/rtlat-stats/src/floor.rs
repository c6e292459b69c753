//! The floor of a run: the latency that (almost) every window of the run
//! reaches, and whether two runs' floors differ by more than a run's own
//! drift.
//!
//! # What it is for
//!
//! A disturbance that recurs faster than the windows (a thread of higher
//! priority that runs every 50 ms, a timer, a polling driver) is in every
//! window of 100 ms; a stall of the host is in some windows and not in
//! others. The maximum of each window says which: the first raises the
//! maxima of nearly all windows, the second a few. The **floor** is the
//! level nearly every window's maximum reaches:
//!
//! 1. the run's windows (its blocks, `window_ns` long) are cut into
//!    [`SEGMENTS`] consecutive segments, as equal as the count allows (a
//!    10 s run at 100 ms: ten seconds of ten windows);
//! 2. each segment's floor is the [`WINDOW_QUANTILE`] quantile (nearest
//!    rank) of its windows' maxima: the smallest of ten;
//! 3. the run's floor is the geometric mean of its segments' floors:
//!    the segments are compared on a log scale, where a change is a
//!    factor (a disturbance adds its length to a floor of any size).
//!
//! A host stall of a few seconds raises two or three segments' floors and
//! leaves the others; a recurring disturbance raises all of them.
//!
//! # When two floors differ
//!
//! Two runs of one machine differ by more than sampling: the machine
//! drifts (a neighbour on the host, the frequency, what else runs).
//! Within a run that drift moves the segments' floors; between two runs
//! it moves the whole run. Measured on the reference VM (BENCHMARKS.md,
//! "compare: A/A false alarms and A/B detections"), the floor of a run moves between identical
//! runs about as much as one segment's floor moves within a run. So the
//! two runs are compared as two segments of one run would be: with
//! `x` the logs of BASE's segment floors and `y` NEW's, `s²` their
//! pooled variance (`k_B + k_N − 2` degrees of freedom),
//!
//! ```text
//! d = mean(y) − mean(x),   interval  d ∓ t · s · √2
//! ```
//!
//! `t` Student's quantile at the confidence asked. This is the interval of
//! the difference of two single segments (a prediction interval), not of
//! two means of ten, which would be √10 times narrower: a test of the
//! means would call the drift between two runs a change (on the
//! reference VM, such a test flagged about one pair of identical runs in
//! five). The ratio NEW/BASE and its interval are `exp(d)` and
//! `exp(d ∓ t·s·√2)`.
//!
//! A segment with a host stall of its whole length makes `s` large: the
//! comparison loses its power in that pair of runs rather than calling
//! the stall a change.

use crate::special::normal_quantile;

/// Segments a run's windows are cut into.
pub const SEGMENTS: usize = 10;

/// The quantile of a segment's window maxima that is its floor.
pub const WINDOW_QUANTILE: f64 = 0.1;

/// Windows each segment needs (so that a run needs `SEGMENTS` times as
/// many): with fewer, a segment's floor is one window's maximum, as
/// erratic as the run's maximum.
pub const MIN_WINDOWS_PER_SEGMENT: usize = 5;

/// A run's floor, from the maxima of its windows.
#[derive(Clone, Debug, PartialEq)]
pub struct Floor {
    /// The windows' length, ns.
    pub window_ns: i64,
    /// Windows with samples.
    pub windows: usize,
    /// Each segment's floor, ns, in the run's order.
    pub segments_ns: Vec<i64>,
}

/// Why a run has no floor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoFloor {
    /// Fewer windows with samples than `needed`.
    TooFewWindows { windows: usize, needed: usize },
}

impl Floor {
    /// The floor of the windows whose maxima are `maxima` (windows
    /// without samples left out), `window_ns` long each.
    pub fn of(maxima: &[i64], window_ns: i64) -> Result<Floor, NoFloor> {
        let needed = SEGMENTS * MIN_WINDOWS_PER_SEGMENT;
        if maxima.len() < needed {
            return Err(NoFloor::TooFewWindows {
                windows: maxima.len(),
                needed,
            });
        }
        let segments_ns = split(maxima, SEGMENTS)
            .map(|segment| {
                let mut sorted = segment.to_vec();
                sorted.sort_unstable();
                let rank = (WINDOW_QUANTILE * sorted.len() as f64).ceil().max(1.0) as usize;
                sorted[rank - 1]
            })
            .collect();
        Ok(Floor {
            window_ns,
            windows: maxima.len(),
            segments_ns,
        })
    }

    /// The logs of the segments' floors (a floor of 0 counts as 1 ns).
    fn logs(&self) -> Vec<f64> {
        self.segments_ns
            .iter()
            .map(|&ns| (ns.max(1) as f64).ln())
            .collect()
    }

    /// The run's floor: the geometric mean of its segments', ns.
    pub fn value_ns(&self) -> f64 {
        let (mean, _) = mean_and_squares(&self.logs());
        mean.exp()
    }
}

/// `k` consecutive parts of `items`, as equal as the count allows (the
/// first `len % k` one longer): how a run's windows are cut into
/// segments (and `rtlat compare` cuts its blocks the same way).
pub fn split<T>(items: &[T], k: usize) -> impl Iterator<Item = &[T]> {
    let k = k.max(1);
    let (size, longer) = (items.len() / k, items.len() % k);
    (0..k).scan(0, move |start, i| {
        let len = size + usize::from(i < longer);
        let part = &items[*start..*start + len];
        *start += len;
        Some(part)
    })
}

/// The mean of `xs` and the sum of their squared deviations from it.
fn mean_and_squares(xs: &[f64]) -> (f64, f64) {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (mean, xs.iter().map(|x| (x - mean).powi(2)).sum())
}

/// NEW's floor against BASE's: the ratio and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloorChange {
    /// NEW / BASE (of the geometric means).
    pub ratio: f64,
    /// The interval of the ratio.
    pub lower: f64,
    pub upper: f64,
    /// The pooled standard deviation of a segment's log floor.
    pub sigma: f64,
    /// Its degrees of freedom.
    pub df: usize,
    /// Student's quantile used.
    pub t: f64,
}

/// The change from `base` to `new` with its two-sided interval at
/// `confidence` (see the module documentation).
pub fn change(base: &Floor, new: &Floor, confidence: f64) -> FloorChange {
    let (x, y) = (base.logs(), new.logs());
    let (mean_x, squares_x) = mean_and_squares(&x);
    let (mean_y, squares_y) = mean_and_squares(&y);
    let df = (x.len() + y.len()).saturating_sub(2).max(1);
    let sigma = ((squares_x + squares_y) / df as f64).sqrt();
    let t = student_t_quantile(1.0 - (1.0 - confidence) / 2.0, df as f64);
    let d = mean_y - mean_x;
    let half = t * sigma * std::f64::consts::SQRT_2;
    FloorChange {
        ratio: d.exp(),
        lower: (d - half).exp(),
        upper: (d + half).exp(),
        sigma,
        df,
        t,
    }
}

/// Student's t distribution's quantile at `p` with `df` degrees of
/// freedom: the Cornish–Fisher expansion around the normal quantile
/// (Abramowitz and Stegun 26.7.5), within 1e-3 of the exact value from 5
/// degrees of freedom up to p = 0.9999 (the tests hold it to scipy's).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    let z = normal_quantile(p);
    let (z2, n) = (z * z, df);
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / n + g2 / n.powi(2) + g3 / n.powi(3) + g4 / n.powi(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_scipy() {
        // scipy.stats.t.ppf(p, df)
        for (p, df, want) in [
            (0.975, 18.0, 2.100_922_040_241_038),
            (0.995, 18.0, 2.878_440_472_738_608),
            (0.997_916_666_666_666_7, 18.0, 3.279_376_315_576_973),
            (0.9999, 18.0, 4.648_014_155_102_424),
            (0.975, 5.0, 2.570_581_835_636_315),
            (0.995, 8.0, 3.355_387_331_333_395),
            (0.975, 1000.0, 1.962_339_080_826_408),
        ] {
            let got = student_t_quantile(p, df);
            assert!(
                (got - want).abs() < 2e-3 * want,
                "t({p}, {df}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn segments_floors_are_their_lowest_decile() {
        // 100 windows: ten segments of ten, segment i's maxima i*10+1 ..
        // i*10+10 ns: its floor (the smallest of ten) is i*10+1.
        let maxima: Vec<i64> = (1..=100).collect();
        let floor = Floor::of(&maxima, 100_000_000).unwrap();
        assert_eq!(
            floor.segments_ns,
            vec![1, 11, 21, 31, 41, 51, 61, 71, 81, 91]
        );
        assert_eq!(floor.windows, 100);
    }

    #[test]
    fn uneven_counts_split_like_the_rest() {
        // 53 windows: three segments of 6, seven of 5.
        let parts: Vec<usize> = split(&[0; 53], 10).map(<[i64]>::len).collect();
        assert_eq!(parts, vec![6, 6, 6, 5, 5, 5, 5, 5, 5, 5]);
    }

    #[test]
    fn too_few_windows_have_no_floor() {
        assert_eq!(
            Floor::of(&[5; 49], 1),
            Err(NoFloor::TooFewWindows {
                windows: 49,
                needed: 50
            })
        );
    }

    #[test]
    fn the_floor_is_the_geometric_mean_of_the_segments() {
        let mut maxima = vec![10_000; 50];
        maxima.extend(vec![40_000; 50]);
        let floor = Floor::of(&maxima, 1).unwrap();
        assert!((floor.value_ns() - 20_000.0).abs() < 1e-6);
    }

    /// A floor of `level` ns with multiplicative noise, its segments'
    /// logs spread by about `spread`.
    fn noisy(level: f64, spread: f64, seed: u64) -> Floor {
        let mut rng = crate::rng::SplitMix64::new(seed);
        let maxima: Vec<i64> = (0..100)
            .map(|_| (level * (spread * rng.normal()).exp()) as i64)
            .collect();
        Floor::of(&maxima, 100_000_000).unwrap()
    }

    #[test]
    fn a_recurring_disturbance_is_outside_the_interval() {
        let base = noisy(40_000.0, 0.2, 1);
        let new = noisy(280_000.0, 0.2, 2);
        let c = change(&base, &new, 0.99);
        assert!(c.lower > 1.0, "{c:?}");
        assert!((c.ratio - 7.0).abs() < 1.5, "{c:?}");
    }

    #[test]
    fn identical_runs_are_inside_it() {
        for seed in 0..50 {
            let c = change(
                &noisy(40_000.0, 0.3, seed),
                &noisy(40_000.0, 0.3, seed + 100),
                0.99,
            );
            assert!(c.lower < 1.0 && c.upper > 1.0, "seed {seed}: {c:?}");
        }
    }

    #[test]
    fn a_stall_over_a_few_segments_widens_the_interval_instead_of_moving_it() {
        // NEW: the floor of BASE, but segments 3 and 4 are a host stall of
        // 2 ms in every window.
        let base = noisy(40_000.0, 0.2, 7);
        let mut maxima: Vec<i64> = (0..100).map(|i| 40_000 + (i % 7) * 1_000).collect();
        for m in &mut maxima[30..50] {
            *m = 2_000_000;
        }
        let new = Floor::of(&maxima, 100_000_000).unwrap();
        let c = change(&base, &new, 0.99);
        assert!(c.ratio > 1.5, "{c:?}");
        assert!(
            c.lower < 1.0,
            "a stall of 2 of 10 segments is not a change: {c:?}"
        );
    }
}
