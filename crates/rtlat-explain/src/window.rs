//! The recent past of each traced CPU: its events of the last span (about
//! a second), in time order, with what is known to be missing (events the
//! kernel dropped, events trimmed away), so that an explanation can say how
//! far back it sees everything; and, past the trims, the wake-ups of tasks
//! still waiting for a CPU when their events went ([`KeptWaking`]), one
//! per task.

use std::collections::VecDeque;

use crate::trace::LostEvents;

use crate::events::{EventKind, KernelEvent};

/// The task a `sched_waking` wakes (-1 for another event).
fn waking_pid(event: &KernelEvent) -> i32 {
    match event.kind {
        EventKind::Waking { pid, .. } => pid,
        _ => -1,
    }
}

/// Events lost in some span: a known count, and whether some loss was of
/// an unknown size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LostCount {
    /// Events the kernel counted as lost.
    pub known: u64,
    /// Some were lost without a count.
    pub unknown: bool,
}

impl LostCount {
    /// Whether anything was lost.
    pub fn any(&self) -> bool {
        self.known > 0 || self.unknown
    }

    fn add(&mut self, lost: LostEvents) {
        match lost {
            LostEvents::None => {}
            LostEvents::Unknown => self.unknown = true,
            LostEvents::Count(count) => self.known = self.known.saturating_add(count),
        }
    }
}

/// A loss the kernel reported: the events were dropped after the last
/// event read before it and before the page that reported it.
#[derive(Debug, Clone, Copy)]
struct Loss {
    /// The newest event read on the CPU before the loss (`i64::MIN` if
    /// none).
    after_ns: i64,
    /// The time stamp of the page that reported it.
    before_ns: i64,
    lost: LostEvents,
}

/// One CPU's window.
#[derive(Debug, Clone)]
struct CpuWindow {
    cpu: usize,
    events: VecDeque<KernelEvent>,
    latest_ns: Option<i64>,
    complete_from_ns: i64,
    /// The time from which no event was trimmed away (`i64::MIN`: none).
    kept_from_ns: i64,
    losses: VecDeque<Loss>,
    events_seen: u64,
    lost: LostCount,
    out_of_order: u64,
}

impl CpuWindow {
    fn new(cpu: usize) -> CpuWindow {
        CpuWindow {
            cpu,
            events: VecDeque::new(),
            latest_ns: None,
            complete_from_ns: i64::MIN,
            kept_from_ns: i64::MIN,
            losses: VecDeque::new(),
            events_seen: 0,
            lost: LostCount::default(),
            out_of_order: 0,
        }
    }

    /// The index of the first event at or after `ts_ns`.
    fn first_at_or_after(&self, ts_ns: i64) -> usize {
        self.events.partition_point(|event| event.ts_ns < ts_ns)
    }

    /// The index past the last event at or before `ts_ns`.
    fn past_last_at_or_before(&self, ts_ns: i64) -> usize {
        self.events.partition_point(|event| event.ts_ns <= ts_ns)
    }
}

/// The windows of every traced CPU; see the module's text.
#[derive(Debug, Clone)]
pub struct CpuWindows {
    span_ns: i64,
    windows: Vec<CpuWindow>,
    foreign_events: u64,
    /// Wake-ups still waiting for their switch when their events were
    /// trimmed: one per task at most, the latest.
    waiting: Vec<KeptWaking>,
}

/// A wake-up kept past the trim of its window: its task was still waiting
/// for a CPU, so a sample later than the window's span may need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptWaking {
    /// The `sched_waking` event.
    pub waking: KernelEvent,
    /// The hrtimer callback's entry it happened in, if it did.
    pub handler: Option<KernelEvent>,
}

/// Totals over a whole run, for the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WindowTotals {
    /// Events pushed.
    pub events: u64,
    /// Events the kernel reported lost.
    pub lost: LostCount,
    /// Events older than the one before them on their CPU.
    pub out_of_order: u64,
}

impl CpuWindows {
    /// Empty windows of `span_ns` for `cpus`.
    pub fn new(cpus: &[usize], span_ns: i64) -> CpuWindows {
        let mut unique: Vec<usize> = cpus.to_vec();
        unique.sort_unstable();
        unique.dedup();
        CpuWindows {
            span_ns: span_ns.max(0),
            windows: unique.into_iter().map(CpuWindow::new).collect(),
            foreign_events: 0,
            waiting: Vec::new(),
        }
    }

    /// The CPUs with a window, in increasing order.
    pub fn cpus(&self) -> impl Iterator<Item = usize> + '_ {
        self.windows.iter().map(|window| window.cpu)
    }

    /// How far back the windows keep events, ns.
    pub fn span_ns(&self) -> i64 {
        self.span_ns
    }

    fn window(&self, cpu: usize) -> Option<&CpuWindow> {
        self.windows
            .binary_search_by_key(&cpu, |window| window.cpu)
            .ok()
            .map(|index| &self.windows[index])
    }

    fn window_mut(&mut self, cpu: usize) -> Option<&mut CpuWindow> {
        self.windows
            .binary_search_by_key(&cpu, |window| window.cpu)
            .ok()
            .map(|index| &mut self.windows[index])
    }

    /// Adds an event to its CPU's window. One older than the newest there
    /// is put in its place and counted as out of order; one of a CPU
    /// without a window is counted in [`CpuWindows::foreign_events`] and
    /// dropped.
    pub fn push(&mut self, event: KernelEvent) {
        let Some(window) = self.window_mut(event.cpu as usize) else {
            self.foreign_events += 1;
            return;
        };
        window.events_seen += 1;
        match window.latest_ns {
            Some(latest) if event.ts_ns < latest => {
                window.out_of_order += 1;
                let index = window.past_last_at_or_before(event.ts_ns);
                window.events.insert(index, event);
            }
            _ => {
                window.latest_ns = Some(event.ts_ns);
                window.events.push_back(event);
            }
        }
    }

    /// Records that the kernel dropped events on `cpu` before a page of
    /// time stamp `page_ts_ns`: the window is complete only from there on.
    pub fn record_lost(&mut self, cpu: usize, page_ts_ns: i64, lost: LostEvents) {
        if lost == LostEvents::None {
            return;
        }
        let Some(window) = self.window_mut(cpu) else {
            return;
        };
        let after_ns = window.latest_ns.unwrap_or(i64::MIN);
        window.losses.push_back(Loss {
            after_ns,
            before_ns: page_ts_ns,
            lost,
        });
        window.lost.add(lost);
        window.complete_from_ns = window.complete_from_ns.max(page_ts_ns);
    }

    /// Drops the events (and losses) older than `now_ns - span`; each
    /// window is then complete from just after the last event dropped.
    pub fn trim(&mut self, now_ns: i64) {
        let cutoff = now_ns.saturating_sub(self.span_ns);
        for window in &mut self.windows {
            let keep_from = window.first_at_or_after(cutoff);
            if keep_from > 0 {
                let last_dropped = window.events[keep_from - 1].ts_ns;
                window.events.drain(..keep_from);
                window.complete_from_ns =
                    window.complete_from_ns.max(last_dropped.saturating_add(1));
                window.kept_from_ns = window.kept_from_ns.max(last_dropped.saturating_add(1));
            }
            while window
                .losses
                .front()
                .is_some_and(|loss| loss.before_ns < cutoff)
            {
                window.losses.pop_front();
            }
        }
    }

    /// The events of `cpu` with `from_ns <= ts <= to_ns`, in time order
    /// (none for a CPU without a window).
    pub fn events(
        &self,
        cpu: usize,
        from_ns: i64,
        to_ns: i64,
    ) -> impl DoubleEndedIterator<Item = &KernelEvent> + '_ {
        let range = self.window(cpu).map(|window| {
            let start = window.first_at_or_after(from_ns);
            let end = window.past_last_at_or_before(to_ns).max(start);
            window.events.range(start..end)
        });
        range.into_iter().flatten()
    }

    /// Every event of `cpu` before `ts_ns`, newest first.
    pub fn events_before(&self, cpu: usize, ts_ns: i64) -> impl Iterator<Item = &KernelEvent> + '_ {
        let range = self.window(cpu).map(|window| {
            let end = window.first_at_or_after(ts_ns);
            window.events.range(..end).rev()
        });
        range.into_iter().flatten()
    }

    /// The time of the newest event read on `cpu`.
    pub fn latest_ns(&self, cpu: usize) -> Option<i64> {
        self.window(cpu).and_then(|window| window.latest_ns)
    }

    /// The time from which `cpu`'s window holds every event (`i64::MIN`:
    /// since the trace began); `None` for a CPU without a window.
    pub fn complete_from(&self, cpu: usize) -> Option<i64> {
        self.window(cpu).map(|window| window.complete_from_ns)
    }

    /// The time from which `cpu`'s window still holds every event read
    /// (`i64::MIN`: none trimmed away yet); `None` for a CPU without a
    /// window. Unlike [`CpuWindows::complete_from`], losses do not move it.
    pub fn kept_from(&self, cpu: usize) -> Option<i64> {
        self.window(cpu).map(|window| window.kept_from_ns)
    }

    /// Keeps `kept` past the trims, in place of an older one of its task.
    pub fn keep_waking(&mut self, kept: KeptWaking) {
        let pid = waking_pid(&kept.waking);
        match self
            .waiting
            .iter_mut()
            .find(|old| waking_pid(&old.waking) == pid)
        {
            Some(old) if old.waking.ts_ns < kept.waking.ts_ns => *old = kept,
            Some(_) => {}
            None => self.waiting.push(kept),
        }
    }

    /// The wake-up of `pid` kept past the trims, if it is within
    /// `[from_ns, to_ns]`.
    pub fn kept_waking(&self, pid: i32, from_ns: i64, to_ns: i64) -> Option<KeptWaking> {
        self.waiting
            .iter()
            .find(|kept| waking_pid(&kept.waking) == pid)
            .filter(|kept| (from_ns..=to_ns).contains(&kept.waking.ts_ns))
            .copied()
    }

    /// Events lost on `cpu` in a loss that may overlap `[from_ns, to_ns]`.
    pub fn lost_between(&self, cpu: usize, from_ns: i64, to_ns: i64) -> LostCount {
        let mut count = LostCount::default();
        if let Some(window) = self.window(cpu) {
            for loss in &window.losses {
                if loss.after_ns <= to_ns && loss.before_ns >= from_ns {
                    count.add(loss.lost);
                }
            }
        }
        count
    }

    /// The totals of `cpu` since the start.
    pub fn totals_of(&self, cpu: usize) -> Option<WindowTotals> {
        self.window(cpu).map(|window| WindowTotals {
            events: window.events_seen,
            lost: window.lost,
            out_of_order: window.out_of_order,
        })
    }

    /// The totals of every CPU together.
    pub fn totals(&self) -> WindowTotals {
        let mut totals = WindowTotals::default();
        for window in &self.windows {
            totals.events += window.events_seen;
            totals.lost.known = totals.lost.known.saturating_add(window.lost.known);
            totals.lost.unknown |= window.lost.unknown;
            totals.out_of_order += window.out_of_order;
        }
        totals
    }

    /// Events of CPUs without a window, dropped.
    pub fn foreign_events(&self) -> u64 {
        self.foreign_events
    }

    /// Events held now, over every CPU.
    pub fn held(&self) -> usize {
        self.windows.iter().map(|window| window.events.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;

    fn idle_event(cpu: u32, ts_ns: i64) -> KernelEvent {
        KernelEvent {
            ts_ns,
            cpu,
            pid: 0,
            kind: EventKind::CpuIdle { state: 1 },
        }
    }

    fn times(windows: &CpuWindows, cpu: usize, from: i64, to: i64) -> Vec<i64> {
        windows
            .events(cpu, from, to)
            .map(|event| event.ts_ns)
            .collect()
    }

    #[test]
    fn events_between_two_times_inclusive_per_cpu() {
        let mut windows = CpuWindows::new(&[3, 1], 1_000);
        for ts in [10, 20, 20, 30, 40] {
            windows.push(idle_event(1, ts));
        }
        windows.push(idle_event(3, 25));
        assert_eq!(times(&windows, 1, 20, 30), [20, 20, 30]);
        assert_eq!(times(&windows, 1, 21, 29), Vec::<i64>::new());
        assert_eq!(times(&windows, 1, 41, 30), Vec::<i64>::new());
        assert_eq!(times(&windows, 3, 0, 100), [25]);
        assert_eq!(times(&windows, 2, 0, 100), Vec::<i64>::new());
        let before: Vec<i64> = windows.events_before(1, 30).map(|e| e.ts_ns).collect();
        assert_eq!(before, [20, 20, 10]);
        assert_eq!(windows.latest_ns(1), Some(40));
        assert_eq!(windows.latest_ns(2), None);
        assert_eq!(windows.cpus().collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn an_event_out_of_order_is_put_in_its_place_and_counted() {
        let mut windows = CpuWindows::new(&[0], 1_000);
        for ts in [10, 30, 20] {
            windows.push(idle_event(0, ts));
        }
        windows.push(idle_event(5, 1));
        assert_eq!(times(&windows, 0, 0, 100), [10, 20, 30]);
        assert_eq!(windows.latest_ns(0), Some(30));
        let totals = windows.totals();
        assert_eq!((totals.events, totals.out_of_order), (3, 1));
        assert_eq!(windows.foreign_events(), 1);
    }

    #[test]
    fn trimming_drops_the_old_events_and_moves_completeness() {
        let mut windows = CpuWindows::new(&[0, 1], 100);
        assert_eq!(windows.complete_from(0), Some(i64::MIN));
        for ts in [10, 50, 120, 180] {
            windows.push(idle_event(0, ts));
        }
        windows.push(idle_event(1, 150));
        windows.trim(200);
        assert_eq!(times(&windows, 0, 0, 1_000), [120, 180]);
        assert_eq!(windows.complete_from(0), Some(51));
        // Nothing dropped on CPU 1: still complete from the start.
        assert_eq!(windows.complete_from(1), Some(i64::MIN));
        assert_eq!(windows.kept_from(0), Some(51));
        assert_eq!(windows.kept_from(1), Some(i64::MIN));
        assert_eq!(windows.held(), 3);
        assert_eq!(windows.totals_of(0).map(|t| t.events), Some(4));
    }

    #[test]
    fn a_kept_waking_outlives_the_trims_the_latest_of_its_task() {
        let waking = |ts_ns: i64, pid: i32| KernelEvent {
            ts_ns,
            cpu: 0,
            pid: 0,
            kind: EventKind::Waking {
                pid,
                comm: crate::events::Comm::new(b"t"),
                prio: 19,
                target_cpu: 0,
            },
        };
        let mut windows = CpuWindows::new(&[0], 100);
        windows.keep_waking(KeptWaking {
            waking: waking(10, 7),
            handler: None,
        });
        windows.keep_waking(KeptWaking {
            waking: waking(30, 7),
            handler: None,
        });
        // An older one does not replace a newer one.
        windows.keep_waking(KeptWaking {
            waking: waking(20, 7),
            handler: None,
        });
        windows.keep_waking(KeptWaking {
            waking: waking(25, 8),
            handler: None,
        });
        windows.trim(100_000);
        let ts = |kept: Option<KeptWaking>| kept.map(|k| k.waking.ts_ns);
        assert_eq!(ts(windows.kept_waking(7, 0, 1_000)), Some(30));
        assert_eq!(ts(windows.kept_waking(7, 31, 1_000)), None);
        assert_eq!(ts(windows.kept_waking(8, 0, 25)), Some(25));
        assert_eq!(ts(windows.kept_waking(9, 0, 1_000)), None);
        // Losses move completeness, not what was kept.
        windows.record_lost(0, 500, LostEvents::Unknown);
        assert_eq!(windows.complete_from(0), Some(500));
        assert_eq!(windows.kept_from(0), Some(i64::MIN));
    }

    #[test]
    fn losses_count_where_they_may_have_happened() {
        let mut windows = CpuWindows::new(&[0], 10_000);
        windows.push(idle_event(0, 100));
        windows.record_lost(0, 500, LostEvents::Count(7));
        windows.push(idle_event(0, 500));
        windows.push(idle_event(0, 900));
        windows.record_lost(0, 1_000, LostEvents::Unknown);
        windows.record_lost(0, 1_100, LostEvents::None);
        assert_eq!(windows.complete_from(0), Some(1_000));
        assert_eq!(
            windows.lost_between(0, 200, 300),
            LostCount {
                known: 7,
                unknown: false
            }
        );
        assert_eq!(windows.lost_between(0, 0, 99), LostCount::default());
        assert_eq!(windows.lost_between(0, 501, 899), LostCount::default());
        let both = windows.lost_between(0, 0, 2_000);
        assert_eq!((both.known, both.unknown), (7, true));
        assert!(both.any());
        let totals = windows.totals();
        assert_eq!((totals.lost.known, totals.lost.unknown), (7, true));
        windows.trim(10_000 + 600);
        assert_eq!(
            windows.lost_between(0, 0, 2_000),
            LostCount {
                known: 0,
                unknown: true
            }
        );
    }
}
