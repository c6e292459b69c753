//! What every engine (cyclic threads, the signal ring, the IPC pairs) does
//! the same way with its set of measuring threads: the set-up each real
//! thread does on itself before it measures, and waking the threads still
//! in their loops until all have left when the run stops, and finding the
//! first thread that could not start.

use std::time::{Duration, Instant};

use rtlat_sys::thread::RawThread;
use rtlat_sys::{Errno, affinity, sched, signals};

use super::sys_policy;
use crate::config::SchedPolicy;
use crate::report::{ThreadError, ThreadStep};
use crate::stats::{ThreadChannel, ThreadSlot, ThreadState};

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

/// The first thread of `channels` whose set-up failed, with its index.
pub(crate) fn first_setup_error(channels: &[ThreadChannel]) -> Option<(usize, ThreadError)> {
    channels
        .iter()
        .enumerate()
        .find_map(|(i, c)| c.slot.error().map(|e| (i, e)))
}
