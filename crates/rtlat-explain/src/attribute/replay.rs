//! Replaying a CPU's events over a span: its state before the span (task,
//! idle state, the interrupts it is inside), then the time each activity
//! had, innermost first (an NMI, an interrupt handler, a softirq, a vector,
//! a timer callback, else the task or the idle state).

use std::collections::HashMap;

use crate::events::{Comm, EventKind, KernelEvent, LEAVING_IDLE, Vector};
use crate::window::CpuWindows;

/// How far before a stage the CPU's state (task, idle, interrupts) is
/// replayed from.
const REPLAY_LEAD_NS: i64 = 10_000_000;

/// How far after a stage an NMI that overlaps it may be stamped (NMIs are
/// stamped when they end).
const NMI_LAG_NS: i64 = 1_000_000;

/// Which stage a span is: it decides what a running task's time means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    IrqLatency,
    HandlerToWakeup,
    ThreadLatency,
    ReturnToUser,
    /// The trace window of a latency that began before it.
    Window,
}

/// What a CPU can be doing, as far as the events tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Activity {
    Task(i32),
    Idle(u32),
    Irq(i32),
    Softirq(u32),
    Vector(Vector),
    Ipi,
    TimerCallback {
        timer: u64,
        function: u64,
    },
    Nmi(u64),
    /// Before the window: its events were trimmed away.
    BeforeWindow,
}

/// A task as the switches name it.
#[derive(Debug, Clone, Copy)]
pub(super) struct TaskSeen {
    pub(super) comm: Comm,
    pub(super) prio: i32,
}

/// The time each activity had in a span, and the tasks' names.
#[derive(Debug, Default)]
pub(super) struct Replay {
    pub(super) time: HashMap<Activity, i64>,
    pub(super) tasks: HashMap<i32, TaskSeen>,
    /// The first activity in the order time went to it (for stable ties).
    pub(super) order: Vec<Activity>,
}

impl Replay {
    fn add(&mut self, activity: Activity, ns: i64) {
        if ns <= 0 {
            return;
        }
        let entry = self.time.entry(activity).or_insert_with(|| {
            self.order.push(activity);
            0
        });
        *entry += ns;
    }
}

/// The CPU's state while replaying its events.
#[derive(Debug)]
struct CpuState {
    task: Option<i32>,
    idle: Option<u32>,
    /// Interrupt contexts and timer callbacks, innermost last.
    nested: Vec<Activity>,
}

impl CpuState {
    fn current(&self) -> Activity {
        if let Some(&innermost) = self.nested.last() {
            return innermost;
        }
        match (self.idle, self.task) {
            (Some(state), _) => Activity::Idle(state),
            (None, Some(pid)) => Activity::Task(pid),
            (None, None) => Activity::Task(-1),
        }
    }

    /// Ends the innermost context matching `ended` and any left open
    /// inside it (their exits were not seen); an exit without an entry is
    /// ignored.
    fn leave(&mut self, ended: impl Fn(&Activity) -> bool) {
        if let Some(position) = self.nested.iter().rposition(ended) {
            self.nested.truncate(position);
        }
    }

    fn apply(&mut self, event: &KernelEvent, tasks: &mut HashMap<i32, TaskSeen>) {
        // An event's pid is the task current on its CPU, interrupts
        // included: a switch the kernel did not trace (some kernels record
        // none out of idle) shows in the pids that follow it.
        if event.pid >= 0 && self.task != Some(event.pid) {
            self.task = Some(event.pid);
            if event.pid != 0 {
                self.idle = None;
            }
        }
        match event.kind {
            EventKind::IrqEntry { irq } => self.nested.push(Activity::Irq(irq)),
            EventKind::IrqExit { irq } => self.leave(|a| *a == Activity::Irq(irq)),
            EventKind::SoftirqEntry { vec } => self.nested.push(Activity::Softirq(vec)),
            EventKind::SoftirqExit { vec } => self.leave(|a| *a == Activity::Softirq(vec)),
            EventKind::VectorEntry { vector } => self.nested.push(Activity::Vector(vector)),
            EventKind::VectorExit { vector } => self.leave(|a| *a == Activity::Vector(vector)),
            EventKind::IpiEntry => self.nested.push(Activity::Ipi),
            EventKind::IpiExit => self.leave(|a| *a == Activity::Ipi),
            EventKind::HrtimerExpireEntry {
                timer, function, ..
            } => self
                .nested
                .push(Activity::TimerCallback { timer, function }),
            EventKind::HrtimerExpireExit { timer } => {
                self.leave(|a| matches!(a, Activity::TimerCallback { timer: t, .. } if *t == timer))
            }
            EventKind::Switch {
                prev_comm,
                prev_pid,
                prev_prio,
                next_comm,
                next_pid,
                next_prio,
                ..
            } => {
                // A switch happens in task context: whatever is open
                // ended unseen.
                self.nested.clear();
                self.idle = None;
                self.task = Some(next_pid);
                tasks.entry(prev_pid).or_insert(TaskSeen {
                    comm: prev_comm,
                    prio: prev_prio,
                });
                tasks.insert(
                    next_pid,
                    TaskSeen {
                        comm: next_comm,
                        prio: next_prio,
                    },
                );
            }
            EventKind::CpuIdle { state } => {
                self.idle = (state != LEAVING_IDLE).then_some(state);
            }
            EventKind::Waking {
                pid, comm, prio, ..
            } => {
                tasks.entry(pid).or_insert(TaskSeen { comm, prio });
            }
            EventKind::HrtimerStart { .. } | EventKind::Nmi { .. } => {}
        }
    }
}

/// The state of `cpu` just before `at_ns`, from the events before it: the
/// task of the last switch (else the current pid of the last event), idle
/// if the last idle event after that switch entered a state.
fn state_before(windows: &CpuWindows, cpu: usize, at_ns: i64) -> CpuState {
    let mut state = CpuState {
        task: None,
        idle: None,
        nested: Vec::new(),
    };
    let mut idle_known = false;
    let mut newest_pid = None;
    for event in windows.events_before(cpu, at_ns) {
        newest_pid.get_or_insert(event.pid);
        match event.kind {
            EventKind::Switch { next_pid, .. } => {
                state.task = Some(next_pid);
                break;
            }
            EventKind::CpuIdle { state: idle } if !idle_known => {
                idle_known = true;
                state.idle = (idle != LEAVING_IDLE).then_some(idle);
            }
            _ => {}
        }
    }
    if state.task.is_none() {
        state.task = newest_pid;
    }
    state
}

/// Replays `cpu`'s events to give each instant of `[from, to]` to what was
/// innermost then.
pub(super) fn replay_span(windows: &CpuWindows, cpu: usize, from: i64, to: i64) -> Replay {
    let mut replay = Replay::default();
    if to <= from {
        return replay;
    }
    // What is older than the window's events is not known.
    let kept_from = windows.kept_from(cpu).unwrap_or(i64::MIN);
    let from = if kept_from > from {
        replay.add(Activity::BeforeWindow, kept_from.min(to) - from);
        if kept_from >= to {
            return replay;
        }
        kept_from
    } else {
        from
    };
    let replay_from = from.saturating_sub(REPLAY_LEAD_NS).max(kept_from);
    let mut state = state_before(windows, cpu, replay_from);
    let nmis: Vec<(i64, i64, u64)> = windows
        .events(cpu, from, to.saturating_add(NMI_LAG_NS))
        .filter_map(|event| match event.kind {
            EventKind::Nmi { handler, delta_ns } => Some((
                event.ts_ns.saturating_sub(delta_ns.max(0)),
                event.ts_ns,
                handler,
            )),
            _ => None,
        })
        .collect();
    let give = |replay: &mut Replay, activity: Activity, start: i64, end: i64| {
        let start = start.max(from);
        let end = end.min(to);
        if end <= start {
            return;
        }
        let mut in_nmis = 0;
        for &(nmi_start, nmi_end, handler) in &nmis {
            let overlap = end.min(nmi_end) - start.max(nmi_start);
            if overlap > 0 {
                replay.add(Activity::Nmi(handler), overlap);
                in_nmis += overlap;
            }
        }
        replay.add(activity, end - start - in_nmis);
    };
    let mut since = replay_from;
    for event in windows.events(cpu, replay_from, to) {
        let mut running = state.current();
        // An event of another task (its own, or an interrupt's in its
        // context) while the replay still saw the idle task: the switch
        // out of idle into it was not traced (some kernels record none),
        // so it ran since the last event.
        if running == Activity::Task(0) && event.pid > 0 {
            running = Activity::Task(event.pid);
        }
        // At the window's start nothing tells the task yet: the first
        // event's current pid does.
        if running == Activity::Task(-1) && event.pid >= 0 {
            running = Activity::Task(event.pid);
        }
        give(&mut replay, running, since, event.ts_ns);
        since = event.ts_ns;
        state.apply(event, &mut replay.tasks);
    }
    give(&mut replay, state.current(), since, to);
    // Name the tasks the replay met only by their pid.
    let unnamed = replay
        .time
        .keys()
        .any(|activity| matches!(activity, Activity::Task(pid) if !replay.tasks.contains_key(pid)));
    if !unnamed {
        return replay;
    }
    for event in windows.events_before(cpu, replay_from).take(10_000) {
        if let EventKind::Switch {
            prev_comm,
            prev_pid,
            prev_prio,
            next_comm,
            next_pid,
            next_prio,
            ..
        } = event.kind
        {
            for (pid, comm, prio) in [
                (prev_pid, prev_comm, prev_prio),
                (next_pid, next_comm, next_prio),
            ] {
                replay.tasks.entry(pid).or_insert(TaskSeen { comm, prio });
            }
        }
    }
    replay
}
