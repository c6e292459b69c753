//! rt-migrate-test's busy loop (a task's whole interval between its two
//! barrier waits) makes no heap allocation.

use rtlat_core::migrate::busy_loop;
use rtlat_sys::clock::{self, Clock};

#[test]
fn the_busy_loop_allocates_nothing() {
    let start = rtlat_core::time::to_nanos(&clock::now(Clock::Monotonic)) as u64;
    // The first clock read through the vDSO, outside the count.
    let _ = busy_loop(start, 0);
    let info = allocation_counter::measure(|| {
        std::hint::black_box(busy_loop(start, 5_000_000));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}
