//! The loops of the deadline threads make no heap allocation:
//! cyclicdeadline's (`deadline::jobs`, with the distribution and the
//! `--histogram` buckets, most jobs overflowing them) and
//! deadline_test's job (`deadline_work::Work::job`). Run here under
//! SCHED_OTHER, where `sched_yield` returns at once: the same code as under
//! SCHED_DEADLINE, many more jobs a second. `allocation-counter` counts in
//! the calling thread, where the loops run.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rtlat_core::deadline::jobs;
use rtlat_core::deadline_work::{Work, now_us};
use rtlat_core::{DistributionPlan, LatencyHistogram, LoopEnd, Nanos, SlotWriter, ThreadSlot};

#[test]
fn cyclicdeadlines_jobs_allocate_nothing() {
    let slot = ThreadSlot::default();
    let plan = DistributionPlan::new(1000, Nanos::from_micros(10_000)).unwrap();
    let distribution = LatencyHistogram::new(plan).unwrap();
    let histogram = rtlat_core::Histogram::new(10).unwrap();
    let stop = AtomicBool::new(false);
    let mut writer = SlotWriter::new(&slot);
    // The first record publishes every figure once: warm up outside.
    writer.record(0, 0, || 0);
    // A period of 1 ns: each job is later than the one before by about
    // its own duration, so the run ends by itself at the -b limit (50 ms
    // late: about 50 ms of jobs).
    let info = allocation_counter::measure(|| {
        let end = jobs(
            &mut writer,
            (Some(&distribution), Some(&histogram)),
            1,
            Some(50_000),
            &stop,
        );
        assert!(matches!(end, LoopEnd::Break(_)), "{end:?}");
    });
    assert!(slot.cycles() > 1);
    assert_eq!(info.count_total, 0, "allocations in the loop: {info:?}");
    assert!(!stop.load(Relaxed));
    let h = histogram.snapshot();
    assert_eq!(h.total() + h.overflows, slot.cycles() - 1);
}

#[test]
fn deadline_tests_jobs_allocate_nothing() {
    let mut work = Work::new(100, 200, 1_000);
    let info = allocation_counter::measure(|| {
        let mut period = now_us();
        for _ in 0..2_000 {
            period = work.job(period);
        }
    });
    assert_eq!(work.nr_periods, 2_000);
    assert_eq!(info.count_total, 0, "allocations in the loop: {info:?}");
}
