//! What recording one sample costs the measuring loop: the running figures
//! (min, max, sums, count), the histogram bucket and the publication to the
//! thread's shared slot — everything the loop does between reading the
//! clock and computing the next deadline.
//!
//! Run: `cargo bench -p rtlat-core --bench record`.

use divan::Bencher;
use rtlat_core::distribution::{DistributionPlan, LatencyHistogram};
use rtlat_core::stats::{Histogram, SlotWriter, ThreadSlot};
use rtlat_core::units::Nanos;

fn main() {
    divan::main();
}

/// Latencies cycling through the histogram range, as a run's would.
fn sample(i: u64) -> i64 {
    divan::black_box((i.wrapping_mul(2_654_435_761) % 97) as i64)
}

#[divan::bench]
fn record_one_sample(bencher: Bencher) {
    let slot = ThreadSlot::default();
    let histogram = Histogram::new(1000).expect("1000 buckets");
    let mut writer = SlotWriter::new(&slot);
    let mut cycle = 0u64;
    bencher.bench_local(|| {
        let units = sample(cycle);
        writer.record(units, units * 1000);
        histogram.record(units, cycle);
        cycle += 1;
    });
}

#[divan::bench]
fn record_one_overflowing_sample(bencher: Bencher) {
    let slot = ThreadSlot::default();
    let histogram = Histogram::new(10).expect("10 buckets");
    let mut writer = SlotWriter::new(&slot);
    let mut cycle = 0u64;
    bencher.bench_local(|| {
        let units = 50 + sample(cycle);
        writer.record(units, units * 1000);
        histogram.record(units, cycle);
        cycle += 1;
    });
}

/// What every run now does per sample: the running figures, the
/// cyclictest histogram and the full distribution (exact range).
#[divan::bench]
fn record_one_sample_with_distribution(bencher: Bencher) {
    let slot = ThreadSlot::default();
    let histogram = Histogram::new(1000).expect("1000 buckets");
    let distribution =
        LatencyHistogram::new(DistributionPlan::new(1000, Nanos::ZERO).expect("the default plan"))
            .expect("memory");
    let mut writer = SlotWriter::new(&slot);
    let mut cycle = 0u64;
    bencher.bench_local(|| {
        let units = sample(cycle);
        writer.record(units, units * 1000 + 123);
        histogram.record(units, cycle);
        distribution.record(units * 1000 + 123);
        cycle += 1;
    });
}

/// The same with a sample in the distribution's log-linear range.
#[divan::bench]
fn record_one_long_sample_with_distribution(bencher: Bencher) {
    let slot = ThreadSlot::default();
    let histogram = Histogram::new(1000).expect("1000 buckets");
    let distribution =
        LatencyHistogram::new(DistributionPlan::new(1000, Nanos::ZERO).expect("the default plan"))
            .expect("memory");
    let mut writer = SlotWriter::new(&slot);
    let mut cycle = 0u64;
    bencher.bench_local(|| {
        let units = 6_000 + sample(cycle) * 100;
        writer.record(units, units * 1000);
        histogram.record(units, cycle);
        distribution.record(units * 1000);
        cycle += 1;
    });
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
