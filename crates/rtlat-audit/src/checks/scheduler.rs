//! The scheduler's sysctls: real-time throttling, timer migration and
//! NUMA balancing.

use super::judge::{Check, Judge, flag, ok, unknown};
use crate::{Finding, Status};

/// The checks of this area, in the order the audit lists them.
pub(super) const CHECKS: &[Check] = &[
    Check {
        id: "sched.rt_throttling",
        judges: "`kernel.sched_rt_runtime_us`",
        flagged_when: "not -1: `warn`",
        judge: |judge| judge.sched_rt_throttling(),
    },
    Check {
        id: "sched.timer_migration",
        judges: "`kernel.timer_migration`",
        flagged_when: "on: `warn`",
        judge: |judge| judge.sched_timer_migration(),
    },
    Check {
        id: "sched.numa_balancing",
        judges: "`kernel.numa_balancing`",
        flagged_when: "on: `warn`",
        judge: |judge| judge.sched_numa_balancing(),
    },
];

impl Judge<'_> {
    fn sched_rt_throttling(&self) -> Finding {
        const ID: &str = "sched.rt_throttling";
        match self.facts.sched_rt_runtime_us {
            Err(ref unread) => unknown(ID, unread),
            Ok(-1) => ok(ID, "sched_rt_runtime_us=-1: no RT throttling"),
            Ok(runtime) => flag(
                ID,
                Status::Warn,
                format!("sched_rt_runtime_us={runtime}: real-time threads are throttled"),
                format!(
                    "real-time threads are stopped for the rest of each period once they have run {runtime} µs of it"
                ),
                "sysctl kernel.sched_rt_runtime_us=-1",
                Vec::new(),
            ),
        }
    }

    fn sched_timer_migration(&self) -> Finding {
        self.sysctl_off(
            "sched.timer_migration",
            "timer_migration",
            &self.facts.timer_migration,
            "not in this kernel",
            "timers of idle CPUs may be moved to the measured CPUs and expire there",
            "sysctl kernel.timer_migration=0",
        )
    }

    fn sched_numa_balancing(&self) -> Finding {
        self.sysctl_off(
            "sched.numa_balancing",
            "numa_balancing",
            &self.facts.numa_balancing,
            "not in this kernel",
            "NUMA balancing unmaps pages to sample them, so the measuring thread takes page faults",
            "sysctl kernel.numa_balancing=0",
        )
    }
}
