//! Threads mode: both sides of every pair are threads of this process.
//!
//! [`PairEngine::new`] allocates the per-side slots and histograms and
//! creates the kernel objects of every pair (semaphore sets, announced to
//! the [`janitor`](crate::janitor), if one runs, before they exist;
//! message queues, which have no name); [`PairEngine::start`] spawns the
//! threads on small stacks. Each blocks every signal but the wake-up one,
//! pins itself, takes its policy, pre-faults its stack and buffers and
//! waits at a start barrier with the others; then it runs its side's loop
//! ([`super::handoff`]). The caller reads the slots for the live display
//! and decides when to stop.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};

use rtlat_sys::ipc::futex::BinarySemaphore;
use rtlat_sys::ipc::mqueue::MessageQueue;
use rtlat_sys::signals::{self, ThreadAddress};
use rtlat_sys::thread::RawThread;
use rtlat_sys::tracefs::TraceControl;
use rtlat_sys::{Errno, memory, sched, system};

use super::handoff::{self, ReceiverParams, ReceiverSink, SenderParams, SenderSink};
use super::links::{
    FutexLink, MqReceiver, MqSender, SemReceiver, SemSender, SignalReceiver, SignalSender,
    SignalTarget, interval_timespec,
};
use super::report::{PairReport, PairResult, SideResult, end_reason};
use super::shared::{PairChannel, PairControl, PairShared};
use super::{Mechanism, PairConfig, PairPlan, Side};
use crate::config::TimeSourceKind;
use crate::distribution::LatencyHistogram;
use crate::engine::time::Period;
use crate::engine::{STACK_PREFAULT_BYTES, THREAD_STACK_BYTES, threads};
use crate::janitor::KeptSemSet;
use crate::phase::PhaseWriter;
use crate::report::{EndReason, ThreadStep};
use crate::stats::{
    BreakCell, Histogram, LoopEnd, SlotWriter, ThreadChannel, ThreadSlot, ThreadState,
    try_collect_slice,
};

/// What can go wrong preparing or starting a run.
#[derive(Debug, thiserror::Error)]
pub enum IpcError {
    /// The histograms could not be allocated.
    #[error("not enough memory for {pairs} histograms of {buckets} buckets")]
    OutOfMemory {
        /// Number of pairs.
        pairs: usize,
        /// Buckets per histogram.
        buckets: usize,
    },
    /// A pair's kernel object could not be created.
    #[error("cannot create the {what} of pair {pair}: {errno}")]
    Object {
        /// What it is (`SysV semaphore set`, `message queue`).
        what: &'static str,
        /// Pair number.
        pair: usize,
        /// The error.
        errno: Errno,
    },
    /// The wake-up signal handler could not be installed.
    #[error("cannot install the wake-up signal handler: {0}")]
    WakeHandler(Errno),
    /// A thread could not be created.
    #[error("cannot create the {} thread of pair {pair}: {source}", side.name())]
    Spawn {
        /// Pair number.
        pair: usize,
        /// Which side.
        side: Side,
        /// The error from the OS.
        source: std::io::Error,
    },
}

/// The kernel objects of one pair.
#[derive(Debug)]
enum Objects {
    SysV(KeptSemSet),
    Mq {
        test: MessageQueue,
        sync: MessageQueue,
    },
    Futex {
        test: BinarySemaphore,
        sync: BinarySemaphore,
    },
    Signal,
}

/// A prepared run: memory allocated, objects created, no thread started.
#[derive(Debug)]
pub struct PairEngine {
    config: Arc<PairConfig>,
    shared: Arc<PairShared>,
    objects: Arc<[Objects]>,
}

impl PairEngine {
    /// Prepares `config`; `trace` is the ftrace control a `-b` break stops.
    pub fn new(config: PairConfig, trace: Option<TraceControl>) -> Result<PairEngine, IpcError> {
        let buckets = config.histogram.unwrap_or(0);
        let out_of_memory = || IpcError::OutOfMemory {
            pairs: config.pairs.len(),
            buckets,
        };
        let pairs = try_collect_slice(
            config.pairs.iter().map(|_| {
                Ok(PairChannel {
                    receiver: ThreadChannel::for_run(config.histogram, &config.run)
                        .ok_or_else(out_of_memory)?,
                    sender: ThreadSlot::default(),
                    control: PairControl::default(),
                })
            }),
            out_of_memory,
        )?;
        let real = config.run.source == TimeSourceKind::Real;
        let objects = config
            .pairs
            .iter()
            .map(|p| match (real, config.mechanism) {
                (false, _) | (true, Mechanism::Signal) => Ok(Objects::Signal),
                (true, Mechanism::Futex) => Ok(Objects::Futex {
                    test: BinarySemaphore::new(),
                    sync: BinarySemaphore::new(),
                }),
                (true, Mechanism::SysvSemaphore) => KeptSemSet::create(2)
                    .map(Objects::SysV)
                    .map_err(|errno| IpcError::Object {
                        what: "SysV semaphore set",
                        pair: p.index,
                        errno,
                    }),
                (true, Mechanism::MessageQueue) => {
                    let queue = || {
                        MessageQueue::create_private(1, 8).map_err(|errno| IpcError::Object {
                            what: "POSIX message queue",
                            pair: p.index,
                            errno,
                        })
                    };
                    Ok(Objects::Mq {
                        test: queue()?,
                        sync: queue()?,
                    })
                }
            })
            .collect::<Result<_, IpcError>>()?;
        Ok(PairEngine {
            config: Arc::new(config),
            shared: Arc::new(PairShared {
                pairs,
                stop: AtomicU64::new(0),
                breaks: BreakCell::default(),
                trace,
            }),
            objects,
        })
    }

    /// Starts the run. Real runs: spawns the sides and returns once every
    /// one has finished its set-up (check [`PairRunning::setup_error`]).
    /// Synthetic runs compute their whole result here, without threads.
    pub fn start(self) -> Result<PairRunning, IpcError> {
        let mut handles = Vec::new();
        let mut ended_by = None;
        match self.config.run.source {
            TimeSourceKind::Synthetic { seed } => {
                ended_by = Some(super::synthetic::fill(&self.config, seed, &self.shared));
            }
            TimeSourceKind::Real => {
                signals::install_wake_handler().map_err(IpcError::WakeHandler)?;
                memory::use_single_malloc_arena();
                let barrier = Arc::new(Barrier::new(2 * self.config.pairs.len() + 1));
                let config = Arc::clone(&self.config);
                for plan in &config.pairs {
                    for side in [Side::Receiver, Side::Sender] {
                        let job = SideJob {
                            plan: plan.clone(),
                            side,
                            config: Arc::clone(&self.config),
                            shared: Arc::clone(&self.shared),
                            objects: Arc::clone(&self.objects),
                            barrier: Arc::clone(&barrier),
                        };
                        let name = match side {
                            Side::Receiver => format!("rtlat-r{}", plan.index),
                            Side::Sender => format!("rtlat-s{}", plan.index),
                        };
                        match rtlat_sys::thread::spawn(&name, THREAD_STACK_BYTES, move || job.run())
                        {
                            Ok(h) => handles.push((h, plan.index, side)),
                            Err(source) => {
                                // The barrier would never fill: let the
                                // started threads through and stop them.
                                self.shared.request_stop();
                                let mut abandon = PairRunning {
                                    config: self.config,
                                    shared: self.shared,
                                    _objects: self.objects,
                                    handles,
                                    synthetic_end: None,
                                };
                                abandon.release_barrier(&barrier);
                                abandon.stop_and_join();
                                return Err(IpcError::Spawn {
                                    pair: plan.index,
                                    side,
                                    source,
                                });
                            }
                        }
                    }
                }
                barrier.wait();
            }
        }
        Ok(PairRunning {
            config: self.config,
            shared: self.shared,
            _objects: self.objects,
            handles,
            synthetic_end: ended_by,
        })
    }
}

struct SideJob {
    plan: PairPlan,
    side: Side,
    config: Arc<PairConfig>,
    shared: Arc<PairShared>,
    objects: Arc<[Objects]>,
    barrier: Arc<Barrier>,
}

/// Blocks signals, pins, and sets the policy of the calling side.
pub(crate) fn set_up_side(plan: &PairPlan) -> Result<(), (ThreadStep, i32)> {
    // Process-directed signals go to the main thread; a side reacts only to
    // the wake-up signal that ends its wait when the run stops (SIGUSR1 and
    // SIGUSR2 stay blocked, so sigwaittest's are taken by sigwaitinfo).
    threads::set_up_current(plan.cpu, plan.policy, plan.priority)
}

/// The receiver loop's parameters for `plan` under `config`.
pub(crate) fn receiver_params(config: &PairConfig, plan: &PairPlan) -> ReceiverParams {
    ReceiverParams {
        interval: interval_timespec(plan.interval),
        resolution: config.run.resolution,
        loops: config.run.loops,
        break_threshold: config.breaktrace,
        count_timeouts: config
            .mq_timeouts
            .is_some_and(|t| t.force_send_delay.is_some()),
    }
}

/// The sender loop's parameters under `config`.
pub(crate) fn sender_params(config: &PairConfig) -> SenderParams {
    SenderParams {
        loops: config.run.loops,
        delay: config
            .mq_timeouts
            .and_then(|t| t.force_send_delay)
            .map(|d| Period::from_nanos(d.as_nanos()).as_timespec()),
    }
}

/// A receiver's results into its thread slot and histogram.
#[derive(Debug)]
pub struct SlotSink<'a> {
    writer: SlotWriter<'a>,
    histogram: Option<&'a Histogram>,
    distribution: Option<&'a LatencyHistogram>,
    phases: Option<PhaseWriter<'a>>,
    timeouts: &'a AtomicU64,
}

impl<'a> SlotSink<'a> {
    /// Records into `channel` (its slot, histogram, distribution and
    /// phases, the first phase starting now); time-outs are counted in
    /// `timeouts`.
    pub fn new(channel: &'a ThreadChannel, timeouts: &'a AtomicU64) -> Self {
        SlotSink {
            writer: SlotWriter::new(&channel.slot),
            histogram: channel.histogram.as_ref(),
            distribution: channel.distribution.as_deref(),
            phases: channel
                .phases
                .as_ref()
                .map(|log| PhaseWriter::new(log, handoff::now_ns())),
            timeouts,
        }
    }

    /// Seals the phase the loop ended in (`--load-schedule`).
    pub(crate) fn finish_phases(&mut self) {
        if let Some(phases) = self.phases.as_mut() {
            phases.finish(0);
        }
    }
}

impl ReceiverSink for SlotSink<'_> {
    #[inline(always)]
    fn record(&mut self, units: i64, ns: i64, now_ns: i64) -> u64 {
        let cycle = self.writer.cycles();
        self.writer.record(units, ns, || now_ns);
        if let Some(h) = self.histogram {
            h.record(units, cycle);
        }
        if let Some(d) = self.distribution {
            d.record(ns);
        }
        if let Some(p) = self.phases.as_mut() {
            p.add(now_ns, units, ns, 0);
        }
        cycle + 1
    }

    #[inline(always)]
    fn timed_out(&mut self) {
        self.timeouts
            .store(self.timeouts.load(Relaxed) + 1, Relaxed);
    }
}

/// A sender's count into its thread slot.
#[derive(Debug)]
pub struct CountSink<'a>(SlotWriter<'a>);

impl<'a> CountSink<'a> {
    /// Counts into `slot`'s `cycles`.
    pub fn new(slot: &'a ThreadSlot) -> Self {
        CountSink(SlotWriter::new(slot))
    }
}

impl SenderSink for CountSink<'_> {
    #[inline(always)]
    fn count(&mut self) -> u64 {
        // A count only: no latency, so no time of a maximum either.
        self.0.record(0, 0, || 0);
        self.0.cycles()
    }
}

impl SideJob {
    fn run(self) {
        let channel = &self.shared.pairs[self.plan.index];
        let slot = channel.slot(self.side);
        let tid = system::current_tid();
        slot.set_tid(tid);
        let me = ThreadAddress::current().to_bits();
        match self.side {
            Side::Receiver => channel.control.receiver_thread.store(me, Relaxed),
            Side::Sender => channel.control.sender_thread.store(me, Relaxed),
        }
        let setup = set_up_side(&self.plan);
        memory::prefault_stack::<STACK_PREFAULT_BYTES>();
        if let (Side::Receiver, Some(h)) = (self.side, &channel.receiver.histogram) {
            h.prefault();
        }
        if let (Side::Receiver, Some(d)) = (self.side, &channel.receiver.distribution) {
            d.prefault();
        }
        if let (Side::Receiver, Some(p)) = (self.side, &channel.receiver.phases) {
            p.prefault();
        }
        if let Err((step, errno)) = setup {
            slot.fail(step, errno);
        }
        self.barrier.wait();
        if setup.is_err() {
            return;
        }
        slot.set_state(ThreadState::Running);
        let mark = threads::DisturbanceMark::now();
        let end = match self.side {
            Side::Receiver => self.receive(channel),
            Side::Sender => self.send(channel),
        };
        mark.publish_since(slot);
        if self.plan.policy.is_realtime() {
            let _ = sched::set_current_thread(sched::Policy::Other, 0);
        }
        if let LoopEnd::Break(value) = end {
            // The loop has ended: the exit path may write to tracefs.
            if self.shared.breaks.claim(self.plan.index, tid, value)
                && let Some(trace) = &self.shared.trace
            {
                let _ = trace.stop_tracing();
            }
            self.shared.request_stop();
        }
        slot.set_end(end);
    }

    fn receive(&self, channel: &PairChannel) -> LoopEnd {
        let params = receiver_params(&self.config, &self.plan);
        let mut sink = SlotSink::new(&channel.receiver, &channel.control.timeouts);
        let (sent, stop) = (&channel.control.sent_ns, &self.shared.stop);
        let end = match &self.objects[self.plan.index] {
            Objects::SysV(set) => {
                handoff::receive(&mut SemReceiver(set), &mut sink, sent, stop, &params)
            }
            Objects::Mq { test, sync } => {
                let timeout = self.config.mq_timeouts.map(|t| t.receive);
                let mut link = MqReceiver::new(test, sync, timeout);
                handoff::receive(&mut link, &mut sink, sent, stop, &params)
            }
            Objects::Futex { test, sync } => {
                let mut link = FutexLink { test, sync };
                handoff::receive(&mut link, &mut sink, sent, stop, &params)
            }
            Objects::Signal => {
                let sender = ThreadAddress::from_bits(channel.control.sender_thread.load(Relaxed));
                let mut link = SignalReceiver::new(SignalTarget::Thread(sender));
                handoff::receive(&mut link, &mut sink, sent, stop, &params)
            }
        };
        sink.finish_phases();
        end
    }

    fn send(&self, channel: &PairChannel) -> LoopEnd {
        let params = sender_params(&self.config);
        let mut sink = CountSink::new(&channel.sender);
        let (sent, stop) = (&channel.control.sent_ns, &self.shared.stop);
        match &self.objects[self.plan.index] {
            Objects::SysV(set) => {
                handoff::send(&mut SemSender(set), &mut sink, sent, stop, &params)
            }
            Objects::Mq { test, sync } => handoff::send(
                &mut MqSender::new(test, sync),
                &mut sink,
                sent,
                stop,
                &params,
            ),
            Objects::Futex { test, sync } => {
                let mut link = FutexLink { test, sync };
                handoff::send(&mut link, &mut sink, sent, stop, &params)
            }
            Objects::Signal => {
                let receiver =
                    ThreadAddress::from_bits(channel.control.receiver_thread.load(Relaxed));
                let mut link = SignalSender::new(SignalTarget::Thread(receiver));
                handoff::send(&mut link, &mut sink, sent, stop, &params)
            }
        }
    }
}

/// A run in progress.
#[derive(Debug)]
pub struct PairRunning {
    config: Arc<PairConfig>,
    shared: Arc<PairShared>,
    _objects: Arc<[Objects]>,
    handles: Vec<(RawThread, usize, Side)>,
    synthetic_end: Option<EndReason>,
}

impl PairRunning {
    /// The shared state, for readers.
    pub fn shared(&self) -> &PairShared {
        &self.shared
    }

    /// The configuration the run was started with.
    pub fn config(&self) -> &PairConfig {
        &self.config
    }

    /// The first set-up failure: (pair, side, error).
    pub fn setup_error(&self) -> Option<(usize, Side, crate::report::ThreadError)> {
        self.shared.pairs.iter().enumerate().find_map(|(i, c)| {
            c.receiver
                .slot
                .error()
                .map(|e| (i, Side::Receiver, e))
                .or_else(|| c.sender.error().map(|e| (i, Side::Sender, e)))
        })
    }

    /// Whether the run has ended by itself: some side completed its loops,
    /// broke, or failed (the C tools stop when the first one does).
    pub fn reached_end(&self) -> bool {
        let over = |s: &ThreadSlot| matches!(s.state(), ThreadState::Ended | ThreadState::Failed);
        self.shared
            .pairs
            .iter()
            .any(|c| over(&c.receiver.slot) || over(&c.sender))
    }

    /// The pairs as they stand (no histograms).
    pub fn snapshot(&self) -> Vec<PairResult> {
        self.results(false)
    }

    fn results(&self, with_histograms: bool) -> Vec<PairResult> {
        let synthetic = self.config.run.source != TimeSourceKind::Real;
        self.config
            .pairs
            .iter()
            .zip(self.shared.pairs.iter())
            .map(|(plan, c)| {
                let side = |slot: &ThreadSlot| SideResult {
                    id: slot.tid(),
                    policy: plan.policy,
                    priority: plan.priority,
                    cpu: plan.cpu,
                    compat: slot.compat(),
                    precise: slot.precise(),
                    error: slot.error(),
                    disturbances: slot.disturbances(),
                    ended: synthetic
                        || matches!(slot.state(), ThreadState::Ended | ThreadState::Failed),
                };
                PairResult {
                    index: plan.index,
                    interval: plan.interval,
                    receiver: side(&c.receiver.slot),
                    sender: side(&c.sender),
                    timeouts: c.timeouts(),
                    histogram: if with_histograms {
                        c.receiver.histogram.as_ref().map(Histogram::snapshot)
                    } else {
                        None
                    },
                    distribution: if with_histograms {
                        c.receiver.distribution.as_ref().map(|d| {
                            let precise = c.receiver.slot.precise();
                            d.read_in_place(precise.min, precise.max)
                        })
                    } else {
                        None
                    },
                    phases: match (&c.receiver.phases, with_histograms) {
                        (Some(log), true) => log.reports(),
                        _ => Vec::new(),
                    },
                }
            })
            .collect()
    }

    /// Spawning failed part-way: the started threads wait at a barrier
    /// sized for all; helper threads stand in for the missing ones so that
    /// the started ones get through (and then see the stop flag).
    fn release_barrier(&mut self, barrier: &Arc<Barrier>) {
        let missing = 2 * self.config.pairs.len() - self.handles.len();
        let helpers: Vec<_> = (0..missing)
            .map(|_| {
                let b = Arc::clone(barrier);
                std::thread::spawn(move || {
                    b.wait();
                })
            })
            .collect();
        barrier.wait();
        for h in helpers {
            let _ = h.join();
        }
    }

    /// Stops every side and waits for it (at most 5 s for sides that do
    /// not react to the wake-up signal).
    fn stop_and_join(&mut self) {
        self.shared.request_stop();
        threads::wake_until_left(
            || {
                self.handles
                    .iter()
                    .map(|(h, pair, side)| (h, self.shared.pairs[*pair].slot(*side)))
            },
            Some(signals::wake_signal()),
        );
        for (h, _, _) in std::mem::take(&mut self.handles) {
            let _ = h.join();
        }
    }

    /// Stops every side, waits for them and collects the results.
    /// `external`: why the caller stopped the run (a signal, `-D`), if it
    /// did.
    pub fn finish(mut self, external: Option<EndReason>) -> PairReport {
        self.stop_and_join();
        let pairs = self.results(true);
        let failed = pairs
            .iter()
            .any(|p| p.receiver.error.is_some() || p.sender.error.is_some());
        let looped = self.shared.pairs.iter().any(|c| {
            c.receiver.slot.loop_end() == Some(LoopEnd::Loops)
                || c.sender.loop_end() == Some(LoopEnd::Loops)
        });
        let break_info = self.shared.breaks.get();
        let end = match self.synthetic_end {
            Some(reason) => reason,
            None => end_reason(external, failed, break_info.is_some(), looped),
        };
        PairReport {
            resolution: self.config.run.resolution,
            end,
            pairs,
            break_info,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_keeps_the_reception_of_its_largest_sample() {
        let channel = ThreadChannel::default();
        let timeouts = AtomicU64::new(0);
        let mut sink = SlotSink::new(&channel, &timeouts);
        for (ns, now_ns) in [(4_000, 100), (9_000, 200), (9_000, 300), (2_000, 400)] {
            sink.record(ns / 1_000, ns, now_ns);
        }
        assert_eq!(channel.slot.max_at(), Some(crate::units::ClockInstant(200)));
    }
}
