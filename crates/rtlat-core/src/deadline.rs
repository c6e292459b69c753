//! SCHED_DEADLINE threads (rt-tests cyclicdeadline): each thread takes a
//! runtime, deadline and period, and every job does nothing but read the
//! clock, record how late the job started against the period it belongs
//! to, and give the rest of its runtime back with `sched_yield` (which, for
//! a deadline task, sleeps until its next period).
//!
//! A sample is `now - period_start` in µs (ns kept beside it), where
//! `period_start` is the previous job's start plus the deadline (the
//! period: cyclicdeadline's periods equal their deadlines); a job that
//! starts before the period it was expected in (the first periods after a
//! preemption at start) moves the expected start to its own, as C does.
//!
//! [`DeadlineEngine::start`] spawns the threads on small stacks; each
//! blocks the process signals, takes SCHED_DEADLINE, pre-faults its stack
//! and waits at the start barrier. The caller checks the set-up
//! ([`DeadlineRunning::setup_error`]), watches the slots and ends with
//! [`DeadlineRunning::finish`]. The loop allocates nothing and makes one
//! system call per job (`sched_yield`; the clock is read through the vDSO).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use rtlat_sys::clock::{self, Clock};
use rtlat_sys::deadline::{self, SchedAttr};
use rtlat_sys::thread::RawThread;
use rtlat_sys::tracefs::TraceControl;
use rtlat_sys::{memory, system};

use crate::config::{ClockKind, SchedPolicy, ThreadPlan};
use crate::distribution::{DEFAULT_EXACT_RANGE, DistributionPlan, LatencyHistogram};
use crate::engine::{STACK_PREFAULT_BYTES, THREAD_STACK_BYTES, threads};
use crate::report::{EndReason, RunReport, ThreadError, ThreadStep};
use crate::slot::{SlotWriter, ThreadState};
use crate::stats::{BreakCell, Histogram, LoopEnd, ThreadChannel, try_collect_slice};
use rtlat_base::{Nanos, Resolution};

/// One deadline thread: its budget, deadline and period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlinePlan {
    /// Thread number, 0-based (the `T:` column).
    pub index: usize,
    /// The runtime per period.
    pub runtime: Nanos,
    /// The relative deadline.
    pub deadline: Nanos,
    /// The period (cyclicdeadline: the deadline).
    pub period: Nanos,
}

/// What a run of deadline threads does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlineConfig {
    /// One plan per thread.
    pub threads: Vec<DeadlinePlan>,
    /// `-b`: stop at the first thread whose maximum passes this many µs.
    pub break_threshold: Option<i64>,
    /// `--histogram` (rt-tests 2.7's cyclicdeadline): one-µs buckets
    /// per thread, the overflows' job numbers kept.
    pub histogram_buckets: Option<usize>,
}

/// Why the threads could not be prepared or started.
#[derive(Debug, thiserror::Error)]
pub enum DeadlineError {
    /// Memory for the threads' slots could not be had.
    #[error("out of memory for {0} threads")]
    OutOfMemory(usize),
    /// A thread could not be spawned.
    #[error("could not start thread {index}: {source}")]
    Spawn {
        /// Its index.
        index: usize,
        /// Why.
        source: std::io::Error,
    },
}

/// What the threads and the main thread share.
#[derive(Debug)]
pub struct DeadlineShared {
    /// One channel per thread (its slot).
    pub channels: Box<[ThreadChannel]>,
    stop: AtomicBool,
    breaks: BreakCell,
    trace: Option<TraceControl>,
}

/// Prepared threads, not started.
#[derive(Debug)]
pub struct DeadlineEngine {
    config: DeadlineConfig,
    shared: Arc<DeadlineShared>,
}

impl DeadlineEngine {
    /// Allocates the threads' slots. `trace`: what a `-b` break stops the
    /// kernel trace with (and marks it through, with `--tracemark`).
    pub fn new(
        config: DeadlineConfig,
        trace: Option<TraceControl>,
    ) -> Result<DeadlineEngine, DeadlineError> {
        let n = config.threads.len();
        // The full distribution of each thread, 1 µs exact buckets over
        // its period (lateness beyond it is kept in the log buckets).
        let channels = try_collect_slice(
            config.threads.iter().map(|plan| {
                let range = Nanos(plan.period.as_nanos().max(DEFAULT_EXACT_RANGE.as_nanos()));
                let dist = DistributionPlan::new(1000, range)
                    .ok()
                    .and_then(LatencyHistogram::new)
                    .ok_or(DeadlineError::OutOfMemory(n))?;
                let histogram = match config.histogram_buckets {
                    Some(n) => Some(Histogram::new(n).ok_or(DeadlineError::OutOfMemory(n))?),
                    None => None,
                };
                Ok(ThreadChannel {
                    distribution: Some(Arc::new(dist)),
                    histogram,
                    ..ThreadChannel::default()
                })
            }),
            || DeadlineError::OutOfMemory(n),
        )?;
        Ok(DeadlineEngine {
            config,
            shared: Arc::new(DeadlineShared {
                channels,
                stop: AtomicBool::new(false),
                breaks: BreakCell::default(),
                trace,
            }),
        })
    }

    /// Spawns the threads; returns once every one has taken (or failed to
    /// take) SCHED_DEADLINE and passed the start barrier.
    pub fn start(self) -> Result<DeadlineRunning, DeadlineError> {
        memory::use_single_malloc_arena();
        let barrier = Arc::new(Barrier::new(self.config.threads.len() + 1));
        let mut handles = Vec::with_capacity(self.config.threads.len());
        for plan in &self.config.threads {
            let job = Job {
                plan: *plan,
                break_threshold: self.config.break_threshold,
                shared: Arc::clone(&self.shared),
                barrier: Arc::clone(&barrier),
            };
            match rtlat_sys::thread::spawn(
                &format!("rtlat-dl{}", plan.index),
                THREAD_STACK_BYTES,
                move || job.run(),
            ) {
                Ok(h) => handles.push(h),
                Err(source) => {
                    // The barrier never fills: the threads started so far
                    // stay parked there (as SCHED_OTHER or deadline
                    // threads that never run a job) until the process
                    // exits, which the caller does at once.
                    self.shared.stop.store(true, Relaxed);
                    return Err(DeadlineError::Spawn {
                        index: plan.index,
                        source,
                    });
                }
            }
        }
        barrier.wait();
        Ok(DeadlineRunning {
            config: self.config,
            shared: self.shared,
            handles,
            started: Instant::now(),
        })
    }
}

struct Job {
    plan: DeadlinePlan,
    break_threshold: Option<i64>,
    shared: Arc<DeadlineShared>,
    barrier: Arc<Barrier>,
}

impl Job {
    fn run(self) {
        let index = self.plan.index;
        let channel = &self.shared.channels[index];
        let slot = &channel.slot;
        let tid = system::current_tid();
        slot.set_tid(tid);
        let setup = threads::set_up_current(None, SchedPolicy::Other, 0).and_then(|()| {
            let p = &self.plan;
            let attr = SchedAttr::deadline(
                p.runtime.as_nanos() as u64,
                p.deadline.as_nanos() as u64,
                p.period.as_nanos() as u64,
                0,
            );
            deadline::set_current_thread(&attr)
                .map_err(|e| (ThreadStep::Scheduler, e.raw_os_error()))
        });
        memory::prefault_stack::<STACK_PREFAULT_BYTES>();
        if let Err((step, errno)) = setup {
            slot.fail(step, errno);
        }
        self.barrier.wait();
        if setup.is_err() {
            return;
        }
        slot.set_state(ThreadState::Running);
        let mark = threads::DisturbanceMark::now();
        let mut writer = SlotWriter::new(slot);
        let end = jobs(
            &mut writer,
            (channel.distribution.as_deref(), channel.histogram.as_ref()),
            self.plan.deadline.as_nanos(),
            self.break_threshold,
            &self.shared.stop,
        );
        writer.finish();
        mark.publish_since(slot);
        // Back to SCHED_OTHER before the thread leaves: nothing of it runs
        // under SCHED_DEADLINE once the run is over.
        let _ = deadline::set_current_thread(&SchedAttr::other());
        if let LoopEnd::Break(value) = end
            && self.shared.breaks.claim(index, tid, value)
        {
            self.shared.stop.store(true, Relaxed);
            if let Some(trace) = &self.shared.trace {
                // The loop has ended: formatting is allowed here.
                if trace.marker_enabled() {
                    let limit = self.break_threshold.unwrap_or(0);
                    let text = format!("hit latency threshold ({value} > {limit})");
                    let _ = trace.write_marker(text.as_bytes());
                }
                let _ = trace.stop_tracing();
            }
        }
        slot.set_end(end);
    }
}

/// CLOCK_MONOTONIC in ns (vDSO).
#[inline(always)]
fn now_ns() -> i64 {
    let t = clock::now(Clock::Monotonic);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// The jobs of one deadline thread, until `stop` or a break: one
/// `sched_yield` per job, nothing allocated.
#[inline(never)]
pub fn jobs(
    writer: &mut SlotWriter<'_>,
    (distribution, histogram): (Option<&LatencyHistogram>, Option<&Histogram>),
    deadline_ns: i64,
    break_threshold: Option<i64>,
    stop: &AtomicBool,
) -> LoopEnd {
    // The first job gives the reference: it starts a period; it is no
    // sample (C counts it, always 0, and its own calibration call too).
    deadline::yield_now();
    let mut period = now_ns() + deadline_ns;
    deadline::yield_now();
    while !stop.load(Relaxed) {
        let now = now_ns();
        if now < period {
            period = now;
        }
        let late = now - period;
        let us = late / 1000;
        if let Some(h) = histogram {
            h.record(us, writer.cycles());
        }
        writer.record(us, late, || now);
        if let Some(d) = distribution {
            d.record(late);
        }
        period += deadline_ns;
        if let Some(limit) = break_threshold
            && us > limit
        {
            return LoopEnd::Break(us);
        }
        deadline::yield_now();
    }
    LoopEnd::Stopped
}

/// Deadline threads at work.
#[derive(Debug)]
pub struct DeadlineRunning {
    config: DeadlineConfig,
    shared: Arc<DeadlineShared>,
    handles: Vec<RawThread>,
    started: Instant,
}

impl DeadlineRunning {
    /// The shared state, for the live display.
    pub fn shared(&self) -> &DeadlineShared {
        &self.shared
    }

    /// When the threads passed their start barrier.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The first thread that could not take SCHED_DEADLINE, with its error.
    pub fn setup_error(&self) -> Option<(usize, ThreadError)> {
        threads::first_setup_error(&self.shared.channels)
    }

    /// Whether the run ended by itself (a `-b` break or a failed thread).
    pub fn reached_end(&self) -> bool {
        self.shared.breaks.get().is_some()
            || self
                .shared
                .channels
                .iter()
                .any(|c| c.slot.state() == ThreadState::Failed)
    }

    /// The thread ids, in order (0 for a thread that has not set it).
    pub fn tids(&self) -> Vec<i32> {
        self.shared.channels.iter().map(|c| c.slot.tid()).collect()
    }

    /// Stops every thread, waits for them (a deadline thread leaves at its
    /// next job, within one period) and collects the results.
    /// `external_stop`: the stop came from outside (signal, duration,
    /// closed output).
    pub fn finish(mut self, external_stop: bool) -> RunReport {
        self.shared.stop.store(true, Relaxed);
        let longest = self
            .config
            .threads
            .iter()
            .map(|p| p.period.as_nanos())
            .max()
            .unwrap_or(0);
        let limit = Instant::now()
            + Duration::from_nanos(longest.max(0) as u64 * 4)
            + Duration::from_secs(1);
        let done = |s: &DeadlineShared| {
            s.channels
                .iter()
                .all(|c| matches!(c.slot.state(), ThreadState::Ended | ThreadState::Failed))
        };
        while !done(&self.shared) && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(1));
        }
        let all_left = done(&self.shared);
        for h in std::mem::take(&mut self.handles) {
            if all_left {
                let _ = h.join();
            }
        }
        let failed = self
            .shared
            .channels
            .iter()
            .any(|c| c.slot.state() == ThreadState::Failed);
        let end = if failed {
            EndReason::ThreadError
        } else if self.shared.breaks.get().is_some() {
            EndReason::Break
        } else if external_stop {
            EndReason::Stopped
        } else {
            EndReason::Duration
        };
        let plans = self.config.threads.iter().map(|p| ThreadPlan {
            index: p.index,
            interval: p.period,
            policy: SchedPolicy::Other,
            priority: 0,
            cpu: None,
        });
        let threads =
            threads::reports(plans, &self.shared.channels, false, threads::Reading::Ended);
        RunReport {
            resolution: Resolution::Micros,
            clock: ClockKind::Monotonic,
            end,
            threads,
            break_info: self.shared.breaks.get(),
            spikes: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::ThreadSlot;

    #[test]
    fn a_stopped_loop_records_nothing_more() {
        let slot = ThreadSlot::default();
        let mut writer = SlotWriter::new(&slot);
        let stop = AtomicBool::new(true);
        assert_eq!(
            jobs(&mut writer, (None, None), 1_000_000, None, &stop),
            LoopEnd::Stopped
        );
        assert_eq!(slot.cycles(), 0);
    }

    #[test]
    fn a_break_ends_the_loop_with_its_value() {
        // SCHED_OTHER: sched_yield returns at once; with a period of 1 ns
        // the first sample is late by 0 µs or more, above a limit of -1.
        let slot = ThreadSlot::default();
        let mut writer = SlotWriter::new(&slot);
        let stop = AtomicBool::new(false);
        let end = jobs(&mut writer, (None, None), 1, Some(-1), &stop);
        assert!(matches!(end, LoopEnd::Break(v) if v >= 0), "{end:?}");
        assert_eq!(slot.cycles(), 1);
    }
}
