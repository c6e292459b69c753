//! The engine: prepares, starts, watches and stops the measuring threads.
//!
//! [`Engine::new`] allocates everything the threads will touch (slots,
//! histograms, sample rings). [`Engine::start`] spawns one thread per
//! [`ThreadPlan`] on a small stack; each thread blocks signals, pins itself,
//! takes its scheduling policy, pre-faults its stack and buffers, and waits
//! at a start barrier with the others. Only then does it enter the measuring
//! loop ([`cyclic::measure`]). The caller's thread stays as it is: it reads
//! the shared slots for live output and decides when to stop.

pub mod cyclic;
pub mod source;
pub(crate) mod threads;
pub mod time;
pub(crate) mod virtual_time;

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use rtlat_sys::clock::{Clock, Timespec};
use rtlat_sys::msr::SmiCounter;
use rtlat_sys::thread::RawThread;
use rtlat_sys::timer::ThreadTimer;
use rtlat_sys::timerfd::PeriodicTimerFd;
use rtlat_sys::tracefs::TraceControl;

use crate::candidates::CandidateRing;
use rtlat_sys::{affinity, memory, sched, signals, system};

use crate::config::{
    Alignment, ClockKind, CyclicConfig, MeasureMode, SAMPLE_RING_LEN, SchedPolicy, ThreadPlan,
    TimeSourceKind, WaitMode,
};
use crate::interval::IntervalLog;
use crate::report::{EndReason, RunReport, ThreadError, ThreadStep};
use crate::stats::{
    BreakCell, LoopEnd, SampleRing, SignedHistogram, SpikeLog, ThreadChannel, ThreadState,
    try_collect_slice,
};
use cyclic::LoopParams;
use source::{
    FakeSmiCounter, PosixTimerClock, RealClock, SYNTHETIC_START, SmiSource, SyntheticClock,
    TimeSource, TimerfdClock, TscTime, calibrate_tsc,
};
use time::Period;
use virtual_time::Turnstile;

/// Stack size of a measuring thread (cyclic, ring and IPC engines alike).
/// Under `mlockall(MCL_FUTURE)` every byte of it is locked, so it is kept
/// small (the 8 MiB default would lock 8 MiB per thread).
///
/// Measured use (x86-64, glibc 2.36: the stack was filled with a pattern
/// at the thread's start and before its loop, and scanned when it ended;
/// every wait and measure method, with -h, the distribution,
/// --stats-interval, --spike, -v, -b; also signaltest and the IPC tools):
/// 7.0 KiB in the loop of a release build (7.9 KiB for the thread that
/// makes the process's first vDSO clock read), 10.0 KiB when the wake-up
/// signal that ends a run arrives during a sleep (its frame, with the
/// AVX state, is 3 KiB here and larger on AVX-512 CPUs); 17.1 KiB in debug
/// builds. About 5 KiB of that is glibc's: the thread descriptor and static
/// TLS at the top of the stack, and `start_thread`'s frame. So 24 KiB in
/// release builds (2.4 times the deepest use; 16 KiB would be 1.6 times)
/// and 32 KiB in debug builds.
pub const THREAD_STACK_BYTES: usize = if cfg!(debug_assertions) {
    32 * 1024
} else {
    24 * 1024
};
/// How much of the stack a thread (of this engine, the ring's and the IPC
/// tools') touches before its loop, so that the loop never faults a stack
/// page in (without `-m`, where nothing is locked up front). The thread is
/// 6.3 KiB deep there in release builds (IPC sides about 7 KiB) and 8.4 KiB
/// in debug builds: this reaches below the deepest use (10.0 and 17.1 KiB)
/// and stays above the end of the stack.
pub(crate) const STACK_PREFAULT_BYTES: usize = if cfg!(debug_assertions) {
    16 * 1024
} else {
    12 * 1024
};

/// How long `--measure tsc` compares the TSC with the clock before the run.
const TSC_CALIBRATION_MS: u64 = 20;

/// Synthetic threads report `SYNTHETIC_TID_BASE + index` as their thread
/// id, so that synthetic runs print the same bytes every time.
pub const SYNTHETIC_TID_BASE: i32 = 1000;

/// What can go wrong starting a run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The wake-up signal handler could not be installed.
    #[error("cannot install the wake-up signal handler: {0}")]
    WakeHandler(rtlat_sys::Errno),
    /// The histograms or sample rings could not be allocated.
    #[error("not enough memory for {threads} threads' buffers ({buckets} histogram buckets each)")]
    OutOfMemory {
        /// Number of threads.
        threads: usize,
        /// Histogram buckets per thread.
        buckets: usize,
    },
    /// A measuring thread could not be created.
    #[error("cannot create measuring thread {index}: {source}")]
    Spawn {
        /// Thread number.
        index: usize,
        /// The error from the OS.
        source: std::io::Error,
    },
}

/// Everything the measuring threads and their readers share.
#[derive(Debug)]
pub struct Shared {
    /// One channel per thread, in index order.
    pub channels: Box<[ThreadChannel]>,
    stop: AtomicBool,
    spikes: Option<SpikeLog>,
    breaks: BreakCell,
    trace: Option<TraceControl>,
    align: AlignPoint,
    counts_smi: bool,
}

impl Shared {
    /// Asks every measuring thread to leave its loop.
    pub fn request_stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Relaxed)
    }

    /// Whether the threads count SMIs (`--smi`).
    pub fn counts_smi(&self) -> bool {
        self.counts_smi
    }
}

/// The common start time of aligned runs (`-A`, `--secaligned`): written
/// by thread 0 between two barriers, read by all.
#[derive(Debug)]
struct AlignPoint {
    barrier: Barrier,
    secs: AtomicI64,
    nanos: AtomicI64,
}

/// A prepared run: all memory allocated, no thread started yet.
#[derive(Debug)]
pub struct Engine {
    config: CyclicConfig,
    shared: Arc<Shared>,
}

impl Engine {
    /// Allocates the per-thread slots, histograms and sample rings for
    /// `config`. Fails (instead of aborting) when the memory cannot be had.
    pub fn new(config: CyclicConfig) -> Result<Engine, EngineError> {
        Engine::with_trace(config, None)
    }

    /// Like [`Engine::new`], with the ftrace files a `-b` break writes to
    /// (opened by the caller before the run, so that the measuring threads
    /// never open a file).
    pub fn with_trace(
        config: CyclicConfig,
        trace: Option<TraceControl>,
    ) -> Result<Engine, EngineError> {
        let out_of_memory = || EngineError::OutOfMemory {
            threads: config.threads.len(),
            buckets: config.histogram.map_or(0, |h| h.buckets),
        };
        let ring = |wanted: bool| -> Result<Option<SampleRing>, EngineError> {
            match wanted {
                true => Ok(Some(
                    SampleRing::new(SAMPLE_RING_LEN).ok_or_else(out_of_memory)?,
                )),
                false => Ok(None),
            }
        };
        let channels = try_collect_slice(
            config.threads.iter().map(|_| {
                Ok(ThreadChannel {
                    samples: ring(config.sample_ring)?,
                    smi_samples: ring(config.sample_ring && config.smi)?,
                    signed_histogram: match config.signed_histogram {
                        Some(plan) => Some(
                            SignedHistogram::new(plan.width.as_nanos(), plan.per_side)
                                .ok_or_else(out_of_memory)?,
                        ),
                        None => None,
                    },
                    intervals: match config.intervals {
                        Some(plan) => Some(IntervalLog::new(plan.ring).ok_or_else(out_of_memory)?),
                        None => None,
                    },
                    candidates: match config.explain {
                        Some(_) => Some(CandidateRing::new().ok_or_else(out_of_memory)?),
                        None => None,
                    },
                    ..ThreadChannel::for_run(config.histogram.map(|h| h.buckets), &config.run)
                        .ok_or_else(out_of_memory)?
                })
            }),
            out_of_memory,
        )?;
        let spikes = match config.spikes {
            Some(plan) => Some(SpikeLog::new(plan.capacity).ok_or_else(out_of_memory)?),
            None => None,
        };
        let threads = config.threads.len();
        let counts_smi = config.smi;
        Ok(Engine {
            config,
            shared: Arc::new(Shared {
                channels,
                stop: AtomicBool::new(false),
                spikes,
                breaks: BreakCell::default(),
                trace,
                align: AlignPoint {
                    barrier: Barrier::new(threads),
                    secs: AtomicI64::new(0),
                    nanos: AtomicI64::new(0),
                },
                counts_smi,
            }),
        })
    }

    /// The shared state, for readers.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Spawns the measuring threads and returns once every one of them has
    /// finished its set-up (successfully or not) and passed the start
    /// barrier. Set-up failures show as [`ThreadState::Failed`] slots;
    /// check [`Running::setup_error`].
    pub fn start(self) -> Result<Running, EngineError> {
        let real = self.config.run.source == TimeSourceKind::Real;
        if real {
            signals::install_wake_handler().map_err(EngineError::WakeHandler)?;
        }
        // A thread's start-up allocates; one shared malloc arena keeps
        // mlockall from pinning a fresh 132 KiB arena for every thread.
        memory::use_single_malloc_arena();
        let barrier = Arc::new(Barrier::new(self.config.threads.len() + 1));
        let turnstile = (!real).then(|| Arc::new(Turnstile::new(self.config.threads.len())));
        let tsc = (real && self.config.measure == MeasureMode::Tsc)
            .then(|| calibrate_tsc(sys_clock(self.config.clock), TSC_CALIBRATION_MS));
        // One copy of the configuration for all threads: a copy each would
        // hold every thread's plan in every thread (memory growing with the
        // square of -t).
        let config = Arc::new(self.config.clone());
        let mut handles = Vec::with_capacity(self.config.threads.len());
        for plan in &self.config.threads {
            let job = ThreadJob {
                plan: plan.clone(),
                config: Arc::clone(&config),
                shared: Arc::clone(&self.shared),
                barrier: Arc::clone(&barrier),
                turnstile: turnstile.clone(),
                tsc,
            };
            let spawned = rtlat_sys::thread::spawn(
                &format!("rtlat-t{}", plan.index),
                THREAD_STACK_BYTES,
                move || job.run(),
            );
            match spawned {
                Ok(h) => handles.push(h),
                Err(source) => {
                    // The barrier would never fill: release what was started.
                    self.shared.request_stop();
                    for channel in &self.shared.channels[handles.len()..] {
                        channel.slot.set_state(ThreadState::Failed);
                    }
                    drop(handles);
                    return Err(EngineError::Spawn {
                        index: plan.index,
                        source,
                    });
                }
            }
        }
        barrier.wait();
        Ok(Running {
            config: self.config,
            shared: self.shared,
            handles,
            started: Instant::now(),
        })
    }
}

/// The start of thread `index` given the time thread 0 read (`-A`) or the
/// time the next full second is computed from (`--secaligned`).
fn aligned_start(alignment: Alignment, read: Timespec, index: usize) -> Timespec {
    match alignment {
        Alignment::Threads { offset } => time::add(
            read,
            Period::from_nanos(offset.as_nanos().saturating_mul(index as i64)),
        ),
        Alignment::NextSecond { offset } => {
            // The next full second, or the one after when less than 0.1 s
            // is left, so that the start is never in the past.
            let skip = if read.tv_nsec > 900_000_000 { 2 } else { 1 };
            let second = Timespec {
                tv_sec: read.tv_sec + skip,
                tv_nsec: 0,
            };
            time::add(second, Period::from_nanos(offset.as_nanos()))
        }
    }
}

struct ThreadJob {
    plan: ThreadPlan,
    config: Arc<CyclicConfig>,
    shared: Arc<Shared>,
    barrier: Arc<Barrier>,
    turnstile: Option<Arc<Turnstile>>,
    /// `--measure tsc`: the calibrated nanoseconds per tick, times 2^32.
    tsc: Option<u64>,
}

/// What a real measuring thread opens during its set-up and uses in its
/// loop.
#[derive(Default)]
struct ThreadResources {
    timer: Option<ThreadTimer>,
    timerfd: Option<PeriodicTimerFd>,
    smi: Option<SmiCounter>,
}

impl ThreadJob {
    fn run(self) {
        let channel = &self.shared.channels[self.plan.index];
        let slot = &channel.slot;
        let real = self.config.run.source == TimeSourceKind::Real;
        let tid = if real {
            system::current_tid()
        } else {
            SYNTHETIC_TID_BASE + self.plan.index as i32
        };
        slot.set_tid(tid);

        let setup = if real {
            self.setup_real()
        } else {
            Ok(ThreadResources::default())
        };
        memory::prefault_stack::<STACK_PREFAULT_BYTES>();
        if let Some(h) = &channel.histogram {
            h.prefault();
        }
        if let Some(h) = &channel.signed_histogram {
            h.prefault();
        }
        if let Some(log) = &channel.intervals {
            log.prefault();
        }
        if let Some(d) = &channel.distribution {
            d.prefault();
        }
        if let Some(p) = &channel.phases {
            p.prefault();
        }
        if let Some(c) = &channel.candidates {
            c.prefault();
        }
        for ring in [&channel.samples, &channel.smi_samples]
            .into_iter()
            .flatten()
        {
            ring.prefault();
        }
        if let Err((step, errno)) = &setup {
            slot.fail(*step, *errno);
        }
        self.barrier.wait();
        let Ok(resources) = setup else {
            if self.config.alignment.is_some() {
                // The others wait for every thread at the alignment barriers.
                self.agree_on_start();
            }
            return;
        };

        slot.set_state(ThreadState::Running);
        match (self.config.run.source, resources) {
            (
                TimeSourceKind::Real,
                ThreadResources {
                    timer,
                    timerfd,
                    smi,
                },
            ) => {
                let clock = sys_clock(self.config.clock);
                let mut smi = smi;
                let smi = smi.as_mut().map(|s| s as &mut dyn SmiSource);
                let mark = threads::DisturbanceMark::now();
                let end = match (timer, timerfd, self.config.wait) {
                    (Some(timer), _, WaitMode::PosixTimer { armed_relative }) => {
                        let source = PosixTimerClock::new(clock, timer, armed_relative);
                        self.measure_real(source, smi)
                    }
                    (_, Some(timerfd), WaitMode::Timerfd) => {
                        let by_timer = self.config.measure == MeasureMode::Timer;
                        self.measure_real(TimerfdClock::new(clock, timerfd, by_timer), smi)
                    }
                    _ => self.measure_real(RealClock(clock), smi),
                };
                mark.publish_since(slot);
                if self.plan.policy.is_realtime() {
                    // Leave real-time before the exit path, as cyclictest does.
                    let _ = sched::set_current_thread(sched::Policy::Other, 0);
                }
                self.end_loop(tid, end);
            }
            (TimeSourceKind::Synthetic { seed }, _) => {
                let mut source = SyntheticClock::new(
                    seed,
                    self.plan.index,
                    self.plan.interval.as_nanos(),
                    self.turnstile.clone(),
                );
                let mut fake_smi = FakeSmiCounter::new(seed, self.plan.index);
                let smi = self
                    .config
                    .smi
                    .then_some(&mut fake_smi as &mut dyn SmiSource);
                let end = self.aligned_measure(&mut source, smi);
                // Still holding the turn: the break and the end are recorded
                // before any thread takes a later sample.
                self.end_loop(tid, end);
                let ends_run =
                    matches!(end, LoopEnd::Loops | LoopEnd::Duration | LoopEnd::Break(_));
                source.retire(ends_run);
            }
        }
    }

    /// The exit path of the measuring loop: a `-b` break is handled, and the
    /// thread's end is published.
    fn end_loop(&self, tid: i32, end: LoopEnd) {
        if let LoopEnd::Break(value) = end {
            self.on_break(tid, value);
        }
        self.shared.channels[self.plan.index].slot.set_end(end);
    }

    /// Runs the loop on a real `source`, reading the wake-up time from the
    /// TSC with `--measure tsc`.
    fn measure_real<S: TimeSource>(&self, source: S, smi: Option<&mut dyn SmiSource>) -> LoopEnd {
        match self.tsc {
            Some(ratio) => self.aligned_measure(&mut TscTime::new(source, ratio), smi),
            None => {
                let mut source = source;
                self.aligned_measure(&mut source, smi)
            }
        }
    }

    /// Waits for the common start (with `-A`/`--secaligned`), then runs the
    /// measuring loop.
    fn aligned_measure<S: TimeSource>(
        &self,
        source: &mut S,
        smi: Option<&mut dyn SmiSource>,
    ) -> LoopEnd {
        let start = self.config.alignment.map(|_| self.agree_on_start());
        let params = LoopParams {
            thread: self.plan.index,
            interval: Period::from_nanos(self.plan.interval.as_nanos()),
            wait: self.config.wait,
            resolution: self.config.run.resolution,
            loops: self.config.run.loops,
            duration: self
                .config
                .run
                .duration
                .map(|d| Period::from_nanos(d.as_nanos())),
            start,
            break_threshold: self.config.breaktrace.map(|b| b.threshold),
            spike_trigger: self.config.spikes.map(|s| s.trigger),
            warmup: self.config.warmup.map(|w| Period::from_nanos(w.as_nanos())),
            interval_length: self
                .config
                .intervals
                .map(|plan| Period::from_nanos(plan.length.as_nanos())),
            explain: self.config.explain,
        };
        let channel = &self.shared.channels[self.plan.index];
        let extras = cyclic::LoopExtras {
            spikes: self.shared.spikes.as_ref(),
            smi,
            freeze: self
                .shared
                .trace
                .as_ref()
                .filter(|_| self.config.freeze_on_max),
        };
        cyclic::measure(source, &params, channel, &self.shared.stop, extras)
    }

    /// `-A`/`--secaligned`: once every thread has reached the alignment
    /// barrier, one of them reads the clock; every thread then computes its
    /// own start from that reading. Threads whose set-up failed take part
    /// too, so that the others never wait for them.
    fn agree_on_start(&self) -> Timespec {
        let point = &self.shared.align;
        if point.barrier.wait().is_leader() {
            let read = match self.config.run.source {
                TimeSourceKind::Real => rtlat_sys::clock::now(sys_clock(self.config.clock)),
                TimeSourceKind::Synthetic { .. } => SYNTHETIC_START,
            };
            point.secs.store(read.tv_sec, Relaxed);
            point.nanos.store(read.tv_nsec, Relaxed);
        }
        point.barrier.wait();
        let read = Timespec {
            tv_sec: point.secs.load(Relaxed),
            tv_nsec: point.nanos.load(Relaxed),
        };
        let alignment = self.config.alignment.unwrap_or(Alignment::Threads {
            offset: crate::units::Nanos::ZERO,
        });
        aligned_start(alignment, read, self.plan.index)
    }

    /// The exit path of a `-b` break (the loop has ended, so formatting and
    /// writing are allowed): the first thread to break records itself,
    /// writes the trace marker (`--tracemark`) and stops the trace, and the
    /// whole run stops.
    fn on_break(&self, tid: i32, value: i64) {
        let first = self.shared.breaks.claim(self.plan.index, tid, value);
        if let (true, Some(trace)) = (first, &self.shared.trace) {
            if trace.marker_enabled() {
                let threshold = self.config.breaktrace.map_or(0, |b| b.threshold);
                let mut text = [0u8; 96];
                let mut cursor = std::io::Cursor::new(&mut text[..]);
                if write!(cursor, "hit latency threshold ({value} > {threshold})").is_ok() {
                    let len = cursor.position() as usize;
                    let _ = trace.write_marker(&text[..len]);
                }
            }
            let _ = trace.stop_tracing();
        }
        self.shared.request_stop();
    }

    fn setup_real(&self) -> Result<ThreadResources, (ThreadStep, i32)> {
        // Process-directed signals go to the main thread; this one only
        // reacts to the wake-up signal that interrupts its sleep at the end.
        threads::set_up_current(self.plan.cpu, self.plan.policy, self.plan.priority)?;
        let mut resources = ThreadResources::default();
        if let WaitMode::PosixTimer { .. } = self.config.wait {
            resources.timer = Some(
                ThreadTimer::for_current_thread(sys_clock(self.config.clock))
                    .map_err(|e| (ThreadStep::Timer, e.raw_os_error()))?,
            );
        }
        if self.config.wait == WaitMode::Timerfd {
            resources.timerfd = Some(
                PeriodicTimerFd::new(sys_clock(self.config.clock))
                    .map_err(|e| (ThreadStep::Timer, e.raw_os_error()))?,
            );
        }
        if self.config.smi {
            let cpu = self.plan.cpu.unwrap_or_else(affinity::current_cpu);
            let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc_eio());
            resources.smi =
                Some(SmiCounter::open(cpu).map_err(|e| (ThreadStep::SmiCounter, errno(e)))?);
        }
        Ok(resources)
    }
}

/// EIO, for I/O errors that carry no errno.
const fn libc_eio() -> i32 {
    5
}
/// The `rtlat-sys` clock for a configured clock.
pub fn sys_clock(clock: ClockKind) -> Clock {
    match clock {
        ClockKind::Monotonic => Clock::Monotonic,
        ClockKind::Realtime => Clock::Realtime,
    }
}

/// The `rtlat-sys` policy for a configured policy.
pub fn sys_policy(policy: SchedPolicy) -> sched::Policy {
    match policy {
        SchedPolicy::Other => sched::Policy::Other,
        SchedPolicy::Batch => sched::Policy::Batch,
        SchedPolicy::Idle => sched::Policy::Idle,
        SchedPolicy::Fifo => sched::Policy::Fifo,
        SchedPolicy::RoundRobin => sched::Policy::RoundRobin,
    }
}

/// A run in progress.
#[derive(Debug)]
pub struct Running {
    config: CyclicConfig,
    shared: Arc<Shared>,
    handles: Vec<RawThread>,
    started: Instant,
}

impl Running {
    /// The shared state, for live readers.
    pub fn shared(&self) -> &Shared {
        &self.shared
    }

    /// A handle on the shared state that outlives [`Running::finish`], for
    /// readers that drain the last samples after the threads have stopped.
    pub fn shared_handle(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    /// The configuration the run was started with.
    pub fn config(&self) -> &CyclicConfig {
        &self.config
    }

    /// When the threads passed their start barrier.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The first set-up failure, if a thread could not start measuring.
    pub fn setup_error(&self) -> Option<(usize, ThreadError)> {
        threads::first_setup_error(&self.shared.channels)
    }

    /// Whether the run has reached its end by itself: a thread completed its
    /// loops or duration, or failed. (A real run ends when the FIRST thread
    /// gets there, as cyclictest's does; a synthetic run, whose threads end
    /// at fixed virtual times, when all have, so that it is deterministic.)
    pub fn reached_end(&self) -> bool {
        let ended =
            |c: &ThreadChannel| matches!(c.slot.state(), ThreadState::Ended | ThreadState::Failed);
        match self.config.run.source {
            TimeSourceKind::Real => self.shared.channels.iter().any(ended),
            TimeSourceKind::Synthetic { .. } => self.shared.channels.iter().all(ended),
        }
    }

    /// The results so far, the threads measuring on: each distribution a
    /// copy, the run's end [`EndReason::Stopped`] (it has not ended). What
    /// a long run's reader (`rtlat monitor`) publishes and checkpoints.
    pub fn report_so_far(&self) -> RunReport {
        RunReport {
            resolution: self.config.run.resolution,
            clock: self.config.clock,
            end: EndReason::Stopped,
            threads: threads::reports(
                self.config.threads.iter().cloned(),
                &self.shared.channels,
                self.config.smi,
                threads::Reading::Running,
            ),
            break_info: self.shared.breaks.get(),
            spikes: self.shared.spikes.as_ref().map(SpikeLog::report),
        }
    }

    /// Stops every thread, waits for them and collects the results.
    /// `external_stop`: the stop came from outside (a signal, a closed
    /// output), not from the run itself.
    pub fn finish(mut self, external_stop: bool) -> RunReport {
        self.shared.request_stop();
        // A thread asleep until a far deadline gets the wake-up signal, again
        // until it has left its loop (a signal sent just before it went to
        // sleep would be missed once).
        threads::wake_channels_until_left(
            &self.handles,
            &self.shared.channels,
            (self.config.run.source == TimeSourceKind::Real).then(signals::wake_signal),
        );
        for h in std::mem::take(&mut self.handles) {
            let _ = h.join();
        }
        let end = self.end_reason(external_stop);
        let threads = threads::reports(
            self.config.threads.iter().cloned(),
            &self.shared.channels,
            self.config.smi,
            threads::Reading::Ended,
        );
        RunReport {
            resolution: self.config.run.resolution,
            clock: self.config.clock,
            end,
            threads,
            break_info: self.shared.breaks.get(),
            spikes: self.shared.spikes.as_ref().map(SpikeLog::report),
        }
    }

    fn end_reason(&self, external_stop: bool) -> EndReason {
        let slots = || self.shared.channels.iter().map(|c| &c.slot);
        if slots().any(|s| s.state() == ThreadState::Failed) {
            EndReason::ThreadError
        } else if self.shared.breaks.get().is_some() {
            EndReason::Break
        } else if external_stop {
            EndReason::Stopped
        } else if slots().any(|s| s.loop_end() == Some(LoopEnd::Loops)) {
            EndReason::Loops
        } else if slots().any(|s| s.loop_end() == Some(LoopEnd::Duration)) {
            EndReason::Duration
        } else {
            EndReason::Stopped
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Alignment, RunConfig, SchedPolicy};
    use crate::units::Nanos;
    use std::time::Duration;

    fn plan(index: usize, cpu: Option<usize>) -> ThreadPlan {
        ThreadPlan {
            index,
            interval: Nanos::from_micros(1000),
            policy: SchedPolicy::Other,
            priority: 0,
            cpu,
        }
    }

    fn config(threads: Vec<ThreadPlan>, alignment: Option<Alignment>) -> CyclicConfig {
        CyclicConfig {
            run: RunConfig {
                loops: Some(50),
                ..RunConfig::default()
            },
            alignment,
            ..CyclicConfig::new(threads)
        }
    }

    #[test]
    fn a_failed_thread_does_not_hold_up_the_aligned_others() {
        // Thread 0 (which would read the clock in cyclictest) cannot be
        // pinned to CPU 1000; thread 1 must neither wait forever at the
        // alignment barrier nor start from a made-up time.
        for alignment in [
            Alignment::Threads {
                offset: Nanos::from_micros(100),
            },
            Alignment::NextSecond {
                offset: Nanos::ZERO,
            },
        ] {
            let cfg = config(vec![plan(0, Some(1000)), plan(1, None)], Some(alignment));
            let running = Engine::new(cfg).unwrap().start().unwrap();
            let (index, error) = running.setup_error().expect("thread 0 fails");
            assert_eq!((index, error.step), (0, ThreadStep::Affinity));
            let began = Instant::now();
            let report = running.finish(false);
            assert!(began.elapsed() < Duration::from_secs(3), "{alignment:?}");
            assert_eq!(report.end, EndReason::ThreadError);
        }
    }

    #[test]
    fn aligned_threads_measure() {
        let cfg = config(
            vec![plan(0, None), plan(1, None)],
            Some(Alignment::Threads {
                offset: Nanos::from_micros(200),
            }),
        );
        let running = Engine::new(cfg).unwrap().start().unwrap();
        assert!(running.setup_error().is_none());
        while !running.reached_end() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let report = running.finish(false);
        // Both threads share one interval: the first to complete its 50
        // loops ends the run (under load that may be either).
        let cycles: Vec<u64> = report.threads.iter().map(|t| t.compat.cycles).collect();
        assert_eq!(cycles.iter().max(), Some(&50), "{cycles:?}");
        assert!(cycles.iter().all(|&c| c > 0), "{cycles:?}");
        // Each real thread counted what disturbed it.
        assert!(
            report.threads.iter().all(|t| t.disturbances.is_some()),
            "{:?}",
            report.threads
        );
    }

    #[test]
    fn synthetic_threads_count_no_disturbances() {
        let mut cfg = config(vec![plan(0, None)], None);
        cfg.run.source = TimeSourceKind::Synthetic { seed: 1 };
        let running = Engine::new(cfg).unwrap().start().unwrap();
        while !running.reached_end() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let report = running.finish(false);
        assert_eq!(report.threads[0].compat.cycles, 50);
        assert_eq!(report.threads[0].disturbances, None);
    }
}
