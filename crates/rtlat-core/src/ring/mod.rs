//! Signal rings (rt-tests signaltest): N threads pass one signal round and
//! round; each measures the time the signal takes to come back to it.
//!
//! [`RingEngine::new`] allocates everything the members will touch;
//! [`RingEngine::start`] spawns one member per [`RingThreadPlan`] on a small
//! stack. Each member blocks signals, pins itself, takes its scheduling
//! policy, publishes its thread handle, pre-faults its stack and buffers and
//! waits at a start barrier with the others; then it reads the handle of
//! the member after it and enters [`relay::relay`]. The caller checks the
//! set-up ([`RingRunning::setup_error`]), starts the token with
//! [`RingRunning::kick`], watches the shared slots and ends with
//! [`RingRunning::finish`].

pub mod port;
pub mod relay;

use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use rtlat_sys::signals::{self, ThreadAddress};
use rtlat_sys::thread::RawThread;
use rtlat_sys::tracefs::TraceControl;
use rtlat_sys::{Errno, memory, sched, system};

use crate::config::{ClockKind, SAMPLE_RING_LEN, SchedPolicy, ThreadPlan, TimeSourceKind};
use crate::engine::time::Period;
use crate::engine::{STACK_PREFAULT_BYTES, SYNTHETIC_TID_BASE, THREAD_STACK_BYTES, threads};
use crate::report::{EndReason, RunReport, ThreadError, ThreadStep};
use crate::stats::{
    BreakCell, Histogram, LoopEnd, SampleRing, ThreadChannel, ThreadState, try_collect_slice,
};
use crate::units::{Nanos, Resolution};
use port::{Baton, SignalPort, SyntheticPort};
use relay::{Pacing, RelayParams, RingState};

/// rt-tests signaltest's pacing: member 0 sleeps 10 ms every 16 receptions.
pub const C_PACING: Pacing = Pacing {
    every: 16,
    pause: Period::from_nanos(10_000_000),
};

/// One member of the ring (by default: member 0, SCHED_OTHER, unpinned).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RingThreadPlan {
    /// Position in the ring, 0-based; member `i` passes to `i + 1`, the
    /// last one to 0.
    pub index: usize,
    /// Scheduling policy.
    pub policy: SchedPolicy,
    /// Real-time priority (0 for non-real-time policies).
    pub priority: u8,
    /// CPU to pin the member to, if any.
    pub cpu: Option<usize>,
}

/// The validated configuration of a ring run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingConfig {
    /// The members, at least two, in index order.
    pub threads: Vec<RingThreadPlan>,
    /// The signal passed round (signaltest: SIGUSR1). Every member blocks
    /// it and waits for it with `sigwaitinfo`.
    pub signal: i32,
    /// Unit of the C-compatible figures.
    pub resolution: Resolution,
    /// End the run when member 0 has this many samples.
    pub loops: Option<u64>,
    /// End the run this long after member 0's first reception.
    pub duration: Option<Nanos>,
    /// End the run at member 0's first sample above this many units (`-b`).
    pub break_threshold: Option<i64>,
    /// Per-member histogram of this many one-unit buckets.
    pub histogram_buckets: Option<usize>,
    /// Keep member 0's recent samples for a printer (`-v`).
    pub sample_ring: bool,
    /// Member 0's pacing pause.
    pub pacing: Option<Pacing>,
    /// Real signals, or the synthetic seam.
    pub source: TimeSourceKind,
}

impl RingConfig {
    /// The highest priority a member asks for.
    pub fn max_priority(&self) -> u8 {
        self.threads.iter().map(|t| t.priority).max().unwrap_or(0)
    }

    /// Whether a member runs under a real-time policy.
    pub fn needs_realtime(&self) -> bool {
        self.threads.iter().any(|t| t.policy.is_realtime())
    }
}

/// What can go wrong preparing or starting a ring.
#[derive(Debug, thiserror::Error)]
pub enum RingError {
    /// Fewer than two members.
    #[error("a ring needs at least two threads, not {0}")]
    TooFewThreads(usize),
    /// The histograms or sample ring could not be allocated.
    #[error("not enough memory for {threads} threads' buffers ({buckets} histogram buckets each)")]
    OutOfMemory {
        /// Number of threads.
        threads: usize,
        /// Histogram buckets per thread.
        buckets: usize,
    },
    /// The handler of the wake-up signal could not be installed.
    #[error("cannot install the wake-up signal handler: {0}")]
    WakeHandler(Errno),
    /// A member could not be created.
    #[error("cannot create ring thread {index}: {source}")]
    Spawn {
        /// Thread number.
        index: usize,
        /// The error from the OS.
        source: std::io::Error,
    },
    /// The first signal could not be sent to member 0.
    #[error("cannot send the first signal to ring thread 0: {0}")]
    Kick(Errno),
}

/// Everything the members and their readers share.
#[derive(Debug)]
pub struct RingShared {
    /// One channel per member, in index order.
    pub channels: Box<[ThreadChannel]>,
    /// Stop, finish and pause state.
    pub state: RingState,
    addresses: Box<[OnceLock<ThreadAddress>]>,
    breaks: BreakCell,
    trace: Option<TraceControl>,
    baton: Option<Arc<Baton>>,
}

/// A prepared ring: memory allocated, no thread started.
#[derive(Debug)]
pub struct RingEngine {
    config: RingConfig,
    shared: Arc<RingShared>,
}

impl RingEngine {
    /// Allocates the members' slots, histograms and sample ring. `trace`:
    /// the ftrace files a `-b` break stops tracing with.
    pub fn new(config: RingConfig, trace: Option<TraceControl>) -> Result<RingEngine, RingError> {
        let n = config.threads.len();
        if n < 2 {
            return Err(RingError::TooFewThreads(n));
        }
        let out_of_memory = || RingError::OutOfMemory {
            threads: n,
            buckets: config.histogram_buckets.unwrap_or(0),
        };
        let channels = try_collect_slice(
            config.threads.iter().map(|plan| {
                Ok(ThreadChannel {
                    slot: Default::default(),
                    histogram: match config.histogram_buckets {
                        Some(b) => Some(Histogram::new(b).ok_or_else(out_of_memory)?),
                        None => None,
                    },
                    samples: match config.sample_ring && plan.index == 0 {
                        true => Some(SampleRing::new(SAMPLE_RING_LEN).ok_or_else(out_of_memory)?),
                        false => None,
                    },
                    smi_samples: None,
                    ..ThreadChannel::default()
                })
            }),
            out_of_memory,
        )?;
        let baton = match config.source {
            TimeSourceKind::Synthetic { seed } => Some(Arc::new(Baton::new(seed))),
            TimeSourceKind::Real => None,
        };
        Ok(RingEngine {
            shared: Arc::new(RingShared {
                channels,
                state: RingState::new(),
                addresses: (0..n).map(|_| OnceLock::new()).collect(),
                breaks: BreakCell::default(),
                trace,
                baton,
            }),
            config,
        })
    }

    /// Spawns the members and returns once every one has finished its
    /// set-up (successfully or not) and passed the start barrier. The token
    /// is not sent yet: see [`RingRunning::kick`].
    pub fn start(self) -> Result<RingRunning, RingError> {
        let real = self.config.source == TimeSourceKind::Real;
        if real {
            signals::install_wake_handler().map_err(RingError::WakeHandler)?;
        }
        memory::use_single_malloc_arena();
        let barrier = Arc::new(Barrier::new(self.config.threads.len() + 1));
        // One copy of the configuration for all threads (a copy each would
        // grow with the square of -t).
        let config = Arc::new(self.config.clone());
        let mut handles = Vec::with_capacity(self.config.threads.len());
        for plan in &self.config.threads {
            let job = RingJob {
                plan: plan.clone(),
                config: Arc::clone(&config),
                shared: Arc::clone(&self.shared),
                barrier: Arc::clone(&barrier),
            };
            let spawned = rtlat_sys::thread::spawn(
                &format!("rtlat-ring{}", plan.index),
                THREAD_STACK_BYTES,
                move || job.run(),
            );
            match spawned {
                Ok(h) => handles.push(h),
                Err(source) => {
                    // The barrier never fills: the members started so far
                    // stay parked there until the process exits.
                    self.shared.state.request_stop();
                    return Err(RingError::Spawn {
                        index: plan.index,
                        source,
                    });
                }
            }
        }
        barrier.wait();
        Ok(RingRunning {
            config: self.config,
            shared: self.shared,
            handles,
            started: Instant::now(),
        })
    }
}

struct RingJob {
    plan: RingThreadPlan,
    config: Arc<RingConfig>,
    shared: Arc<RingShared>,
    barrier: Arc<Barrier>,
}

impl RingJob {
    fn run(self) {
        let index = self.plan.index;
        let channel = &self.shared.channels[index];
        let slot = &channel.slot;
        let real = self.config.source == TimeSourceKind::Real;
        let tid = if real {
            let _ = self.shared.addresses[index].set(ThreadAddress::current());
            system::current_tid()
        } else {
            SYNTHETIC_TID_BASE + index as i32
        };
        slot.set_tid(tid);
        let setup = if real { self.setup_real() } else { Ok(()) };
        memory::prefault_stack::<STACK_PREFAULT_BYTES>();
        if let Some(h) = &channel.histogram {
            h.prefault();
        }
        if let Some(ring) = &channel.samples {
            ring.prefault();
        }
        if let Err((step, errno)) = setup {
            slot.fail(step, errno);
        }
        self.barrier.wait();
        if setup.is_err() {
            return;
        }

        let n = self.config.threads.len();
        let next = (index + 1) % n;
        let leader = index == 0;
        let params = RelayParams {
            resolution: self.config.resolution,
            leader,
            loops: self.config.loops.filter(|_| leader),
            duration: self
                .config
                .duration
                .filter(|_| leader)
                .map(|d| Period::from_nanos(d.as_nanos())),
            break_threshold: self.config.break_threshold.filter(|_| leader),
            pacing: self.config.pacing.filter(|_| leader),
        };
        slot.set_state(ThreadState::Running);
        let end = match &self.shared.baton {
            None => {
                // Every member published its address before the barrier.
                match self.shared.addresses[next].get() {
                    Some(&address) => {
                        let mut port = SignalPort::new(self.config.signal, address);
                        let mark = threads::DisturbanceMark::now();
                        let end = relay::relay(&mut port, &params, channel, &self.shared.state);
                        mark.publish_since(slot);
                        if self.plan.policy.is_realtime() {
                            let _ = sched::set_current_thread(sched::Policy::Other, 0);
                        }
                        end
                    }
                    None => LoopEnd::Failed(Errno::INVAL.raw_os_error()),
                }
            }
            Some(baton) => {
                let mut port = SyntheticPort::new(Arc::clone(baton), index, next);
                relay::relay(&mut port, &params, channel, &self.shared.state)
            }
        };
        if let LoopEnd::Break(value) = end
            && self.shared.breaks.claim(index, tid, value)
            && let Some(trace) = &self.shared.trace
        {
            let _ = trace.stop_tracing();
        }
        slot.set_end(end);
    }

    fn setup_real(&self) -> Result<(), (ThreadStep, i32)> {
        // Block the ring signal (it is taken with sigwaitinfo) and every
        // process-directed one (the main thread handles those).
        threads::set_up_current(self.plan.cpu, self.plan.policy, self.plan.priority)
    }
}

/// A ring in progress.
#[derive(Debug)]
pub struct RingRunning {
    config: RingConfig,
    shared: Arc<RingShared>,
    handles: Vec<RawThread>,
    started: Instant,
}

impl RingRunning {
    /// The shared state, for live readers.
    pub fn shared(&self) -> &RingShared {
        &self.shared
    }

    /// A handle on the shared state that outlives [`RingRunning::finish`],
    /// for readers that drain the last samples after the members stopped.
    pub fn shared_handle(&self) -> Arc<RingShared> {
        Arc::clone(&self.shared)
    }

    /// The configuration the ring was started with.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// When the members passed their start barrier.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The first set-up failure, if a member could not start.
    pub fn setup_error(&self) -> Option<(usize, ThreadError)> {
        threads::first_setup_error(&self.shared.channels)
    }

    /// Sends the token to member 0: the ring starts turning.
    pub fn kick(&self) -> Result<(), RingError> {
        match &self.shared.baton {
            Some(baton) => {
                baton.kick(0);
                Ok(())
            }
            None => signals::signal_thread(self.handles[0].handle(), self.config.signal)
                .map_err(RingError::Kick),
        }
    }

    /// Whether the run has ended by itself: member 0 has ended (loops,
    /// duration, break) or a member failed. A synthetic run waits for every
    /// member, so that its final figures are always the same.
    pub fn reached_end(&self) -> bool {
        let done =
            |c: &ThreadChannel| matches!(c.slot.state(), ThreadState::Ended | ThreadState::Failed);
        let channels = &self.shared.channels;
        match self.config.source {
            TimeSourceKind::Real => {
                done(&channels[0])
                    || channels
                        .iter()
                        .any(|c| c.slot.state() == ThreadState::Failed)
            }
            TimeSourceKind::Synthetic { .. } => channels.iter().all(done),
        }
    }

    fn all_done(&self) -> bool {
        self.shared
            .channels
            .iter()
            .all(|c| matches!(c.slot.state(), ThreadState::Ended | ThreadState::Failed))
    }

    /// Stops every member, waits for them and collects the results.
    /// `external_stop`: the stop came from outside (signal, closed output).
    pub fn finish(mut self, external_stop: bool) -> RunReport {
        // When member 0 ended the run, the last lap completes by itself in
        // microseconds; give it time before stopping the others hard.
        if self.shared.state.finishing() {
            let grace = Instant::now() + Duration::from_millis(50);
            while !self.all_done() && Instant::now() < grace {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        self.shared.state.request_stop();
        if let Some(baton) = &self.shared.baton {
            baton.close();
        }
        // A member waiting for the token gets the ring signal, again until it
        // has left (one sent just before it waited is kept pending, as the
        // signal is blocked). Nobody is joined before every member has left,
        // so no member ever signals a joined thread.
        threads::wake_channels_until_left(
            &self.handles,
            &self.shared.channels,
            self.shared.baton.is_none().then_some(self.config.signal),
        );
        let all_left = self.all_done();
        for h in std::mem::take(&mut self.handles) {
            if all_left {
                let _ = h.join();
            }
            // Otherwise dropped: detached, never joined.
        }
        let end = self.end_reason(external_stop);
        let plans = self.config.threads.iter().map(|member| ThreadPlan {
            index: member.index,
            interval: Nanos::ZERO,
            policy: member.policy,
            priority: member.priority,
            cpu: member.cpu,
        });
        let threads =
            threads::reports(plans, &self.shared.channels, false, threads::Reading::Ended);
        RunReport {
            resolution: self.config.resolution,
            clock: ClockKind::Monotonic,
            end,
            threads,
            break_info: self.shared.breaks.get(),
            spikes: None,
        }
    }

    fn end_reason(&self, external_stop: bool) -> EndReason {
        let leader = &self.shared.channels[0].slot;
        if self
            .shared
            .channels
            .iter()
            .any(|c| c.slot.state() == ThreadState::Failed)
        {
            EndReason::ThreadError
        } else if self.shared.breaks.get().is_some() {
            EndReason::Break
        } else if external_stop {
            EndReason::Stopped
        } else {
            match leader.loop_end() {
                Some(LoopEnd::Loops) => EndReason::Loops,
                Some(LoopEnd::Duration) => EndReason::Duration,
                _ => EndReason::Stopped,
            }
        }
    }
}

/// Pause total of a ring, for tests and diagnostics.
impl RingShared {
    /// Total time member 0 paused the ring, in ns.
    pub fn paused_ns(&self) -> i64 {
        self.state.paused_ns()
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.state.stop_requested()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(n: usize, source: TimeSourceKind) -> RingConfig {
        RingConfig {
            threads: (0..n)
                .map(|index| RingThreadPlan {
                    index,
                    ..RingThreadPlan::default()
                })
                .collect(),
            // SIGRTMIN + 2: unused by anything else in the test binary.
            signal: signals::wake_signal() + 1,
            resolution: Resolution::Micros,
            loops: Some(200),
            duration: None,
            break_threshold: None,
            histogram_buckets: Some(50),
            sample_ring: true,
            pacing: Some(Pacing {
                every: 16,
                pause: Period::from_nanos(200_000),
            }),
            source,
        }
    }

    fn run(cfg: RingConfig) -> RunReport {
        let running = RingEngine::new(cfg, None).unwrap().start().unwrap();
        assert!(running.setup_error().is_none());
        running.kick().unwrap();
        let began = Instant::now();
        while !running.reached_end() {
            assert!(began.elapsed() < Duration::from_secs(10), "ring stuck");
            std::thread::sleep(Duration::from_millis(1));
        }
        running.finish(false)
    }

    #[test]
    fn a_real_ring_of_three_turns_until_member_0_has_its_loops() {
        let report = run(config(3, TimeSourceKind::Real));
        assert_eq!(report.end, EndReason::Loops);
        for t in &report.threads {
            // Every member takes the last lap too.
            assert_eq!(t.compat.cycles, 200, "thread {}", t.index);
            assert!(t.compat.min <= t.compat.max);
            assert!(t.tid > 0);
            let h = t.histogram.as_ref().unwrap();
            assert_eq!(h.total() + h.overflows, 200);
        }
    }

    #[test]
    fn a_synthetic_ring_is_deterministic() {
        let a = run(config(4, TimeSourceKind::Synthetic { seed: 9 }));
        let b = run(config(4, TimeSourceKind::Synthetic { seed: 9 }));
        assert_eq!(a, b);
        assert_eq!(a.end, EndReason::Loops);
        assert_eq!(a.threads[2].tid, SYNTHETIC_TID_BASE + 2);
        for t in &a.threads {
            assert_eq!(t.compat.cycles, 200);
            // Four hops of 2..2000 us, never a pause.
            assert!(t.compat.min >= 8 && t.compat.max < 8_000, "{:?}", t.compat);
        }
        let c = run(config(4, TimeSourceKind::Synthetic { seed: 10 }));
        assert_ne!(a.threads[0].compat, c.threads[0].compat);
    }

    #[test]
    fn a_break_on_member_0_is_recorded() {
        let cfg = RingConfig {
            break_threshold: Some(1),
            loops: None,
            ..config(2, TimeSourceKind::Synthetic { seed: 1 })
        };
        let report = run(cfg);
        assert_eq!(report.end, EndReason::Break);
        let b = report.break_info.unwrap();
        assert_eq!((b.thread, b.tid), (0, SYNTHETIC_TID_BASE));
        assert_eq!(report.threads[0].compat.cycles, 1);
        assert_eq!(report.threads[1].compat.cycles, 1);
    }

    #[test]
    fn an_outside_stop_ends_an_endless_ring() {
        let cfg = RingConfig {
            loops: None,
            ..config(2, TimeSourceKind::Real)
        };
        let running = RingEngine::new(cfg, None).unwrap().start().unwrap();
        running.kick().unwrap();
        // The duration is the point: the ring turns a while before the
        // outside stop.
        std::thread::sleep(Duration::from_millis(30));
        assert!(!running.reached_end());
        let began = Instant::now();
        let report = running.finish(true);
        assert!(began.elapsed() < Duration::from_secs(1));
        assert_eq!(report.end, EndReason::Stopped);
        assert!(report.threads[0].compat.cycles > 0);
    }

    #[test]
    fn one_member_is_not_a_ring() {
        assert!(matches!(
            RingEngine::new(config(1, TimeSourceKind::Real), None),
            Err(RingError::TooFewThreads(1))
        ));
    }
}
