//! What the projection costs at the end of a run: `project` on the block
//! series of a 1-hour run of 10 million samples (1 024 blocks of 3.5 s,
//! the series' default capacity), with the default horizons (1 h, 24 h)
//! and a deadline: the fit, the Anderson–Darling bootstrap and the three
//! profile intervals.
//!
//! Run: `cargo bench -p rtlat-stats --bench projection`.

use divan::Bencher;
use rtlat_stats::blocks::{Block, BlockSeries};
use rtlat_stats::projection::{Projection, Request, project};
use rtlat_stats::rng::SplitMix64;

fn main() {
    divan::main();
}

/// 1 024 blocks of 9 766 samples each (10 million in an hour), each
/// block's maximum drawn exactly as the largest of its samples: latencies
/// of 20 µs plus an exponential tail of mean 2 µs, to `resolution_ns`
/// (1 µs as a C-compatible run records them, or 1 ns).
fn hour_of_blocks(resolution_ns: f64) -> BlockSeries {
    let samples_per_block = 10_000_000f64 / 1024.0;
    let mut rng = SplitMix64::new(2026);
    let blocks = (0..1024)
        .map(|_| {
            let u = rng.uniform().powf(1.0 / samples_per_block);
            let max_ns = 20_000.0 - 2_000.0 * (-u).ln_1p();
            let max_ns = ((max_ns / resolution_ns).round() * resolution_ns) as i64;
            Block::new(samples_per_block as u64, Some(max_ns), 0)
        })
        .collect();
    BlockSeries::from_blocks(3_515_625_000, blocks)
}

/// Maxima in whole µs repeat: the likelihood sums over the distinct
/// values (a few dozen), and is cheaper.
#[divan::bench(sample_count = 20)]
fn project_an_hour_in_us(bencher: Bencher) {
    bench_project(bencher, 1_000.0);
}

/// Maxima in ns: 256 distinct values.
#[divan::bench(sample_count = 20)]
fn project_an_hour_in_ns(bencher: Bencher) {
    bench_project(bencher, 1.0);
}

fn bench_project(bencher: Bencher, resolution_ns: f64) {
    let series = hour_of_blocks(resolution_ns);
    let request = Request {
        deadline_ns: Some(45_000),
        ..Request::default()
    };
    let projected = project(&series, &request);
    assert!(
        matches!(projected, Projection::Projected(_)),
        "the bench projects: {projected:?}"
    );
    bencher.bench_local(|| project(divan::black_box(&series), &request));
}
