//! One phase of an oslat run: its threads started, lined up, stopped and
//! joined, their figures collected (C's `run_expt`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rtlat_sys::Errno;
use rtlat_sys::clock::{self, Clock};
use rtlat_sys::counter;
use rtlat_sys::sched::{self, Policy};
use rtlat_sys::tracefs::TraceControl;

use super::hot::{LoopState, Trigger};
use super::{OslatConfig, ThreadFigures};

/// Each thread's figures and trigger, in its slot once it has ended.
type Results = Arc<Mutex<Vec<Option<(ThreadFigures, Option<Trigger>)>>>>;

/// The stack of an oslat thread: its loop keeps its tables on the heap.
const STACK_BYTES: usize = 64 * 1024;

/// Why a phase could not run.
#[derive(Debug, thiserror::Error)]
pub enum OslatError {
    /// A thread could not be started.
    #[error("cannot start a measuring thread: {0}")]
    Spawn(std::io::Error),
    /// A thread could not be pinned to its CPU.
    #[error("cannot pin the thread of CPU {cpu} to it: {errno}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// Why.
        errno: Errno,
    },
    /// A thread could not take SCHED_FIFO.
    #[error("cannot set SCHED_FIFO priority {priority} on the thread of CPU {cpu}: {errno}")]
    Priority {
        /// The CPU.
        cpu: usize,
        /// The priority asked.
        priority: u8,
        /// Why.
        errno: Errno,
    },
}

/// The main thread's side of a run's stop: set by a signal, a closed
/// output, or a `-T` trigger; once set, every phase still to come ends at
/// once (after one gap per thread).
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Asks the threads to stop.
    pub fn request(&self) {
        self.0.store(true, SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn requested(&self) -> bool {
        self.0.load(SeqCst)
    }
}

/// What a phase gave.
#[derive(Debug)]
pub struct PhaseOutcome {
    /// Each thread's figures, in CPU-list order.
    pub threads: Vec<ThreadFigures>,
    /// The gap that reached `-T`, if any.
    pub trigger: Option<Trigger>,
}

/// The shared state of a phase's threads.
#[derive(Debug, Default)]
struct Lineup {
    go: AtomicBool,
    abort: AtomicBool,
    started: AtomicUsize,
    running: AtomicUsize,
    finished: AtomicUsize,
}

/// An oslat run: its configuration and the trace files of `-T`.
#[derive(Debug)]
pub struct OslatRun {
    config: OslatConfig,
    trace: Option<Arc<TraceControl>>,
}

impl OslatRun {
    /// A run of `config`; `trace` is the tracefs of `-T`.
    pub fn new(config: OslatConfig, trace: Option<TraceControl>) -> OslatRun {
        OslatRun {
            config,
            trace: trace.map(Arc::new),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &OslatConfig {
        &self.config
    }
}

/// Runs one phase on `cpus` for `length` (C's `run_expt`): the pre-heat
/// (`preheat`: no `-T`) or the measurement with a bias of `bias` µs.
/// `tick` is called about every 10 ms while the threads loop (the main
/// thread's chores: drive the load); when it returns true, or `stop` is
/// requested, the phase ends early.
pub fn run_phase(
    run: &OslatRun,
    cpus: &[usize],
    bias: u64,
    preheat: bool,
    length: Duration,
    stop: &Stop,
    tick: &mut dyn FnMut() -> bool,
) -> Result<PhaseOutcome, OslatError> {
    let config = &run.config;
    let lineup = Arc::new(Lineup::default());
    let loop_stop = Arc::new(AtomicBool::new(false));
    let n = cpus.len();
    let results: Results = Arc::new(Mutex::new((0..n).map(|_| None).collect()));
    let errors: Arc<Mutex<Option<OslatError>>> = Arc::new(Mutex::new(None));
    let mut handles = Vec::with_capacity(n);
    for (slot, &cpu) in cpus.iter().enumerate() {
        let job = ThreadJob {
            slot,
            cpu,
            n,
            rtprio: config.rtprio,
            buckets: config.bucket_size,
            scale: config.scale,
            bias,
            threshold: if preheat {
                None
            } else {
                config.trace_threshold_us
            },
            workload: config.workload,
            workload_mem: config.workload_mem,
            lineup: Arc::clone(&lineup),
            loop_stop: Arc::clone(&loop_stop),
            results: Arc::clone(&results),
            errors: Arc::clone(&errors),
            trace: run.trace.clone(),
        };
        match rtlat_sys::thread::spawn("oslat", STACK_BYTES, move || job.run()) {
            Ok(h) => handles.push(h),
            Err(e) => {
                lineup.abort.store(true, SeqCst);
                for h in handles {
                    let _ = h.join();
                }
                return Err(OslatError::Spawn(e));
            }
        }
    }
    while lineup.started.load(SeqCst) != n && !lineup.abort.load(SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    lineup.go.store(true, SeqCst);
    if stop.requested() {
        loop_stop.store(true, SeqCst);
    }
    // The threads measure their counter first: the phase's time counts
    // from when they all loop.
    while lineup.running.load(SeqCst) != n && !lineup.abort.load(SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let end = Instant::now() + length;
    while !loop_stop.load(SeqCst) && !lineup.abort.load(SeqCst) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if tick() || stop.requested() {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(10)));
    }
    loop_stop.store(true, SeqCst);
    for h in handles {
        let _ = h.join();
    }
    if let Some(e) = errors.lock().map(|mut e| e.take()).unwrap_or(None) {
        return Err(e);
    }
    let mut trigger = None;
    let threads = std::mem::take(&mut *results.lock().expect("no thread panics holding it"))
        .into_iter()
        .flatten()
        .map(|(figures, t)| {
            trigger = trigger.or(t);
            figures
        })
        .collect();
    if trigger.is_some() {
        stop.request();
    }
    Ok(PhaseOutcome { threads, trigger })
}

/// What one thread of a phase does.
struct ThreadJob {
    slot: usize,
    cpu: usize,
    n: usize,
    rtprio: u8,
    buckets: usize,
    scale: super::Scale,
    bias: u64,
    threshold: Option<u64>,
    workload: super::Workload,
    workload_mem: usize,
    lineup: Arc<Lineup>,
    loop_stop: Arc<AtomicBool>,
    results: Results,
    errors: Arc<Mutex<Option<OslatError>>>,
    trace: Option<Arc<TraceControl>>,
}

impl ThreadJob {
    fn run(self) {
        let lineup = &*self.lineup;
        if let Err(e) = self.set_up() {
            if let Ok(mut slot) = self.errors.lock() {
                slot.get_or_insert(e);
            }
            lineup.abort.store(true, SeqCst);
            lineup.started.fetch_add(1, SeqCst);
            return;
        }
        lineup.started.fetch_add(1, SeqCst);
        // Not bashing the CPU until every thread has started.
        while !lineup.go.load(SeqCst) && !lineup.abort.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        if lineup.abort.load(SeqCst) {
            return;
        }
        let hz = counter::stated_hz().unwrap_or_else(measure_counter_hz);
        let mut state = LoopState::scaled(
            self.cpu,
            hz,
            (self.buckets, self.scale),
            self.bias,
            self.threshold,
            self.workload,
            self.workload_mem,
        );
        // All start together.
        lineup.running.fetch_add(1, SeqCst);
        while lineup.running.load(Relaxed) != self.n && !lineup.abort.load(Relaxed) {
            std::hint::spin_loop();
        }
        state.run(&self.loop_stop, self.trace.as_deref());
        let trigger = state.trigger();
        // Waiting for the others, so as not to disturb them by exiting.
        lineup.finished.fetch_add(1, SeqCst);
        while lineup.finished.load(Relaxed) != self.n && !lineup.abort.load(Relaxed) {
            std::hint::spin_loop();
        }
        let figures = state.figures(rtlat_sys::system::current_tid());
        if let Ok(mut all) = self.results.lock() {
            all[self.slot] = Some((figures, trigger));
        }
    }

    fn set_up(&self) -> Result<(), OslatError> {
        rtlat_sys::affinity::pin_current_thread(&[self.cpu]).map_err(|errno| OslatError::Pin {
            cpu: self.cpu,
            errno,
        })?;
        if self.rtprio > 0 {
            sched::set_current_thread(Policy::Fifo, i32::from(self.rtprio)).map_err(|errno| {
                OslatError::Priority {
                    cpu: self.cpu,
                    priority: self.rtprio,
                    errno,
                }
            })?;
        }
        Ok(())
    }
}

fn monotonic_ns() -> i128 {
    let t = clock::now(Clock::Monotonic);
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

/// One measurement of the counter's rate: a million ticks against the
/// monotonic clock.
fn counter_hz_once() -> u64 {
    let start = counter::read();
    let t0 = monotonic_ns();
    let mut end = start;
    while end.wrapping_sub(start) < 1_000_000 {
        end = counter::read();
    }
    let t1 = monotonic_ns();
    let ns = (t1 - t0).max(1);
    (i128::from(end.wrapping_sub(start)) * 1_000_000_000 / ns) as u64
}

/// The counter's rate, as C measures it: until two measurements in a row
/// agree within 0.1 % (at most 100 tries).
fn measure_counter_hz() -> u64 {
    let mut previous = counter_hz_once();
    for _ in 0..100 {
        let m = counter_hz_once();
        let d = m.abs_diff(previous);
        previous = m;
        if d <= m / 1000 {
            break;
        }
    }
    previous
}
