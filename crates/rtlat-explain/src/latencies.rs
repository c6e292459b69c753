//! Every wake-up of the measured threads followed through the trace, as
//! rtla's timerlat reports them: the IRQ latency (the timer's programmed
//! expiry to its handler starting) and the thread latency (the thread's
//! waking to the switch into it), each as a distribution per thread.
//!
//! A thread's timer is the hrtimer it arms itself (`hrtimer_start` with its
//! pid); the expiry is the start's soft expiry. A periodic timer (a POSIX
//! timer or a timerfd re-armed by the kernel, no start between expiries)
//! is taken to expire a whole number of the thread's intervals after the
//! expiry before.

use std::collections::HashMap;

use rtlat_core::Nanos;
use rtlat_core::{Distribution, DistributionPlan, LatencyHistogram};

use crate::events::{EventKind, KernelEvent};

/// One distribution being recorded, with its exact extremes.
#[derive(Debug)]
struct Recorder {
    histogram: Option<LatencyHistogram>,
    plan: DistributionPlan,
    min_ns: Option<i64>,
    max_ns: Option<i64>,
    unrecorded: u64,
}

impl Recorder {
    fn new(plan: DistributionPlan) -> Recorder {
        Recorder {
            histogram: LatencyHistogram::new(plan),
            plan,
            min_ns: None,
            max_ns: None,
            unrecorded: 0,
        }
    }

    fn record(&mut self, ns: i64) {
        match &self.histogram {
            Some(histogram) => histogram.record(ns),
            None => {
                self.unrecorded += 1;
                return;
            }
        }
        self.min_ns = Some(self.min_ns.map_or(ns, |min| min.min(ns)));
        self.max_ns = Some(self.max_ns.map_or(ns, |max| max.max(ns)));
    }

    fn snapshot(&self) -> Distribution {
        match &self.histogram {
            Some(histogram) => histogram.snapshot(self.min_ns.map(Nanos), self.max_ns.map(Nanos)),
            None => Distribution::empty(self.plan),
        }
    }
}

/// One measured thread and where its current wake-up stands.
#[derive(Debug)]
struct TrackedThread {
    thread: usize,
    tid: i32,
    interval_ns: i64,
    timer: Option<u64>,
    /// The expiry of the last `hrtimer_start`, not yet fired.
    armed_expiry_ns: Option<i64>,
    /// The expiry that fired last.
    fired_expiry_ns: Option<i64>,
    /// Our timer's handler started; the waking is awaited.
    handler_ns: Option<i64>,
    /// The thread was woken; the switch into it is awaited.
    waking_ns: Option<i64>,
    irq_latency: Recorder,
    thread_latency: Recorder,
    wakeups: u64,
    /// Wake-ups whose switch-in was not traced (not in thread latency).
    untraced_switches: u64,
}

impl TrackedThread {
    /// The expiry that fired at `entry_ns`: the one armed, else the last
    /// one plus as many intervals as fit before the entry (at least one).
    fn expiry_fired_at(&self, entry_ns: i64) -> Option<i64> {
        if let Some(armed) = self.armed_expiry_ns {
            return Some(armed);
        }
        let previous = self.fired_expiry_ns?;
        if self.interval_ns <= 0 {
            return None;
        }
        let periods = (entry_ns.saturating_sub(previous) / self.interval_ns).max(1);
        Some(previous.saturating_add(periods.saturating_mul(self.interval_ns)))
    }
}

/// The IRQ and thread latencies of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadLatencies {
    /// The thread's index.
    pub thread: usize,
    /// Timer expiry to handler start, every wake-up.
    pub irq_latency: Distribution,
    /// Waking to switch-in, every wake-up.
    pub thread_latency: Distribution,
    /// Wake-ups followed from the handler to the switch.
    pub wakeups: u64,
    /// Wake-ups whose switch-in was not traced (some kernels record none
    /// out of idle): in the IRQ latency, not in the thread latency.
    pub untraced_switches: u64,
}

/// Follows the measured threads' wake-ups; see the module's text.
#[derive(Debug)]
pub struct WakeupTracker {
    threads: Vec<TrackedThread>,
    by_tid: HashMap<i32, usize>,
    by_timer: HashMap<u64, usize>,
}

impl WakeupTracker {
    /// Tracks `threads`: (thread index, tid, interval ns).
    pub fn new(threads: &[(usize, i32, i64)], plan: DistributionPlan) -> WakeupTracker {
        let threads: Vec<TrackedThread> = threads
            .iter()
            .map(|&(thread, tid, interval_ns)| TrackedThread {
                thread,
                tid,
                interval_ns,
                timer: None,
                armed_expiry_ns: None,
                fired_expiry_ns: None,
                handler_ns: None,
                waking_ns: None,
                irq_latency: Recorder::new(plan),
                thread_latency: Recorder::new(plan),
                wakeups: 0,
                untraced_switches: 0,
            })
            .collect();
        let by_tid = threads
            .iter()
            .enumerate()
            .map(|(index, tracked)| (tracked.tid, index))
            .collect();
        WakeupTracker {
            threads,
            by_tid,
            by_timer: HashMap::new(),
        }
    }

    /// Takes the next event, in time order across CPUs.
    pub fn observe(&mut self, event: &KernelEvent) {
        // The thread's own event while its wake-up awaits a switch-in: it
        // runs, but the switch was not traced (some kernels record none
        // out of idle). Its first own event (its next timer, mostly) comes
        // after it has measured, so it cannot end a thread latency: the
        // wake-up is counted apart.
        if !matches!(event.kind, EventKind::Switch { .. })
            && let Some(&index) = self.by_tid.get(&event.pid)
        {
            let tracked = &mut self.threads[index];
            if tracked
                .waking_ns
                .is_some_and(|waking| waking <= event.ts_ns)
            {
                tracked.waking_ns = None;
                tracked.untraced_switches += 1;
            }
        }
        match event.kind {
            EventKind::HrtimerStart {
                timer,
                softexpires_ns,
                ..
            } => {
                let Some(&index) = self.by_tid.get(&event.pid) else {
                    return;
                };
                let tracked = &mut self.threads[index];
                if let Some(old) = tracked.timer.replace(timer)
                    && old != timer
                {
                    self.by_timer.remove(&old);
                }
                self.by_timer.insert(timer, index);
                tracked.armed_expiry_ns = Some(softexpires_ns);
            }
            EventKind::HrtimerExpireEntry { timer, .. } => {
                let Some(&index) = self.by_timer.get(&timer) else {
                    return;
                };
                let tracked = &mut self.threads[index];
                if let Some(expiry) = tracked.expiry_fired_at(event.ts_ns) {
                    tracked.irq_latency.record(event.ts_ns - expiry);
                    tracked.fired_expiry_ns = Some(expiry);
                }
                tracked.armed_expiry_ns = None;
                tracked.handler_ns = Some(event.ts_ns);
                tracked.waking_ns = None;
            }
            EventKind::Waking { pid, .. } => {
                let Some(&index) = self.by_tid.get(&pid) else {
                    return;
                };
                let tracked = &mut self.threads[index];
                if tracked
                    .handler_ns
                    .is_some_and(|handler| handler <= event.ts_ns)
                {
                    tracked.handler_ns = None;
                    tracked.waking_ns = Some(event.ts_ns);
                }
            }
            EventKind::Switch {
                prev_pid, next_pid, ..
            } => {
                if let Some(&index) = self.by_tid.get(&prev_pid) {
                    // Leaving a CPU, it had been switched in: a waking still
                    // awaiting its switch was read out of order.
                    self.threads[index].waking_ns = None;
                }
                let Some(&index) = self.by_tid.get(&next_pid) else {
                    return;
                };
                let tracked = &mut self.threads[index];
                if let Some(waking) = tracked.waking_ns.take()
                    && waking <= event.ts_ns
                {
                    tracked.thread_latency.record(event.ts_ns - waking);
                    tracked.wakeups += 1;
                }
            }
            _ => {}
        }
    }

    /// The threads woken and still waiting for their switch: (tid, the
    /// waking's time).
    pub fn awaiting_switch(&self) -> impl Iterator<Item = (i32, i64)> + '_ {
        self.threads
            .iter()
            .filter_map(|tracked| tracked.waking_ns.map(|waking| (tracked.tid, waking)))
    }

    /// Each thread's latencies and wake-ups so far.
    pub fn latencies(&self) -> Vec<ThreadLatencies> {
        self.threads
            .iter()
            .map(|tracked| ThreadLatencies {
                thread: tracked.thread,
                irq_latency: tracked.irq_latency.snapshot(),
                thread_latency: tracked.thread_latency.snapshot(),
                wakeups: tracked.wakeups,
                untraced_switches: tracked.untraced_switches,
            })
            .collect()
    }

    /// Samples that could not be recorded (a histogram's memory could not
    /// be had).
    pub fn unrecorded(&self) -> u64 {
        self.threads
            .iter()
            .map(|tracked| tracked.irq_latency.unrecorded + tracked.thread_latency.unrecorded)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{MS, SWAPPER, Scenario, Task, US};

    fn plan() -> DistributionPlan {
        DistributionPlan::new(1_000, Nanos::from_micros(2_000)).expect("plan")
    }

    fn thread(pid: i32) -> Task {
        Task {
            comm: "rtlat-t",
            pid,
            prio: 19,
        }
    }

    fn track(scenario: &Scenario, threads: &[(usize, i32, i64)]) -> WakeupTracker {
        let mut tracker = WakeupTracker::new(threads, plan());
        for event in scenario.sorted() {
            tracker.observe(&event);
        }
        tracker
    }

    /// The (min, max, count) of a distribution, µs.
    fn summary(distribution: &Distribution) -> (Option<i64>, Option<i64>, u64) {
        (
            distribution.min().map(|ns| ns.as_nanos() / US),
            distribution.max().map(|ns| ns.as_nanos() / US),
            distribution.count(),
        )
    }

    #[test]
    fn clock_nanosleep_wake_ups_each_armed_by_the_thread() {
        let t0 = thread(100);
        let mut scenario = Scenario::new();
        scenario.switch(9 * MS, 0, SWAPPER, 0, t0);
        for cycle in 0..5 {
            let deadline = 10 * MS + cycle * MS;
            let irq = (cycle + 1) * 3 * US; // 3, 6, 9, 12, 15 µs
            let thread_latency = 10 * US + cycle * US; // 10..14 µs
            scenario
                .timer_start(deadline - 900 * US, 0, 0xa0, deadline)
                .switch(deadline - 899 * US, 0, t0, 1, SWAPPER)
                .timer_fires(0, 0xa0, deadline + irq, deadline + irq + 2 * US, Some(t0))
                .switch(deadline + irq + US + thread_latency, 0, SWAPPER, 0, t0);
        }
        // Another task's timer and wake-ups are not ours.
        let other = thread(200);
        scenario
            .switch(30 * MS, 1, SWAPPER, 0, other)
            .timer_start(30 * MS + US, 1, 0xb0, 31 * MS)
            .switch(30 * MS + 2 * US, 1, other, 1, SWAPPER)
            .timer_fires(1, 0xb0, 31 * MS + 500 * US, 31 * MS + 501 * US, Some(other))
            .switch(31 * MS + 900 * US, 1, SWAPPER, 0, other);
        let tracker = track(&scenario, &[(0, 100, MS)]);
        let latencies = tracker.latencies();
        assert_eq!(latencies.len(), 1);
        let ours = &latencies[0];
        assert_eq!(ours.thread, 0);
        assert_eq!(summary(&ours.irq_latency), (Some(3), Some(15), 5));
        assert_eq!(summary(&ours.thread_latency), (Some(10), Some(14), 5));
        assert_eq!(ours.wakeups, 5);
        assert!(
            !latencies.iter().any(|l| l.thread == 1),
            "only the measured thread"
        );
        assert_eq!(tracker.unrecorded(), 0);
    }

    #[test]
    fn a_switch_out_of_idle_not_traced_is_counted_apart() {
        // The kernel records no switch from the idle task into the thread:
        // its next timer start shows it ran, after it measured.
        let t0 = thread(100);
        let mut scenario = Scenario::new();
        scenario.switch(9 * MS, 0, SWAPPER, 0, t0);
        scenario
            .timer_start(10 * MS - 900 * US, 0, 0xa0, 10 * MS)
            .switch(10 * MS - 899 * US, 0, t0, 1, SWAPPER);
        for cycle in 0..3 {
            let deadline = 10 * MS + cycle * MS;
            scenario.timer_fires(0, 0xa0, deadline + 4 * US, deadline + 6 * US, Some(t0));
            // Its next timer, armed from its own context (no switch seen).
            scenario.events.push(KernelEvent {
                ts_ns: deadline + 30 * US,
                cpu: 0,
                pid: 100,
                kind: EventKind::HrtimerStart {
                    timer: 0xa0,
                    function: 0xffff_0001,
                    expires_ns: deadline + MS,
                    softexpires_ns: deadline + MS,
                },
            });
        }
        let tracker = track(&scenario, &[(0, 100, MS)]);
        let latencies = &tracker.latencies()[0];
        assert_eq!(summary(&latencies.irq_latency), (Some(4), Some(4), 3));
        assert_eq!(summary(&latencies.thread_latency), (None, None, 0));
        assert_eq!((latencies.wakeups, latencies.untraced_switches), (0, 3));
    }

    #[test]
    fn a_periodic_timer_expires_a_whole_number_of_intervals_later() {
        let t0 = thread(100);
        let interval = 500 * US;
        let mut scenario = Scenario::new();
        scenario
            .switch(MS - 10 * US, 0, SWAPPER, 0, t0)
            .timer_start(MS - 9 * US, 0, 0xc0, 2 * MS)
            .switch(MS - 8 * US, 0, t0, 1, SWAPPER);
        // Fires at 2 ms + 4 µs, then every 500 µs (one period missed:
        // nothing fires at 3.5 ms), each time 4 µs more late.
        for (step, expiry) in [2 * MS, 2 * MS + interval, 3 * MS, 4 * MS]
            .into_iter()
            .enumerate()
        {
            let late = 4 * US * (step as i64 + 1);
            scenario
                .timer_fires(0, 0xc0, expiry + late, expiry + late + 2 * US, Some(t0))
                .switch(expiry + late + 5 * US, 0, SWAPPER, 0, t0)
                .switch(expiry + late + 50 * US, 0, t0, 1, SWAPPER);
        }
        let tracker = track(&scenario, &[(3, 100, interval)]);
        let latencies = &tracker.latencies()[0];
        assert_eq!(latencies.thread, 3);
        assert_eq!(summary(&latencies.irq_latency), (Some(4), Some(16), 4));
        // The waking comes 1 µs into the handler, the switch 5 µs after
        // the handler's start.
        assert_eq!(summary(&latencies.thread_latency), (Some(4), Some(4), 4));
        assert_eq!(latencies.wakeups, 4);
    }

    #[test]
    fn a_wake_up_seen_out_of_order_is_not_recorded() {
        let t0 = thread(100);
        let mut scenario = Scenario::new();
        scenario
            .switch(MS - US, 0, SWAPPER, 0, t0)
            .timer_start(MS, 0, 0xa0, 2 * MS)
            .switch(MS + US, 0, t0, 1, SWAPPER)
            .timer_fires(0, 0xa0, 2 * MS + 5 * US, 2 * MS + 7 * US, Some(t0));
        let mut tracker = WakeupTracker::new(&[(0, 100, MS)], plan());
        // The switch in (read from another CPU's page) comes before the
        // waking it follows: no thread latency of 0 or below.
        let mut events = scenario.sorted();
        let mut late_switch = Scenario::new();
        late_switch.switch(2 * MS + 20 * US, 1, SWAPPER, 0, t0);
        events.insert(3, late_switch.events[0]);
        for event in &events {
            tracker.observe(event);
        }
        // The thread goes to sleep, and is switched in again without a
        // waking of its timer: the stale waking is not used.
        let mut later = Scenario::new();
        later.switch(2 * MS + 60 * US, 1, t0, 1, SWAPPER).switch(
            2 * MS + 400 * US,
            1,
            SWAPPER,
            0,
            t0,
        );
        for event in &later.events {
            tracker.observe(event);
        }
        let latencies = &tracker.latencies()[0];
        assert_eq!(latencies.irq_latency.count(), 1);
        assert_eq!(latencies.thread_latency.count(), 0);
        assert_eq!(latencies.wakeups, 0);
    }
}
