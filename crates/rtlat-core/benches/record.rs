//! What recording one sample costs the measuring loop: the running figures
//! (min, max, sums, count), the histogram bucket and the publication to the
//! thread's shared slot — everything the loop does between reading the
//! clock and computing the next deadline.
//!
//! Run: `cargo bench -p rtlat-core --bench record`.

use divan::Bencher;
use rtlat_core::Nanos;
use rtlat_core::{DistributionPlan, LatencyHistogram};
use rtlat_core::{Histogram, SlotWriter, ThreadSlot};

fn main() {
    divan::main();
}

/// Latencies cycling through the histogram range, as a run's would.
fn sample(i: u64) -> i64 {
    divan::black_box((i.wrapping_mul(2_654_435_761) % 97) as i64)
}

/// Records one sample per iteration: `units_of(cycle)` units, `ns_of(units)`
/// ns, into the running figures and a histogram of `buckets`, then hands
/// the ns to `also` (the distribution, or nothing).
fn bench_record(
    bencher: Bencher,
    buckets: usize,
    units_of: impl Fn(u64) -> i64,
    ns_of: impl Fn(i64) -> i64,
    mut also: impl FnMut(i64),
) {
    let slot = ThreadSlot::default();
    let histogram = Histogram::new(buckets).expect("the buckets");
    let mut writer = SlotWriter::new(&slot);
    let mut cycle = 0u64;
    bencher.bench_local(|| {
        let units = units_of(cycle);
        let ns = ns_of(units);
        writer.record(units, ns, || cycle as i64);
        histogram.record(units, cycle);
        also(ns);
        cycle += 1;
    });
}

/// The full distribution with the default plan (exact range to 1000 µs).
fn distribution() -> LatencyHistogram {
    LatencyHistogram::new(DistributionPlan::new(1000, Nanos::ZERO).expect("the default plan"))
        .expect("memory")
}

#[divan::bench]
fn record_one_sample(bencher: Bencher) {
    bench_record(bencher, 1000, sample, |units| units * 1000, |_| {});
}

#[divan::bench]
fn record_one_overflowing_sample(bencher: Bencher) {
    let units_of = |cycle| 50 + sample(cycle);
    bench_record(bencher, 10, units_of, |units| units * 1000, |_| {});
}

/// What every run now does per sample: the running figures, the
/// cyclictest histogram and the full distribution (exact range).
#[divan::bench]
fn record_one_sample_with_distribution(bencher: Bencher) {
    let distribution = distribution();
    let ns_of = |units| units * 1000 + 123;
    bench_record(bencher, 1000, sample, ns_of, |ns| distribution.record(ns));
}

/// The same with a sample in the distribution's log-linear range.
#[divan::bench]
fn record_one_long_sample_with_distribution(bencher: Bencher) {
    let distribution = distribution();
    let units_of = |cycle| 6_000 + sample(cycle) * 100;
    bench_record(
        bencher,
        1000,
        units_of,
        |units| units * 1000,
        |ns| distribution.record(ns),
    );
}

/// The harness and the making of the sample value alone, to subtract from
/// the two benchmarks above.
#[divan::bench]
fn baseline_make_sample_only(bencher: Bencher) {
    let mut cycle = 0u64;
    bencher.bench_local(|| {
        divan::black_box(sample(cycle));
        cycle += 1;
    });
}
