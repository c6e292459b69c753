//! Background load: worker threads that keep the machine busy in a chosen
//! way while latency is measured (or on their own, `rtlat load`).
//!
//! A [`LoadPlan`] says which [`LoadKind`]s run with how many workers, where
//! and at which nice value; [`LoadSet::start`] starts them all and returns
//! a [`Running`] set once every worker is ready (or an error, with nothing
//! left running). No worker begins its loop before every worker is ready:
//! one kind's setup (the `cache` buffer touches hundreds of MiB) never
//! competes with another kind's loop, and every operation counted falls
//! between the start and the stop that the rates divide by. [`Running::stop`] raises the stop flag every worker loop
//! checks, joins every thread (children of `fork` are always waited for)
//! and returns a [`LoadReport`]: how many operations each kind did, so load
//! is measured, not assumed. One file per kind holds its loop and says what
//! one operation is.
//!
//! Workers run SCHED_OTHER (set explicitly, never real-time) at the plan's
//! nice value, pinned round-robin to the plan's CPUs when it has some
//! (a `syscalls` worker pins itself and its partner to one CPU in any
//! case: their yields must hand that CPU to each other).
//!
//! Beside a measurement, a `schedule` runs loads in phases (one phase
//! for a constant load) and `procstat` measures what the whole machine
//! did meanwhile. The modules are private: what a front end uses is
//! re-exported here ([`LoadSchedule`], [`Activity`], …).

mod cache;
mod cpu;
mod fork;
mod hackbench;
mod io;
mod memory;
mod messaging;
pub(crate) use fork::helper_main as fork_helper_main;
pub use hackbench::ROUND as HACKBENCH_ROUND;
pub(crate) use hackbench::helper_main as hackbench_helper_main;
pub(crate) use workload::helper_main as workload_helper_main;
mod procstat;
mod schedule;
mod syscalls;
mod timers;
mod workload;

pub use procstat::Activity;
pub use schedule::{
    KindFigures, LoadPhase, LoadSchedule, LoadSummary, PhaseLoad, ScheduleRun, kind_line,
};
pub use workload::{Workload, WorkloadEnd};

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rtlat_sys::process::Stdio;

use crate::helper::HelperRole;

/// One kind of load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoadKind {
    /// Integer and floating-point (vectorisable) arithmetic.
    Cpu,
    /// Streaming copies through buffers far larger than the last-level cache.
    Memory,
    /// Atomic writes to cache lines every `cache` worker shares, and a
    /// sweep through a buffer the size of the last-level cache.
    Cache,
    /// Writes, each followed by fsync, to unnamed files in a directory.
    Io,
    /// hackbench-like small messages over pipes and UNIX sockets, by
    /// threads that never end (a steady stream, no process created).
    Messaging,
    /// rt-tests' hackbench itself, in rounds: forked senders and
    /// receivers (rteval's default load).
    Hackbench,
    /// Cheap system calls and context switches.
    Syscalls,
    /// Many threads sleeping briefly: timer interrupts and wake-ups.
    Timers,
    /// Processes created and reaped.
    Fork,
}

impl LoadKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [LoadKind; 9] = [
        LoadKind::Cpu,
        LoadKind::Memory,
        LoadKind::Cache,
        LoadKind::Io,
        LoadKind::Messaging,
        LoadKind::Hackbench,
        LoadKind::Syscalls,
        LoadKind::Timers,
        LoadKind::Fork,
    ];

    /// The kind's name in specs and reports.
    pub const fn name(self) -> &'static str {
        match self {
            LoadKind::Cpu => "cpu",
            LoadKind::Memory => "memory",
            LoadKind::Cache => "cache",
            LoadKind::Io => "io",
            LoadKind::Messaging => "messaging",
            LoadKind::Hackbench => "hackbench",
            LoadKind::Syscalls => "syscalls",
            LoadKind::Timers => "timers",
            LoadKind::Fork => "fork",
        }
    }

    /// What one operation of this kind is, for help texts.
    pub const fn op_definition(self) -> &'static str {
        match self {
            LoadKind::Cpu => cpu::OP,
            LoadKind::Memory => memory::OP,
            LoadKind::Cache => cache::OP,
            LoadKind::Io => io::OP,
            LoadKind::Messaging => messaging::OP,
            LoadKind::Hackbench => hackbench::OP,
            LoadKind::Syscalls => syscalls::OP,
            LoadKind::Timers => timers::OP,
            LoadKind::Fork => fork::OP,
        }
    }

    /// The kind named `name` (exact, lower case).
    pub fn from_name(name: &str) -> Option<LoadKind> {
        LoadKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for LoadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One item of a load spec: a kind, with a worker count or the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindRequest {
    /// The kind.
    pub kind: LoadKind,
    /// Workers asked for; `None` for the default (one per CPU).
    pub workers: Option<usize>,
}

/// The most workers one kind may have.
pub const MAX_WORKERS: usize = 4096;

/// Why a load spec was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Nothing, or an empty item (`cpu,,io`).
    #[error("expected KIND[:WORKERS][,KIND[:WORKERS]...], got an empty item")]
    Empty,
    /// Not one of the kinds.
    #[error("unknown load kind '{0}' (kinds: {kinds})", kinds = kind_names())]
    UnknownKind(String),
    /// Not a worker count.
    #[error("worker count '{count}' of {kind}: expected a whole number, 1 to {MAX_WORKERS}")]
    BadWorkers {
        /// The kind's name.
        kind: String,
        /// The count as given.
        count: String,
    },
    /// The same kind twice.
    #[error("load kind '{0}' is given twice")]
    Duplicate(LoadKind),
}

/// The kinds' names, comma-separated.
pub fn kind_names() -> String {
    LoadKind::ALL.map(LoadKind::name).join(", ")
}

/// Parses `KIND[:WORKERS][,KIND[:WORKERS]...]` (blanks around items and
/// counts ignored; kinds lower case; each kind at most once).
pub fn parse_spec(text: &str) -> Result<Vec<KindRequest>, SpecError> {
    let mut out: Vec<KindRequest> = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(SpecError::Empty);
        }
        let (name, count) = match item.split_once(':') {
            Some((n, c)) => (n.trim(), Some(c.trim())),
            None => (item, None),
        };
        let kind = LoadKind::from_name(name).ok_or_else(|| SpecError::UnknownKind(name.into()))?;
        let workers = match count {
            None => None,
            Some(c) => match c.parse::<usize>() {
                Ok(n)
                    if (1..=MAX_WORKERS).contains(&n) && c.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    Some(n)
                }
                _ => {
                    return Err(SpecError::BadWorkers {
                        kind: name.into(),
                        count: c.into(),
                    });
                }
            },
        };
        if out.iter().any(|r| r.kind == kind) {
            return Err(SpecError::Duplicate(kind));
        }
        out.push(KindRequest { kind, workers });
    }
    Ok(out)
}

/// One kind with its worker count, in a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindPlan {
    /// The kind.
    pub kind: LoadKind,
    /// How many workers (at least 1).
    pub workers: usize,
}

/// A validated load: what runs, where, how nice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    /// The kinds, in spec order, each once.
    pub kinds: Vec<KindPlan>,
    /// CPUs the workers are pinned to, round-robin over all workers in
    /// plan order; empty for no pinning.
    pub cpus: Vec<usize>,
    /// Nice value of every worker (-20 to 19); `None` leaves it as is.
    pub nice: Option<i32>,
    /// Where `io` makes its (unnamed) files: $TMPDIR or /tmp.
    pub temp_root: PathBuf,
    /// The program `fork` workers start to fork in a process of its own
    /// (the rtlat binary, which does the forking when started as
    /// [`HelperRole::ForkLoad`](crate::helper::HelperRole::ForkLoad));
    /// `None`: they fork themselves.
    pub fork_helper: Option<PathBuf>,
}

impl LoadPlan {
    /// A plan from parsed spec items: a kind without a count gets
    /// `default_workers` (one per CPU the load may use).
    pub fn from_requests(
        requests: &[KindRequest],
        default_workers: usize,
        cpus: Vec<usize>,
        nice: Option<i32>,
        temp_root: PathBuf,
    ) -> LoadPlan {
        LoadPlan {
            kinds: requests
                .iter()
                .map(|r| KindPlan {
                    kind: r.kind,
                    workers: r.workers.unwrap_or(default_workers.max(1)),
                })
                .collect(),
            cpus,
            nice,
            temp_root,
            fork_helper: None,
        }
    }
}

/// Why a load could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No file can be made in the `io` directory.
    #[error("io load: cannot create a file in '{dir}': {cause}")]
    TempDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// A worker thread could not be created.
    #[error("{kind} load: cannot start worker thread {index}: {cause}")]
    Spawn {
        /// Its kind.
        kind: LoadKind,
        /// Its index within the kind.
        index: usize,
        /// Why.
        cause: std::io::Error,
    },
    /// A worker failed to set itself up or failed while running.
    #[error("{kind} load, worker {index}: {message}")]
    Worker {
        /// Its kind.
        kind: LoadKind,
        /// Its index within the kind.
        index: usize,
        /// What went wrong.
        message: String,
    },
}

/// A counter on its own cache line, so workers' counters never share one.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n` operations.
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What a worker loop gets: the stop flag, its counter, its identity and
/// what its kind shares between workers.
#[derive(Debug)]
pub(crate) struct WorkerCtx {
    stop: Arc<AtomicBool>,
    pub(crate) counter: Arc<Counter>,
    pub(crate) index: usize,
    pub(crate) shared: Arc<Shared>,
}

impl WorkerCtx {
    /// Whether the load is to stop.
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The stop flag, for helper threads of a worker.
    pub(crate) fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }
}

/// Starts `program` as the helper `role` (the `fork` or `hackbench`
/// helper, `word` in the messages) and adds up the counts it reports
/// until the load stops.
pub(crate) fn run_helper(
    ctx: &WorkerCtx,
    program: &Path,
    role: HelperRole,
    word: &str,
) -> WorkerResult {
    let name = format!("the {word} helper");
    let mut child = role
        .spawn(program)
        .stdout(Stdio::Piped)
        .spawn()
        .map_err(|e| format!("cannot start {name} {}: {e}", program.display()))?;
    let mut counts = child
        .stdout
        .take()
        .ok_or_else(|| format!("{name} has no output"))?;
    let mut read_count = || -> Result<Option<u64>, String> {
        let mut bytes = [0u8; 8];
        match counts.read_exact(&mut bytes) {
            Ok(()) => Ok(Some(u64::from_le_bytes(bytes))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(format!("reading {name}'s count: {e}")),
        }
    };
    let mut result = Ok(());
    while !ctx.stopping() {
        match read_count() {
            Ok(Some(n)) => ctx.counter.add(n),
            Ok(None) => {
                result = Err(format!("{name} ended on its own"));
                break;
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    // End of its input tells the helper to stop; its last counts follow.
    drop(child.stdin.take());
    while let Ok(Some(n)) = read_count() {
        ctx.counter.add(n);
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {name}: {e}"))?;
    if result.is_ok() && !status.success() {
        result = Err(format!("{name} failed: {status}"));
    }
    result
}

/// State shared by the workers of a set.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) cache_lines: cache::Lines,
    pub(crate) io_dir: Option<PathBuf>,
    pub(crate) memory_bytes: usize,
    pub(crate) fork_helper: Option<PathBuf>,
}

/// A worker's result: `Err(message)` ends it.
pub(crate) type WorkerResult = Result<(), String>;

/// A set of workers, before and while running.
#[derive(Debug)]
pub struct LoadSet;

/// Checks that `io` can make its files in `root`, before any worker starts.
fn check_temp_root(root: &Path) -> Result<(), LoadError> {
    io::unnamed_file(root)
        .map(drop)
        .map_err(|cause| LoadError::TempDir {
            dir: root.to_path_buf(),
            cause,
        })
}

struct Worker {
    kind: LoadKind,
    index: usize,
    counter: Arc<Counter>,
    handle: Option<JoinHandle<WorkerResult>>,
}

/// Whether the workers, once ready, may begin their loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GateState {
    Closed,
    Open,
    Cancelled,
}

/// Holds ready workers until every worker is ready ([`StartGate::open`])
/// or the start has failed ([`StartGate::cancel`]).
#[derive(Debug)]
struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl StartGate {
    fn new() -> StartGate {
        StartGate {
            state: Mutex::new(GateState::Closed),
            changed: Condvar::new(),
        }
    }

    /// Blocks while the gate is closed; true when it opened, false when
    /// the start was cancelled.
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while *state == GateState::Closed {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        *state == GateState::Open
    }

    fn set(&self, to: GateState) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if *state == GateState::Closed {
            *state = to;
            self.changed.notify_all();
        }
    }

    fn open(&self) {
        self.set(GateState::Open);
    }

    /// Lets waiting workers end without running (no effect once open).
    fn cancel(&self) {
        self.set(GateState::Cancelled);
    }
}

/// A load that is running. Dropping it stops it too (without a report).
pub struct Running {
    stop: Arc<AtomicBool>,
    gate: Arc<StartGate>,
    workers: Vec<Worker>,
    kinds: Vec<KindPlan>,
    started: Instant,
}

impl fmt::Debug for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running")
            .field("kinds", &self.kinds)
            .field("workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

impl LoadSet {
    /// Starts every worker of `plan` and returns once all are set up
    /// (policy, nice value, affinity, buffers) and have begun their loops
    /// together. If any fails, the others are stopped and joined without
    /// having run, and the first error is returned.
    pub fn start(plan: &LoadPlan) -> Result<Running, LoadError> {
        let mut running = LoadSet::ready(plan)?;
        running.started = Instant::now();
        running.gate.open();
        Ok(running)
    }

    /// Starts every worker of `plan` and returns once all are set up, each
    /// held at the closed start gate.
    fn ready(plan: &LoadPlan) -> Result<Running, LoadError> {
        let io = plan.kinds.iter().any(|k| k.kind == LoadKind::Io);
        if io {
            check_temp_root(&plan.temp_root)?;
        }
        let shared = Arc::new(Shared {
            cache_lines: cache::Lines::new(),
            io_dir: io.then(|| plan.temp_root.clone()),
            memory_bytes: memory::buffer_bytes(),
            fork_helper: plan.fork_helper.clone(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let gate = Arc::new(StartGate::new());
        let mut running = Running {
            stop: Arc::clone(&stop),
            gate: Arc::clone(&gate),
            workers: Vec::new(),
            kinds: plan.kinds.clone(),
            started: Instant::now(),
        };
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LoadError>>();
        let mut slot = 0usize;
        for kp in &plan.kinds {
            for index in 0..kp.workers {
                let cpu = (!plan.cpus.is_empty()).then(|| plan.cpus[slot % plan.cpus.len()]);
                slot += 1;
                let ctx = WorkerCtx {
                    stop: Arc::clone(&stop),
                    counter: Arc::new(Counter::default()),
                    index,
                    shared: Arc::clone(&shared),
                };
                let counter = Arc::clone(&ctx.counter);
                let kind = kp.kind;
                let nice = plan.nice;
                let tx = ready_tx.clone();
                let gate = Arc::clone(&gate);
                let spawned = std::thread::Builder::new()
                    .name(format!("load-{}-{index}", kind.name()))
                    .stack_size(256 * 1024)
                    .spawn(move || worker_main(kind, ctx, cpu, nice, tx, &gate));
                match spawned {
                    Ok(handle) => running.workers.push(Worker {
                        kind,
                        index,
                        counter,
                        handle: Some(handle),
                    }),
                    Err(cause) => {
                        running.finish();
                        return Err(LoadError::Spawn { kind, index, cause });
                    }
                }
            }
        }
        drop(ready_tx);
        let mut first_error = None;
        let mut answered = 0;
        for _ in 0..running.workers.len() {
            match ready_rx.recv() {
                Ok(Ok(())) => answered += 1,
                Ok(Err(e)) => {
                    answered += 1;
                    first_error.get_or_insert(e);
                }
                // A worker ended without saying: it panicked; join tells.
                Err(_) => break,
            }
        }
        if first_error.is_none() && answered < running.workers.len() {
            // A worker panicked before it was ready. (One that fails once
            // running is reported by `stop`, with its own message.)
            if let Some(w) = running.workers.iter().find(|w| w.ended()) {
                first_error = Some(LoadError::Worker {
                    kind: w.kind,
                    index: w.index,
                    message: "ended while starting".into(),
                });
            }
        }
        if let Some(e) = first_error {
            running.finish();
            return Err(e);
        }
        Ok(running)
    }
}

fn worker_main(
    kind: LoadKind,
    ctx: WorkerCtx,
    cpu: Option<usize>,
    nice: Option<i32>,
    ready: mpsc::Sender<Result<(), LoadError>>,
    gate: &StartGate,
) -> WorkerResult {
    let fail = |message: String| LoadError::Worker {
        kind,
        index: ctx.index,
        message,
    };
    let setup = (|| {
        rtlat_sys::sched::set_current_thread(rtlat_sys::sched::Policy::Other, 0)
            .map_err(|e| fail(format!("cannot set SCHED_OTHER: {e}")))?;
        if let Some(n) = nice {
            rtlat_sys::load::set_current_thread_nice(n).map_err(|e| {
                let hint = if e == rtlat_sys::Errno::ACCESS || e == rtlat_sys::Errno::PERM {
                    " (lowering the nice value needs CAP_SYS_NICE or RLIMIT_NICE)"
                } else {
                    ""
                };
                fail(format!("cannot set nice value {n}: {e}{hint}"))
            })?;
        }
        if let Some(c) = cpu {
            rtlat_sys::affinity::pin_current_thread(&[c])
                .map_err(|e| fail(format!("cannot pin to CPU {c}: {e}")))?;
        }
        Ok(())
    })();
    let state = setup.and_then(|()| prepare(kind, &ctx).map_err(fail));
    let state = match state {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return Ok(());
        }
    };
    drop(ready);
    if !gate.wait() {
        return Ok(());
    }
    state.run(&ctx)
}

/// What a worker allocated before it said it is ready.
enum Prepared {
    Cpu,
    Memory(memory::Buffer),
    Cache,
    Io(io::File),
    Messaging,
    Hackbench,
    Syscalls,
    Timers,
    Fork,
}

fn prepare(kind: LoadKind, ctx: &WorkerCtx) -> Result<Prepared, String> {
    Ok(match kind {
        LoadKind::Cpu => Prepared::Cpu,
        LoadKind::Memory => Prepared::Memory(memory::Buffer::new(ctx.shared.memory_bytes)?),
        LoadKind::Cache => {
            ctx.shared.cache_lines.buffer()?;
            Prepared::Cache
        }
        LoadKind::Io => Prepared::Io(io::File::create(ctx)?),
        LoadKind::Messaging => Prepared::Messaging,
        LoadKind::Hackbench => Prepared::Hackbench,
        LoadKind::Syscalls => Prepared::Syscalls,
        LoadKind::Timers => Prepared::Timers,
        LoadKind::Fork => Prepared::Fork,
    })
}

impl Prepared {
    fn run(self, ctx: &WorkerCtx) -> WorkerResult {
        match self {
            Prepared::Cpu => cpu::run(ctx),
            Prepared::Memory(buffer) => memory::run(ctx, buffer),
            Prepared::Cache => cache::run(ctx),
            Prepared::Io(file) => io::run(ctx, file),
            Prepared::Messaging => messaging::run(ctx),
            Prepared::Hackbench => hackbench::run(ctx),
            Prepared::Syscalls => syscalls::run(ctx),
            Prepared::Timers => timers::run(ctx),
            Prepared::Fork => fork::run(ctx),
        }
    }
}

impl Running {
    /// Stops every worker, joins them and reports what each kind did.
    pub fn stop(mut self) -> LoadReport {
        let elapsed = self.started.elapsed();
        let errors = self.finish();
        let kinds = self
            .kinds
            .iter()
            .map(|kp| KindReport {
                kind: kp.kind,
                workers: kp.workers,
                ops: self
                    .workers
                    .iter()
                    .filter(|w| w.kind == kp.kind)
                    .map(|w| w.counter.get())
                    .sum(),
            })
            .collect();
        LoadReport {
            elapsed,
            kinds,
            errors,
        }
    }

    /// Whether a worker has ended (with an error: loops only end on stop).
    pub fn any_worker_ended(&self) -> bool {
        self.workers.iter().any(Worker::ended)
    }

    /// Raises the stop flag and joins every worker (keeping their
    /// counters). Returns the workers' errors.
    fn finish(&mut self) -> Vec<LoadError> {
        self.stop.store(true, Ordering::Relaxed);
        self.gate.cancel();
        let mut errors = Vec::new();
        for w in &mut self.workers {
            let Some(handle) = w.handle.take() else {
                continue;
            };
            let message = match handle.join() {
                Ok(Ok(())) => None,
                Ok(Err(m)) => Some(m),
                Err(_) => Some("panicked".to_string()),
            };
            if let Some(message) = message {
                errors.push(LoadError::Worker {
                    kind: w.kind,
                    index: w.index,
                    message,
                });
            }
        }
        errors
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Worker {
    fn ended(&self) -> bool {
        self.handle.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

/// What one kind did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindReport {
    /// The kind.
    pub kind: LoadKind,
    /// Its workers.
    pub workers: usize,
    /// Operations done by all its workers (see [`LoadKind::op_definition`]).
    pub ops: u64,
}

/// What a load did, from the moment all workers were ready to the stop.
#[derive(Debug)]
pub struct LoadReport {
    /// How long it ran.
    pub elapsed: Duration,
    /// Each kind, in plan order.
    pub kinds: Vec<KindReport>,
    /// Workers that failed while running.
    pub errors: Vec<LoadError>,
}

impl LoadReport {
    /// One line per kind: `cpu: 123456 ops/s (2 workers)`.
    pub fn lines(&self) -> Vec<String> {
        self.kinds
            .iter()
            .map(|&report| {
                schedule::kind_line(&schedule::KindFigures {
                    report,
                    elapsed: self.elapsed,
                })
            })
            .collect()
    }
}

/// A rate as an integer from 100 up, else with three significant digits.
pub fn format_rate(rate: f64) -> String {
    if rate >= 100.0 || rate == 0.0 {
        format!("{rate:.0}")
    } else if rate >= 10.0 {
        format!("{rate:.1}")
    } else if rate >= 1.0 {
        format!("{rate:.2}")
    } else {
        format!("{rate:.3}")
    }
}

#[cfg(test)]
mod tests;
