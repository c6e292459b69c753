//! oslat's busy loop makes no heap allocation: slow path (every gap, with
//! `-T` far away), C buckets with overflows, the full distribution and
//! the memmove workload all on, counted in the loop's own thread while
//! another thread ends it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rtlat_core::oslat::{LoopState, Workload};

#[test]
fn the_busy_loop_allocates_nothing() {
    for workload in [Workload::None, Workload::Memmove] {
        // 1 MHz: every gap of a microsecond or more takes the slow path;
        // 4 buckets, so most of them overflow.
        let mut state = LoopState::new(0, 1_000_000, 4, 0, Some(1 << 30), workload, 4096);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(30));
                stop.store(true, Ordering::Relaxed);
            });
            let info = allocation_counter::measure(|| state.run(&stop, None));
            assert_eq!(info.count_total, 0, "{workload:?}: {info:?}");
        });
        let figures = state.figures(0);
        assert!(figures.loops > 100, "{workload:?}: {}", figures.loops);
        assert_eq!(figures.buckets.iter().sum::<u64>(), figures.loops);
    }
}
