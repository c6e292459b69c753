//! Test fixtures: rtlat results made from samples chosen by hand, with or
//! without `"blocks"` (written through
//! [`rtlat_results::blocks::BlocksDoc::from_series`], as a run writes
//! them), so that the comparison can be tested on runs whose clustering
//! in time is known.

use rtlat_results::blocks::BlocksDoc;
use rtlat_stats::blocks::{Block, BlockSeries, LADDER_NS};
use serde_json::{Value, json};

/// The C cyclictest's own JSON with a histogram, as rt-tests 2.4
/// `cyclictest -q -l 100 -t 2 -h 50 --json=F` writes it: thread 1 has 2
/// samples beyond the histogram.
pub const C_WITH_HISTOGRAM: &str = r#"{"file_version": 1, "cmdline:": "cyclictest -q -l 100 -t 2 -h 50",
    "rt_test_version:": "2.40", "num_threads": 2, "resolution_in_ns": 0,
    "thread": {
      "0": {"histogram": {"3": 50, "4": 40, "9": 10}, "cycles": 100, "min": 3,
            "max": 9, "avg": 3.9, "cpu": 0, "node": 0},
      "1": {"histogram": {"5": 98}, "cycles": 100, "min": 5, "max": 700,
            "avg": 19.1, "cpu": 1, "node": 0}}}"#;

/// A thread's samples (ns), block by block (100 ms each).
pub type Thread = Vec<Vec<i64>>;

/// The series of `thread`'s blocks, with their ladder counts.
pub fn series(thread: &Thread) -> BlockSeries {
    let mut s = BlockSeries::new(100_000_000, 1024);
    for samples in thread {
        let mut b = Block::new(
            samples.len() as u64,
            samples.iter().copied().max(),
            samples.iter().sum(),
        );
        for (j, step) in LADDER_NS.iter().enumerate() {
            b.at_or_above[j] = samples.iter().filter(|&&v| v >= *step).count() as u64;
        }
        s.push(b);
    }
    s
}

/// The nearest-rank percentiles of sorted `all` (the lower bound of their
/// 1 µs bucket), µs, as a `percentiles` object.
fn percentiles(all: &[i64]) -> Value {
    let n = all.len();
    let at = |p: f64| {
        let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
        (all[rank - 1] / 1000) as f64
    };
    json!({"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "p99.9": at(0.999),
           "p99.99": at(0.9999), "p99.999": at(0.99999),
           "max": all[n - 1] as f64 / 1000.0})
}

/// An rtlat cyclictest result of `threads`, each with its 1 µs
/// distribution and, `with_blocks`, its blocks.
pub fn document(threads: &[Thread], with_blocks: bool) -> String {
    let mut doc = json!({"rtlat_version": "0.1.0", "thread": {}});
    let mut every = Vec::new();
    for (index, thread) in threads.iter().enumerate() {
        let mut all: Vec<i64> = thread.iter().flatten().copied().collect();
        all.sort_unstable();
        let mut buckets: Vec<(i64, u64)> = Vec::new();
        for &v in &all {
            match buckets.last_mut() {
                Some(last) if last.0 == v / 1000 => last.1 += 1,
                _ => buckets.push((v / 1000, 1)),
            }
        }
        let mut t = json!({
            "cycles": all.len(),
            "min_ns": all[0],
            "max_ns": all[all.len() - 1],
            "percentiles": percentiles(&all),
            "distribution": {"unit": "us", "buckets": buckets.iter()
                .map(|&(us, count)| json!([us as f64, (us + 1) as f64, count]))
                .collect::<Vec<_>>()},
        });
        if with_blocks {
            t["blocks"] = serde_json::to_value(BlocksDoc::from_series(&series(thread)))
                .expect("blocks serialize");
        }
        doc["thread"][index.to_string()] = t;
        every.extend(all);
    }
    every.sort_unstable();
    doc["all_threads"] = percentiles(&every);
    doc.to_string()
}

/// 100 blocks of 1000 samples of 5 to 14 µs, of which the first
/// `late_in(block)` are late: `late_ns` and up to 6 µs above.
pub fn thread(late_ns: i64, late_in: impl Fn(usize) -> usize) -> Thread {
    (0..100)
        .map(|i| {
            let late = late_in(i);
            (0..1000)
                .map(|k| {
                    if k < late {
                        late_ns + (k as i64 % 7) * 1000
                    } else {
                        5_000 + ((k * 7919 + i * 31) % 10) as i64 * 1000
                    }
                })
                .collect()
        })
        .collect()
}

/// 400 blocks (40 s) of 100 samples of 5 to 14 µs, each with one late
/// sample of `late_ns` and up to 10 µs above, spread over the blocks:
/// maxima that vary without a trend, enough 1 s blocks for a projection.
pub fn projectable(late_ns: i64) -> Thread {
    (0..400)
        .map(|i: i64| {
            (0..100)
                .map(|k: i64| {
                    if k == i % 100 {
                        late_ns + (i * 2_654_435_761) % 10_007
                    } else {
                        5_000 + ((k * 7919 + i * 31) % 10) * 1000
                    }
                })
                .collect()
        })
        .collect()
}
