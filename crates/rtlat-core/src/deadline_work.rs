//! SCHED_DEADLINE threads that work (rt-tests deadline_test): each job
//! runs a calibrated number of loops of a prime search, close to its
//! runtime, and the thread counts the deadlines and periods it missed.
//!
//! Times are whole µs on CLOCK_MONOTONIC, as C's. The job's loop makes no
//! system call (the clock is read through the vDSO) and allocates
//! nothing; each job ends with one `sched_yield`. The figures are kept in
//! the thread and handed over once, after its loop.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::Relaxed};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use rtlat_sys::clock::{self, Clock};
use rtlat_sys::deadline::{self, SchedAttr};
use rtlat_sys::thread::RawThread;
use rtlat_sys::{memory, sched, signals, system};

use crate::engine::{STACK_PREFAULT_BYTES, THREAD_STACK_BYTES};

/// CLOCK_MONOTONIC in whole µs (vDSO).
#[inline(always)]
pub fn now_us() -> u64 {
    let t = clock::now(Clock::Monotonic);
    (t.tv_sec as u64) * 1_000_000 + (t.tv_nsec as u64) / 1000
}

/// What one thread keeps: its job's size and its figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Its runtime, µs.
    pub runtime_us: u64,
    /// Its deadline and period, µs.
    pub deadline_us: u64,
    /// Loops of the prime search per job.
    pub loops_per_period: u64,
    /// The largest prime found so far (the search goes on across jobs).
    pub prime: u64,
    /// Jobs that ended after their deadline.
    pub missed_deadlines: u64,
    /// Periods that went by without a job.
    pub missed_periods: u64,
    /// Jobs that started before their period (the expected start moved).
    pub nr_adjust: u64,
    /// How far those moved it, µs.
    pub total_adjust: u64,
    /// Jobs run.
    pub nr_periods: u64,
    /// The longest job, µs.
    pub max_time: u64,
    /// The shortest job, µs (0: none yet; a job of 0 µs does not count,
    /// as in C).
    pub min_time: u64,
    /// All jobs together, µs.
    pub total_time: u64,
    /// The time the last job's loops took, µs.
    pub last_time: u64,
}

impl Work {
    /// A thread's work before its first job.
    pub const fn new(runtime_us: u64, deadline_us: u64, loops_per_period: u64) -> Work {
        Work {
            runtime_us,
            deadline_us,
            loops_per_period,
            prime: 2,
            missed_deadlines: 0,
            missed_periods: 0,
            nr_adjust: 0,
            total_adjust: 0,
            nr_periods: 0,
            max_time: 0,
            min_time: 0,
            total_time: 0,
            last_time: 0,
        }
    }

    /// `loops` steps of the prime search; returns the µs they took.
    #[inline(never)]
    pub fn run_loops(&mut self, loops: u64) -> u64 {
        let start = now_us();
        let mut prime = self.prime;
        let mut cnt: u64 = 2;
        for _ in 0..loops {
            if cnt > prime / 2 {
                self.prime = prime;
                prime += 1;
                cnt = 2;
            }
            let result = std::hint::black_box(prime) / cnt;
            if result * cnt == prime {
                prime += 1;
                cnt = 2;
            } else {
                cnt += 1;
            }
        }
        now_us() - start
    }

    /// One job expected to start at `period`: counts missed periods and
    /// adjustments, runs the loops, counts a missed deadline; returns
    /// when the next job is expected.
    pub fn job(&mut self, period: u64) -> u64 {
        let mut period = period;
        let mut next = period + self.deadline_us;
        let now = now_us();
        if now > next {
            while next < now {
                next += self.deadline_us;
                self.missed_periods += 1;
            }
        } else if now < period {
            self.total_adjust += period - now;
            self.nr_adjust += 1;
            period = now;
            next = period + self.deadline_us;
        }
        let _ = period;
        let time = self.run_loops(self.loops_per_period);
        let end = now_us();
        if end > next {
            self.missed_deadlines += 1;
            next += self.deadline_us;
        }
        let diff = end - now;
        self.max_time = self.max_time.max(diff);
        if self.min_time == 0 || diff < self.min_time {
            self.min_time = diff;
        }
        self.last_time = time;
        self.total_time += diff;
        self.nr_periods += 1;
        next
    }
}

/// A thread's end: its work and its context switch counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkResult {
    /// Its thread id.
    pub tid: i32,
    /// Its figures.
    pub work: Work,
    /// Voluntary context switches (-1: unknown).
    pub voluntary: i64,
    /// Involuntary context switches (-1: unknown).
    pub involuntary: i64,
    /// Migrations (-1: unknown).
    pub migrations: i64,
}

/// Why a thread could not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkSetupError {
    /// Its index (`None`: the real-time spinner).
    pub index: Option<usize>,
    /// The errno of sched_setattr (or sched_setscheduler for the spinner).
    pub errno: i32,
}

struct Cell {
    tid: AtomicI32,
    failed: AtomicI32,
    result: Mutex<Option<WorkResult>>,
}

/// The working threads (and the optional real-time spinner) at work.
pub struct WorkRunning {
    cells: Arc<Vec<Cell>>,
    spinner: Option<Arc<Cell>>,
    stop: Arc<AtomicBool>,
    handles: Vec<RawThread>,
    longest_period_us: u64,
}

impl std::fmt::Debug for WorkRunning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkRunning")
            .field("threads", &self.cells.len())
            .finish()
    }
}

/// Spawns one SCHED_DEADLINE thread per `Work` and, with `spinner`, a
/// SCHED_FIFO thread of that priority that reads the clock until the end;
/// returns once each has taken its policy (or failed) and passed the
/// start barrier.
pub fn start(works: &[Work], spinner: Option<u8>) -> std::io::Result<WorkRunning> {
    memory::use_single_malloc_arena();
    let n = works.len() + usize::from(spinner.is_some());
    let barrier = Arc::new(Barrier::new(n + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let new_cell = || Cell {
        tid: AtomicI32::new(0),
        failed: AtomicI32::new(0),
        result: Mutex::new(None),
    };
    let cells: Arc<Vec<Cell>> = Arc::new(works.iter().map(|_| new_cell()).collect());
    let mut handles = Vec::with_capacity(n);
    for (index, work) in works.iter().enumerate() {
        let (cells, barrier, quit, work) = (
            Arc::clone(&cells),
            Arc::clone(&barrier),
            Arc::clone(&stop),
            *work,
        );
        let h = rtlat_sys::thread::spawn(
            &format!("rtlat-dlw{index}"),
            THREAD_STACK_BYTES,
            move || work_thread(&cells[index], work, &barrier, &quit),
        );
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                stop.store(true, Relaxed);
                return Err(e);
            }
        }
    }
    let spinner_cell = spinner.map(|_| Arc::new(new_cell()));
    if let (Some(prio), Some(cell)) = (spinner, &spinner_cell) {
        let (cell, barrier, quit) = (Arc::clone(cell), Arc::clone(&barrier), Arc::clone(&stop));
        let h = rtlat_sys::thread::spawn("rtlat-dlspin", THREAD_STACK_BYTES, move || {
            spin_thread(&cell, prio, &barrier, &quit)
        });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                stop.store(true, Relaxed);
                return Err(e);
            }
        }
    }
    barrier.wait();
    Ok(WorkRunning {
        cells,
        spinner: spinner_cell,
        stop,
        handles,
        longest_period_us: works.iter().map(|w| w.deadline_us).max().unwrap_or(0),
    })
}

fn work_thread(cell: &Cell, mut work: Work, barrier: &Barrier, stop: &AtomicBool) {
    let _ = signals::block_all_except(signals::wake_signal());
    let tid = system::current_tid();
    cell.tid.store(tid, Relaxed);
    let attr = SchedAttr::deadline(work.runtime_us * 1000, work.deadline_us * 1000, 0, 0);
    let set = deadline::set_current_thread(&attr);
    memory::prefault_stack::<STACK_PREFAULT_BYTES>();
    if let Err(e) = set {
        cell.failed.store(e.raw_os_error(), Relaxed);
    }
    barrier.wait();
    if set.is_err() {
        return;
    }
    deadline::yield_now();
    let mut period = now_us();
    while !stop.load(Relaxed) {
        period = work.job(period);
        deadline::yield_now();
    }
    let _ = deadline::set_current_thread(&SchedAttr::other());
    // The loop is over: reading /proc is allowed now.
    let (voluntary, involuntary, migrations) = switches();
    if let Ok(mut slot) = cell.result.lock() {
        *slot = Some(WorkResult {
            tid,
            work,
            voluntary,
            involuntary,
            migrations,
        });
    }
    cell.failed.store(-1, Relaxed);
}

fn spin_thread(cell: &Cell, prio: u8, barrier: &Barrier, stop: &AtomicBool) {
    let _ = signals::block_all_except(signals::wake_signal());
    cell.tid.store(system::current_tid(), Relaxed);
    let set = sched::set_current_thread(sched::Policy::Fifo, i32::from(prio));
    if let Err(e) = set {
        cell.failed.store(e.raw_os_error(), Relaxed);
    }
    barrier.wait();
    if set.is_ok() {
        while !stop.load(Relaxed) {
            std::hint::black_box(now_us());
        }
        let _ = sched::set_current_thread(sched::Policy::Other, 0);
    }
    cell.failed.store(-1, Relaxed);
}

/// The calling thread's voluntary and involuntary context switches and
/// migrations, from `/proc/thread-self/sched` (or `status`, without
/// migrations); -1 for what cannot be read.
fn switches() -> (i64, i64, i64) {
    let field = |text: &str, name: &str| -> i64 {
        text.lines()
            .find_map(|l| {
                let rest = l.strip_prefix(name)?;
                let value = rest.trim_start().strip_prefix(':')?;
                value.trim().parse().ok()
            })
            .unwrap_or(-1)
    };
    if let Ok(text) = std::fs::read_to_string("/proc/thread-self/sched") {
        (
            field(&text, "nr_voluntary_switches"),
            field(&text, "nr_involuntary_switches"),
            field(&text, "se.nr_migrations"),
        )
    } else if let Ok(text) = std::fs::read_to_string("/proc/thread-self/status") {
        (
            field(&text, "voluntary_ctxt_switches"),
            field(&text, "nonvoluntary_ctxt_switches"),
            -1,
        )
    } else {
        (-1, -1, -1)
    }
}

impl WorkRunning {
    /// The first thread that could not take its policy.
    pub fn setup_error(&self) -> Option<WorkSetupError> {
        let bad = |c: &Cell| {
            let e = c.failed.load(Relaxed);
            (e > 0).then_some(e)
        };
        self.cells
            .iter()
            .enumerate()
            .find_map(|(i, c)| {
                bad(c).map(|errno| WorkSetupError {
                    index: Some(i),
                    errno,
                })
            })
            .or_else(|| {
                self.spinner
                    .as_deref()
                    .and_then(bad)
                    .map(|errno| WorkSetupError { index: None, errno })
            })
    }

    /// The working threads' ids, in order.
    pub fn tids(&self) -> Vec<i32> {
        self.cells.iter().map(|c| c.tid.load(Relaxed)).collect()
    }

    /// Stops every thread, waits for them (each leaves at its next job)
    /// and returns each working thread's result (`None` for one that
    /// failed or did not leave in time).
    pub fn finish(mut self) -> Vec<Option<WorkResult>> {
        self.stop.store(true, Relaxed);
        let limit = Instant::now()
            + Duration::from_micros(self.longest_period_us * 4)
            + Duration::from_secs(1);
        let left = |c: &Cell| c.failed.load(Relaxed) != 0;
        let all_left = || self.cells.iter().all(left) && self.spinner.as_deref().is_none_or(left);
        while !all_left() && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(1));
        }
        if all_left() {
            for h in std::mem::take(&mut self.handles) {
                let _ = h.join();
            }
        }
        self.cells
            .iter()
            .map(|c| c.result.lock().ok().and_then(|r| *r))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prime_search_finds_primes() {
        let mut w = Work::new(0, 0, 0);
        w.run_loops(1000);
        let p = w.prime;
        assert!(p > 2 && (2..p).all(|d| !p.is_multiple_of(d)), "{p}");
    }

    #[test]
    fn a_job_counts_a_missed_deadline_and_missed_periods() {
        // A period of 1 µs and a start 10 ms ago: periods were missed, and
        // the deadline is missed as the loops take longer than 1 µs.
        let mut w = Work::new(1, 1, 100_000);
        let now = now_us();
        w.job(now - 10_000);
        assert!(w.missed_periods > 0);
        assert_eq!(w.nr_periods, 1);
        // A job that starts before its period moves it.
        let mut w = Work::new(100, 1_000_000, 1);
        w.job(now_us() + 500_000);
        assert_eq!(w.nr_adjust, 1);
        assert!(w.total_adjust > 0);
    }
}
