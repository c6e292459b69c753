//! What every engine (cyclic threads, the signal ring, the IPC pairs) does
//! the same way with its set of measuring threads: the set-up each real
//! thread does on itself before it measures, the reading of its
//! disturbance counters around its loop, and waking the threads still
//! in their loops until all have left when the run stops, finding the
//! first thread that could not start, and each thread's report.

use std::time::{Duration, Instant};

use rtlat_sys::thread::RawThread;
use rtlat_sys::usage::ThreadCounters;
use rtlat_sys::{Errno, affinity, sched, signals, system};

use super::sys_policy;
use crate::config::{SchedPolicy, ThreadPlan};
use crate::figures::{Disturbances, ThreadError, ThreadStep};
use crate::phase::PhaseLog;
use crate::report::ThreadReport;
use crate::slot::{ThreadSlot, ThreadState};
use crate::stats::{Histogram, SignedHistogram, ThreadChannel};

/// The reports of the threads that have ended, one per plan and channel,
/// in order: each `plan` (for a ring member, its period zero), and
/// everything its channel holds (the histogram copied, the distributions
/// read in place); its SMI count when the run counted them. The one
/// builder of a [`ThreadReport`] for every engine.
pub(crate) fn reports(
    plans: impl Iterator<Item = ThreadPlan>,
    channels: &[ThreadChannel],
    smi: bool,
    reading: Reading,
) -> Vec<ThreadReport> {
    plans
        .zip(channels)
        .map(|(who, channel)| report(who, channel, smi, reading))
        .collect()
}

/// Whether the writers of the figures read have ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Ended: the distributions are read in place.
    Ended,
    /// Still running: the distributions are copies
    /// ([`crate::distribution::LatencyHistogram::snapshot`]), the other
    /// figures what the slots hold at that moment (two neighbouring
    /// cycles' at worst).
    Running,
}

fn report(who: ThreadPlan, channel: &ThreadChannel, smi: bool, reading: Reading) -> ThreadReport {
    let slot = &channel.slot;
    let precise = slot.precise();
    ThreadReport {
        index: who.index,
        tid: slot.tid(),
        policy: who.policy,
        priority: who.priority,
        interval: who.interval,
        cpu: who.cpu,
        node: who.cpu.and_then(system::numa_node_of_cpu),
        smi_count: smi.then(|| slot.smi_count()),
        compat: slot.compat(),
        precise,
        max_at: slot.max_at(),
        histogram: channel.histogram.as_ref().map(Histogram::snapshot),
        signed_histogram: channel
            .signed_histogram
            .as_ref()
            .map(SignedHistogram::snapshot),
        distribution: channel.distribution.as_ref().map(|d| match reading {
            Reading::Ended => d.read_in_place(precise.min, precise.max),
            Reading::Running => d.snapshot(precise.min, precise.max),
        }),
        phases: channel
            .phases
            .as_ref()
            .map(PhaseLog::reports)
            .unwrap_or_default(),
        error: slot.error(),
        disturbances: slot.disturbances(),
        wakeup_latencies: None,
    }
}

/// Sets up the calling measuring thread: every process-directed signal
/// blocked (the main thread handles those) except the wake-up signal that
/// ends a wait when the run stops; pinned to `cpu`, if any; then `policy`
/// at `priority`. Like cyclictest, on EPERM the soft RLIMIT_RTPRIO is
/// raised to the hard limit once and the policy tried again. An error
/// carries the step that failed and its errno.
pub(crate) fn set_up_current(
    cpu: Option<usize>,
    policy: SchedPolicy,
    priority: u8,
) -> Result<(), (ThreadStep, i32)> {
    let _ = signals::block_all_except(signals::wake_signal());
    if let Some(cpu) = cpu {
        affinity::pin_current_thread(&[cpu])
            .map_err(|e| (ThreadStep::Affinity, e.raw_os_error()))?;
    }
    let policy = sys_policy(policy);
    let priority = i32::from(priority);
    if let Err(e) = sched::set_current_thread(policy, priority) {
        if e != Errno::PERM || !sched::raise_rtprio_to_hard_limit() {
            return Err((ThreadStep::Scheduler, e.raw_os_error()));
        }
        sched::set_current_thread(policy, priority)
            .map_err(|e| (ThreadStep::Scheduler, e.raw_os_error()))?;
    }
    Ok(())
}

/// A real measuring thread's own counters, read just before its first
/// wait ([`DisturbanceMark::now`]); [`DisturbanceMark::since`], read just
/// after its last sample, gives what disturbed it in between. Never read
/// inside the loop; allocates nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DisturbanceMark(Option<ThreadCounters>);

impl DisturbanceMark {
    /// The calling thread's counters now.
    pub(crate) fn now() -> DisturbanceMark {
        DisturbanceMark(ThreadCounters::of_current_thread())
    }

    /// What the calling thread (the one that made the mark) went through
    /// since the mark; `None` if its counters could not be read.
    pub(crate) fn since(self) -> Option<Disturbances> {
        let start = self.0?;
        let end = ThreadCounters::of_current_thread()?;
        Some(Disturbances {
            involuntary_switches: end
                .involuntary_switches
                .saturating_sub(start.involuntary_switches),
            migrations: end
                .migrations
                .zip(start.migrations)
                .map(|(end, start)| end.saturating_sub(start)),
            minor_faults: end.minor_faults.saturating_sub(start.minor_faults),
            major_faults: end.major_faults.saturating_sub(start.major_faults),
        })
    }

    /// Publishes [`DisturbanceMark::since`] in `slot`, if it could be read.
    pub(crate) fn publish_since(self, slot: &ThreadSlot) {
        if let Some(d) = self.since() {
            slot.publish_disturbances(d);
        }
    }
}

/// Once the run's stop has been requested: every millisecond, sends
/// `signal` (if any) to each thread whose slot is still starting or
/// running, again until it has left its loop (a signal sent just before it
/// went to wait would be missed once), until none is left or 5 s have
/// passed. `threads` lists each thread with its slot. Joins nobody.
pub(crate) fn wake_until_left<'a, I>(threads: impl Fn() -> I, signal: Option<i32>)
where
    I: Iterator<Item = (&'a RawThread, &'a ThreadSlot)>,
{
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut waiting = false;
        for (h, slot) in threads() {
            if matches!(slot.state(), ThreadState::Starting | ThreadState::Running) {
                waiting = true;
                if let Some(signal) = signal {
                    let _ = signals::signal_thread(h.handle(), signal);
                }
            }
        }
        if !waiting || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// [`wake_until_left`] for an engine whose threads are `handles`, each with
/// the channel of the same index.
pub(crate) fn wake_channels_until_left(
    handles: &[RawThread],
    channels: &[ThreadChannel],
    signal: Option<i32>,
) {
    wake_until_left(
        || handles.iter().zip(channels.iter().map(|c| &c.slot)),
        signal,
    );
}

/// The first thread of `channels` whose set-up failed, with its index.
pub(crate) fn first_setup_error(channels: &[ThreadChannel]) -> Option<(usize, ThreadError)> {
    channels
        .iter()
        .enumerate()
        .find_map(|(i, c)| c.slot.error().map(|e| (i, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disturbance_mark_counts_what_happened_since() {
        let slot = ThreadSlot::default();
        let mark = DisturbanceMark::now();
        // Fresh memory touched between the readings: minor faults. (40
        // MiB: above glibc's largest mmap threshold, so new pages, never
        // a reused heap block whose pages are in already.)
        let pages = vec![1u8; 40 << 20];
        std::hint::black_box(&pages);
        mark.publish_since(&slot);
        let d = slot.disturbances().expect("published");
        assert!(d.minor_faults > 0, "{d:?}");
    }

    #[test]
    fn a_slot_without_published_disturbances_has_none() {
        assert_eq!(ThreadSlot::default().disturbances(), None);
    }
}
