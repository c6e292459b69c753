//! rt-migrate-test's engine: N real-time tasks at rising priorities, all
//! released at once every interval to busy-loop for the run time; the
//! scheduler must run the highest-priority runnable tasks first, so a
//! task that started later than a lower-priority one (beyond the allowed
//! error) while it could have run is a failure ([`check_interval`]).
//!
//! The loop of a task (between its two barrier waits) reads the clock
//! through the vDSO and counts: no allocation, no lock, no system call.
//! Its figures go to preallocated atomics, read by the main thread only
//! after the end barrier. The highest task moves to the next allowed CPU
//! before each interval (one `sched_setaffinity`, outside its loop), so
//! that the others must migrate around it.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rtlat_sys::clock::{self, Clock};
use rtlat_sys::{affinity, sched, system};

use crate::engine::time::to_nanos;

/// A task's stack: its loop needs little.
const TASK_STACK_BYTES: usize = 64 * 1024;

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrateConfig {
    /// Each task's SCHED_FIFO priority, task 0 first.
    pub priorities: Vec<u8>,
    /// The main thread's priority (above every task).
    pub main_priority: u8,
    /// Intervals to run.
    pub loops: usize,
    /// How long each task busy-loops in an interval, ns.
    pub run_ns: u64,
    /// How long the main thread sleeps before and after releasing the
    /// tasks, ns.
    pub sleep_ns: u64,
    /// The error allowed before a later start counts, ns.
    pub max_err_ns: u64,
    /// Stop at the first failed interval (`-c`).
    pub check: bool,
    /// The CPUs the highest task rotates over.
    pub cpus: Vec<usize>,
}

/// One task's figures in one interval, ns from the interval's release
/// (as C's `intervals`, `intervals_length`, `intervals_loops`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskInterval {
    /// When the task started its busy loop.
    pub start: u64,
    /// When it ended it.
    pub end: u64,
    /// Clock reads it made.
    pub loops: u64,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrateOutcome {
    /// Each interval run, each task's figures in task order.
    pub intervals: Vec<Vec<TaskInterval>>,
    /// Each task's thread id.
    pub tids: Vec<i32>,
    /// The first interval the check failed at (with `check`).
    pub failed_at: Option<usize>,
    /// The run was stopped from outside before its last interval.
    pub stopped: bool,
    /// A task that could not take its priority, with the errno.
    pub priority_error: Option<(usize, i32)>,
}

/// Whether interval `tasks` (task order) breaks the rule, as rt-migrate-test
/// judges: a task that started more than `max_err` after the task below
/// it fails if it also looped less, started after that task ended, or
/// ended more than `max_err` after it.
pub fn check_interval(tasks: &[TaskInterval], max_err: u64) -> bool {
    tasks.windows(2).any(|pair| {
        let (low, high) = (pair[0], pair[1]);
        high.start > low.start
            && high.start - low.start > max_err
            && (high.loops < low.loops
                || high.start > low.end
                || (high.end > low.end && high.end - low.end > max_err))
    })
}

/// What the tasks and the main thread share.
struct Shared {
    start: Barrier,
    end: Barrier,
    done: AtomicBool,
    /// The interval being run.
    interval: AtomicUsize,
    /// The release time of the interval, ns on CLOCK_MONOTONIC.
    now: AtomicU64,
    /// `[interval][task][start, end, loops]`.
    figures: Vec<AtomicU64>,
    tids: Vec<AtomicI32>,
    /// The first task that could not take its priority, with the errno.
    priority_error: OnceLock<(usize, i32)>,
    tasks: usize,
    run_ns: u64,
}

fn monotonic_ns() -> u64 {
    u64::try_from(to_nanos(&clock::now(Clock::Monotonic))).unwrap_or(0)
}

/// The busy loop: reads the clock until `run_ns` have passed since
/// `start`; returns (end, reads).
pub fn busy_loop(start: u64, run_ns: u64) -> (u64, u64) {
    let mut loops = 0u64;
    loop {
        loops += 1;
        let t = monotonic_ns();
        if t.saturating_sub(start) >= run_ns {
            return (t, loops);
        }
    }
}

fn task(shared: &Shared, id: usize, priority: u8, rotate: Option<Vec<usize>>) {
    shared.tids[id].store(system::current_tid(), Ordering::Relaxed);
    if let Err(e) = sched::set_current_thread(sched::Policy::Fifo, i32::from(priority)) {
        let _ = shared.priority_error.set((id, e.raw_os_error()));
    }
    let mut next_cpu = 0;
    loop {
        if let Some(cpus) = &rotate {
            let _ = affinity::pin_current_thread(&cpus[next_cpu..=next_cpu]);
            next_cpu = (next_cpu + 1) % cpus.len();
        }
        shared.start.wait();
        if shared.done.load(Ordering::Relaxed) {
            return;
        }
        let start = monotonic_ns();
        let (end, loops) = busy_loop(start, shared.run_ns);
        let interval = shared.interval.load(Ordering::Relaxed);
        let now = shared.now.load(Ordering::Relaxed);
        let at = (interval * shared.tasks + id) * 3;
        shared.figures[at].store(start.saturating_sub(now), Ordering::Relaxed);
        shared.figures[at + 1].store(end.saturating_sub(now), Ordering::Relaxed);
        shared.figures[at + 2].store(loops, Ordering::Relaxed);
        shared.end.wait();
    }
}

/// Sleeps `ns`, in slices, returning early once `stop` says so.
fn sleep_unless(ns: u64, stop: &dyn Fn() -> bool) {
    let until = Instant::now() + Duration::from_nanos(ns);
    loop {
        let now = Instant::now();
        if now >= until || stop() {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(10)));
    }
}

/// Runs the tasks; `stop` is asked between steps (a signal, `-D`);
/// `progress(done, total)` after each release. The main thread runs at
/// `main_priority` during the run and goes back to SCHED_OTHER after it.
/// Fails only when a task thread cannot be started.
pub fn run(
    config: &MigrateConfig,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(usize, usize),
) -> std::io::Result<MigrateOutcome> {
    let tasks = config.priorities.len();
    let shared = Arc::new(Shared {
        start: Barrier::new(tasks + 1),
        end: Barrier::new(tasks + 1),
        done: AtomicBool::new(false),
        interval: AtomicUsize::new(0),
        now: AtomicU64::new(0),
        figures: (0..config.loops * tasks * 3)
            .map(|_| AtomicU64::new(0))
            .collect(),
        tids: (0..tasks).map(|_| AtomicI32::new(0)).collect(),
        priority_error: OnceLock::new(),
        tasks,
        run_ns: config.run_ns,
    });
    let mut threads = Vec::with_capacity(tasks);
    for (id, &priority) in config.priorities.iter().enumerate() {
        let shared = Arc::clone(&shared);
        let rotate = (id + 1 == tasks && !config.cpus.is_empty()).then(|| config.cpus.clone());
        let started =
            rtlat_sys::thread::spawn(&format!("rtlat-migr{id}"), TASK_STACK_BYTES, move || {
                task(&shared, id, priority, rotate)
            });
        match started {
            Ok(t) => threads.push(t),
            Err(e) => {
                // The tasks started so far are waiting at the start
                // barrier, which can no longer fill: they stay parked
                // until the process exits, which follows this error.
                return Err(e);
            }
        }
    }
    let _ = sched::set_current_thread(sched::Policy::Fifo, i32::from(config.main_priority));
    let mut outcome = MigrateOutcome {
        intervals: Vec::with_capacity(config.loops),
        tids: Vec::new(),
        failed_at: None,
        stopped: false,
        priority_error: None,
    };
    for interval in 0..config.loops {
        sleep_unless(config.sleep_ns, stop);
        shared.interval.store(interval, Ordering::Relaxed);
        shared.now.store(monotonic_ns(), Ordering::Relaxed);
        shared.start.wait();
        sleep_unless(config.sleep_ns, stop);
        progress(interval, config.loops);
        shared.end.wait();
        let row: Vec<TaskInterval> = (0..tasks)
            .map(|t| {
                let at = (interval * tasks + t) * 3;
                TaskInterval {
                    start: shared.figures[at].load(Ordering::Relaxed),
                    end: shared.figures[at + 1].load(Ordering::Relaxed),
                    loops: shared.figures[at + 2].load(Ordering::Relaxed),
                }
            })
            .collect();
        let failed = config.check && check_interval(&row, config.max_err_ns);
        outcome.intervals.push(row);
        if let Some(&e) = shared.priority_error.get() {
            outcome.priority_error = Some(e);
            break;
        }
        if failed {
            outcome.failed_at = Some(interval);
            break;
        }
        if stop() {
            outcome.stopped = interval + 1 < config.loops;
            break;
        }
    }
    shared.done.store(true, Ordering::Relaxed);
    shared.start.wait();
    for t in threads {
        let _ = t.join();
    }
    let _ = sched::set_current_thread(sched::Policy::Other, 0);
    outcome.tids = shared
        .tids
        .iter()
        .map(|t| t.load(Ordering::Relaxed))
        .collect();
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: u64, end: u64, loops: u64) -> TaskInterval {
        TaskInterval { start, end, loops }
    }

    #[test]
    fn a_higher_task_that_waited_behind_a_lower_one_fails() {
        let max_err = 1_000_000;
        // Both started at once: fine.
        assert!(!check_interval(
            &[t(10, 20_010, 500), t(20, 20_020, 500)],
            max_err
        ));
        // The lower one ran first while the higher waited: failure.
        assert!(check_interval(
            &[t(10, 20_000_010, 500), t(20_000_020, 40_000_020, 500)],
            max_err
        ));
        // The higher one started late but within the error: fine.
        assert!(!check_interval(
            &[t(10, 20_010, 500), t(900_000, 20_900_000, 500)],
            max_err
        ));
        // The lower task started after the higher: never a failure.
        assert!(!check_interval(
            &[t(20_000_000, 40_000_000, 9), t(10, 20_010, 500)],
            max_err
        ));
    }

    #[test]
    fn the_busy_loop_runs_for_its_time() {
        let start = monotonic_ns();
        let (end, loops) = busy_loop(start, 2_000_000);
        assert!(end - start >= 2_000_000);
        assert!(loops > 1);
    }
}
