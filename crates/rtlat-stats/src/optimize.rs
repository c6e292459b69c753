//! Minimising a smooth function of a few parameters without derivatives:
//! the Nelder–Mead simplex method, enough for the three parameters of an
//! extreme-value fit (and the two of its profiles) and small enough to
//! read, where a numeric library would be a large dependency for one use.

/// When the search stops.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// The simplex's vertices are all within this of the best one, in
    /// every coordinate...
    pub x: f64,
    /// ...and their values within this of the best value.
    pub value: f64,
    /// At most this many evaluations of the function.
    pub evaluations: usize,
}

impl Default for Tolerance {
    fn default() -> Tolerance {
        Tolerance {
            x: 1e-6,
            value: 1e-8,
            evaluations: 4_000,
        }
    }
}

/// Where the search stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Minimum<const N: usize> {
    /// The best point found.
    pub x: [f64; N],
    /// The function's value there (`inf` when no point had a finite one).
    pub value: f64,
    /// Whether the tolerance was met (rather than the evaluation limit).
    pub converged: bool,
}

/// Minimises `f` from `start`, the first simplex spanning `step` along
/// each axis. Values that are not finite (outside the function's domain)
/// count as `+inf`, so the simplex walks away from them.
pub fn nelder_mead<const N: usize>(
    mut f: impl FnMut(&[f64; N]) -> f64,
    start: [f64; N],
    step: [f64; N],
    tolerance: Tolerance,
) -> Minimum<N> {
    let mut eval = |x: &[f64; N]| {
        let v = f(x);
        if v.is_finite() { v } else { f64::INFINITY }
    };
    let mut points: Vec<[f64; N]> = Vec::with_capacity(N + 1);
    points.push(start);
    for axis in 0..N {
        let mut p = start;
        p[axis] += step[axis];
        points.push(p);
    }
    let mut values: Vec<f64> = points.iter().map(&mut eval).collect();
    let mut evaluations = N + 1;
    let mut converged = false;
    while evaluations < tolerance.evaluations {
        // Best first, worst last.
        let mut order: Vec<usize> = (0..=N).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        points = order.iter().map(|&i| points[i]).collect();
        values = order.iter().map(|&i| values[i]).collect();
        let best = points[0];
        let spread_x = points[1..]
            .iter()
            .flat_map(|p| p.iter().zip(&best).map(|(a, b)| (a - b).abs()))
            .fold(0.0, f64::max);
        let spread_value = values[N] - values[0];
        if spread_x <= tolerance.x && spread_value <= tolerance.value {
            converged = true;
            break;
        }
        let mut centroid = [0.0; N];
        for p in &points[..N] {
            for (c, x) in centroid.iter_mut().zip(p) {
                *c += x / N as f64;
            }
        }
        let along = |t: f64| {
            let mut p = centroid;
            for (i, c) in p.iter_mut().enumerate() {
                *c += t * (centroid[i] - points[N][i]);
            }
            p
        };
        let reflected = along(1.0);
        let f_reflected = eval(&reflected);
        evaluations += 1;
        if f_reflected < values[0] {
            let expanded = along(2.0);
            let f_expanded = eval(&expanded);
            evaluations += 1;
            if f_expanded < f_reflected {
                (points[N], values[N]) = (expanded, f_expanded);
            } else {
                (points[N], values[N]) = (reflected, f_reflected);
            }
            continue;
        }
        if f_reflected < values[N - 1] {
            (points[N], values[N]) = (reflected, f_reflected);
            continue;
        }
        // Contract: outside the worst point if the reflection was at least
        // better than it, inside otherwise.
        let (contracted, bound) = if f_reflected < values[N] {
            (along(0.5), f_reflected)
        } else {
            (along(-0.5), values[N])
        };
        let f_contracted = eval(&contracted);
        evaluations += 1;
        if f_contracted < bound {
            (points[N], values[N]) = (contracted, f_contracted);
            continue;
        }
        // Shrink every vertex halfway to the best one.
        for i in 1..=N {
            for axis in 0..N {
                points[i][axis] = best[axis] + 0.5 * (points[i][axis] - best[axis]);
            }
            values[i] = eval(&points[i]);
        }
        evaluations += N;
    }
    let (index, value) = values
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, v)| (i, *v))
        .unwrap_or((0, f64::INFINITY));
    Minimum {
        x: points[index],
        value,
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_rosenbrock_and_walks_around_a_forbidden_region() {
        let rosenbrock = |p: &[f64; 2]| (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2);
        let m = nelder_mead(
            rosenbrock,
            [-1.2, 1.0],
            [0.1, 0.1],
            Tolerance {
                x: 1e-8,
                value: 1e-12,
                evaluations: 10_000,
            },
        );
        assert!(m.converged);
        assert!(
            (m.x[0] - 1.0).abs() < 1e-4 && (m.x[1] - 1.0).abs() < 1e-4,
            "{m:?}"
        );
        // A bowl whose centre lies outside the domain x > 0.5: the search
        // stops at the domain's edge.
        let fenced = |p: &[f64; 1]| if p[0] > 0.5 { p[0] * p[0] } else { f64::NAN };
        let m = nelder_mead(fenced, [2.0], [0.5], Tolerance::default());
        assert!((m.x[0] - 0.5).abs() < 1e-4, "{m:?}");
    }
}
