//! The anchors of one wake-up found in the windows: the thread's waking,
//! the timer handler it happened in and the switch back into the thread,
//! between which the stages of [`super`] telescope; and the waking kept
//! past the trims while the thread waits for a CPU ([`waking_to_keep`]).

use super::explanation::{EVIDENCE_LEAD_NS, SUM_TOLERANCE_NS, Sample, WAKING_LEAD_NS};
use crate::events::{EventKind, KernelEvent};
use crate::window::{CpuWindows, KeptWaking};

/// The anchors of one wake-up found in the windows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Anchors {
    pub(super) waking: Option<KernelEvent>,
    pub(super) handler: Option<TimerEntry>,
    pub(super) switch_in: Option<KernelEvent>,
    /// What `switch_in` is.
    pub(super) switch_seen: SwitchSeen,
}

/// How the moment the thread runs again was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SwitchSeen {
    /// The traced switch into it.
    Traced,
    /// Its first event of its own after its wake-up (an interrupt while it
    /// ran in the kernel): the switch was not traced.
    OwnEvent,
    /// Its waking itself: it was still current when its timer fired.
    StillRunning,
}

/// The CPU a waking sends its task to.
pub(super) fn target_cpu_of(waking: &KernelEvent) -> u32 {
    match waking.kind {
        EventKind::Waking { target_cpu, .. } => u32::try_from(target_cpu).unwrap_or(waking.cpu),
        _ => waking.cpu,
    }
}

/// Whether the switch after `waking` was surely not traced: its target
/// CPU's events were read past the clock read `wake_ns`, none lost since
/// the waking.
pub(super) fn untraced_switch_certain(
    windows: &CpuWindows,
    waking: &KernelEvent,
    wake_ns: i64,
) -> bool {
    let cpu = target_cpu_of(waking) as usize;
    windows
        .latest_ns(cpu)
        .is_some_and(|latest| latest >= wake_ns)
        && !windows.lost_between(cpu, waking.ts_ns, wake_ns).any()
}

/// Our timer's callback starting.
#[derive(Debug, Clone, Copy)]
pub(super) struct TimerEntry {
    pub(super) ts_ns: i64,
    pub(super) timer: u64,
}

pub(super) fn find_anchors(windows: &CpuWindows, sample: &Sample) -> Anchors {
    let earliest = sample.deadline_ns.saturating_sub(WAKING_LEAD_NS);
    let waking = windows
        .cpus()
        .filter_map(|cpu| {
            windows.events(cpu, earliest, sample.wake_ns).rev().find(
                |event| matches!(event.kind, EventKind::Waking { pid, .. } if pid == sample.tid),
            )
        })
        .max_by_key(|event| event.ts_ns)
        .copied();
    // A wake-up older than the window (the thread waited longer than the
    // span for a CPU) was kept past the trims, with its timer callback.
    let kept = windows.kept_waking(sample.tid, earliest, sample.wake_ns);
    let (waking, handler) = match (waking, kept) {
        (Some(waking), _) => (
            Some(waking),
            enclosing_timer_handler(windows, &waking, earliest),
        ),
        (None, Some(kept)) => (Some(kept.waking), kept.handler),
        (None, None) => (None, None),
    };
    let handler = handler.map(timer_entry);
    let switch_from = waking.map_or(earliest, |waking| waking.ts_ns);
    let switch_to = sample.wake_ns.saturating_add(SUM_TOLERANCE_NS);
    let switch_in = windows
        .cpus()
        .filter_map(|cpu| {
            windows.events(cpu, switch_from, switch_to).find(|event| {
                matches!(event.kind, EventKind::Switch { next_pid, .. } if next_pid == sample.tid)
            })
        })
        .min_by_key(|event| event.ts_ns)
        .copied();
    let (switch_in, switch_seen) = match (switch_in, waking) {
        (Some(switch), _) => (Some(switch), SwitchSeen::Traced),
        // Woken while still current (its timer fired before it had
        // switched out): no switch to wait for.
        (None, Some(waking)) if waking.pid == sample.tid => {
            (Some(waking), SwitchSeen::StillRunning)
        }
        // Without a traced switch, the thread's first event of its own
        // after the wake-up and before its clock read shows it running.
        (None, Some(waking)) => {
            let own = windows
                .events(target_cpu_of(&waking) as usize, switch_from, sample.wake_ns)
                .find(|event| {
                    event.pid == sample.tid && event.ts_ns >= waking.ts_ns && **event != waking
                })
                .copied();
            (own, SwitchSeen::OwnEvent)
        }
        (None, None) => (None, SwitchSeen::Traced),
    };
    Anchors {
        waking,
        handler,
        switch_in,
        switch_seen,
    }
}

/// The hrtimer callback the waking happened in: the latest one started
/// before it on its CPU and not ended before it (its entry event).
fn enclosing_timer_handler(
    windows: &CpuWindows,
    waking: &KernelEvent,
    earliest: i64,
) -> Option<KernelEvent> {
    let mut open: Option<KernelEvent> = None;
    for event in windows.events(waking.cpu as usize, earliest, waking.ts_ns) {
        if event == waking {
            return open;
        }
        match event.kind {
            EventKind::HrtimerExpireEntry { .. } => open = Some(*event),
            EventKind::HrtimerExpireExit { timer }
                if open.is_some_and(|o| timer_of(&o) == timer) =>
            {
                open = None;
            }
            _ => {}
        }
    }
    open
}

/// The timer of an `hrtimer_expire_entry` (0 for another event).
fn timer_of(event: &KernelEvent) -> u64 {
    match event.kind {
        EventKind::HrtimerExpireEntry { timer, .. } => timer,
        _ => 0,
    }
}

fn timer_entry(event: KernelEvent) -> TimerEntry {
    TimerEntry {
        ts_ns: event.ts_ns,
        timer: timer_of(&event),
    }
}

/// The wake-up of `tid` at `waking_ns`, found in the windows, with the
/// timer callback it happened in: to keep past the trims while the thread
/// waits for a CPU (see [`CpuWindows::keep_waking`]).
pub fn waking_to_keep(windows: &CpuWindows, tid: i32, waking_ns: i64) -> Option<KeptWaking> {
    let waking = windows.cpus().find_map(|cpu| {
        windows
            .events(cpu, waking_ns, waking_ns)
            .find(|event| matches!(event.kind, EventKind::Waking { pid, .. } if pid == tid))
            .copied()
    })?;
    let handler =
        enclosing_timer_handler(windows, &waking, waking_ns.saturating_sub(EVIDENCE_LEAD_NS));
    Some(KeptWaking { waking, handler })
}
