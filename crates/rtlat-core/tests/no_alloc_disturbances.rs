//! A measuring thread reads its disturbance counters (getrusage and
//! `/proc/thread-self/sched`) just before its first wait and after its
//! last sample, on a locked and pre-faulted thread: the reading must not
//! allocate. Counted per thread by `allocation-counter`.

use rtlat_sys::usage::ThreadCounters;

#[test]
fn reading_the_thread_counters_allocates_nothing() {
    let mut counters = None;
    let info = allocation_counter::measure(|| {
        counters = ThreadCounters::of_current_thread();
    });
    let counters = counters.expect("getrusage(RUSAGE_THREAD)");
    assert_eq!(info.count_total, 0, "allocations: {info:?}");
    if std::path::Path::new("/proc/thread-self/sched").exists() {
        assert!(counters.migrations.is_some(), "{counters:?}");
    }
}
