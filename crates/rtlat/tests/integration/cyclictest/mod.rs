//! `rtlat cyclictest`: synthetic runs (no privilege), real runs and the differential tests against `/usr/bin/cyclictest` (root), then one module per feature that has its own runs.

pub(crate) mod differential;
pub(crate) mod idle_states;
pub(crate) mod max_time;
pub(crate) mod methods;
pub(crate) mod privilege;
pub(crate) mod progress;
pub(crate) mod real;
pub(crate) mod signals;
pub(crate) mod snapshot_file;
pub(crate) mod stats_stream;
pub(crate) mod synthetic;
pub(crate) mod syscalls;

use std::time::Duration;

use crate::support::{describe_process, wait_until};

/// How many measuring threads (`rtlat-t0`, `rtlat-t1`, ...) run `pid` has.
fn measuring_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim_end().starts_with("rtlat-t"))
        })
        .count()
}

/// Waits until run `pid` has started `count` measuring threads: the sign
/// that a run without a real-time policy (SCHED_OTHER, `--synthetic`) is
/// set up, as [`crate::support::wait_for_realtime_threads`] is for one
/// with `-p` (the stop-signal handlers are installed before the measuring
/// threads start). Panics, describing the run, after a safety net of 10 s.
pub(crate) fn wait_for_measuring_threads(pid: u32, count: usize) {
    assert!(
        wait_until(Duration::from_secs(10), || measuring_threads(pid) >= count),
        "not {count} measuring threads in run {pid}: {}",
        describe_process(pid)
    );
}
