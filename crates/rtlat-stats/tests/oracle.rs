//! rtlat's GEV fit against two independent implementations on the same
//! data: scipy (`scipy.stats.genextreme.fit`, maximum likelihood) and
//! pyextremes (block maxima, return values with bootstrap intervals),
//! run by `tests/oracle.py`. The parameters must agree, rtlat's
//! likelihood must be at least scipy's, and each return level must lie
//! in the other's 95 % interval.
//!
//! Needs python3 with scipy and pyextremes (`python3 -m pip install scipy
//! pyextremes`; `.ci/run` installs them): without them the test FAILS
//! and says what to install.

use std::path::PathBuf;
use std::process::Command;

use rtlat_stats::gev::{Gev, Maxima};
use rtlat_stats::rng::SplitMix64;

/// The return periods the oracle computes, in blocks (as in oracle.py).
const RETURN_PERIODS: [f64; 2] = [10.0, 100.0];

const INSTALL: &str = "install python3 with scipy and pyextremes \
     (`python3 -m pip install --break-system-packages scipy pyextremes`, as .ci/run does)";

/// Data sets: 200 maxima (ns) of known GEVs, a bounded, a light and a
/// heavier tail.
fn data_sets() -> Vec<(&'static str, Vec<f64>)> {
    let truths = [
        ("bounded", -0.15, 3),
        ("gumbel", 0.0, 4),
        ("heavier", 0.2, 5),
    ];
    truths
        .iter()
        .map(|&(name, shape, seed)| {
            let gev = Gev {
                location: 50_000.0,
                scale: 3_000.0,
                shape,
            };
            let mut rng = SplitMix64::new(seed);
            let data = (0..200)
                .map(|_| gev.level(rng.exponential()).round())
                .collect();
            (name, data)
        })
        .collect()
}

#[test]
fn the_fit_agrees_with_scipy_and_pyextremes() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let input = dir.join("rtlat-stats-oracle-input.txt");
    let output = dir.join("rtlat-stats-oracle-output.txt");
    let sets = data_sets();
    let text: String = sets
        .iter()
        .map(|(name, data)| {
            let values: Vec<String> = data.iter().map(|x| x.to_string()).collect();
            format!("{name} {}\n", values.join(" "))
        })
        .collect();
    std::fs::write(&input, text).expect("the oracle's input");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oracle.py");
    let run = Command::new("python3")
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap_or_else(|e| panic!("python3 does not run ({e}): {INSTALL}"));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the oracle failed ({}): {stderr}\n{INSTALL}",
        run.status
    );
    let answers = std::fs::read_to_string(&output).expect("the oracle's output");
    let mut checked = 0;
    for ((name, data), line) in sets.iter().zip(answers.lines()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[0], *name);
        let numbers: Vec<f64> = fields[1..].iter().map(|f| f.parse().unwrap()).collect();
        let scipy = Gev {
            location: numbers[1],
            scale: numbers[2],
            shape: numbers[0],
        };
        let maxima = Maxima::new(data).unwrap();
        let fit = maxima.fit().expect("rtlat's fit");
        let ours = fit.gev;
        // The same maximum: parameters within a small fraction of the
        // scale (the likelihood is flat to that precision), and rtlat's
        // likelihood at least scipy's.
        let close = |a: f64, b: f64| (a - b).abs() < 0.01 * scipy.scale;
        assert!(
            close(ours.location, scipy.location) && close(ours.scale, scipy.scale),
            "{name}: rtlat {ours:?}, scipy {scipy:?}"
        );
        assert!(
            (ours.shape - scipy.shape).abs() < 0.01,
            "{name}: rtlat {ours:?}, scipy {scipy:?}"
        );
        assert!(
            ours.log_likelihood(data) >= scipy.log_likelihood(data) - 1e-6,
            "{name}: rtlat's likelihood below scipy's"
        );
        for (i, period) in RETURN_PERIODS.iter().enumerate() {
            let (theirs, low, high) = (numbers[3 + 3 * i], numbers[4 + 3 * i], numbers[5 + 3 * i]);
            // Exceeded with probability 1/period per block.
            let y = -(-1.0 / period).ln_1p();
            let level = ours.level(y);
            let (lower, upper) = maxima.level_interval(&fit, y);
            println!(
                "{name:8} {period:>4} blocks: rtlat {level:.0} ({lower:.0}-{upper:.0}), \
                 pyextremes {theirs:.0} ({low:.0}-{high:.0})"
            );
            assert!(
                (level - theirs).abs() < 0.01 * scipy.scale,
                "{name}, {period} blocks: rtlat {level}, pyextremes {theirs}"
            );
            assert!(
                low <= level && level <= high,
                "{name}, {period}: outside pyextremes' interval"
            );
            assert!(
                lower <= theirs && theirs <= upper,
                "{name}, {period}: outside rtlat's interval"
            );
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        sets.len() * RETURN_PERIODS.len(),
        "the oracle answered every set"
    );
}
