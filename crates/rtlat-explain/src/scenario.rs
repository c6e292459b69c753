//! Hand-built event sequences for the tests: a few CPUs, tasks that switch,
//! timers that fire, interrupts, in the order and with the fields the
//! kernel would record them.

use crate::events::{Comm, EventKind, KernelEvent, LEAVING_IDLE, Vector};

/// A task as the scheduler events show it.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    pub comm: &'static str,
    pub pid: i32,
    pub prio: i32,
}

pub const SWAPPER: Task = Task {
    comm: "swapper/0",
    pid: 0,
    prio: 120,
};

/// The measured thread of the scenarios.
pub const THREAD: Task = Task {
    comm: "rtlat-t0",
    pid: 100,
    prio: 19,
};

/// A FIFO task of priority 90 that spins.
pub const SPIN: Task = Task {
    comm: "spin",
    pid: 4242,
    prio: 9,
};

pub const US: i64 = 1_000;
pub const MS: i64 = 1_000_000;

/// Events in the making, each CPU's current task followed.
#[derive(Debug, Default)]
pub struct Scenario {
    pub events: Vec<KernelEvent>,
    current: Vec<(u32, i32)>,
}

impl Scenario {
    pub fn new() -> Scenario {
        Scenario::default()
    }

    fn pid_on(&self, cpu: u32) -> i32 {
        self.current
            .iter()
            .rev()
            .find(|(c, _)| *c == cpu)
            .map_or(0, |(_, pid)| *pid)
    }

    pub fn push(&mut self, ts_ns: i64, cpu: u32, kind: EventKind) -> &mut Scenario {
        let pid = self.pid_on(cpu);
        self.events.push(KernelEvent {
            ts_ns,
            cpu,
            pid,
            kind,
        });
        self
    }

    /// `prev` leaves (`prev_state` 0: preempted, 1: sleeping), `next` runs.
    pub fn switch(
        &mut self,
        ts_ns: i64,
        cpu: u32,
        prev: Task,
        prev_state: i64,
        next: Task,
    ) -> &mut Scenario {
        self.push(
            ts_ns,
            cpu,
            EventKind::Switch {
                prev_comm: Comm::new(prev.comm.as_bytes()),
                prev_pid: prev.pid,
                prev_prio: prev.prio,
                prev_state,
                next_comm: Comm::new(next.comm.as_bytes()),
                next_pid: next.pid,
                next_prio: next.prio,
            },
        );
        self.current.push((cpu, next.pid));
        self
    }

    pub fn waking(&mut self, ts_ns: i64, cpu: u32, task: Task, target_cpu: i32) -> &mut Scenario {
        self.push(
            ts_ns,
            cpu,
            EventKind::Waking {
                pid: task.pid,
                comm: Comm::new(task.comm.as_bytes()),
                prio: task.prio,
                target_cpu,
            },
        )
    }

    pub fn timer_start(
        &mut self,
        ts_ns: i64,
        cpu: u32,
        timer: u64,
        expiry_ns: i64,
    ) -> &mut Scenario {
        self.push(
            ts_ns,
            cpu,
            EventKind::HrtimerStart {
                timer,
                function: 0xffff_0001,
                expires_ns: expiry_ns,
                softexpires_ns: expiry_ns,
            },
        )
    }

    /// A timer callback from `entry_ns` to `exit_ns`, waking `wakes` at
    /// `entry_ns + 1 µs` if given.
    pub fn timer_fires(
        &mut self,
        cpu: u32,
        timer: u64,
        entry_ns: i64,
        exit_ns: i64,
        wakes: Option<Task>,
    ) -> &mut Scenario {
        self.push(
            entry_ns,
            cpu,
            EventKind::HrtimerExpireEntry {
                timer,
                now_ns: entry_ns,
                function: 0xffff_0001,
            },
        );
        if let Some(task) = wakes {
            self.waking(entry_ns + 1_000, cpu, task, cpu as i32);
        }
        self.push(exit_ns, cpu, EventKind::HrtimerExpireExit { timer })
    }

    pub fn vector(
        &mut self,
        cpu: u32,
        vector: Vector,
        entry_ns: i64,
        exit_ns: i64,
    ) -> &mut Scenario {
        self.push(entry_ns, cpu, EventKind::VectorEntry { vector });
        self.push(exit_ns, cpu, EventKind::VectorExit { vector })
    }

    pub fn irq(&mut self, cpu: u32, irq: i32, entry_ns: i64, exit_ns: i64) -> &mut Scenario {
        self.push(entry_ns, cpu, EventKind::IrqEntry { irq });
        self.push(exit_ns, cpu, EventKind::IrqExit { irq })
    }

    pub fn softirq(&mut self, cpu: u32, vec: u32, entry_ns: i64, exit_ns: i64) -> &mut Scenario {
        self.push(entry_ns, cpu, EventKind::SoftirqEntry { vec });
        self.push(exit_ns, cpu, EventKind::SoftirqExit { vec })
    }

    pub fn idle(&mut self, ts_ns: i64, cpu: u32, state: u32) -> &mut Scenario {
        self.push(ts_ns, cpu, EventKind::CpuIdle { state })
    }

    pub fn leave_idle(&mut self, ts_ns: i64, cpu: u32) -> &mut Scenario {
        self.idle(ts_ns, cpu, LEAVING_IDLE)
    }

    /// The events in time order (stable: same-time events keep their
    /// order).
    pub fn sorted(&self) -> Vec<KernelEvent> {
        let mut events = self.events.clone();
        events.sort_by_key(|event| event.ts_ns);
        events
    }
}
